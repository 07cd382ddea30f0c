/**
 * Wires the forwarder: the internal-Services cache, the pure desired-listeners function, the
 * listener set, and the health server. `startForwarder` is used by the CLI, the tests and the
 * demo in-process; `shutdown()` is the SIGTERM sequence, `stop()` the immediate one.
 */
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { IngressTlsOptions } from '../api/ingress/dialer.js';
import { ROLE_INTERNAL, ownershipSelector, type InstallIdentity } from '../binding/identity.js';
import {
  collectionPath,
  createCache,
  kinds,
  ServiceSchema,
  type CacheTuning,
  type Service,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { ListenAddress } from '../net/listen.js';
import { splitListen, type ForwarderConfig } from './config.js';
import { desiredListeners, type DesiredProblem } from './desired-listeners.js';
import { startProbeServer } from '../net/probe-server.js';

export interface Readiness {
  ready: boolean;
  /** Why not ready (empty when ready): each names the cause, e.g. a port and its bind error. */
  reasons: string[];
}
import { ListenerSet, type ListenerStatus } from './listeners.js';
import { forwarderMetrics } from './metrics.js';

/** A configuration problem found while starting (unreadable CA file): names the field. */
export class ForwarderConfigError extends Error {
  override readonly name = 'ForwarderConfigError';
}

export interface ForwarderOptions {
  config: ForwarderConfig;
  /** The agent authtoken sent in every preface; never logged. */
  authtoken: string;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Default: a new Registry (with the forwarder's and the kube cache's metrics). */
  registry?: Registry;
  /** Cache timings (tests shorten them). */
  cacheTuning?: Partial<CacheTuning>;
}

export interface Forwarder {
  /** Where /healthz, /readyz and /metrics are served. */
  httpAddress: ListenAddress;
  registry: Registry;
  /** The allocated ports bound now, ascending. */
  boundPorts(): number[];
  listeners(): ListenerStatus[];
  readiness(): Readiness;
  /** Client connections open now. */
  openConnections(): number;
  /** Bytes held in stream buffers over all connections (for tests and debugging). */
  bufferedBytes(): number;
  /**
   * The SIGTERM sequence: unready at once, keep accepting for `drain.delaySeconds`, then stop
   * accepting and give open connections `drain.timeoutSeconds` before closing them.
   */
  shutdown(): Promise<void>;
  /** Stops everything now (open connections are closed). */
  stop(): Promise<void>;
}

async function tlsOptions(config: ForwarderConfig): Promise<IngressTlsOptions | undefined> {
  const { ingress } = config;
  if (!ingress.tls) return undefined;
  let ca: string | undefined;
  if (ingress.caFile) {
    try {
      ca = await readFile(ingress.caFile, 'utf8');
    } catch (err) {
      throw new ForwarderConfigError(
        `ingress.caFile: cannot read ${ingress.caFile}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
      throw new ForwarderConfigError(`ingress.caFile: ${ingress.caFile} holds no PEM certificate`);
    }
  }
  return { ...(ca ? { ca } : {}), ...(ingress.serverName ? { servername: ingress.serverName } : {}) };
}

export async function startForwarder(opts: ForwarderOptions): Promise<Forwarder> {
  const { config } = opts;
  const log = opts.logger.child({ component: 'forwarder' });
  const registry = opts.registry ?? new Registry();
  const metrics = forwarderMetrics(registry);
  const identity: InstallIdentity = {
    release: config.releaseName,
    operatorNamespace: config.operatorNamespace,
  };
  const tls = await tlsOptions(config);

  let shuttingDown = false;
  const listeners = new ListenerSet({
    host: config.listenHost,
    authtoken: opts.authtoken,
    tls,
    limits: config.limits,
    removedDrainMs: config.drain.timeoutSeconds * 1000,
    metrics,
    logger: log,
    onStateChange: () => metrics.ready.set(readiness().ready ? 1 : 0),
  });

  const cache = createCache<Service>({
    kubeConfig: opts.kubeConfig,
    path: collectionPath(kinds.service, config.operatorNamespace),
    name: 'forwarder-internal-services',
    labelSelector: ownershipSelector(identity, ROLE_INTERNAL),
    schema: ServiceSchema,
    logger: log,
    metrics: registry,
    ...(opts.cacheTuning ? { options: opts.cacheTuning } : {}),
  });

  let lastProblems = '';
  // Between the first sync and the first reconcile the listener set is empty, which must not read as "all bound".
  let reconciled = false;
  const reconcile = () => {
    scheduled = false;
    if (!cache.synced) return;
    reconciled = true;
    const desired = desiredListeners(cache.list(), identity, {
      ingressOverride: config.ingress.address,
      plainTcp: !config.ingress.tls,
    });
    const problemsKey = JSON.stringify(desired.problems);
    if (problemsKey !== lastProblems) {
      lastProblems = problemsKey;
      for (const p of desired.problems) logProblem(log, p);
    }
    listeners.reconcile(desired.routes);
    metrics.ready.set(readiness().ready ? 1 : 0);
  };
  // Cache events come in bursts (initial list, relists); one reconcile per turn of the loop.
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(reconcile);
  };
  cache.on('add', schedule);
  cache.on('update', schedule);
  cache.on('delete', schedule);

  function readiness(): Readiness {
    const reasons: string[] = [];
    if (shuttingDown) reasons.push('shutting down');
    if (!cache.synced || !reconciled) reasons.push('internal Services not listed yet');
    for (const l of listeners.status()) {
      if (l.state !== 'bound')
        reasons.push(`port ${l.port} (${l.url}) ${l.state}${l.error ? `: ${l.error}` : ''}`);
    }
    return { ready: reasons.length === 0, reasons };
  }

  const listen = splitListen(config.http.listen);
  const http = await startProbeServer({
    host: listen.host,
    port: listen.port,
    registry,
    ready: () => {
      const r = readiness();
      return { ok: r.ready, reasons: r.reasons };
    },
  }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`http.listen: cannot listen on ${config.http.listen}: ${code}`);
  });
  cache.start();
  void cache.waitForSync().then(
    () => schedule(),
    () => undefined,
  );
  log.info(
    {
      release: identity.release,
      namespace: identity.operatorNamespace,
      http: http.address.address,
      ingress_override: config.ingress.address ?? null,
      ingress_tls: config.ingress.tls,
      limits: config.limits,
      drain: config.drain,
    },
    'forwarder started',
  );

  const stopCtl = new AbortController();
  let finalStop: Promise<void> | undefined;
  const finish = async (drainMs: number) => {
    listeners.stopAccepting();
    await listeners.drain(drainMs, stopCtl.signal);
    await Promise.all([cache.stop(), http.close()]);
    log.info({}, 'forwarder stopped');
  };

  return {
    httpAddress: http.address,
    registry,
    boundPorts: () => listeners.boundPorts(),
    listeners: () => listeners.status(),
    readiness,
    openConnections: () => listeners.openConnections(),
    bufferedBytes: () => listeners.bufferedBytes(),
    shutdown() {
      if (finalStop) return finalStop;
      shuttingDown = true;
      metrics.ready.set(0);
      const delayMs = config.drain.delaySeconds * 1000;
      log.info(
        { delay_seconds: config.drain.delaySeconds, timeout_seconds: config.drain.timeoutSeconds },
        'forwarder shutting down',
      );
      finalStop = (async () => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          stopCtl.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        log.info({ connections: listeners.openConnections() }, 'forwarder stopped accepting');
        await finish(stopCtl.signal.aborted ? 0 : config.drain.timeoutSeconds * 1000);
      })();
      return finalStop;
    },
    stop() {
      shuttingDown = true;
      metrics.ready.set(0);
      stopCtl.abort();
      finalStop ??= finish(0);
      return finalStop;
    },
  };
}

function logProblem(log: Logger, p: DesiredProblem): void {
  log.warn(
    { service: p.service, kind: p.kind, ...(p.port ? { port: p.port } : {}), problem: p.message },
    'forwarder skipped service',
  );
}
