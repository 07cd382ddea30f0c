import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../ingress/helpers.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  startOver,
  useEnv,
} from './helpers.js';

/**
 * Idle connections are found by one sweep over every connection (not a timer per socket): a
 * connection that moves bytes stays open however long it lives; one that moves none for
 * `limits.idleTimeoutMs` is reset on both sides. Over plain TCP and over TLS to the ingress.
 */

/** Resolves when the socket closes: with the error code it saw (a reset) or 'end' for a clean FIN. */
function closing(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let how = 'closed';
    s.on('end', () => (how = how === 'closed' ? 'end' : how));
    s.on('error', (err: NodeJS.ErrnoException) => (how = err.code ?? err.message));
    s.once('close', () => resolve(how));
    s.resume();
  });
}

for (const tls of [false, true]) {
  describe(`idle timeout (${tls ? 'TLS' : 'plain TCP'} to the ingress)`, () => {
    const setup = useEnv({ ingressTls: tls });

    it('keeps a connection that echoes a byte every 100 ms open past idleTimeoutMs, then resets it once silent', async () => {
      const env = await setup();
      await endpoint(env, 'tcp://idle.x:7300', env.echo.upstreamUrl);
      const fwd = await startOver(env, tls, { limits: { idleTimeoutMs: 400 } });
      const port = await freePort();
      await createService(env.sim, internalService('ep-idle', { [port]: 'tcp://idle.x:7300' }));
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const s = await connectTo(port);
      const ended = closing(s);
      // 15 round trips 100 ms apart: 1.5 s, well past the 400 ms idle timeout (and its sweep).
      for (let i = 0; i < 15; i++) {
        expect(await roundTrip(s, `${i % 10}`)).toBe(`${i % 10}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(s.destroyed).toBe(false);
      expect(logLines(env, 'forwarder connection')).toEqual([]);
      // Now silent: reset (not a clean end) after the idle timeout.
      expect(await ended).toBe('ECONNRESET');
      await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
      expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'idle_timeout' });
    });
  });
}
