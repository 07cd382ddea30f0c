import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mockApiBanner } from '../../src/cli/mock-api-command.js';
import { CLI } from '../helpers/cli.js';
import { budget } from '../helpers/budget.js';

/** #19 item 7: `mock-api` prints its URL in every mode, not only with a generated account. */

/** Runs `mock-api` with `args` until its banner names the URL; returns what it printed on stdout. */
async function bannerOf(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [CLI, 'mock-api', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL line in: ${out}`)), budget(30_000));
      const look = () => {
        if (/Mock management API: http:\/\/\S+\n/.test(out)) {
          clearTimeout(timer);
          resolve(out);
        }
      };
      child.stdout.on('data', look);
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
  } finally {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

describe('mock-api URL', () => {
  it('the banner names the API (and the ingress when served) with or without a development account; secrets only for the generated one', () => {
    const plain = mockApiBanner({
      url: 'http://127.0.0.1:8080',
      allInterfaces: false,
      host: '127.0.0.1',
      adminHost: '127.0.0.1',
      ingressAddress: '127.0.0.1:9443',
    });
    expect(plain).toContain('  Mock management API: http://127.0.0.1:8080\n');
    expect(plain).toContain('  Binding ingress:     127.0.0.1:9443\n');
    expect(plain).not.toContain('API key');
    const dev = mockApiBanner({
      url: 'http://127.0.0.1:8080',
      allInterfaces: false,
      host: '127.0.0.1',
      adminHost: '127.0.0.1',
      dev: { apiKey: 'k_0123', authtoken: 't_0123' },
    });
    expect(dev).toContain('  Development API key: k_0123\n');
    expect(dev).toContain('  Agent authtoken:     t_0123\n');
  });

  it.each([
    ['--api-key', () => ['--api-key', 'cli_key_0123456789']],
    [
      '--config',
      () => {
        const dir = mkdtempSync(join(tmpdir(), 'eb-mock-url-'));
        const file = join(dir, 'mock.json');
        writeFileSync(file, JSON.stringify({ accounts: [{ id: 'a', api_keys: ['file_key_0123456789'] }] }));
        return ['--config', file];
      },
    ],
  ])('prints the URL with %s', { timeout: budget(40_000) }, async (_mode, args) => {
    const out = await bannerOf(args());
    expect(out).toMatch(/^ {2}Mock management API: http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out).not.toContain('Development API key');
  });
});
