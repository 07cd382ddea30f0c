import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { startKubesim, type Kubesim } from '../src/kubesim/index.js';
import { captured } from './helpers/capture-io.js';

/**
 * Issue #29 item 7: each mistake is one human line naming the setting and the fix, asserted by
 * its text. Before: OpenSSL's two-line internals and a certificate hint for an https:// URL to an
 * http server; `http://localhost:8080 … skipTLSVerify` without any kubeconfig; `no current
 * cluster` for a context the file lacks; zod's `Unrecognized key` without the field meant;
 * "cannot connect … check the URL" for a port already taken.
 */

let plain: Server;
let plainUrl: string;
let sim: Kubesim;
let kubeconfig: string;
const dir = mkdtempSync(join(tmpdir(), 'eb-cli-messages-'));

beforeAll(async () => {
  plain = createServer((_req, res) => res.end('{}'));
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  plainUrl = `127.0.0.1:${(plain.address() as AddressInfo).port}`;
  sim = await startKubesim({ initialNamespaces: ['default', 'endpoint-binder'] });
  kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
});
afterAll(async () => {
  await sim.stop();
  await new Promise<void>((r) => plain.close(() => r()));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

async function cli(argv: string[], env: Record<string, string> = {}) {
  vi.stubEnv('ENDPOINT_BINDER_API_KEY', 'test-api-key-0001');
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  const io = captured();
  const code = await runCli(argv);
  vi.restoreAllMocks();
  return { code, out: io.out(), err: io.err() };
}

/** The hint line under a check's ✗ line whose title starts with `title`. */
function hintUnder(out: string, title: string): string {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`✗ ${title}`));
  return at < 0 ? `(no ✗ ${title} line in:\n${out})` : (lines[at + 1] ?? '').trim();
}

describe('one human line per mistake', () => {
  it('https:// to an http server: use http://, on one line', async () => {
    const r = await cli([
      'check',
      '--api-url',
      `https://${plainUrl}`,
      '--operator-namespace',
      'endpoint-binder',
      '--kubeconfig',
      kubeconfig,
    ]);
    expect(hintUnder(r.out, 'management API TLS certificate verified')).toBe(
      'hint: the server answered plain HTTP to a TLS handshake (an https:// URL for an http:// server); use http:// in api.baseUrl (--api-url)',
    );
    const s = await cli(['selector', 'test', 'true', '--api-url', `https://${plainUrl}`]);
    expect(s.err).toBe(
      'endpoint-binder selector: the server answered plain HTTP to a TLS handshake (an https:// URL for an http:// server); use http:// in the URL\n',
    );
  });

  it('no kubeconfig anywhere: "no Kubernetes configuration found", not localhost:8080', async () => {
    const home = mkdtempSync(join(tmpdir(), 'eb-nohome-'));
    const r = await cli(
      ['check', '--api-url', `http://${plainUrl}`, '--operator-namespace', 'endpoint-binder'],
      {
        HOME: home,
        KUBECONFIG: '',
        KUBERNETES_SERVICE_HOST: '',
      },
    );
    expect(hintUnder(r.out, 'Kubernetes API reachable')).toBe(
      'hint: no Kubernetes configuration found (no --kubeconfig, no KUBECONFIG, no ~/.kube/config, not in a cluster); set --kubeconfig <file>, or run it in the cluster',
    );
    expect(r.out).not.toContain('localhost:8080');
  });

  it('--context the file does not have: names it and the contexts it has', async () => {
    const r = await cli([
      'check',
      '--api-url',
      `http://${plainUrl}`,
      '--operator-namespace',
      'endpoint-binder',
      '--kubeconfig',
      kubeconfig,
      '--context',
      'nosuch',
    ]);
    expect(hintUnder(r.out, 'Kubernetes API reachable')).toMatch(
      /^hint: kubeconfig \S+ has no context "nosuch" \(it has: \S+\); set --context to one of them$/,
    );
  });

  it('an unknown config field: did you mean', async () => {
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, `api:\n  baseUrl: http://${plainUrl}\n  timeoutMS: 3\nbindngs: {}\n`);
    const r = await cli(['check', '--config-only', '--config', file]);
    expect(r.out).toContain('    api.timeoutMS: unknown field; did you mean "timeoutMs"?\n');
    expect(r.out).toContain('    bindngs: unknown field; did you mean "bindings"?\n');
  });

  it('a port already taken: another process uses it, choose another --port', async () => {
    const r = await cli(['mock-api', '--port', plainUrl.split(':')[1]!]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^endpoint-binder mock-api: cannot listen \(listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\): another process uses that address; stop it or choose another port \(--port\)\n$/,
    );
  });
});
