/**
 * A TCP proxy on loopback that adds a round trip time, for tests and benchmarks of the data path
 * across regions. It models the wire, not just the bytes: a client's first bytes reach the target
 * one and a half round trips after its connect (the SYN, SYN-ACK, then the data), every later
 * chunk half a round trip after it was sent, and every chunk back half a round trip after the
 * target sent it. A FIN travels like data (in order); a reset on either side resets the other
 * at once (an abort stays an abort). No bandwidth limit. Its own sockets have Nagle off: a wire
 * passes each segment on as it comes, and a proxy with Nagle on holds a small write behind an
 * unacknowledged one until the peer's delayed ACK (up to 40 ms), which the product never sees.
 */
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export interface DelayProxy {
  port: number;
  /** `127.0.0.1:<port>` */
  address: string;
  /** Connections accepted so far. */
  accepted(): number;
  /**
   * Connections aborted so far (one side reset or errored, so both were reset), keyed by the side
   * that failed first and its error code: `client ECONNRESET`, `target ECONNREFUSED`, …
   */
  aborts(): ReadonlyMap<string, number>;
  close(): Promise<void>;
}

type Item = { at: number; chunk: Buffer } | { at: number; end: true };

/** Delivers items in order, each no earlier than its time: one timer per direction. */
class DelayedLane {
  private readonly items: Item[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** `beforeWrite`: called before the lane's first write (the target's connect, if not started yet). */
  constructor(
    private readonly out: Socket,
    private readonly beforeWrite: () => void = () => undefined,
  ) {}

  push(item: Item): void {
    this.items.push(item);
    if (!this.timer) this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.items.length = 0;
  }

  private arm(): void {
    const head = this.items[0];
    if (!head) {
      this.timer = undefined;
      return;
    }
    this.timer = setTimeout(() => this.flush(), Math.max(0, head.at - Date.now()));
  }

  private flush(): void {
    const now = Date.now();
    while (this.items.length > 0 && this.items[0]!.at <= now) {
      const item = this.items.shift()!;
      if (this.out.destroyed) continue;
      this.beforeWrite();
      if ('chunk' in item) this.out.write(item.chunk);
      else this.out.end();
    }
    this.arm();
  }
}

export async function startDelayProxy(
  target: { host: string; port: number },
  rttMs: number,
): Promise<DelayProxy> {
  const oneWay = rttMs / 2;
  const sockets = new Set<Socket>();
  let accepted = 0;
  const aborts = new Map<string, number>();
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    accepted++;
    const start = Date.now();
    // The target accepts when the client's ACK arrives (one and a half round trips after the
    // SYN), with the client's first bytes right behind it: not at once, which would lengthen the
    // target's view of the handshake by a round trip.
    const upstream = new Socket({ allowHalfOpen: true });
    // With Nagle on, a lane's second small write (an echo right behind a v2 stream's 200, each
    // its own read here) waited for the delayed ACK of the first: about one in two first bytes
    // took 40 ms more, over TLS and plain alike (BENCHMARKS.md "#27 round 3").
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const firstDataAt = start + rttMs + oneWay;
    // The connect starts with the timer or before the first write due, whichever runs first: two
    // timers due within a millisecond may run in either order on a busy loop, and a write to a
    // socket whose connect has not started fails (ERR_SOCKET_CLOSED), which reset the client
    // side as if the target had (a TLS client read it as a reset during its handshake).
    let connectStarted = false;
    const startConnect = () => {
      if (connectStarted || upstream.destroyed) return;
      connectStarted = true;
      upstream.connect(target);
    };
    const connectTimer = setTimeout(startConnect, Math.max(0, firstDataAt - Date.now() - 1));
    upstream.once('close', () => clearTimeout(connectTimer));
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    const toTarget = new DelayedLane(upstream, startConnect);
    const toClient = new DelayedLane(client);
    client.on('data', (chunk: Buffer) =>
      toTarget.push({ at: Math.max(Date.now() + oneWay, firstDataAt), chunk }),
    );
    client.on('end', () => toTarget.push({ at: Math.max(Date.now() + oneWay, firstDataAt), end: true }));
    upstream.on('data', (chunk: Buffer) => toClient.push({ at: Date.now() + oneWay, chunk }));
    upstream.on('end', () => toClient.push({ at: Date.now() + oneWay, end: true }));
    let abortedBy: string | undefined;
    const abortOn = (side: string) => (err: NodeJS.ErrnoException) => {
      if (abortedBy === undefined) {
        abortedBy = `${side} ${err.code ?? err.message}`;
        aborts.set(abortedBy, (aborts.get(abortedBy) ?? 0) + 1);
      }
      abort();
    };
    const abort = () => {
      toTarget.stop();
      toClient.stop();
      clearTimeout(connectTimer);
      for (const s of [client, upstream]) {
        if (s.destroyed) continue;
        try {
          s.resetAndDestroy();
        } catch {
          s.destroy(); // not connected yet: nothing to reset
        }
      }
    };
    client.on('error', abortOn('client'));
    upstream.on('error', abortOn('target'));
    let closed = 0;
    const onClose = () => {
      if (++closed === 2) {
        toTarget.stop();
        toClient.stop();
      }
    };
    client.once('close', onClose);
    upstream.once('close', onClose);
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    address: `127.0.0.1:${port}`,
    accepted: () => accepted,
    aborts: () => aborts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
