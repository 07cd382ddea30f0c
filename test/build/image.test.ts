import { existsSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dockerignore, parseDockerfile, type Instruction } from './dockerfile.js';

/** The Dockerfile, checked without a Docker engine: what it copies exists and reaches the context. */
const instructions = parseDockerfile(readFileSync('Dockerfile', 'utf8'));
const ignored = dockerignore(readFileSync('.dockerignore', 'utf8'));

function stages(): { name: string | undefined; from: string; body: Instruction[] }[] {
  const out: { name: string | undefined; from: string; body: Instruction[] }[] = [];
  for (const i of instructions) {
    if (i.keyword === 'FROM') out.push({ from: i.args[0]!, name: i.args[2], body: [] });
    else out.at(-1)?.body.push(i);
  }
  return out;
}

describe('Dockerfile', () => {
  it('copies from the build context only files that exist and that .dockerignore lets through', () => {
    const copies = instructions.filter(
      (i) => (i.keyword === 'COPY' || i.keyword === 'ADD') && !i.flags['from'],
    );
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) {
      for (const src of c.args.slice(0, -1)) {
        expect(existsSync(src), `${c.keyword} ${src}: missing`).toBe(true);
        expect(ignored(src), `${c.keyword} ${src}: excluded by .dockerignore`).toBe(false);
      }
    }
    // A source file deep in src/ reaches the context; the rest of the repository does not.
    expect(ignored('src/cli/main.ts')).toBe(false);
    for (const p of [
      'node_modules/zod/package.json',
      'dist/cli/main.js',
      'test/cli.test.ts',
      '.git/HEAD',
      'charts',
    ]) {
      expect(ignored(p), p).toBe(true);
    }
  });

  it('copies between stages only from stages it defines', () => {
    const names = stages().map((s) => s.name);
    for (const c of instructions.filter((i) => i.keyword === 'COPY' && i.flags['from'])) {
      expect(names).toContain(c.flags['from']);
    }
  });

  it('builds with npm run build, prunes dev dependencies and runs on Node 22 pinned by digest', () => {
    const arg = instructions.find((i) => i.keyword === 'ARG' && i.raw.startsWith('NODE_IMAGE='));
    expect(arg?.raw).toMatch(/^NODE_IMAGE=node:22[-.][a-z0-9.-]*@sha256:[0-9a-f]{64}$/);
    const [build, runtime] = stages();
    expect(build?.name).toBe('build');
    const runs = build!.body.filter((i) => i.keyword === 'RUN').map((i) => i.raw);
    expect(runs.some((r) => r.includes('npm ci'))).toBe(true);
    expect(runs.some((r) => r.includes('npm run build') && r.includes('npm prune --omit=dev'))).toBe(true);
    expect(runtime?.name).toBe('runtime');
    expect(instructions.at(0)?.keyword).not.toBe('FROM'); // the ARG comes first, so FROM can use it
  });

  it('runs the compiled CLI as a numeric non-root user', () => {
    const runtime = stages().at(-1)!;
    const user = runtime.body.filter((i) => i.keyword === 'USER').at(-1);
    expect(user?.args[0]).toMatch(/^[1-9][0-9]*:[1-9][0-9]*$/);
    const entry = runtime.body.find((i) => i.keyword === 'ENTRYPOINT');
    // tini is PID 1: it reaps children and forwards SIGTERM to node.
    expect(entry?.args).toEqual(['/sbin/tini', '--', 'node', '/app/dist/cli/main.js']);
    expect(runtime.body.some((i) => i.keyword === 'RUN' && /apk add --no-cache tini\b/.test(i.raw))).toBe(
      true,
    );
    // dist/ comes from the build stage, and package.json with it ("type": "module").
    const copied = runtime.body.filter((i) => i.keyword === 'COPY').map((i) => i.args.at(-1));
    expect(copied).toEqual(expect.arrayContaining(['./dist', './node_modules', './package.json']));
    expect(JSON.parse(readFileSync('package.json', 'utf8')).type).toBe('module');
  });

  it('carries the OCI labels, with version and revision from build arguments', () => {
    const runtime = stages().at(-1)!;
    const labels = runtime.body
      .filter((i) => i.keyword === 'LABEL')
      .flatMap((i) => [...i.raw.matchAll(/(org\.opencontainers\.image\.[a-z]+)=/g)].map((m) => m[1]));
    expect(labels).toEqual(
      expect.arrayContaining([
        'org.opencontainers.image.title',
        'org.opencontainers.image.source',
        'org.opencontainers.image.licenses',
        'org.opencontainers.image.version',
        'org.opencontainers.image.revision',
        'org.opencontainers.image.created',
      ]),
    );
  });

  it('ships no dev-only code: tsx (and its esbuild) are dev dependencies', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
    expect(Object.keys(pkg.devDependencies)).toContain('tsx');
  });

  it('keeps the image build context small: .dockerignore starts by excluding everything', () => {
    expect(
      readFileSync('.dockerignore', 'utf8')
        .split('\n')
        .find((l) => l && !l.startsWith('#')),
    ).toBe('*');
    expect(statSync('src').isDirectory()).toBe(true);
  });
});
