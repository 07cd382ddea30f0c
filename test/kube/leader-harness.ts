/**
 * Scenario harness for leader election: several electors against one kubesim, each with its own
 * fake clock (monotonic + wall) on a shared simulated timeline, each talking to kubesim through
 * its own loopback proxy that can delay answers or cut the elector off.
 *
 * Simulated time only moves in `World.advance`, and only once the process is quiet: no HTTP
 * exchange in flight (counted through node's `http.client.*` diagnostics channels) other than
 * the ones the proxies deliberately hold. Timers fire at their due instant, one at a time.
 *
 * A "stall" models a blocked event loop (a busy loop, SIGSTOP): the elector's monotonic and wall
 * clocks keep moving, but none of its timers fire and none of its answers are delivered until
 * the stall ends; then they run, late, in order.
 *
 * The checker samples every elector's `isLeader()` before and after every event. Between events
 * no code runs, and `isLeader()` can only turn false with time alone (a deadline passing), so
 * "never two leaders at an event" means "never two leaders at any instant".
 */
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn, setTimeout as realSleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import type { MonotonicClock } from '../../src/time/clock.js';

interface Timer {
  clock: FakeClock;
  due: number;
  seq: number;
  /** Runs even while its clock is stalled (the code that is busy *is* the stall). */
  resumesStall: boolean;
  fire: () => void;
}

interface Held {
  owner: FakeClock;
  releaseAt: number;
  deliver: () => void;
}

export class World {
  /** Simulated time (ms) since the world began. */
  t = 0;
  /** At a stall's end: deliver held answers before firing late timers (the adversarial order). */
  ioFirst = false;
  private timers: Timer[] = [];
  private held = new Set<Held>();
  private seq = 0;
  private activity = 0;
  private outstanding = 0;
  private readonly probes: (() => void)[] = [];
  private readonly unsubscribe: (() => void)[] = [];

  constructor() {
    const up = (): void => {
      this.outstanding++;
      this.activity++;
    };
    const down = (): void => {
      this.outstanding--;
      this.activity++;
    };
    for (const [name, fn] of [
      ['http.client.request.start', up],
      ['http.client.response.finish', down],
      ['http.client.request.error', down],
    ] as const) {
      diagnostics.subscribe(name, fn);
      this.unsubscribe.push(() => diagnostics.unsubscribe(name, fn));
    }
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  clock(opts: { monoOffset?: number; wallOffset?: number } = {}): FakeClock {
    return new FakeClock(this, opts.monoOffset ?? 0, opts.wallOffset ?? Date.UTC(2026, 0, 1));
  }

  /** Called before and after every event (the two-leader checker). */
  probe(fn: () => void): void {
    this.probes.push(fn);
  }

  addTimer(clock: FakeClock, ms: number, fire: () => void, resumesStall = false): Timer {
    const timer: Timer = { clock, due: this.t + Math.max(0, ms), seq: this.seq++, resumesStall, fire };
    this.timers.push(timer);
    this.activity++;
    return timer;
  }

  removeTimer(timer: Timer): void {
    this.timers = this.timers.filter((x) => x !== timer);
  }

  /** Holds an answer until `releaseAt` (and the owner's stall end); `Infinity` = until the client gives up. */
  hold(owner: FakeClock, releaseAt: number, deliver: () => void): () => void {
    const h: Held = { owner, releaseAt, deliver };
    this.held.add(h);
    this.activity++;
    return () => {
      if (this.held.delete(h)) this.activity++;
    };
  }

  /** Runs the world for `ms` of simulated time. */
  async advance(ms: number, maxStepMs = 20): Promise<void> {
    const end = this.t + ms;
    await this.runDue();
    while (this.t < end) {
      let next = Math.min(end, this.t + maxStepMs);
      for (const x of this.timers) next = Math.min(next, this.effectiveDue(x));
      for (const h of this.held) next = Math.min(next, Math.max(h.releaseAt, h.owner.stalledUntil));
      this.t = Math.max(this.t, next);
      await this.runDue();
    }
  }

  /** Advances in steps until `cond` holds (or fails after `limitMs` of simulated time). */
  async advanceUntil(cond: () => boolean, what: string, limitMs = 30_000): Promise<void> {
    const end = this.t + limitMs;
    while (!cond()) {
      if (this.t >= end) throw new Error(`simulated ${limitMs} ms passed without ${what}`);
      await this.advance(20);
    }
  }

  private runnable(x: Timer): boolean {
    return x.resumesStall || !x.clock.stalled();
  }

  private effectiveDue(x: Timer): number {
    return x.resumesStall ? x.due : Math.max(x.due, x.clock.stalledUntil);
  }

  private sample(): void {
    for (const p of this.probes) p();
  }

  private async runDue(): Promise<void> {
    await this.settle();
    for (;;) {
      this.sample();
      const did = this.ioFirst ? this.releaseOne() || this.fireOne() : this.fireOne() || this.releaseOne();
      if (!did) break;
      this.sample();
      await this.settle();
    }
  }

  private fireOne(): boolean {
    let pick: Timer | undefined;
    for (const x of this.timers) {
      if (!this.runnable(x) || this.effectiveDue(x) > this.t) continue;
      // Code resuming from a stall runs before the late timers it delayed.
      const key = (y: Timer): [number, number, number] => [y.resumesStall ? 0 : 1, y.due, y.seq];
      if (!pick || compare(key(x), key(pick)) < 0) pick = x;
    }
    if (!pick) return false;
    this.removeTimer(pick);
    this.activity++;
    pick.fire();
    return true;
  }

  private releaseOne(): boolean {
    for (const h of this.held) {
      if (h.releaseAt <= this.t && !h.owner.stalled()) {
        this.held.delete(h);
        this.activity++;
        h.deliver();
        return true;
      }
    }
    return false;
  }

  /** Waits (in real time) until no HTTP exchange is in flight except the held ones. */
  async settle(): Promise<void> {
    let quiet = 0;
    let seen = -1;
    for (let i = 0; i < 10_000 && quiet < 4; i++) {
      await nextTurn();
      const busy = this.outstanding - this.held.size > 0;
      if (!busy && this.activity === seen) {
        quiet++;
      } else {
        quiet = 0;
        seen = this.activity;
        if (busy) await realSleep(1);
      }
    }
  }
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export class FakeClock implements MonotonicClock {
  stalledUntil = -Infinity;

  constructor(
    private readonly world: World,
    private readonly monoOffset: number,
    private wallOffset: number,
  ) {}

  now(): number {
    return this.world.t + this.wallOffset;
  }

  monotonicNow(): number {
    return this.world.t + this.monoOffset;
  }

  random(): number {
    return 0.5;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const onAbort = (): void => {
        this.world.removeTimer(timer);
        resolve();
      };
      const timer = this.world.addTimer(this, ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  stalled(): boolean {
    return this.world.t < this.stalledUntil;
  }

  /** From outside (SIGSTOP for `ms`): nothing of this elector runs meanwhile. */
  stall(ms: number): void {
    this.stalledUntil = Math.max(this.stalledUntil, this.world.t + ms);
  }

  /** From inside the elector's own code (a busy loop): resolves at the stall's end, first. */
  busy(ms: number): Promise<void> {
    this.stall(ms);
    return new Promise((resolve) => this.world.addTimer(this, ms, resolve, true));
  }

  /** Steps the wall clock (NTP, an operator); the monotonic clock does not move. */
  stepWall(deltaMs: number): void {
    this.wallOffset += deltaMs;
  }
}

export type ProxyRule = (req: {
  method: string;
  path: string;
}) => { cut: true } | { delayMs: number } | { stallAfterMs: number } | undefined;

/**
 * A loopback HTTP proxy in front of kubesim for one elector. `rule` decides per request: `cut`
 * (never forwarded, never answered: the client must give up), `delayMs` (forwarded at once,
 * the answer held for that long on the world's clock, or in real time without a world), or
 * `stallAfterMs` (answered, then the owner's event loop blocks that long before handling it).
 */
export class ElectorProxy {
  rule: ProxyRule = () => undefined;
  /** Answers from kubesim that were delivered to the elector, in order. */
  readonly delivered: { method: string; path: string; status: number; at: number }[] = [];
  /** Requests as they arrived (time on the world's clock, or real time without a world). */
  readonly arrived: { method: string; path: string; at: number; body: string }[] = [];
  /** Cut-off requests whose client has not given up yet. */
  openCut = 0;
  private readonly server: http.Server;
  private port = 0;

  constructor(
    private readonly target: string,
    private readonly token: string,
    private readonly owner?: { world: World; clock: FakeClock },
  ) {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'proxy', server: `http://127.0.0.1:${this.port}`, skipTLSVerify: true }],
      users: [{ name: 'proxy', token: this.token }],
      contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
      currentContext: 'proxy',
    });
    return kc;
  }

  private now(): number {
    return this.owner ? this.owner.world.t : Date.now();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const rule = this.rule({ method, path });
    const at = this.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.arrived.push({ method, path, at, body: Buffer.concat(chunks).toString('utf8') });
      if (rule && 'cut' in rule) {
        this.holdForever(res);
        return;
      }
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const fwd = http.request(new URL(path, this.target), { method, headers }, (up) => {
        const body: Buffer[] = [];
        up.on('data', (c: Buffer) => body.push(c));
        up.on('end', () => {
          const deliver = (): void => {
            if (res.destroyed) return;
            this.delivered.push({ method, path, status: up.statusCode ?? 0, at: this.now() });
            res.writeHead(up.statusCode ?? 502, {
              'content-type': up.headers['content-type'] ?? 'application/json',
            });
            res.end(Buffer.concat(body));
          };
          this.schedule(res, rule, deliver);
        });
      });
      fwd.on('error', () => res.destroy());
      fwd.end(Buffer.concat(chunks));
    });
  }

  private schedule(
    res: http.ServerResponse,
    rule: { delayMs: number } | { stallAfterMs: number } | undefined,
    deliver: () => void,
  ): void {
    const delayMs = rule && 'delayMs' in rule ? rule.delayMs : 0;
    const stallAfterMs = rule && 'stallAfterMs' in rule ? rule.stallAfterMs : 0;
    if (!this.owner) {
      if (delayMs > 0) setTimeout(deliver, delayMs);
      else deliver();
      return;
    }
    const { world, clock } = this.owner;
    if (stallAfterMs > 0) clock.stall(stallAfterMs);
    const releaseAt = world.t + delayMs;
    if (releaseAt <= world.t && !clock.stalled()) {
      deliver();
      return;
    }
    const drop = world.hold(clock, releaseAt, deliver);
    res.on('close', drop);
  }

  private holdForever(res: http.ServerResponse): void {
    this.openCut++;
    const drop = this.owner?.world.hold(this.owner.clock, Infinity, () => undefined);
    res.on('close', () => {
      this.openCut--;
      drop?.();
    });
  }
}

/** Samples who leads; records every violation instead of throwing inside library callbacks. */
export class LeaderChecker {
  readonly violations: string[] = [];
  /** Per elector: [from, to) intervals of simulated (or real) time during which it led. */
  readonly terms = new Map<string, { from: number; to?: number }[]>();
  readonly writes: { who: string; at: number }[] = [];

  constructor(
    private readonly electors: Map<string, { isLeader(): boolean }>,
    private readonly now: () => number,
  ) {}

  sample(): string[] {
    const leaders = [...this.electors].filter(([, e]) => e.isLeader()).map(([n]) => n);
    const at = this.now();
    for (const name of this.electors.keys()) {
      const list = this.terms.get(name) ?? [];
      this.terms.set(name, list);
      const last = list.at(-1);
      const open = last && last.to === undefined ? last : undefined;
      if (leaders.includes(name) && !open) list.push({ from: at });
      if (!leaders.includes(name) && open) open.to = at;
    }
    if (leaders.length > 1) this.violations.push(`at ${at}: ${leaders.join(' and ')} both lead`);
    return leaders;
  }

  /** A write by `who`, made after it checked `isLeader()`: nobody else may lead right now. */
  write(who: string): void {
    const leaders = this.sample();
    this.writes.push({ who, at: this.now() });
    if (leaders.join() !== who) {
      this.violations.push(`at ${this.now()}: ${who} wrote while [${leaders.join()}] led`);
    }
  }

  /** When `who` first started leading (at or after `after`). */
  ledFrom(who: string, after = -Infinity): number | undefined {
    return this.terms.get(who)?.find((x) => x.from >= after)?.from;
  }
}
