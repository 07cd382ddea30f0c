import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commands } from '../src/cli/commands.js';
import { loadCommand, runCli } from '../src/cli/run.js';
import { VERSION as CONTROLLER_VERSION } from '../src/controller/controller.js';
import { captured } from './helpers/capture-io.js';
import { budget } from './helpers/budget.js';

/**
 * bin/endpoint-binder.js (what `npx endpoint-binder` runs) takes dist/ when it is at least as new
 * as every source, the sources through tsx otherwise (so an edit is never answered by a stale
 * build), and dist/ alone in an install without sources. Checked in a checkout laid out in a
 * temporary directory whose src/ and dist/ each print which one ran.
 */
const run = promisify(execFile);
let dir: string | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function layout(opts: { source: boolean; dist: boolean }): string {
  dir = mkdtempSync(join(tmpdir(), 'eb-cli-bin-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(resolve('bin/endpoint-binder.js'), join(dir, 'bin', 'endpoint-binder.js'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  if (opts.source) {
    mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'src', 'cli', 'main.ts'), "const ran: string = 'source';\nconsole.log(ran);\n");
  }
  if (opts.dist) {
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'cli', 'main.js'), "console.log('dist');\n");
  }
  return dir;
}

/** Sets a file's modification time to `secondsAgo` before now. */
function age(path: string, secondsAgo: number): void {
  const t = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(path, t, t);
}

async function whichRan(root: string): Promise<string> {
  const r = await run(process.execPath, [join(root, 'bin', 'endpoint-binder.js')], {
    env: { PATH: process.env['PATH'] ?? '' },
    timeout: budget(60_000),
  });
  return r.stdout.trim();
}

describe('bin/endpoint-binder.js', () => {
  it(
    'runs dist/ when it is newer than every source (no compile per call)',
    { timeout: budget(60_000) },
    async () => {
      const root = layout({ source: true, dist: true });
      age(join(root, 'src', 'cli', 'main.ts'), 60);
      expect(await whichRan(root)).toBe('dist');
    },
  );

  it(
    'runs the sources through tsx when a source is newer than dist/ (never a stale build)',
    { timeout: budget(60_000) },
    async () => {
      const root = layout({ source: true, dist: true });
      age(join(root, 'dist', 'cli', 'main.js'), 60);
      expect(await whichRan(root)).toBe('source');
    },
  );

  it('runs dist/ in an install without sources', { timeout: budget(60_000) }, async () => {
    const root = layout({ source: false, dist: true });
    expect(await whichRan(root)).toBe('dist');
  });
});

describe('the CLI answers without loading every command', () => {
  it('lists each command with the summary its module gives', async () => {
    for (const entry of commands) {
      const command = await entry.load();
      expect({ name: command.name, summary: command.summary }).toEqual({
        name: entry.name,
        summary: entry.summary,
      });
    }
  });

  it('version -o json prints JSON; the version is the one the controller registers with', async () => {
    const io = captured();
    expect(await runCli(['version', '-o', 'json'])).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({ version: CONTROLLER_VERSION });
  });

  it('version -o yaml is refused naming the choices', async () => {
    const io = captured();
    expect(await runCli(['version', '-o', 'yaml'])).toBe(2);
    expect(io.err()).toContain('-o must be "text" or "json", not "yaml"');
  });
});

describe('the production image without the simulators and the demo', () => {
  it('a development command whose module is left out says so in one line; the others are unaffected', async () => {
    const missing = Object.assign(new Error("Cannot find module '/app/dist/kubesim/index.js'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const entry = { name: 'kubesim', summary: '', development: true, load: () => Promise.reject(missing) };
    expect(await loadCommand(entry)).toBe(
      'not in this build: the production image leaves out the simulators and the demo; run it from a clone (npx endpoint-binder kubesim)',
    );
    expect(commands.filter((c) => c.development).map((c) => c.name)).toEqual(['demo', 'mock-api', 'kubesim']);
    const other = new Error('boom');
    await expect(loadCommand({ ...entry, load: () => Promise.reject(other) })).rejects.toBe(other);
  });
});

describe('a hard open files limit too low for the module loader', () => {
  it('EMFILE while loading a command is one line naming the limit and the fix, not an unexpected error', async () => {
    // Seen for real: under `ulimit -n 512`, `node dist/cli/main.js forwarder --help` failed with
    // EMFILE opening node_modules/hpagent/index.js; at 700 as a "Cannot find package" instead.
    const emfile = Object.assign(
      new Error("EMFILE: too many open files, open '/app/node_modules/hpagent/index.js'"),
      {
        code: 'EMFILE',
      },
    );
    const entry = { name: 'forwarder', summary: '', load: () => Promise.reject(emfile) };
    const line = await loadCommand(entry);
    expect(line).toMatch(
      /^cannot load its modules with an open files limit of (\d+|unknown) \(EMFILE: too many open files, open '\/app\/node_modules\/hpagent\/index\.js'\): raise the hard limit to at least 1024 \(ulimit -Hn 1024, or the container runtime's nofile limit\)$/,
    );
    // With a limit this process can read and well above the loader's need, a missing module is
    // still "this build is incomplete", not blamed on the limit.
    const missing = Object.assign(new Error("Cannot find package '/app/node_modules/x/index.js'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    expect(limit, 'this test expects a soft open files limit of at least 1024').toBeGreaterThanOrEqual(1024);
    expect(await loadCommand({ ...entry, load: () => Promise.reject(missing) })).toMatch(
      /^this build is incomplete/,
    );
  });
});
