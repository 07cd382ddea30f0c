import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { captured } from './helpers/capture-io.js';

/**
 * `endpoint-binder status` says only what the controller knows (issue #29 item 4), read from a
 * real HTTP server answering as a controller does: no "0 endpoints" before the first complete
 * listing (the account may hold 2,500 being written) or with bindings disabled; `N of M` when the
 * controller reports its listing's progress; a follower that sees no Lease holder does not name a
 * leader; a controller in preflight (404 on /status) is said to be starting, with its reasons.
 */

let server: Server | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function serve(routes: Record<string, { code: number; body: unknown }>): Promise<string> {
  server = createServer((req, res) => {
    const r = routes[req.url ?? ''] ?? { code: 404, body: { error: 'not found' } };
    res.statusCode = r.code;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(r.body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function doc(over: Record<string, unknown> = {}) {
  return {
    operator: { id: 'k8sop_1', ingress: null },
    install: { release: 'endpoint-binder', operatorNamespace: 'endpoint-binder' },
    selector: 'true',
    bindingsEnabled: true,
    leader: true,
    leadership: { holder: 'pod-a', since: null, cannotLead: [] },
    ready: true,
    notificationsLive: true,
    lastFullSync: null,
    counts: {},
    endpoints: [],
    ...over,
  };
}

async function status(routes: Record<string, { code: number; body: unknown }>) {
  const url = await serve(routes);
  const io = captured();
  const code = await runCli(['status', '--url', url]);
  return { code, out: io.out(), err: io.err() };
}

describe('endpoint-binder status says what it does not know', () => {
  it('during the first listing: "not yet listed", progress unknown, never "0 endpoints"', async () => {
    const r = await status({ '/status': { code: 200, body: doc() } });
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'Endpoints not yet listed: the first complete listing has not finished (progress unknown (this controller does not report it)); the table appears once it has.',
    );
    expect(r.out).not.toMatch(/^0 endpoints|No cluster-bound endpoints/m);
  });

  it('with the listing progress reported: N of M', async () => {
    const r = await status({
      '/status': { code: 200, body: { ...doc(), listing: { listed: 1200, total: 2500 } } },
    });
    expect(r.out).toContain('listed 1200 of 2500 endpoints so far');
    expect(r.out).not.toMatch(/^0 endpoints/m);
  });

  it('with bindings disabled: not listed, and why', async () => {
    const r = await status({
      '/status': { code: 200, body: doc({ bindingsEnabled: false, lastFullSync: '2026-01-01T00:00:00Z' }) },
    });
    expect(r.out).toContain('Endpoints not listed: bindings are disabled (bindings.enabled: false)');
    expect(r.out).not.toMatch(/^0 endpoints|No cluster-bound endpoints/m);
  });

  it('after a complete listing of an empty account: the account has none', async () => {
    const r = await status({ '/status': { code: 200, body: doc({ lastFullSync: '2026-01-01T00:00:00Z' }) } });
    expect(r.out).toContain('No cluster-bound endpoints in the account.');
  });

  it('a follower that sees no Lease holder names no leader', async () => {
    const r = await status({
      '/status': {
        code: 200,
        body: doc({ leader: false, leadership: { holder: null, since: null, cannotLead: [] } }),
      },
    });
    expect(r.out).toContain('follower (no replica holds the Lease: nobody writes now)');
    expect(r.out).not.toContain('writes happen on the leader');
  });

  it('a controller in preflight (404 on /status) is starting, with its /readyz reasons', async () => {
    const r = await status({
      '/readyz': {
        code: 503,
        body: { ready: false, phase: 'preflight', reasons: ['preflight: waiting for the management API'] },
      },
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /is starting and serves \/status once it has registered \(not ready: preflight: waiting for the management API\)/,
    );
    expect(r.err).not.toContain('HTTP 404');
  });
});
