import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Room boundaries (docs/controller.md "Rooms"): each folder of src/ may import only the rooms
 * below it. `time/`, `net/`, `log/` and `config/` are shared by all and import no room.
 * A relative import of another top-level folder is `../<room>/…` from any depth.
 */
/** @param {string[]} names */
const room = (names) => `^(\\.\\./)+(${names.join('|')})/`;
const SHARED_ONLY = 'shared code (time/, net/, log/, config/) imports no room';
const boundaries = [
  {
    files: ['src/binding/**/*.ts'],
    patterns: [
      {
        regex: room(['api', 'cli', 'controller', 'demo', 'forwarder', 'kubesim', 'log', 'mock', 'time']),
        message:
          'binding/ is the pure core: it imports no I/O module (the shell reads and writes, the core decides)',
      },
      {
        regex: '^(\\.\\./)+kube/(?!objects\\.js$)',
        message:
          'binding/ may use the Kubernetes object types (kube/objects.js) only, no client, cache or clock',
      },
      {
        regex: '^(\\.\\./)+net/(?!host-port\\.js$)',
        message: 'binding/ may use the pure host:port parser (net/host-port.js) only, no sockets',
      },
      {
        regex: '^(node:(?!crypto$)|undici$|pino$|prom-client$|@kubernetes/)',
        message: 'binding/ is the pure core: no network, file, log or metrics module',
      },
    ],
  },
  {
    files: ['src/controller/**/*.ts', 'src/forwarder/**/*.ts'],
    patterns: [
      {
        regex: room(['mock', 'kubesim', 'cli', 'demo']),
        message: 'controller/ and forwarder/ run in production: never import the mock, kubesim or the CLI',
      },
    ],
  },
  {
    files: ['src/mock/**/*.ts', 'src/kubesim/**/*.ts'],
    patterns: [
      {
        regex: room(['controller', 'forwarder', 'cli', 'demo']),
        message:
          'mock/ and kubesim/ stand in for the outside world: never import the operator (controller/, forwarder/) or the CLI',
      },
    ],
  },
  {
    files: ['src/api/**/*.ts'],
    patterns: [
      {
        regex: room(['controller', 'forwarder', 'mock', 'kubesim', 'kube', 'cli', 'demo']),
        message: 'api/ is the management API contract and client: it imports no other room',
      },
      {
        regex: '^(\\.\\./)+binding/(?!endpoint-url\\.js$)',
        message: 'api/ shares only the URL parser (binding/endpoint-url.js) with the core, no decision',
      },
    ],
  },
  {
    files: ['src/kube/**/*.ts'],
    patterns: [
      {
        regex: room(['api', 'binding', 'controller', 'forwarder', 'mock', 'kubesim', 'cli', 'demo']),
        message: 'kube/ is Kubernetes plumbing: it imports no room above it',
      },
    ],
  },
  {
    files: ['src/time/**/*.ts', 'src/net/**/*.ts', 'src/log/**/*.ts', 'src/config/**/*.ts'],
    patterns: [
      {
        regex: room(['api', 'binding', 'cli', 'controller', 'demo', 'forwarder', 'kube', 'kubesim', 'mock']),
        message: SHARED_ONLY,
      },
    ],
  },
].map(({ files, patterns }) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } }));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'charts/**', 'deploy/**', 'coverage/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            'eslint.config.js',
            'bin/endpoint-binder.js',
            'test/helpers/control-plane/watchdog.mjs',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  ...boundaries,
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
