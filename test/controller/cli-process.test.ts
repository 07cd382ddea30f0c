import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { ACME_KEY, startTestMock, type TestMock } from '../helpers/mock-api.js';
import { OPERATOR_NS, eventually } from './env.js';
import { captured } from '../helpers/capture-io.js';
import { CLI } from '../helpers/cli.js';

function run(
  args: string[],
  env: Record<string, string>,
): {
  exit: Promise<number | null>;
  out: () => string;
  err: () => string;
  kill: () => void;
} {
  const child = spawn(process.execPath, [CLI, 'controller', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    exit: new Promise((resolve) => child.on('exit', resolve)),
    out: () => out,
    err: () => err,
    kill: () => child.kill('SIGTERM'),
  };
}

describe('endpoint-binder controller as a process', () => {
  let mock: TestMock;
  let sim: Kubesim;
  let dir: string;

  beforeAll(async () => {
    mock = await startTestMock({ ingress: { host: '127.0.0.1' } });
    sim = await startKubesim({ initialNamespaces: ['default', OPERATOR_NS, 'prod'] });
    dir = mkdtempSync(join(tmpdir(), 'eb-ctlproc-'));
    await sim.writeKubeconfig(join(dir, 'kubeconfig'));
  });
  afterAll(async () => {
    delete process.env['ENDPOINT_BINDER_API_KEY'];
    delete process.env['POD_NAMESPACE'];
    await mock?.close();
    await sim?.stop();
  });

  it('exits 2 naming every bad field before writing anything', async () => {
    const cfg = join(dir, 'bad.yaml');
    writeFileSync(cfg, 'api:\n  baseUrl: nope\nbindings:\n  portRange: {min: 80}\n');
    process.env['ENDPOINT_BINDER_API_KEY'] = ACME_KEY;
    process.env['POD_NAMESPACE'] = OPERATOR_NS;
    const io = captured();
    try {
      expect(await runCli(['controller', '--config', cfg, '--kubeconfig', join(dir, 'kubeconfig')])).toBe(2);
    } finally {
      vi.restoreAllMocks();
    }
    expect(io.err()).toContain('api.baseUrl');
    expect(io.err()).toContain('bindings.portRange.min: must be at least 1024');
  });

  it('exits 2 with the positioned message of a bad selector', async () => {
    const io = captured();
    try {
      const args = ['controller', '--api-url', mock.url, '--endpoint-selector', 'endpoint.port >'];
      expect(await runCli([...args, '--kubeconfig', join(dir, 'kubeconfig')])).toBe(2);
    } finally {
      vi.restoreAllMocks();
    }
    expect(io.err()).toContain('bindings.endpointSelector');
    expect(io.err()).toContain('^');
  });

  it('projects, serves /readyz, and exits 0 on SIGTERM without logging the key', async () => {
    const cfg = join(dir, 'good.yaml');
    writeFileSync(cfg, `api:\n  baseUrl: ${mock.url}\nhttp:\n  listen: 127.0.0.1:0\n`);
    await mock.client.endpoints.create({ url: 'http://proc.prod', bindings: ['kubernetes'] });
    const p = run(['--config', cfg, '--kubeconfig', join(dir, 'kubeconfig')], {
      ENDPOINT_BINDER_API_KEY: ACME_KEY,
      POD_NAMESPACE: OPERATOR_NS,
    });
    const url = await eventually(
      () => {
        const line = p
          .out()
          .split('\n')
          .find((l) => l.includes('"controller http server listening"'));
        return line ? (JSON.parse(line) as { url: string }).url : undefined;
      },
      'listening line',
      30_000,
    );
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 'ready', 30_000);
    const status = (await (await fetch(`${url}/status`)).json()) as { endpoints: { state: string }[] };
    expect(status.endpoints[0]?.state).toBe('projected');
    p.kill();
    expect(await p.exit).toBe(0);
    expect(p.out() + p.err()).not.toContain(ACME_KEY);
  });
});
