import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../ingress/helpers.js';
import {
  connectMaybeReset,
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  roundTrip,
  useEnv,
} from './helpers.js';

/**
 * Silent clients lock out nobody (#15 item 3). The mock ingress here holds only 20 authenticated
 * connections. 60 silent sockets on an `http` port hold no ingress connection at all (the dial
 * waits for the first byte); 60 on a `tcp` port (dialled at accept, for server-speaks-first
 * protocols) hold at most `limits.maxSilentDialsPerPort` of them. Clients of a third endpoint
 * are served throughout. Before, every accepted socket was dialled and authenticated at once and
 * the third endpoint's clients got ERR_740.
 */
describe('forwarder lazy dial', () => {
  const setup = useEnv({ ingress: { max_connections: 20 } });

  it('silent clients of two ports take no ingress slots from a third port', async () => {
    const env = await setup();
    await endpoint(env, 'http://quiet-http.x', env.echo.upstreamUrl);
    await endpoint(env, 'tcp://quiet-tcp.x:9400', env.echo.upstreamUrl);
    await endpoint(env, 'tcp://busy.x:9401', env.echo.upstreamUrl);
    const fwd = await env.start({ limits: { maxSilentDialsPerPort: 4 } });
    const [httpPort, tcpPort, busyPort] = [await freePort(), await freePort(), await freePort()];
    await createService(
      env.sim,
      internalService('ep-quiet', {
        [httpPort]: 'http://quiet-http.x:80',
        [tcpPort]: 'tcp://quiet-tcp.x:9400',
        [busyPort]: 'tcp://busy.x:9401',
      }),
    );
    await waitFor(() => [httpPort, tcpPort, busyPort].every((p) => fwd.boundPorts().includes(p)), 10_000);

    const silent: Socket[] = [];
    try {
      for (let i = 0; i < 60; i++) silent.push(connectMaybeReset(httpPort), connectMaybeReset(tcpPort));
      await waitFor(() => fwd.openConnections() === 120, 20_000);
      for (let i = 0; i < 10; i++) {
        const s = await connectTo(busyPort);
        expect(await roundTrip(s, `busy ${i}`)).toBe(`busy ${i}`);
        s.destroy();
      }
      // Still all held: silent clients are not dropped to make room.
      expect(silent.filter((s) => s.destroyed)).toHaveLength(0);
    } finally {
      for (const s of silent) s.destroy();
    }
  });
});
