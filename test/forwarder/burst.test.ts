import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startDelayProxy } from '../../bench/datapath-delay-proxy.js';
import { parseHostPort } from '../../src/net/host-port.js';
import { waitFor } from '../ingress/helpers.js';
import { createService, endpoint, freePort, internalService, startOver, useEnv } from './helpers.js';
import { dial } from '../../bench/support/load.js';
import { budget } from '../helpers/budget.js';

/** Plain: 2,000 at once. TLS in one process is bound by this test's CPU (see below): fewer. */
const CLIENTS = { plain: 2_000, tls: 500 };
const RTT_MS = 200;

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
 * Bursts across a real round trip (#27 item 2), over v1 and v2: 2,000 clients at once through a forwarder whose
 * ingress is 200 ms away (a delay proxy on loopback), every one served. A dial turn counts only
 * the handshake, and the number of turns follows the round trip (the dial window). A regression
 * test of the whole path under a burst, not a proof of the fix: with the generous budget this
 * needs in one process it passes on the old gate too; the rate is for bench/.
 */
describe.each([
  [false, 'v1'],
  [false, 'v2'],
  [true, 'v1'],
  [true, 'v2'],
] as const)('forwarder burst at 200 ms RTT (tls %s, %s)', (tls, protocol) => {
  const setup = useEnv({ ingressTls: tls });

  const clients = tls ? CLIENTS.tls : CLIENTS.plain;
  it(`serves ${clients} clients that arrive at once`, { timeout: budget(120_000) }, async () => {
    const env = await setup();
    const proxy = await startDelayProxy(parseHostPort(env.ingress), RTT_MS);
    try {
      await endpoint(env, 'tcp://burst.x:7500', env.echo.upstreamUrl);
      const port = await freePort();
      await createService(env.sim, internalService('ep-burst', { [port]: 'tcp://burst.x:7500' }));
      // Everything runs in this one process (clients, forwarder, delay proxy, ingress, upstream),
      // so the time it takes is this test's CPU (TLS: about 130 connections/s on a quiet machine,
      // far less at a load of 10): the budget is generous, and what is checked is that every
      // client is served, not how fast. bench/datapath-v2.ts measures across processes.
      const fwd = await startOver(env, tls, {
        ingress: { address: proxy.address, protocol, ...(tls ? {} : { tls: false }) },
        limits: { prefaceTimeoutMs: 40_000 },
      });
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const results = await Promise.all(Array.from({ length: clients }, () => oneEcho(port)));
      const failures = new Map<string, number>();
      for (const r of results) if (r !== 'ok') failures.set(r, (failures.get(r) ?? 0) + 1);
      const warns = env.logs.lines.filter((l) => l['msg'] === 'forwarder connection' && l['level'] === 40);
      const codes = new Map<string, number>();
      for (const l of warns) codes.set(String(l['code']), (codes.get(String(l['code'])) ?? 0) + 1);
      expect({ failures: Object.fromEntries(failures), codes: Object.fromEntries(codes) }).toEqual({
        failures: {},
        codes: {},
      });
      // v1: one ingress connection per client; v2: streams on a few sessions.
      if (protocol === 'v1') expect(proxy.accepted()).toBeGreaterThanOrEqual(clients);
      else expect(proxy.accepted()).toBeLessThanOrEqual(clients / 20);
    } finally {
      await proxy.close();
    }
  });
});
