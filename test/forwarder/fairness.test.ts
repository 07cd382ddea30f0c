import { budget } from '../helpers/budget.js';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DOWN_AFTER } from '../../src/forwarder/upstream-verdict.js';
import { metricValue } from '../kube/helpers.js';
import { startServer, startUnresponsiveUpstream, waitFor } from '../ingress/helpers.js';
import {
  connectMaybeReset,
  connectTo,
  createService,
  deleteService,
  endpoint,
  freePort,
  freePorts,
  internalService,
  PROTOCOLS,
  roundTrip,
  startOver,
  useEnv,
  type Env,
} from './helpers.js';

/**
 * One endpoint never costs another (#27 item 1), over plain TCP and TLS to the real mock ingress.
 * The mock ingress's own per-URL share is set to its whole budget here, so what is tested is the
 * forwarder's fair admission.
 */

async function twoPorts(env: Env, upstreamA: string): Promise<{ a: number; b: number }> {
  await endpoint(env, 'tcp://a.x:7400', upstreamA);
  await endpoint(env, 'tcp://b.x:7401', env.echo.upstreamUrl);
  const [a, b] = (await freePorts(2)) as [number, number];
  await createService(env.sim, internalService('ep-a', { [a]: 'tcp://a.x:7400' }));
  await createService(env.sim, internalService('ep-b', { [b]: 'tcp://b.x:7401' }));
  return { a, b };
}

/** Connects `n` clients to `port`, each sending one byte. */
function oneByteClients(port: number, n: number): Socket[] {
  return Array.from({ length: n }, () => {
    const s = connectMaybeReset(port);
    s.write('x');
    return s;
  });
}

async function serveB(port: number, n: number): Promise<string[]> {
  const answers: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = await connectTo(port);
    answers.push(await roundTrip(s, `b ${i}`, 20_000).catch((e: unknown) => `failed: ${String(e)}`));
    s.destroy();
  }
  return answers;
}

const expected = (n: number) => Array.from({ length: n }, (_, i) => `b ${i}`);

describe.each(PROTOCOLS.flatMap((p) => [false, true].map((tls) => [p, tls] as const)))(
  'forwarder fairness between ports (%s, tls %s)',
  (protocol, tls) => {
    describe('one-byte clients', () => {
      const setup = useEnv({
        ingressTls: tls,
        protocol,
        ingress: { max_connections: 40, max_connections_per_url: 40 },
      });

      // Before: 60 one-byte clients of a.x took all 40 ingress slots, and every client of b.x was
      // refused (ERR_740, retried until the budget ran out).
      it(
        '60 one-byte clients of a silent endpoint leave room for another endpoint',
        async () => {
          const env = await setup();
          const accepted: Socket[] = [];
          const silent = await startServer((s) => accepted.push(s));
          try {
            const { a, b } = await twoPorts(env, silent.upstreamUrl);
            const fwd = await startOver(env, tls, {
              limits: { maxIngressConnectionsPerPort: 16, prefaceTimeoutMs: 20_000 },
            });
            await waitFor(() => fwd.boundPorts().length === 2, 10_000);
            const clients = oneByteClients(a, 60);
            await waitFor(() => accepted.length >= 16, 20_000);
            // The rest of a.x's clients wait their turn in the forwarder.
            await waitFor(
              async () => (await metricValue(fwd.registry, 'endpoint_binder_forwarder_dials_waiting')) === 44,
              20_000,
            );
            expect(await serveB(b, 10)).toEqual(expected(10));
            expect(accepted.length).toBe(16);
            for (const c of clients) c.destroy();
          } finally {
            await silent.close();
          }
        },
        budget(60_000),
      );
    });

    describe('an upstream that drops SYNs', () => {
      // The ingress waits 20 s for the upstream's connect and serves 150 connections; each client
      // has 10 s, and a.x may hold 100 of them.
      const setup = useEnv({
        ingressTls: tls,
        protocol,
        ingress: { dial_timeout_ms: 20_000, max_connections: 150, max_connections_per_url: 150 },
      });

      // Before: 200 clients of a.x held all 64 dial turns through the ingress's upstream connect, and
      // b.x's clients found no turn within prefaceTimeoutMs (reset with ERR_791). It also fails
      // with one FIFO for all ports instead of per-port queues (checked by swapping the gate): with
      // a.x's share enforced at the head of one queue, b.x's clients wait behind a.x's 100
      // waiters until those are served or gone (so a.x's queue is empty when b.x is served);
      // without shares, a.x's clients take all 150 ingress slots (ERR_740 for b.x).
      it(
        "200 clients of a black-holed endpoint hold neither the next endpoint's turns nor its slots",
        async () => {
          const env = await setup();
          const blackHole = await startUnresponsiveUpstream(30_000);
          try {
            const { a, b } = await twoPorts(env, `tcp://127.0.0.1:${blackHole.port}`);
            const fwd = await startOver(env, tls, {
              limits: { prefaceTimeoutMs: 10_000, maxIngressConnectionsPerPort: 100 },
            });
            await waitFor(() => fwd.boundPorts().length === 2, 10_000);
            // Two waves, so a.x always has clients whose budget outlasts b.x's first client's.
            const clients = oneByteClients(a, 100);
            await waitFor(() => fwd.openConnections() === 100, 20_000);
            await new Promise((r) => setTimeout(r, 1_000));
            clients.push(...oneByteClients(a, 100));
            await waitFor(() => fwd.openConnections() === 200, 20_000);
            // a.x holds its share (100, all in the ingress's upstream connect, none holding a
            // handshake turn); the second wave waits in the forwarder, in a.x's own queue.
            await waitFor(
              async () =>
                (await metricValue(fwd.registry, 'endpoint_binder_forwarder_dials_waiting')) === 100,
              3_000,
            );
            expect(await serveB(b, 10)).toEqual(expected(10));
            // b.x went past a.x's queue, not through it: a.x's second wave is still waiting (its
            // first wave holds its share for 10 s).
            expect(await metricValue(fwd.registry, 'endpoint_binder_forwarder_dials_waiting')).toBe(100);
            for (const c of clients) c.destroy();
          } finally {
            blackHole.close();
          }
        },
        budget(60_000),
      );
    });

    describe('an endpoint whose upstream is down', () => {
      const setup = useEnv({ ingressTls: tls, protocol });

      /**
       * An endpoint whose upstream refuses (nothing listens on `upstreamPort` yet), served by a
       * fresh forwarder, after one client's DOWN_AFTER attempts were each answered ERR_730: the
       * port is down (the gauge says 1).
       */
      async function refusedPort(env: Env) {
        const upstreamPort = await freePort();
        await endpoint(env, 'tcp://d.x:7403', `tcp://127.0.0.1:${upstreamPort}`);
        const port = await freePort();
        await createService(env.sim, internalService('ep-d', { [port]: 'tcp://d.x:7403' }));
        const fwd = await startOver(env, tls, { limits: { maxDialAttempts: DOWN_AFTER } });
        await waitFor(() => fwd.boundPorts().includes(port), 10_000);
        const down = () => metricValue(fwd.registry, 'endpoint_binder_forwarder_ports_upstream_down');
        expect(await down()).toBe(0);
        const refused = await connectTo(port);
        refused.write('x');
        await new Promise((r) => refused.once('close', r));
        await waitFor(async () => (await down()) === 1, 5_000);
        return { fwd, port, upstreamPort, down };
      }

      // The gate holds a down port to DOWN_PORT_DIALS dials awaiting an answer (dial-gate.test.ts); this
      // checks what tells it: the ingress's real ERR_730s mark the port down, and the first dial
      // that reaches the upstream again clears it. Before: no such state (the gauge did not exist).
      it(
        "is marked down by the ingress's ERR_730s and up again by a dial that reaches the upstream",
        async () => {
          const { port, upstreamPort, down } = await refusedPort(await setup());
          const echo = await startServer((s) => s.pipe(s), upstreamPort);
          try {
            const served = await connectTo(port);
            expect(await roundTrip(served, 'back again')).toBe('back again');
            served.destroy();
            expect(await down(), 'a dial reached the upstream: the port is up').toBe(0);
          } finally {
            await echo.close();
          }
        },
        budget(30_000),
      );

      // A port that may later serve another endpoint does not carry this one's verdict.
      it(
        'is forgotten when its listener is removed',
        async () => {
          const env = await setup();
          const { fwd, port, down } = await refusedPort(env);
          await deleteService(env.sim, 'ep-d');
          await waitFor(() => !fwd.boundPorts().includes(port), 10_000);
          expect(await down(), 'ports counted down after the listener went').toBe(0);
        },
        budget(30_000),
      );
    });

    describe('a client that resets while queued', () => {
      const setup = useEnv({ ingressTls: tls, protocol });

      // Before: a queued client was dialled when its turn came even though it was gone.
      it(
        'is never dialled',
        async () => {
          const env = await setup();
          let upstreamConnections = 0;
          const echo = await startServer((s) => {
            upstreamConnections++;
            s.pipe(s);
          });
          try {
            await endpoint(env, 'tcp://q.x:7402', echo.upstreamUrl);
            const port = await freePort();
            await createService(env.sim, internalService('ep-q', { [port]: 'tcp://q.x:7402' }));
            const fwd = await startOver(env, tls, { limits: { maxIngressConnectionsPerPort: 1 } });
            await waitFor(() => fwd.boundPorts().includes(port), 10_000);
            const waiting = () => metricValue(fwd.registry, 'endpoint_binder_forwarder_dials_waiting');

            const first = await connectTo(port);
            expect(await roundTrip(first, 'first')).toBe('first');
            // It uploads more than the forwarder reads ahead, so the reset meets unread bytes and
            // the forwarder's socket sees no error while it waits (nothing reads it).
            const gone = connectMaybeReset(port);
            gone.write(Buffer.alloc(256 * 1024, 1));
            await waitFor(async () => (await waiting()) === 1, 10_000);
            gone.resetAndDestroy();
            await new Promise((r) => setTimeout(r, 200));
            first.destroy();
            // The slot is free again: the next client is served, and only two upstream connections
            // were ever opened (first and third).
            const third = await connectTo(port);
            expect(await roundTrip(third, 'third')).toBe('third');
            third.destroy();
            expect(await waiting()).toBe(0);
            expect(upstreamConnections).toBe(2);
          } finally {
            await echo.close();
          }
        },
        budget(30_000),
      );
    });
  },
);
