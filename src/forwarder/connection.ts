/**
 * One client connection's lifecycle: dial the binding ingress (retrying transient failures
 * within a short budget), then pipe both ways with backpressure and half-close, and account for
 * it once at the end (one metric update, one log line).
 */
import type { Socket } from 'node:net';
import { connectThroughIngress, IngressError, type IngressTlsOptions } from '../api/ingress/dialer.js';
import type { Logger } from '../log/logger.js';
import type { ForwarderMetrics } from './metrics.js';
import { decideRetry } from './retry.js';

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
  /** No ingress address is known for the port. */
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
}

export interface ConnectionContext {
  port: number;
  url: string;
  /** `host:port`, or undefined when none is known. */
  ingress: string | undefined;
  authtoken: string;
  /** TLS options, or undefined for plain TCP (loopback ingress only; checked by the config). */
  tls: IngressTlsOptions | undefined;
  limits: ConnectionLimits;
  metrics: ForwarderMetrics;
  logger: Logger;
  /** Jitter source for retry delays; default Math.random. */
  random?: () => number;
}

/** How long a refused client may keep its half of the connection open before it is destroyed. */
const CLOSE_LINGER_MS = 2_000;

function plainIp(addr: string | undefined): string | undefined {
  if (!addr) return undefined;
  return addr.startsWith('::ffff:') ? addr.slice(7) : addr;
}

export class ForwardedConnection {
  private readonly started = performance.now();
  private readonly abort = new AbortController();
  private upstream: Socket | undefined;
  private outcome: Outcome | undefined;
  private code: string | undefined;
  private error: string | undefined;
  private attempts = 0;
  private resolveDone!: () => void;
  /** Resolves once the connection is over and accounted for. */
  readonly done: Promise<void> = new Promise((r) => (this.resolveDone = r));

  constructor(
    private readonly client: Socket,
    private readonly ctx: ConnectionContext,
  ) {
    client.on('error', (err: NodeJS.ErrnoException) =>
      this.teardown('client_error', err.code ?? err.message),
    );
    ctx.metrics.active.inc({ port: String(ctx.port) });
  }

  /** Starts the dial; the client socket must be paused (the server uses pauseOnConnect). */
  start(): void {
    void this.run();
  }

  /** Turns the client away at once (cap reached, no ingress); nothing is dialled. */
  reject(outcome: 'limit' | 'no_ingress', message: string): void {
    this.error = message;
    this.closeClientGently(outcome);
  }

  /** Bytes held in this process's stream buffers for this connection (both sockets, both directions). */
  buffered(): number {
    const sides = this.upstream ? [this.client, this.upstream] : [this.client];
    return sides.reduce((n, s) => n + s.writableLength + s.readableLength, 0);
  }

  /** Closes both sides now (end of a drain, or a hard stop). */
  destroy(outcome: 'shutdown' | 'removed'): void {
    this.teardown(outcome);
  }

  private async run(): Promise<void> {
    const { ctx } = this;
    if (!ctx.ingress) {
      this.reject(
        'no_ingress',
        'no binding ingress address is known (no endpoint-binder.io/ingress annotation)',
      );
      return;
    }
    const deadline = this.started + ctx.limits.prefaceTimeoutMs;
    const source = plainIp(this.client.remoteAddress);
    for (;;) {
      this.attempts++;
      const remaining = deadline - performance.now();
      const t0 = performance.now();
      try {
        const socket = await connectThroughIngress({
          address: ctx.ingress,
          authtoken: ctx.authtoken,
          url: ctx.url,
          ...(ctx.tls ? { tls: ctx.tls } : {}),
          ...(source ? { source: { ip: source } } : {}),
          timeoutMs: Math.max(1, Math.min(ctx.limits.dialTimeoutMs, remaining)),
          signal: this.abort.signal,
        });
        ctx.metrics.dialSeconds.observe({ result: 'ok' }, (performance.now() - t0) / 1000);
        if (this.outcome) {
          socket.destroy();
          return;
        }
        this.pipe(socket);
        return;
      } catch (err) {
        if (this.outcome) return; // torn down meanwhile (drain over, stop): not a refusal
        const e = err instanceof IngressError ? err : new IngressError('ERR_793', String(err));
        ctx.metrics.dialSeconds.observe({ result: e.code }, (performance.now() - t0) / 1000);
        ctx.metrics.refusals.inc({ code: e.code });
        this.code = e.code;
        this.error = e.msg;
        const d = decideRetry(e.code, this.attempts, deadline - performance.now(), ctx.random);
        if (!d.retry) {
          this.closeClientGently(e.fromIngress ? 'refused' : 'dial_failed');
          return;
        }
        await new Promise<void>((resolve) => {
          const { signal } = this.abort;
          const onAbort = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          }, d.delayMs);
          signal.addEventListener('abort', onAbort, { once: true });
        });
        if (this.outcome) return;
      }
    }
  }

  private pipe(upstream: Socket): void {
    const { client, ctx } = this;
    this.upstream = upstream;
    let clientEnded = false;
    let upstreamEnded = false;
    let closed = 0;
    const onClose = () => {
      if (++closed === 2) this.finish(this.outcome ?? 'closed');
    };
    upstream.on('error', (err: NodeJS.ErrnoException) =>
      this.teardown('ingress_error', err.code ?? err.message),
    );
    client.once('end', () => (clientEnded = true));
    upstream.once('end', () => (upstreamEnded = true));
    // A side that closes without a clean end (destroyed, not FIN) takes the other down with it.
    client.once('close', () => {
      if (!clientEnded) this.teardown(this.outcome ?? 'client_error');
      onClose();
    });
    upstream.once('close', () => {
      if (!upstreamEnded) this.teardown(this.outcome ?? 'ingress_error');
      onClose();
    });
    const onIdle = () => this.teardown('idle_timeout');
    client.setTimeout(ctx.limits.idleTimeoutMs, onIdle);
    upstream.setTimeout(ctx.limits.idleTimeoutMs, onIdle);
    client.setNoDelay(true);
    // pipe() gives backpressure (pause when the other side's buffer is full) and half-close
    // (end() on the source's FIN, which with allowHalfOpen sends only our FIN).
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
    upstream.resume();
  }

  /** Ends our side cleanly, discards what the client still sends, destroys it if it lingers. */
  private closeClientGently(outcome: Outcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    const { client } = this;
    client.once('close', () => this.finish(outcome));
    client.resume();
    client.end();
    setTimeout(() => client.destroy(), CLOSE_LINGER_MS).unref();
  }

  private teardown(outcome: Outcome, error?: string): void {
    if (this.outcome === undefined) {
      this.outcome = outcome;
      if (error && !this.error) this.error = error;
    }
    this.abort.abort();
    this.client.destroy();
    this.upstream?.destroy();
    if (!this.upstream) this.finish(this.outcome);
  }

  private finished = false;

  private finish(outcome: Outcome): void {
    if (this.finished) return;
    this.finished = true;
    const { ctx, client } = this;
    const port = String(ctx.port);
    ctx.metrics.active.dec({ port });
    ctx.metrics.connections.inc({ port, outcome });
    ctx.metrics.bytes.inc({ port, direction: 'to_ingress' }, client.bytesRead);
    ctx.metrics.bytes.inc({ port, direction: 'to_client' }, client.bytesWritten);
    const failed =
      outcome === 'refused' || outcome === 'dial_failed' || outcome === 'no_ingress' || outcome === 'limit';
    // Successful connections log at debug; skip building the line when that is off (the hot path).
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
