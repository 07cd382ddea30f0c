import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';

/**
 * What the image runs: `npm run build` (tsc -p tsconfig.build.json) and then plain
 * `node dist/cli/main.js`, without tsx. Built once into .tmp/ (not dist/, which a developer may
 * be using), next to a copy of package.json as in the image.
 */
const run = promisify(execFile);
const root = resolve('.tmp', `build-test-${process.pid}`);
const dist = join(root, 'dist');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
let build: { code: number; output: string };

async function node(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      cwd: root,
      timeout: budget(60_000),
      // As in the container: no tsx loader, no inherited NODE_OPTIONS.
      env: { PATH: process.env['PATH'] ?? '', NODE_ENV: 'production' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? jsFiles(join(dir, d.name)) : d.name.endsWith('.js') ? [join(dir, d.name)] : [],
  );
}

describe('the built CLI', () => {
  beforeAll(async () => {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    copyFileSync('package.json', join(root, 'package.json'));
    try {
      const r = await run(
        process.execPath,
        [resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dist],
        { timeout: budget(240_000), maxBuffer: 16 * 1024 * 1024 },
      );
      build = { code: 0, output: r.stdout + r.stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      build = { code: typeof e.code === 'number' ? e.code : 1, output: (e.stdout ?? '') + (e.stderr ?? '') };
    }
  }, budget(300_000));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('compiles without errors', () => {
    expect(build.output).toBe('');
    expect(build.code).toBe(0);
  });

  it('starts with plain node and lists its commands', async () => {
    const r = await node(['dist/cli/main.js', '--help']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const cmd of ['controller', 'status', 'mock-api'])
      expect(r.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
  });

  it('shows the controller usage the chart relies on (--config)', async () => {
    const r = await node(['dist/cli/main.js', 'controller', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--config <file>');
  });

  it('imports only Node built-ins and runtime dependencies, never tsx or a dev dependency', () => {
    const files = jsFiles(dist);
    expect(files.length).toBeGreaterThan(20);
    const builtins = new Set(builtinModules);
    const bad: string[] = [];
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      const specs = [
        ...text.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/(?:^|[\s;])import\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ].map((m) => m[1]!);
      for (const s of specs) {
        if (s.startsWith('.')) continue;
        if (s.startsWith('node:') || builtins.has(s)) continue;
        const name = s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!;
        if (name === 'tsx' || !(name in pkg.dependencies)) bad.push(`${relative(dist, f)}: ${s}`);
      }
    }
    expect(bad).toEqual([]);
    expect(readFileSync(join(dist, 'cli', 'main.js'), 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  });
});
