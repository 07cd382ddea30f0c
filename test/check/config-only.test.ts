import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { captured } from '../helpers/capture-io.js';
import { CLI } from '../helpers/cli.js';
import { budget } from '../helpers/budget.js';

const KEY = 'check-key-0123456789';

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'eb-check-'));
  const p = join(dir, 'config.yaml');
  writeFileSync(p, text);
  return p;
}

function withEnv(env: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('endpoint-binder check --config-only', () => {
  it('passes a valid config without touching the network (the API host does not resolve)', async () => {
    withEnv({ ENDPOINT_BINDER_API_KEY: KEY, POD_NAMESPACE: 'ops' });
    const p = file(
      'api:\n  baseUrl: https://api.invalid\nbindings:\n  endpointSelector: "endpoint.port > 1024"\n',
    );
    const io = captured();
    expect(await runCli(['check', '--config-only', '--config', p])).toBe(0);
    expect(io.out()).toContain(`✓ config valid (file ${p}, flags, environment)`);
    expect(io.out()).toContain('All 1 checks passed.');
    expect(io.out()).not.toContain(KEY);
  });

  it('lists every bad field at once, the selector error with its caret included, and exits 1', async () => {
    withEnv({ ENDPOINT_BINDER_API_KEY: undefined, POD_NAMESPACE: 'ops' });
    const p = file(
      [
        'api:',
        '  baseUrl: ftp://api.example.com',
        'bindings:',
        '  endpointSelector: "endpoint.hots == \'x\'"',
        '  portRange: {min: 20000, max: 10000}',
        'writeConcurrency: 0',
        'surprise: 1',
      ].join('\n'),
    );
    const io = captured();
    expect(await runCli(['check', '--config-only', '--config', p])).toBe(1);
    const out = io.out();
    expect(out).toContain('✗ config valid');
    expect(out).toContain('api.baseUrl: must be an http:// or https:// URL');
    expect(out).toContain('bindings.portRange.min: min must not be greater than max');
    expect(out).toContain('writeConcurrency');
    expect(out).toContain('surprise');
    expect(out).toContain('ENDPOINT_BINDER_API_KEY');
    expect(out).toContain(
      'bindings.endpointSelector: invalid endpoint selector: type error: No such key: hots',
    );
    expect(out).toMatch(/endpoint\.hots == 'x'\n\s+\^/);
    expect(io.err()).toBe('');
  });

  it('takes flags over the file, as the controller does', async () => {
    withEnv({ ENDPOINT_BINDER_API_KEY: KEY, POD_NAMESPACE: 'ops' });
    const p = file('api:\n  baseUrl: https://api.example.com\n');
    const io = captured();
    expect(
      await runCli(['check', '--config-only', '--config', p, '--endpoint-selector', 'endpoint.port']),
    ).toBe(1);
    expect(io.out()).toContain('the expression must return bool, it returns int');
  });

  it('reports an unreadable or empty --config path as a problem, not a stack trace', async () => {
    withEnv({ ENDPOINT_BINDER_API_KEY: KEY, POD_NAMESPACE: 'ops' });
    let io = captured();
    expect(await runCli(['check', '--config-only', '--config', '/nonexistent/eb.yaml'])).toBe(1);
    expect(io.out()).toContain('cannot read config file /nonexistent/eb.yaml');
    vi.restoreAllMocks();
    io = captured();
    expect(await runCli(['check', '--config-only', '--config='])).toBe(1);
    expect(io.out()).toContain('--config: must not be empty');
    expect(io.out()).not.toMatch(/ZodError|at .*\.ts:\d+/);
  });

  it('prints the checks as JSON on stdout with -o json', async () => {
    withEnv({ ENDPOINT_BINDER_API_KEY: KEY, POD_NAMESPACE: 'ops' });
    let io = captured();
    expect(
      await runCli(['check', '--config-only', '--api-url', 'https://api.example.com', '-o', 'json']),
    ).toBe(0);
    expect(JSON.parse(io.out())).toEqual({
      ok: true,
      checks: [{ id: 'config', title: 'config valid (flags, environment)', status: 'ok' }],
    });
    vi.restoreAllMocks();
    io = captured();
    expect(await runCli(['check', '--config-only', '--api-url', 'nope', '-o', 'json'])).toBe(1);
    const doc = JSON.parse(io.out()) as {
      ok: boolean;
      checks: { id: string; status: string; problems: string[] }[];
    };
    expect(doc.ok).toBe(false);
    expect(doc.checks[0]).toMatchObject({ id: 'config', status: 'fail' });
    expect(doc.checks[0]!.problems).toContain('api.baseUrl: must be an http:// or https:// URL');
  });

  it('exits 2 naming the flag for an unknown flag or output format', async () => {
    let io = captured();
    expect(await runCli(['check', '--config-only', '--bogus'])).toBe(2);
    expect(io.err()).toContain('--bogus');
    vi.restoreAllMocks();
    io = captured();
    expect(await runCli(['check', '--config-only', '-o', 'yaml'])).toBe(2);
    expect(io.err()).toContain('--output');
  });

  it('runs as a process: exit 1, one line per problem, no stack trace', { timeout: budget(100_000) }, () => {
    const r = spawnSync(process.execPath, [CLI, 'check', '--config-only', '--api-url', 'ftp://x'], {
      encoding: 'utf8',
      env: { ...process.env, ENDPOINT_BINDER_API_KEY: '', POD_NAMESPACE: 'ops' },
      timeout: budget(90_000),
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('api.baseUrl: must be an http:// or https:// URL');
    expect(r.stdout).toContain('ENDPOINT_BINDER_API_KEY: the API key must be set in the environment');
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
  });
});
