/**
 * Wires the forwarder from its parts (`parts/`): the caches of the internal Services and of the
 * install record, the ingress destination and the dials to it, the credential and transport
 * checks, the listener set, the credential files, the health server and the stop sequence.
 * `startForwarder` is used by the CLI, the tests and the demo in-process; `shutdown()` is the
 * SIGTERM sequence, `stop()` the immediate one.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { InstallIdentity } from '../binding/identity.js';
import { EventRecorder, type CacheTuning } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { ListenAddress } from '../net/listen.js';
import { startProbeServer, type ProbeServer } from '../net/probe-server.js';
import { systemClock, type Clock } from '../time/clock.js';
import { Notice } from '../time/notice.js';
import { splitListen, type ForwarderConfig } from './config.js';
import { openFilesLimit } from './fd-limit.js';
import type { IngressAddress } from './ingress-address.js';
import { readAuthtoken, readIngressCa } from './ingress-credentials.js';
import { ListenerSet, type ListenerStatus } from './listeners.js';
import { forwarderMetrics } from './metrics.js';
import type { ForwarderBase } from './parts/base.js';
import { ForwarderCaches } from './parts/caches.js';
import { watchCredentialFiles } from './parts/credential-files.js';
import { IngressChecks } from './parts/ingress-checks.js';
import { IngressDestination } from './parts/ingress-destination.js';
import { IngressDials } from './parts/ingress-dials.js';
import { ingressRoute } from './parts/ingress-route.js';
import { IngressTls } from './parts/ingress-tls.js';
import { ListenerSync } from './parts/listener-sync.js';
import { ForwarderReadiness, type Readiness } from './parts/readiness.js';
import { ForwarderStop } from './parts/stop.js';
import { UrlDials } from './parts/url-dials.js';
import { forwarderStatus } from './forwarder-status.js';
import { TurnedAway } from './turned-away.js';
import { UrlHealthRecorder } from './url-health.js';

export type { Readiness } from './parts/readiness.js';
export { DRAIN_QUIET_MS, FORWARDER_STOP_ORDER } from './parts/stop.js';
export { ForwarderConfigError } from './ingress-credentials.js';

export interface ForwarderOptions {
  config: ForwarderConfig;
  /** The agent authtoken sent in every preface, when `config.authtokenFile` is not set; never logged. */
  authtoken?: string;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Default: a new Registry (with the forwarder's and the kube cache's metrics). */
  registry?: Registry;
  /** Cache timings (tests shorten them). */
  cacheTuning?: Partial<CacheTuning>;
  /** How often the authtoken and CA files are re-read besides the directory watch; 10 s. */
  filePollMs?: number;
  /** Time of the per-URL data-path health and `/status` (tests pass a manual clock); default the system's. */
  clock?: Clock;
}

export interface Forwarder {
  /** Where /healthz, /readyz and /metrics are served. */
  httpAddress: ListenAddress;
  registry: Registry;
  /** The allocated ports bound now, ascending. */
  boundPorts(): number[];
  listeners(): ListenerStatus[];
  readiness(): Readiness;
  /** The ingress address in use and where it came from. */
  ingress(): IngressAddress;
  /** Client connections open now. */
  openConnections(): number;
  /** Bytes held in stream buffers over all connections (for tests and debugging). */
  bufferedBytes(): number;
  /**
   * The SIGTERM sequence: unready at once, keep accepting for `drain.delaySeconds`, then stop
   * accepting and give open connections `drain.timeoutSeconds` before resetting them.
   */
  shutdown(): Promise<void>;
  /** Stops everything now (open connections are reset). */
  stop(): Promise<void>;
}

/**
 * Starts the forwarder. Each part is built from the parts above it, none reaches one below: the
 * credential and transport checks and the listener set tell `readinessChanged`, built before
 * them, and the readiness built from them subscribes to it.
 */
export async function startForwarder(opts: ForwarderOptions): Promise<Forwarder> {
  const { config } = opts;
  const identity: InstallIdentity = {
    release: config.releaseName,
    operatorNamespace: config.operatorNamespace,
  };
  const registry = opts.registry ?? new Registry();
  const log = opts.logger.child({ component: 'forwarder' });
  const base: ForwarderBase = {
    config,
    identity,
    log,
    clock: opts.clock ?? systemClock,
    registry,
    metrics: forwarderMetrics(registry),
  };
  const tls = new IngressTls(config, await readIngressCa(config), log);
  const initialToken = await readAuthtoken(config, opts.authtoken);
  const descriptorLimit = await openFilesLimit();
  const listen = splitListen(config.http.listen);
  const turnedAway = new TurnedAway(base.metrics, log);
  const urlHealth = new UrlHealthRecorder();
  const events = new EventRecorder({
    kubeConfig: opts.kubeConfig,
    logger: log,
    metrics: registry,
    component: 'endpoint-binder-forwarder',
  });

  const destination = new IngressDestination(base, events);
  const dials = new IngressDials(base, tls);
  const readinessChanged = new Notice();
  const onChange = (): void => readinessChanged.tell();
  const checks = new IngressChecks(base, { initialToken, destination, dials, onChange });
  const urlDials = new UrlDials(base, urlHealth);
  const listeners = new ListenerSet({
    host: config.listenHost,
    ingress: ingressRoute(destination, dials, checks),
    dialOn: config.dialOn,
    limits: config.limits,
    removedDrainMs: config.drain.timeoutSeconds * 1000,
    metrics: base.metrics,
    logger: log,
    turnedAway,
    ...(descriptorLimit !== undefined ? { descriptorLimit } : {}),
    onStateChange: onChange,
    observe: (port, url, result) => urlDials.observe(port, url, result),
  });
  const caches = new ForwarderCaches(base, opts);
  const readiness = new ForwarderReadiness(base, { caches, destination, checks, listeners });
  readinessChanged.subscribe(() => readiness.publish());

  const pollMs = opts.filePollMs ?? 10_000;
  const watches = await watchCredentialFiles(base, { authtoken: checks.authtoken, tls, pollMs });
  const http = await serveHealth(base, listen, readiness, () =>
    forwarderStatus(readiness.check(), listeners.status(), urlHealth, base.clock.now()),
  );
  const ownPorts = [listen.port, http.address.port];
  const sync = new ListenerSync(base, { caches, destination, listeners, urlDials, readiness, ownPorts });
  caches.start(() => sync.schedule());
  logStarted(base, { http, destination, descriptorLimit });

  const stopper = new ForwarderStop(base, {
    listeners,
    readiness,
    watches,
    checks,
    turnedAway,
    dials,
    events,
    caches,
    http,
  });
  return {
    httpAddress: http.address,
    registry,
    boundPorts: () => listeners.boundPorts(),
    listeners: () => listeners.status(),
    readiness: () => readiness.check(),
    ingress: () => destination.current,
    openConnections: () => listeners.openConnections(),
    bufferedBytes: () => listeners.bufferedBytes(),
    shutdown: () => stopper.shutdown(),
    stop: () => stopper.stop(),
  };
}

/** `/healthz`, `/readyz`, `/metrics` and `/status` on `http.listen`; a port it cannot bind is a config error. */
async function serveHealth(
  base: ForwarderBase,
  listen: { host: string; port: number },
  readiness: ForwarderReadiness,
  status: () => unknown,
): Promise<ProbeServer> {
  const { config, registry } = base;
  return startProbeServer({
    host: listen.host,
    port: listen.port,
    registry,
    ready: () => {
      const r = readiness.check();
      return { ok: r.ready, reasons: r.reasons };
    },
    json: { '/status': status },
  }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`http.listen: cannot listen on ${config.http.listen}: ${code}`);
  });
}

/** The start line with the settings in force, and a warning when nothing in the config pins the ingress. */
function logStarted(
  base: ForwarderBase,
  o: { http: ProbeServer; destination: IngressDestination; descriptorLimit: number | undefined },
): void {
  const { config, identity, log } = base;
  if (config.ingress.tls && !o.destination.pinnedByConfig)
    log.warn(
      {
        problem:
          'the binding ingress is pinned only by the first install record this process reads; set ingress.serverName or ingress.address (chart: bindings.ingress.serverName or .address) so no ConfigMap write can choose where the authtoken goes',
      },
      'forwarder ingress identity not pinned by configuration',
    );
  log.info(
    {
      release: identity.release,
      namespace: identity.operatorNamespace,
      http: o.http.address.address,
      ingress_override: config.ingress.address ?? null,
      ingress_tls: config.ingress.tls,
      authtoken_file: config.authtokenFile ?? null,
      port_range: config.portRange,
      dial_on: config.dialOn,
      limits: config.limits,
      open_files_limit: o.descriptorLimit ?? null,
      drain: config.drain,
    },
    'forwarder started',
  );
}
