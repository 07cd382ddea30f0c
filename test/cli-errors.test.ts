import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { commands } from '../src/cli/commands.js';
import { runCli } from '../src/cli/run.js';
import { VERSION } from '../src/cli/version.js';
import { startKubesim, type Kubesim } from '../src/kubesim/index.js';
import { captured } from './helpers/capture-io.js';
import { ACME_KEY, startTestMock, type TestMock } from './helpers/mock-api.js';
import { budget } from './helpers/budget.js';

/** Every expected error is one line naming the cause, with a documented exit code; never a stack trace. */

let mock: TestMock;
let sim: Kubesim;
let kubeconfig: string;
let closedUrl: string;

beforeAll(async () => {
  mock = await startTestMock();
  sim = await startKubesim({ initialNamespaces: ['default'] });
  const dir = mkdtempSync(join(tmpdir(), 'eb-cli-errors-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeConfig().exportConfig());
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  closedUrl = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  await new Promise<void>((r) => srv.close(() => r()));
}, budget(60_000));

afterAll(async () => {
  await mock?.close();
  await sim?.stop();
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const STACK = /\n\s+at .+[:(]\d+/;

interface Case {
  name: string;
  argv: () => string[];
  env?: Record<string, string | undefined>;
  code: number;
  says: RegExp;
}

const cases: Case[] = [
  { name: 'unknown flag (demo)', argv: () => ['demo', '--bogus'], code: 2, says: /--bogus/ },
  {
    name: 'empty --config (controller)',
    argv: () => ['controller', '--config='],
    code: 2,
    says: /--config: must not be empty/,
  },
  {
    name: 'unreadable config file (controller)',
    argv: () => ['controller', '--config', '/nonexistent/eb.yaml'],
    code: 2,
    says: /cannot read config file \/nonexistent\/eb.yaml/,
  },
  {
    name: 'controller: a refused API key stops it before registering',
    argv: () => [
      'controller',
      '--api-url',
      mock.url,
      '--operator-namespace',
      'default',
      '--kubeconfig',
      kubeconfig,
      '--listen',
      '127.0.0.1:0',
    ],
    env: { ENDPOINT_BINDER_API_KEY: 'wrong_key_0123456789' },
    code: 1,
    says: /endpoint-binder controller: ENDPOINT_BINDER_API_KEY: the management API refused the key/,
  },
  {
    name: 'controller: a missing operator namespace stops it',
    argv: () => [
      'controller',
      '--api-url',
      mock.url,
      '--operator-namespace',
      'no-such-ns',
      '--kubeconfig',
      kubeconfig,
      '--listen',
      '127.0.0.1:0',
    ],
    env: { ENDPOINT_BINDER_API_KEY: ACME_KEY },
    code: 1,
    says: /endpoint-binder controller: operatorNamespace: namespace no-such-ns does not exist/,
  },
  { name: 'unknown flag (forwarder)', argv: () => ['forwarder', '--bogus'], code: 2, says: /--bogus/ },
  { name: 'status: bad --url', argv: () => ['status', '--url', 'not a url'], code: 2, says: /--url/ },
  { name: 'status: bad -o', argv: () => ['status', '-o', 'yaml'], code: 2, says: /--output/ },
  {
    name: 'status: controller not running',
    argv: () => ['status', '--url', closedUrl],
    code: 1,
    says: /is the controller running/,
  },
  { name: 'check: unknown flag', argv: () => ['check', '--bogus'], code: 2, says: /--bogus/ },
  {
    name: 'selector test: wrong key',
    argv: () => ['selector', 'test', 'true', '--api-url', mock.url],
    env: { ENDPOINT_BINDER_API_KEY: 'wrong_key_0123456789' },
    code: 1,
    says: /refused the key .*ENDPOINT_BINDER_API_KEY/,
  },
  {
    name: 'selector test: unreachable API',
    argv: () => ['selector', 'test', 'true', '--api-url', closedUrl],
    env: { ENDPOINT_BINDER_API_KEY: ACME_KEY },
    code: 1,
    says: /cannot connect/,
  },
  {
    name: 'selector test: bad expression',
    argv: () => ['selector', 'test', 'endpoint.hots'],
    code: 2,
    says: /No such key: hots/,
  },
  {
    name: 'uninstall: operator namespace missing',
    argv: () => [
      'uninstall',
      '--policy',
      'retain',
      '--api-url',
      mock.url,
      '--operator-namespace',
      'no-such-ns',
      '--kubeconfig',
      kubeconfig,
    ],
    code: 1,
    says: /no-such-ns|namespace/,
  },
  {
    name: 'uninstall: bad policy',
    argv: () => ['uninstall', '--policy', 'shred'],
    code: 2,
    says: /--policy/,
  },
  { name: 'mock-api: bad port', argv: () => ['mock-api', '--port', 'seventy'], code: 2, says: /--port/ },
  { name: 'kubesim: unknown flag', argv: () => ['kubesim', '--bogus'], code: 2, says: /--bogus/ },
];

describe('CLI: no stack trace for any expected error', () => {
  it('covers every subcommand', () => {
    const covered = new Set(cases.map((c) => c.argv()[0]));
    for (const c of commands) expect(covered, c.name).toContain(c.name);
  });

  for (const c of cases) {
    it(c.name, { timeout: budget(30_000) }, async () => {
      for (const [k, v] of Object.entries(c.env ?? {})) vi.stubEnv(k, v);
      const io = captured();
      let code: number | undefined;
      let thrown: unknown;
      try {
        code = await runCli(c.argv());
      } catch (err) {
        thrown = err;
      }
      vi.restoreAllMocks();
      expect(thrown, String(thrown)).toBeUndefined();
      const text = io.err() + io.out();
      expect(code, text).toBe(c.code);
      expect(text).toMatch(c.says);
      expect(text).not.toMatch(STACK);
    });
  }
});

describe('CLI: version', () => {
  it('prints the build version for `version` and `--version`, equal to package.json', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    for (const argv of [['version'], ['--version']]) {
      const io = captured();
      expect(await runCli(argv)).toBe(0);
      expect(io.out()).toBe(`endpoint-binder ${pkg.version}\n`);
      vi.restoreAllMocks();
    }
  });
});

describe('CLI: EPIPE', () => {
  it(
    '`check -o json | head -1` exits cleanly when the reader goes away',
    { timeout: budget(100_000) },
    () => {
      // A reader that exits at once: the writer meets a closed pipe (EPIPE), which is a normal end.
      const out = execFileSync(
        'bash',
        [
          '-c',
          'node bin/endpoint-binder.js check --config-only --api-url https://api.example.com -o json | head -c 1; echo " rc=${PIPESTATUS[0]}"',
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, ENDPOINT_BINDER_API_KEY: ACME_KEY, POD_NAMESPACE: 'ops' },
          timeout: budget(90_000),
        },
      );
      expect(out).toMatch(/^\{ rc=0\n$/);
    },
  );

  it(
    '`check | true`: the reader is gone before the first write (EPIPE): exit code kept, no stack trace',
    { timeout: budget(100_000) },
    () => {
      const r = spawnSync(
        'bash',
        [
          '-c',
          'node bin/endpoint-binder.js check --config-only --api-url https://api.example.com 2>/tmp/eb-epipe-$$.err | true; rc=${PIPESTATUS[0]}; cat /tmp/eb-epipe-$$.err; rm -f /tmp/eb-epipe-$$.err; echo "rc=$rc"',
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, ENDPOINT_BINDER_API_KEY: ACME_KEY, POD_NAMESPACE: 'ops' },
          timeout: budget(90_000),
        },
      );
      expect(r.stdout).toMatch(/rc=0\n$/);
      expect(r.stdout).not.toMatch(/EPIPE|STACK/);
      expect(r.stdout).not.toMatch(STACK);
    },
  );
});
