import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startDelayProxy } from '../../bench/datapath-delay-proxy.js';
import { dial } from '../../bench/support/load.js';
import { parseHostPort } from '../../src/net/host-port.js';
import { waitFor } from '../ingress/helpers.js';
import { budget } from '../helpers/budget.js';
import { createService, endpoint, freePort, internalService, startOver, useEnv } from './helpers.js';

/** The mock ingress's handshake budget per source address in this test (its default is 64). */
const PER_SOURCE = 4;
const CLIENTS = 120;
const RTT_MS = 100;

/** Connects, sends one byte, waits for its echo: 'ok', or what went wrong. */
async function oneEcho(port: number): Promise<string> {
  let s: Socket;
  try {
    s = await dial(port);
  } catch (e) {
    return `connect: ${String(e)}`;
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish('no echo within 60 s'), 60_000);
    const finish = (r: string) => {
      clearTimeout(timer);
      s.destroy();
      resolve(r);
    };
    s.once('data', () => finish('ok'));
    s.once('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    s.once('close', () => finish('closed without an echo'));
    s.write('x');
  });
}

/**
 * #27 item 2, bursts under the ingress's fixed per-source handshake budget: one forwarder pod is
 * one source, so every v1 dial's TLS handshake counts against `max_handshakes_per_source` until
 * its preface arrived. 40 clients at once against a budget of 4, 50 ms away: every one is served.
 * Before the forwarder learnt that budget, its window never went below 64 turns, and each refused
 * dial waited a backoff and then went to the back of its port's queue, so clients ran out of
 * attempts (ERR_790 × 6) and were reset.
 */
describe.each([true, false])('a burst under the ingress per-source handshake budget (tls %s, v1)', (tls) => {
  const setup = useEnv({
    ingressTls: tls,
    ingress: { max_handshakes: 64, max_handshakes_per_source: PER_SOURCE },
  });

  it(
    `serves ${CLIENTS} clients at once against a budget of ${PER_SOURCE}`,
    { timeout: budget(60_000) },
    async () => {
      const env = await setup();
      const proxy = await startDelayProxy(parseHostPort(env.ingress), RTT_MS);
      try {
        await endpoint(env, 'tcp://hs.x:7600', env.echo.upstreamUrl);
        const port = await freePort();
        await createService(env.sim, internalService('ep-hs', { [port]: 'tcp://hs.x:7600' }));
        // The setup budget is generous (a loaded machine): what is checked is that no client is
        // failed for the ingress's push-back, not how fast they are served.
        const fwd = await startOver(env, tls, {
          ingress: { address: proxy.address, protocol: 'v1', ...(tls ? {} : { tls: false }) },
          limits: { prefaceTimeoutMs: 30_000 },
        });
        await waitFor(() => fwd.boundPorts().includes(port), 10_000);
        const results = await Promise.all(Array.from({ length: CLIENTS }, () => oneEcho(port)));
        const failures = new Map<string, number>();
        for (const r of results) if (r !== 'ok') failures.set(r, (failures.get(r) ?? 0) + 1);
        const given = env.logs.lines.filter((l) => l['msg'] === 'forwarder connection' && l['level'] === 40);
        const codes = new Map<string, number>();
        for (const l of given) codes.set(String(l['code']), (codes.get(String(l['code'])) ?? 0) + 1);
        expect({ failures: Object.fromEntries(failures), gaveUp: Object.fromEntries(codes) }).toEqual({
          failures: {},
          gaveUp: {},
        });
      } finally {
        await proxy.close();
      }
    },
  );
});
