/**
 * One client connection's lifecycle: wait for the client's first byte (or dial at accept for
 * server-speaks-first schemes), dial the binding ingress (retrying transient failures within a
 * short budget), then pipe both ways with backpressure and half-close, and account for it once at
 * the end (one metric update, one log line).
 *
 * A proxy never lies about a stream: only a clean end (FIN) on one side is passed on as a FIN.
 * A reset or error on either side, an idle timeout, the end of a drain and every refusal reset the
 * other side (RST), so a client never reads a cut stream as a complete one.
 */
import type { Socket } from 'node:net';
import { Cancellation } from '../api/ingress/cancel.js';
import { IngressError } from '../api/ingress/dialer.js';
import { onCleanEnd, resetSocket } from '../api/ingress/reset.js';
import type { Logger } from '../log/logger.js';
import { sleep } from '../time/clock.js';
import type { DialTrigger } from './config.js';
import type { DialGate, DialTicket, SlotCounter } from './dial-gate.js';
import type { ForwarderMetrics } from './metrics.js';
import { badGatewayResponse } from './bad-gateway.js';
import { Pump } from './pump.js';
import { attemptTimeoutMs, decideRetry, noTurnMessage, saysUpstreamDown, spreadTimeout } from './retry.js';
import type { TurnedAway } from './turned-away.js';
import type { OpenUpstream, Upstream, UpstreamEvents } from './upstream.js';
import type { DialResult } from './url-health.js';

export type Outcome =
  /** Both directions ended normally. */
  | 'closed'
  | 'idle_timeout'
  /** The client reset or errored. */
  | 'client_error'
  /** The ingress side reset or errored after `ok`. */
  | 'ingress_error'
  /** The ingress answered with an ERR_7xx. */
  | 'refused'
  /** The forwarder could not get an answer (ERR_79x). */
  | 'dial_failed'
  /** No ingress address is known. */
  | 'no_ingress'
  /** Over the per-port or total connection cap. */
  | 'limit'
  /** Closed at the end of the drain. */
  | 'shutdown'
  /** Closed at the end of the drain after its listener was removed. */
  | 'removed';

export interface ConnectionLimits {
  dialTimeoutMs: number;
  idleTimeoutMs: number;
  prefaceTimeoutMs: number;
  maxDialAttempts: number;
}

/** How to open a stream through the ingress as it is configured now. */
export interface IngressRoute {
  /** `host:port` of the ingress (for logs). */
  address: string;
  /** v1 or v2 (upstream.ts); a v2 upstream comes before the ingress answered. */
  open: OpenUpstream;
}

export interface ConnectionContext {
  port: number;
  url: string;
  /** The ingress to dial, read when the dial starts; undefined while no address is known. */
  ingress: () => IngressRoute | undefined;
  /** When to dial for a client that has sent nothing yet. */
  dialOn: DialTrigger;
  /** This port's clients dialled before sending a byte (`dialOn: accept`). */
  silent: SlotCounter;
  /** Fair admission to the ingress: handshake turns and per-port and per-source shares. */
  gate: DialGate;
  limits: ConnectionLimits;
  metrics: ForwarderMetrics;
  logger: Logger;
  /** Counts and logs (rate-limited) clients turned away by class. */
  turnedAway?: TurnedAway;
  /** Jitter source for retry delays; default Math.random. */
  random?: () => number;
  /** Told once per connection that reached a dial: streaming, or the final failure (data-path health). */
  observe?: (result: DialResult) => void;
}

const EMPTY = Buffer.alloc(0);

/**
 * Client bytes sent on a v2 stream before the ingress answered, and kept (for a replay if it
 * refuses): one HTTP/2 default stream window, so they never wait on flow control.
 */
export const EARLY_BYTES_MAX = 65_535;

/** How long a client answered 502 may take to close before its socket is closed. */
const BAD_GATEWAY_LINGER_MS = 2_000;

/**
 * The ingress turned this handshake away for having too many from us: evicted (ERR_742), over
 * its per-source budget (ERR_743; over TLS it just closes, which reads as ERR_790 during the
 * handshake). The dial window shrinks for these.
 */
function tooManyHandshakes(e: IngressError): boolean {
  return (
    e.code === 'ERR_742' || e.code === 'ERR_743' || (e.code === 'ERR_790' && /TLS handshake/.test(e.msg))
  );
}

/**
 * True unless the client is gone: a zero-byte write fails on a socket the peer reset (the kernel
 * knows), and succeeds on an open or half-closed one (a client that sent its request and a FIN
 * still waits for the answer).
 */
function clientStillThere(client: Socket): Promise<boolean> {
  if (client.destroyed) return Promise.resolve(false);
  if (client.writableEnded) return Promise.resolve(true);
  return new Promise((resolve) => client.write(EMPTY, (err) => resolve(!err)));
}

function plainIp(addr: string | undefined): string | undefined {
  if (!addr) return undefined;
  return addr.startsWith('::ffff:') ? addr.slice(7) : addr;
}

/*
 * The client's listeners while piped, shared by every connection rather than closures per
 * connection: an EventEmitter calls a listener with the emitter as `this`, and a piped client
 * socket carries its connection.
 */
const CONNECTION = Symbol('the forwarded connection of this client socket');
type ClientSocket = Socket & { [CONNECTION]?: ForwardedConnection };

function onClientEnd(this: ClientSocket): void {
  this[CONNECTION]?.clientEnd();
}

function onClientClose(this: ClientSocket): void {
  this[CONNECTION]?.clientClose();
}

export class ForwardedConnection implements UpstreamEvents {
  private readonly started = performance.now();
  private readonly abort = new Cancellation();
  private upstream: Upstream | undefined;
  /** Client bytes sent on an unconfirmed (v2) upstream, still unread here: skipped once it confirms. */
  private earlyBytes = 0;
  /** Piping started: the closes of both sides are watched. */
  private piped = false;
  /** The client's bytes on their way to the upstream, once piped. */
  private toUpstream: Pump | undefined;
  /** Piped: the client ended cleanly; and how many of the two sides have closed. */
  private clientEnded = false;
  private sidesClosed = 0;
  /** This connection's share of the ingress, held from the grant until the connection is over. */
  private ticket: DialTicket | undefined;
  private outcome: Outcome | undefined;
  private code: string | undefined;
  private error: string | undefined;
  /** The code of the last failed attempt before a dial that succeeded (the line's `retried_after`). */
  private retriedAfter: string | undefined;
  private attempts = 0;
  private dialStarted = false;
  private sawData = false;
  private holdsSilentSlot = false;
  private resetSent = false;
  private finished = false;
  /** Bytes moved on both sockets at the last idle sweep, and when they last changed. */
  private lastBytes = 0;
  private lastActive = this.started;
  private resolveDone!: () => void;
  /** Resolves once the connection is over and accounted for. */
  readonly done: Promise<void> = new Promise((r) => (this.resolveDone = r));

  constructor(
    private readonly client: Socket,
    private readonly ctx: ConnectionContext,
  ) {
    client.on('error', (err: NodeJS.ErrnoException) =>
      this.abortBoth('client_error', err.code ?? err.message),
    );
    const active = ctx.metrics.tally.active;
    const port = String(ctx.port);
    active.set(port, (active.get(port) ?? 0) + 1);
  }

  /** Starts serving; the client socket must be paused (the server uses pauseOnConnect). */
  start(): void {
    const { client, ctx } = this;
    client.on('readable', this.onReadable);
    if (ctx.dialOn === 'accept' && ctx.silent.tryAcquire()) {
      this.holdsSilentSlot = true;
      void this.dial();
    }
  }

  /** Turns the client away at once (cap reached); nothing is dialled. */
  reject(outcome: 'limit', message: string): void {
    this.error = message;
    this.refuse(outcome);
  }

  /** Bytes held in this process's stream buffers for this connection (both sockets, both directions). */
  buffered(): number {
    const sides = this.upstream ? [this.client, this.upstream.duplex] : [this.client];
    return sides.reduce((n, s) => n + s.writableLength + s.readableLength, 0);
  }

  /**
   * Called by the listeners' idle sweep (one timer for every connection, instead of a timer per
   * socket refreshed on every read and write): no byte in either direction on either socket for
   * `limits.idleTimeoutMs` resets both sides.
   */
  checkIdle(now: number): void {
    if (this.resetSent || this.finished) return;
    const { client, upstream } = this;
    const bytes = client.bytesRead + client.bytesWritten + (upstream ? upstream.bytesMoved() : 0);
    if (bytes !== this.lastBytes) {
      this.lastBytes = bytes;
      this.lastActive = now;
    } else if (now - this.lastActive >= this.ctx.limits.idleTimeoutMs) this.abortBoth('idle_timeout');
  }

  /** Resets both sides now (end of a drain, or a hard stop). */
  destroy(outcome: 'shutdown' | 'removed'): void {
    this.abortBoth(outcome);
  }

  /**
   * Until the pipe runs, the client's bytes are only watched: the first one starts the dial (or
   * frees the silent slot) and they stay buffered for the pipe (reading stops at the stream's
   * high-water mark, so the rest waits in the kernel).
   */
  private readonly onReadable = (): void => {
    // A stream opened at accept and still waiting for its answer takes the bytes at once.
    this.sendMoreEarly();
    if (this.sawData) return;
    const eof = this.client.readableLength === 0;
    if (!eof) {
      this.sawData = true;
      this.releaseSilentSlot();
    }
    if (this.dialStarted) return;
    // A client that ends without a byte: an HTTP client has nothing to ask; a TCP client may
    // still expect the server to speak first.
    if (eof && this.ctx.dialOn === 'data') {
      this.closeUnused();
      return;
    }
    void this.dial();
  };

  private releaseSilentSlot(): void {
    if (!this.holdsSilentSlot) return;
    this.holdsSilentSlot = false;
    this.ctx.silent.release();
  }

  private async dial(): Promise<void> {
    if (this.dialStarted || this.outcome) return;
    this.dialStarted = true;
    const { ctx } = this;
    const signal = this.abort;
    const dialStart = performance.now();
    const random = ctx.random ?? Math.random; // spreads the timeouts (retry.ts spreadTimeout)
    const deadline = dialStart + spreadTimeout(ctx.limits.prefaceTimeoutMs, random);
    const source = plainIp(this.client.remoteAddress);
    const sourceInfo = source ? { ip: source } : undefined;
    // After a push-back (the ingress had too many handshakes from this pod) the client asks again
    // at once, at the front of its port's queue: the gate's turns are its backoff.
    let pushedBack = false;
    for (;;) {
      const ingress = ctx.ingress();
      if (!ingress) {
        this.error = 'no binding ingress address is known (no install record yet, no ingress.address)';
        ctx.turnedAway?.record('no_ingress', ctx.port, this.error);
        ctx.observe?.({ ok: false, message: this.error });
        this.refuse('no_ingress');
        return;
      }
      const waitStart = performance.now();
      const ticket = await ctx.gate.acquire(ctx.port, source ?? '', signal, deadline - waitStart, pushedBack);
      if (this.outcome) {
        ticket?.release();
        return;
      }
      if (!ticket) {
        this.noTurn(performance.now() - dialStart, deadline - dialStart);
        return;
      }
      this.ticket = ticket;
      // A client that reset while it waited is never dialled. A reset that arrives while its bytes
      // sit unread reads as an end of stream (reset.ts), so a queued client is asked directly.
      if (performance.now() - waitStart > 1 && !(await clientStillThere(this.client))) {
        this.abortBoth('client_error', 'reset while waiting for a turn to dial');
        return;
      }
      if (this.outcome) return;
      this.attempts++;
      const t0 = performance.now();
      let upstream: Upstream | undefined;
      try {
        upstream = await ingress.open(
          ctx.url,
          sourceInfo,
          attemptTimeoutMs(ctx.limits.dialTimeoutMs, deadline - t0, random),
          signal,
          () => ticket.handshakeDone('up'),
        );
        ticket.handshakeDone();
        if (this.outcome) {
          upstream.abort();
          return;
        }
        this.sendEarly(upstream);
        await upstream.confirmed;
        ticket.upstreamAnswered(true);
      } catch (err) {
        // A retry asks for a new turn at the back of this port's queue: a port whose upstream is
        // down (ERR_730/731) waits behind the other ports' clients, not in front of them.
        this.ticket = undefined;
        this.dropUpstream(upstream);
        const e = err instanceof IngressError ? err : new IngressError('ERR_793', String(err));
        pushedBack = tooManyHandshakes(e);
        if (saysUpstreamDown(e.code)) ticket.upstreamAnswered(false);
        ticket.handshakeDone(pushedBack ? 'pushed-back' : 'failed');
        ticket.release();
        // A push-back says "not now" to this pod's burst, not "this dial failed": not an attempt.
        if (pushedBack) this.attempts--;
        if (this.outcome) return; // torn down meanwhile (drain over, stop): not a refusal
        ctx.metrics.dialSeconds.observe({ result: e.code }, (performance.now() - t0) / 1000);
        ctx.metrics.refusals.inc({ code: e.code });
        this.code = e.code;
        this.error = e.msg;
        const d = decideRetry(
          e.code,
          this.attempts,
          deadline - performance.now(),
          ctx.random,
          ctx.limits.maxDialAttempts,
        );
        if (!d.retry) {
          if (/\b(EMFILE|ENFILE)\b/.test(e.msg))
            ctx.turnedAway?.record('out_of_descriptors', ctx.port, e.msg);
          ctx.observe?.({ ok: false, code: e.code, message: e.msg });
          this.refuse(e.fromIngress ? 'refused' : 'dial_failed');
          return;
        }
        if (!pushedBack) await sleep(d.delayMs, signal.toAbortSignal());
        if (this.outcome) return;
        continue;
      }
      ctx.metrics.dialSeconds.observe({ result: 'ok' }, (performance.now() - t0) / 1000);
      if (this.outcome) {
        upstream.abort();
        return;
      }
      ctx.observe?.({ ok: true });
      // The connection was served: an earlier attempt's failure is history, not its outcome.
      if (this.code) [this.retriedAfter, this.code, this.error] = [this.code, undefined, undefined];
      this.pipe(upstream);
      return;
    }
  }

  /** The client gave up waiting for a turn to dial (ERR_791), after `waitedMs` of its `deadlineMs`. */
  private noTurn(waitedMs: number, deadlineMs: number): void {
    const { ctx } = this;
    this.code = 'ERR_791';
    this.error = noTurnMessage(waitedMs, deadlineMs, ctx.limits, ctx.gate.upstreamDown(ctx.port));
    ctx.metrics.refusals.inc({ code: this.code });
    ctx.observe?.({ ok: false, code: this.code, message: this.error });
    this.refuse('dial_failed');
  }

  /**
   * v2: the client's bytes go out as they arrive, before the ingress answered, so the first answer
   * byte comes one round trip after the client's first byte whether that byte came before the
   * stream opened (with the request) or after (while the answer is on its way). They are copied,
   * not consumed (read and put back at once): if the ingress refuses, a retry sends them again
   * and a 502 still finds the request unanswered; once it confirms, pipe() skips them.
   */
  private sendEarly(upstream: Upstream): void {
    this.upstream = upstream;
    this.sendMoreEarly();
  }

  /**
   * Sends the client's bytes that arrived since the last look to an unconfirmed v2 stream. At most
   * EARLY_BYTES_MAX are kept for a replay: beyond it the client is not read until the answer (each
   * read lets the socket buffer one more chunk, so not reading is what stops it).
   */
  private sendMoreEarly(): void {
    const { client, upstream } = this;
    if (!upstream?.early || this.piped || this.outcome || upstream.gone) return;
    if (this.earlyBytes >= EARLY_BYTES_MAX || client.readableLength <= this.earlyBytes) return;
    const held = client.read() as Buffer | null;
    if (!held) return;
    client.unshift(held);
    const fresh = held.subarray(this.earlyBytes, EARLY_BYTES_MAX);
    this.earlyBytes += fresh.length;
    upstream.duplex.write(fresh);
  }

  /** An upstream that failed before it was piped: aborted, and the client's bytes are all still here. */
  private dropUpstream(upstream: Upstream | undefined): void {
    upstream?.abort();
    if (this.upstream === upstream) this.upstream = undefined;
    this.earlyBytes = 0;
  }

  private pipe(upstream: Upstream): void {
    const { client } = this;
    // Closed while the dial was on its way back: its 'close' may be gone already.
    if (upstream.gone) {
      this.abortBoth('ingress_error', 'the ingress connection closed before piping');
      return;
    }
    this.upstream = upstream;
    // The bytes that went out with the request are still in the client's buffer: skip them.
    if (this.earlyBytes > 0) client.read(this.earlyBytes);
    this.earlyBytes = 0;
    const { duplex } = upstream;
    this.piped = true;
    // The connection itself is the upstream's events and, through CONNECTION on the socket, the
    // target of shared client listeners: no closures per connection for as long as it is open.
    upstream.watch(this);
    (client as ClientSocket)[CONNECTION] = this;
    client.on('end', onClientEnd);
    client.on('close', onClientClose);
    client.setNoDelay(true);
    client.off('readable', this.onReadable);
    if (this.holdsSilentSlot) client.once('data', () => this.releaseSilentSlot());
    // Pumps give backpressure (pause when the other side's buffer is full); half-close is
    // passed on by the 'end' handlers above (with allowHalfOpen, end() sends only our FIN).
    this.toUpstream = new Pump(client, duplex);
    new Pump(duplex, client);
    client.resume();
    duplex.resume();
  }

  // UpstreamEvents, told by the piped upstream (watch(this) in pipe()).
  /** The upstream ended cleanly: a FIN is passed on only once it is known to be one (upstream.ts). */
  cleanEnd(): void {
    this.client.end();
  }

  /** The upstream closed without a clean end (destroyed, reset, not FIN): the client goes too. */
  aborted(reason: string): void {
    this.abortBoth('ingress_error', reason);
  }

  /** The upstream's side is over. */
  closed(): void {
    this.sideClosed();
  }

  /** The client's 'end' while piped (onClientEnd). */
  clientEnd(): void {
    this.clientEnded = true;
    const { upstream } = this;
    onCleanEnd(this.client, () => upstream?.end());
  }

  /** The client's 'close' while piped (onClientClose). */
  clientClose(): void {
    if (!this.clientEnded) this.abortBoth('client_error', 'closed without an end of stream');
    this.sideClosed();
  }

  /** Both sides closed: the connection is over. */
  private sideClosed(): void {
    if (++this.sidesClosed === 2) this.finish(this.outcome ?? 'closed');
  }

  /** A client that sent nothing and ended: end our side too; nothing was dialled. */
  private closeUnused(): void {
    if (this.outcome) return;
    this.outcome = 'closed';
    this.client.off('readable', this.onReadable);
    this.client.once('close', () => this.finish('closed'));
    this.client.resume();
    this.client.end();
  }

  /** Turns the client away with a reset: it must not read the refusal as an empty, complete answer. */
  private refuse(outcome: Outcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.resetSent = true;
    this.abort.abort();
    this.client.off('readable', this.onReadable);
    if (this.client.destroyed) this.finish(outcome);
    else {
      this.client.once('close', () => this.finish(outcome));
      if (!this.answerBadGateway()) resetSocket(this.client);
    }
  }

  /**
   * An `http://` client that sent its request and got no byte yet is answered `502 Bad Gateway`
   * naming the cause (bad-gateway.ts) instead of a reset; the rest of its request is read and
   * dropped, and the socket is closed after BAD_GATEWAY_LINGER_MS if the client does not close.
   */
  private answerBadGateway(): boolean {
    const { client, ctx } = this;
    if (!this.sawData || client.bytesWritten > 0 || client.destroyed || client.writableEnded) return false;
    if (!ctx.url.startsWith('http://')) return false;
    this.toUpstream?.stop();
    client.on('data', () => undefined);
    client.resume();
    const what =
      this.outcome === 'ingress_error'
        ? 'the connection through the binding ingress failed before the first response byte'
        : (this.error ?? 'the binding ingress could not be reached');
    client.end(badGatewayResponse(this.code, what));
    const timer = setTimeout(() => client.destroy(), BAD_GATEWAY_LINGER_MS);
    timer.unref();
    client.once('close', () => clearTimeout(timer));
    return true;
  }

  private abortBoth(outcome: Outcome, error?: string): void {
    if (this.outcome === undefined) {
      this.outcome = outcome;
      if (error && !this.error) this.error = error;
    }
    if (this.resetSent) return;
    this.resetSent = true;
    this.abort.abort();
    // The ingress side failed before the first response byte: an HTTP client gets a 502.
    if (outcome !== 'ingress_error' || !this.answerBadGateway()) resetSocket(this.client);
    this.upstream?.abort();
    // Piped: both closes are watched and finish it. Not piped (none yet, or an early v2 stream
    // waiting for its answer): nothing else will.
    if (!this.piped) this.finish(this.outcome);
  }

  private finish(outcome: Outcome): void {
    if (this.finished) return;
    this.finished = true;
    this.releaseSilentSlot();
    this.ticket?.release();
    const { ctx, client } = this;
    const port = String(ctx.port);
    const { tally } = ctx.metrics;
    tally.active.set(port, (tally.active.get(port) ?? 1) - 1);
    tally.connections.add(`${port} ${outcome}`, () => ({ port, outcome }));
    tally.bytes.add(`${port} in`, () => ({ port, direction: 'to_ingress' }), client.bytesRead);
    tally.bytes.add(`${port} out`, () => ({ port, direction: 'to_client' }), client.bytesWritten);
    // Turned-away clients (limit, no_ingress) are counted and logged rate-limited by TurnedAway;
    // their own lines, like those of served connections, are debug. Skip building a line when that is
    // off (the hot path).
    const failed = outcome === 'refused' || outcome === 'dial_failed';
    if (!failed && !ctx.logger.isLevelEnabled('debug')) {
      this.resolveDone();
      return;
    }
    const line = {
      port: ctx.port,
      url: ctx.url,
      remote: plainIp(client.remoteAddress),
      outcome,
      ...(this.code ? { code: this.code } : {}),
      ...(this.error ? { error: this.error } : {}),
      ...(this.retriedAfter ? { retried_after: this.retriedAfter } : {}),
      attempts: this.attempts,
      bytes_in: client.bytesRead,
      bytes_out: client.bytesWritten,
      duration_ms: Math.round(performance.now() - this.started),
    };
    if (failed) ctx.logger.warn(line, 'forwarder connection');
    else ctx.logger.debug(line, 'forwarder connection');
    this.resolveDone();
  }
}
