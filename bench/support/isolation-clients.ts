/**
 * Clients of the isolation and burst benchmark (bench/datapath-isolation.ts): a timed 1-byte echo
 * from a chosen loopback source address, paced samples of it, a crowd of one-byte clients that
 * keeps its size (a client that is reset or closed connects again, as a real attacker or a
 * retrying application would), and a burst of clients at once. Every socket handles `error`, so
 * a reset is counted, never thrown.
 */
import { connect, type Socket } from 'node:net';

/** Connect → the echo of one byte sent at once, ms; or what went wrong instead. */
export type EchoResult = { ok: true; ms: number } | { ok: false; ms: number; error: string };

export function timedEcho(port: number, localAddress: string, timeoutMs: number): Promise<EchoResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, localAddress, allowHalfOpen: true });
    const finish = (r: EchoResult) => {
      clearTimeout(timer);
      s.destroy();
      resolve(r);
    };
    const fail = (error: string) => finish({ ok: false, ms: performance.now() - t0, error });
    const timer = setTimeout(() => fail(`no echo within ${timeoutMs} ms`), timeoutMs);
    s.once('connect', () => {
      s.setNoDelay(true);
      s.write('x');
    });
    s.once('data', () => finish({ ok: true, ms: performance.now() - t0 }));
    s.once('error', (e: NodeJS.ErrnoException) => fail(e.code ?? e.message));
    s.once('end', () => fail('ended before the echo'));
    s.once('close', () => fail('closed before the echo'));
  });
}

export interface Samples {
  /** Connect → echo of the served samples, ms. */
  ms: number[];
  /** Each sample's start (performance.now()) and time (ms; a failed one's until it failed). */
  timeline: { at: number; ms: number }[];
  /** All samples, served or not. */
  n: number;
  /** Failure text → count. */
  failures: Map<string, number>;
}

/** `n` sequential timed echoes, `gapMs` apart: a steady trickle of one endpoint's clients. */
export async function sampleEchoes(
  port: number,
  localAddress: string,
  n: number,
  gapMs: number,
  timeoutMs: number,
): Promise<Samples> {
  const out: Samples = { ms: [], timeline: [], n, failures: new Map() };
  for (let i = 0; i < n; i++) {
    const at = performance.now();
    const r = await timedEcho(port, localAddress, timeoutMs);
    out.timeline.push({ at, ms: r.ms });
    if (r.ok) out.ms.push(r.ms);
    else out.failures.set(r.error, (out.failures.get(r.error) ?? 0) + 1);
    await new Promise((res) => setTimeout(res, gapMs));
  }
  return out;
}

/**
 * The q-quantile of the samples, a failed sample counting as slower than every success (so a p99
 * with more than 1 % failures is `Infinity`, never a flattering time).
 */
export function quantile(s: Samples, q: number): number {
  const sorted = s.ms.slice().sort((a, b) => a - b);
  const i = Math.min(s.n - 1, Math.floor(q * s.n));
  return i < sorted.length ? sorted[i]! : Infinity;
}

/**
 * `size` clients of one port from `localAddress`, each sending one byte and then nothing; one that
 * is reset or closed connects again after `reconnectMs`, so the crowd keeps its size.
 */
export class OneByteCrowd {
  private readonly sockets = new Set<Socket>();
  private stopped = false;
  connects = 0;
  /** Ended by the far side: reset, closed, or ended. */
  endedByPeer = 0;
  /** Bytes the crowd received (an upstream that never answers sends none). */
  bytesReceived = 0;
  /** When each client was ended by the far side (performance.now()). */
  readonly endedAt: number[] = [];

  constructor(
    private readonly port: number,
    private readonly localAddress: string,
    private readonly reconnectMs = 100,
  ) {}

  start(size: number): void {
    for (let i = 0; i < size; i++) this.one();
  }

  get open(): number {
    return this.sockets.size;
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private one(): void {
    if (this.stopped) return;
    this.connects++;
    const s = connect({ host: '127.0.0.1', port: this.port, localAddress: this.localAddress });
    this.sockets.add(s);
    s.on('error', () => undefined);
    s.on('data', (c: Buffer) => (this.bytesReceived += c.length));
    s.once('connect', () => s.write('x'));
    s.once('close', () => {
      if (this.stopped || !this.sockets.delete(s)) return;
      this.endedByPeer++;
      this.endedAt.push(performance.now());
      setTimeout(() => this.one(), this.reconnectMs);
    });
  }
}

export interface BurstResult {
  served: number;
  failed: number;
  failures: Map<string, number>;
  /** From the first connect to the last echo, ms (all served or not). */
  wallMs: number;
  /** Connect → echo of the served clients, ms, sorted. */
  ms: number[];
}

/** `n` clients connecting at once, each one timed echo. */
export async function burst(port: number, n: number, timeoutMs: number): Promise<BurstResult> {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: n }, () => timedEcho(port, '127.0.0.1', timeoutMs)));
  const wallMs = performance.now() - t0;
  const failures = new Map<string, number>();
  const ms: number[] = [];
  for (const r of results) {
    if (r.ok) ms.push(r.ms);
    else failures.set(r.error, (failures.get(r.error) ?? 0) + 1);
  }
  ms.sort((a, b) => a - b);
  return { served: ms.length, failed: n - ms.length, failures, wallMs, ms };
}

/**
 * The `k` slowest samples, each with how many crowd clients were ended within `windowMs` before
 * its start or during it: a slow sample that coincides with a wave of the crowd's resets and
 * reconnects points at CPU, not at a queue.
 */
export function slowest(s: Samples, k: number, endedAt: readonly number[], windowMs: number): string {
  return s.timeline
    .slice()
    .sort((a, b) => b.ms - a.ms)
    .slice(0, k)
    .map(({ at, ms }) => {
      const near = endedAt.filter((t) => t >= at - windowMs && t <= at + ms).length;
      const t0 = s.timeline[0]?.at ?? at;
      return `${ms.toFixed(0)} ms at +${((at - t0) / 1000).toFixed(1)} s (${near} A clients ended around it)`;
    })
    .join('; ');
}
