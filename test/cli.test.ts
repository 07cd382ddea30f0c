import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commands } from '../src/cli/commands.js';
import { runCli } from '../src/cli/run.js';
import { captured } from './helpers/capture-io.js';
import { CLI } from './helpers/cli.js';
import { budget } from './helpers/budget.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('endpoint-binder CLI', () => {
  it('rejects an unknown command with exit code 2 and lists the commands', async () => {
    const io = captured();
    expect(await runCli(['no-such-command'])).toBe(2);
    expect(io.err()).toContain('unknown command "no-such-command"');
    expect(io.err()).toContain('mock-api');
  });

  it('prints --help for every subcommand', async () => {
    for (const c of commands) {
      const io = captured();
      expect(await runCli([c.name, '--help'])).toBe(0);
      expect(io.out()).toContain(`endpoint-binder ${c.name}`);
      vi.restoreAllMocks();
    }
  });

  it('names the flag in a usage error', async () => {
    const io = captured();
    expect(await runCli(['mock-api', '--port', 'seventy'])).toBe(2);
    expect(io.err()).toContain('--port');
    vi.restoreAllMocks();
    const io2 = captured();
    expect(await runCli(['mock-api', '--bogus'])).toBe(2);
    expect(io2.err()).toContain('--bogus');
  });

  it('names the file and the field of a bad config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eb-cli-'));
    const file = join(dir, 'mock.yaml');
    writeFileSync(file, 'accounts:\n  - id: acme\n    api_keys: [short]\n');
    const io = captured();
    expect(await runCli(['mock-api', '--config', file])).toBe(2);
    expect(io.err()).toContain(file);
    expect(io.err()).toContain('accounts.0.api_keys.0');
  });

  it('refuses --api-key together with --config', async () => {
    const io = captured();
    expect(await runCli(['mock-api', '--config', 'x.yaml', '--api-key', 'abcdefgh1'])).toBe(2);
    expect(io.err()).toContain('--api-key');
  });

  it('runs mock-api as a process that serves requests and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, 'mock-api', '--port', '0', '--api-key', 'cli-test-key-1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line in: ${out}`)), budget(20_000));
      child.stdout.on('data', () => {
        const line = out.split('\n').find((l) => l.includes('"mock api listening"'));
        if (line) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { url: string }).url);
        }
      });
    });
    const res = await fetch(`${url}/ip_policies`, {
      headers: { authorization: 'Bearer cli-test-key-1', 'service-version': '2' },
    });
    expect(res.status).toBe(200);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(out).not.toContain('cli-test-key-1');
  });

  it('keeps the admin interface on loopback when mock-api listens on every interface, and prints usable URLs', async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'mock-api', '--host', '0.0.0.0', '--port', '0', '--admin-port', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const listening = await new Promise<{ url: string; admin_url: string; all_interfaces: boolean }>(
        (resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no banner in: ${out}`)), budget(20_000));
          child.stdout.on('data', () => {
            const line = out.split('\n').find((l) => l.includes('"mock api listening"'));
            if (line && out.includes('curl ')) {
              clearTimeout(timer);
              resolve(JSON.parse(line) as { url: string; admin_url: string; all_interfaces: boolean });
            }
          });
        },
      );
      const banner = out.slice(out.indexOf('Mock management API'));
      expect(banner).not.toContain('0.0.0.0:');
      expect(banner).toContain('listening on all interfaces');
      expect(listening.all_interfaces).toBe(true);
      expect(listening.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(listening.admin_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // 127.0.0.2 reaches a server bound to every interface, but not one bound to 127.0.0.1 only.
      const via2 = (u: string) => u.replace('127.0.0.1', '127.0.0.2');
      expect((await fetch(`${via2(listening.url)}/ip_policies`)).status).toBe(400); // reached: no version header
      expect((await fetch(`${listening.admin_url}/admin/accounts`)).status).toBe(200);
      const refused = await fetch(`${via2(listening.admin_url)}/admin/accounts`).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Error);
    } finally {
      await new Promise<number | null>((resolve) => {
        child.on('exit', resolve);
        child.kill('SIGTERM');
      });
    }
  });
});
