import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundSockets } from '../../src/mock/ingress/loop-guard.js';
import { waitFor } from './helpers.js';

describe('loop guard (local-port bookkeeping)', () => {
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
      verdicts.push(guard.isOutbound(s.remoteAddress, s.remotePort));
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
      guard.add(s);
      s.on('error', () => undefined);
      return s;
    });
    const foreign = connect({ host: '127.0.0.1', port });
    foreign.on('error', () => undefined);
    await waitFor(() => verdicts.length === 6, 10_000);
    expect(verdicts.filter(Boolean)).toHaveLength(5);
    expect(guard.isOutbound(foreign.localAddress, foreign.localPort)).toBe(false);
    const first = { address: ours[0]!.localAddress!, port: ours[0]!.localPort! };
    expect(guard.isOutbound(`::ffff:${first.address}`, first.port)).toBe(true);

    for (const s of [...ours, foreign]) s.destroy();
    await waitFor(() => guard.size === 0, 10_000);
    expect(guard.isOutbound(first.address, first.port)).toBe(false);
  });
});
