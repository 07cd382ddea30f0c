import type { Socket } from 'node:net';
import { startDelayProxy } from '../../bench/datapath-delay-proxy.js';
import { dial } from '../../bench/support/load.js';
import type { ForwarderConfigInput } from '../../src/forwarder/config.js';
import { parseHostPort } from '../../src/net/host-port.js';
import { waitFor } from '../ingress/helpers.js';
import { createService, endpoint, freePort, internalService, startOver, type Env } from './helpers.js';

/** Connects, sends one byte, waits for its echo: 'ok', or what went wrong. */
export async function oneEcho(port: number): Promise<string> {
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

export interface BurstOutcome {
  /** Clients that got no echo, by what went wrong. */
  failures: Record<string, number>;
  /** The forwarder's `warn` connection lines (clients it gave up on), by code. */
  codes: Record<string, number>;
  /** Connections the delay proxy accepted (ingress connections through it). */
  accepted: number;
}

/**
 * `clients` one-byte echo clients at once on one port of a forwarder whose ingress is `rttMs` away
 * (a delay proxy on loopback in front of the mock's ingress), over TLS or plain TCP.
 */
export async function echoBurst(
  env: Env,
  opts: {
    tls: boolean;
    protocol: 'v1' | 'v2';
    clients: number;
    rttMs: number;
    limits: ForwarderConfigInput['limits'];
  },
): Promise<BurstOutcome> {
  const proxy = await startDelayProxy(parseHostPort(env.ingress), opts.rttMs);
  try {
    await endpoint(env, 'tcp://burst.x:7500', env.echo.upstreamUrl);
    const port = await freePort();
    await createService(env.sim, internalService('ep-burst', { [port]: 'tcp://burst.x:7500' }));
    const fwd = await startOver(env, opts.tls, {
      ingress: { address: proxy.address, protocol: opts.protocol, ...(opts.tls ? {} : { tls: false }) },
      ...(opts.limits ? { limits: opts.limits } : {}),
    });
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const results = await Promise.all(Array.from({ length: opts.clients }, () => oneEcho(port)));
    const failures: Record<string, number> = {};
    for (const r of results) if (r !== 'ok') failures[r] = (failures[r] ?? 0) + 1;
    const codes: Record<string, number> = {};
    for (const l of env.logs.lines) {
      if (l['msg'] !== 'forwarder connection' || l['level'] !== 40) continue;
      codes[String(l['code'])] = (codes[String(l['code'])] ?? 0) + 1;
    }
    return { failures, codes, accepted: proxy.accepted() };
  } finally {
    await proxy.close();
  }
}
