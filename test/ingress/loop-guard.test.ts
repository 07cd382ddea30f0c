import { EventEmitter } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectThroughIngress, IngressError } from '../../src/api/ingress/dialer.js';
import { OutboundSockets } from '../../src/mock/ingress/loop-guard.js';
import { ACME_AUTHTOKEN, startTestMock, twoAccounts } from '../helpers/mock-api.js';
import { createEndpoint, startEcho, waitFor } from './helpers.js';
import { budget } from '../helpers/budget.js';

/** What the guard reads of an upstream socket; the kernel's port sharing cannot be staged with real sockets. */
class FakeUpstreamSocket extends EventEmitter {
  constructor(
    readonly localAddress: string,
    readonly localPort: number,
    readonly remoteAddress: string,
    readonly remotePort: number,
  ) {
    super();
  }
}

describe('loop guard (connection bookkeeping on the full 4-tuple)', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it('recognises connections arriving from our own outbound sockets, even before their connect event', async () => {
    const guard = new OutboundSockets();
    const verdicts: boolean[] = [];
    const accepted: Socket[] = [];
    const server = createServer((s) => {
      // Asked at accept time, as the ingress does: the dialling side may not have seen 'connect' yet.
      verdicts.push(guard.isOutbound(s));
      accepted.push(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    cleanups.push(() => {
      for (const s of accepted) s.destroy();
      server.close();
    });

    const ours = Array.from({ length: 5 }, () => {
      const s = connect({ host: '127.0.0.1', port });
      guard.add(s, { addresses: ['127.0.0.1'], port });
      s.on('error', () => undefined);
      return s;
    });
    const foreign = connect({ host: '127.0.0.1', port });
    foreign.on('error', () => undefined);
    await waitFor(() => verdicts.length === 6, 10_000);
    expect(verdicts.filter(Boolean)).toHaveLength(5);
    await waitFor(() => ours.every((s) => !s.connecting), 10_000);
    const first = ours[0]!;
    const asAccepted = {
      remoteAddress: `::ffff:${first.localAddress!}`,
      remotePort: first.localPort!,
      localAddress: '127.0.0.1',
      localPort: port,
    };
    expect(guard.isOutbound(asAccepted)).toBe(true);

    for (const s of [...ours, foreign]) s.destroy();
    await waitFor(() => guard.size === 0, 10_000);
    expect(guard.isOutbound(asAccepted)).toBe(false);
  });

  it('a genuine client from the same address and port as an upstream socket (another destination) is not a loop', () => {
    const guard = new OutboundSockets();
    // The ingress's upstream socket 127.0.0.1:40000 → the upstream 127.0.0.1:9000 ...
    const upstream = new FakeUpstreamSocket('127.0.0.1', 40000, '127.0.0.1', 9000);
    guard.add(upstream as unknown as Socket, { addresses: ['127.0.0.1'], port: 9000 });
    upstream.emit('connect');
    // ... and a forwarder on the same host whose connection to the ingress got the same local port.
    const client = {
      remoteAddress: '127.0.0.1',
      remotePort: 40000,
      localAddress: '127.0.0.1',
      localPort: 7443,
    };
    expect(guard.isOutbound(client)).toBe(false);
    // The upstream socket arriving at the ingress itself is the loop.
    expect(
      guard.isOutbound({
        remoteAddress: '127.0.0.1',
        remotePort: 40000,
        localAddress: '127.0.0.1',
        localPort: 9000,
      }),
    ).toBe(true);
    // The same while the upstream socket is still connecting (its remote address is not known yet).
    const connecting = new FakeUpstreamSocket('127.0.0.1', 40002, '', 0);
    guard.add(connecting as unknown as Socket, { addresses: ['127.0.0.1'], port: 9000 });
    expect(
      guard.isOutbound({
        remoteAddress: '127.0.0.1',
        remotePort: 40002,
        localAddress: '127.0.0.1',
        localPort: 7443,
      }),
    ).toBe(false);
    expect(
      guard.isOutbound({
        remoteAddress: '127.0.0.1',
        remotePort: 40002,
        localAddress: '127.0.0.1',
        localPort: 9000,
      }),
    ).toBe(true);
  });
});

describe('loop guard under load: thousands of genuine connections on one host', () => {
  it(
    'refuses none of 2,500 connections held open at once through the ingress (no ERR_733)',
    { timeout: budget(180_000) },
    async () => {
      const t = await startTestMock({
        config: {
          ...twoAccounts,
          ingress: { max_connections: 5_000, max_handshakes: 5_000, max_handshakes_per_source: 5_000 },
        },
        ingress: {},
      });
      const echo = await startEcho();
      const open: Socket[] = [];
      try {
        await createEndpoint(t, 'tcp://many.conns:9', { upstream_url: echo.upstreamUrl });
        const address = t.api.ingressAddress!;
        const codes = new Map<string, number>();
        const total = 2_500;
        for (let batch = 0; batch < total / 250; batch++) {
          const results = await Promise.all(
            Array.from({ length: 250 }, () =>
              connectThroughIngress({
                address,
                authtoken: ACME_AUTHTOKEN,
                url: 'tcp://many.conns:9',
                timeoutMs: 30_000,
              }).then(
                (s) => {
                  s.on('error', () => undefined);
                  open.push(s);
                  return 'ok';
                },
                (e: unknown) => (e instanceof IngressError ? e.code : String(e)),
              ),
            ),
          );
          for (const r of results) codes.set(r, (codes.get(r) ?? 0) + 1);
        }
        expect(Object.fromEntries(codes)).toEqual({ ok: total });
      } finally {
        for (const s of open) s.destroy();
        await echo.close();
        await t.close();
      }
    },
  );
});
