/**
 * Wires the forwarder: the caches of the internal Services and of the install record, the pure
 * desired-listeners and ingress-address functions, the listener set, the authtoken and CA files,
 * and the health server. `startForwarder` is used by the CLI, the tests and the demo in-process;
 * `shutdown()` is the SIGTERM sequence, `stop()` the immediate one.
 */
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { IngressError } from '../api/ingress/dialer.js';
import {
  installRecordName,
  recordedInternalOf,
  ROLE_INTERNAL,
  ownershipSelector,
  type InstallIdentity,
} from '../binding/ownership/index.js';
import {
  collectionPath,
  ConfigMapSchema,
  createCache,
  EventRecorder,
  kinds,
  objectRef,
  ServiceSchema,
  type CacheTuning,
  type ConfigMap,
  type Service,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { sleep } from '../time/clock.js';
import type { ListenAddress } from '../net/listen.js';
import { startProbeServer } from '../net/probe-server.js';
import { AuthtokenState, parseAuthtoken, type TokenVerdict } from './authtoken.js';
import { ingressTlsFor, readAuthtoken, readIngressCa, TOKEN_CHECK_URL } from './ingress-credentials.js';
import { splitListen, type ForwarderConfig } from './config.js';
import type { IngressRoute } from './connection.js';
import { IngressOpener, type OpenRequest } from './ingress-opener.js';
import { desiredListeners, type DesiredProblem } from './desired-listeners.js';
import { openFilesLimit } from './fd-limit.js';
import { watchFile, type FileWatch } from './file-watch.js';
import { resolveIngressAddress, type IngressAddress, type IngressPin } from './ingress-address.js';
import { parseHostPort } from '../net/host-port.js';
import { ListenerSet, type ListenerStatus } from './listeners.js';
import { forwarderMetrics } from './metrics.js';
import { TurnedAway } from './turned-away.js';
import { forwarderStatus } from './forwarder-status.js';
import { UrlHealthRecorder } from './url-health.js';
import { TransportCheck, type TransportVerdict } from './transport-check.js';
import { speaksTls } from '../api/ingress/tls-probe.js';
import { systemClock, type Clock } from '../time/clock.js';
import { stopInOrder, throwIfStepFailed } from '../time/stop-in-order.js';

export interface Readiness {
  ready: boolean;
  /** Why not ready (empty when ready): each names the cause, e.g. a port and its bind error. */
  reasons: string[];
}

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
 * `finish`'s steps (the end of both `stop()` and `shutdown()`) in the order they run
 * (docs/forwarder.md, "Stop order", says why). Every step runs even when an earlier one failed;
 * the stop then rejects naming the failed steps.
 */
export const FORWARDER_STOP_ORDER = [
  'stop accepting',
  'drain connections',
  'stop file watches',
  'stop authtoken checks',
  'stop transport checks',
  'stop turned-away log',
  'destroy ingress sessions',
  'stop event recorder',
  'stop caches and HTTP server',
  'log stopped',
] as const;

export async function startForwarder(opts: ForwarderOptions): Promise<Forwarder> {
  const { config } = opts;
  const clock = opts.clock ?? systemClock;
  const log = opts.logger.child({ component: 'forwarder' });
  const registry = opts.registry ?? new Registry();
  const metrics = forwarderMetrics(registry);
  const identity: InstallIdentity = {
    release: config.releaseName,
    operatorNamespace: config.operatorNamespace,
  };
  let tls = ingressTlsFor(config, await readIngressCa(config));
  const initialToken = await readAuthtoken(config, opts.authtoken);
  const descriptorLimit = await openFilesLimit();
  const listen = splitListen(config.http.listen);
  const turnedAway = new TurnedAway(metrics, log);
  const urlHealth = new UrlHealthRecorder();
  /** Label sets of `urlDials` in use, so the series of a removed listener can be removed with it. */
  const urlSeries = new Map<string, { port: string; url: string; result: string }>();

  let shuttingDown = false;
  let ingress: IngressAddress = {
    address: undefined,
    source: 'none',
    problem: 'install record not read yet',
  };

  const opener = new IngressOpener({
    protocol: config.ingress.protocol,
    sessions: config.ingress.sessions,
    windowBytes: config.ingress.streamWindowBytes,
    onProtocol: (address, protocol, why) =>
      log.info({ address, protocol, reason: why }, 'forwarder ingress protocol'),
  });
  metrics.tally.ingressSessions = () => opener.sessions;
  const openWith = async (r: OpenRequest) => {
    const u = await opener.open(r, tls);
    metrics.tally.upstreams.add(u.protocol, () => ({ protocol: u.protocol }));
    return u;
  };

  /** One stream to TOKEN_CHECK_URL (answered without an upstream): undefined when it opened, else its error. */
  const checkDial = async (token: string, address: string): Promise<unknown> => {
    try {
      const u = await openWith({
        address,
        authtoken: token,
        url: TOKEN_CHECK_URL,
        source: undefined,
        timeoutMs: config.limits.dialTimeoutMs,
        signal: new AbortController().signal,
      });
      try {
        await u.confirmed;
      } finally {
        u.abort();
      }
      return undefined;
    } catch (err) {
      return err;
    }
  };

  const authtoken = new AuthtokenState(
    initialToken,
    async (token): Promise<TokenVerdict | undefined> => {
      const address = ingress.address;
      if (!address) return undefined;
      const err = await checkDial(token, address);
      if (err === undefined) return 'accepted';
      if (!(err instanceof IngressError) || !err.fromIngress) return undefined;
      return err.code === 'ERR_710' ? 'refused' : 'accepted';
    },
    () => {
      const problem = authtoken.problem;
      if (problem) log.error({ problem }, 'forwarder authtoken refused');
      else log.info({}, 'forwarder authtoken accepted again');
      publishReady();
    },
  );

  /** What one dial's outcome says about the transport (TLS or plain) and the certificate. */
  const transportVerdict = async (err: unknown, address: string): Promise<TransportVerdict> => {
    if (err === undefined) return { ok: true };
    if (!(err instanceof IngressError)) return undefined;
    if (err.fromIngress) return { ok: true };
    if (err.code === 'ERR_796' || err.code === 'ERR_795')
      return { ok: false, problem: `${err.code}: ${err.msg}` };
    if (err.code === 'ERR_797' && config.ingress.tls)
      return {
        ok: false,
        problem: `ERR_797: ${err.msg}; ingress.protocol is v2, set it to auto or v1 (the chart's forwarder.ingressProtocol)`,
      };
    if (
      (err.code === 'ERR_790' || err.code === 'ERR_797') &&
      !config.ingress.tls &&
      (await speaksTls(address))
    )
      return {
        ok: false,
        problem: `ERR_796: the ingress at ${address} speaks TLS and closes plain connections without a reply, and ingress.tls is false; set ingress.tls to true (the chart's bindings.ingress.tls)`,
      };
    return undefined;
  };
  const transport = new TransportCheck(
    async () => {
      const address = ingress.address;
      return address ? transportVerdict(await checkDial(authtoken.token, address), address) : undefined;
    },
    () => {
      const problem = transport.problem;
      if (problem) log.error({ problem }, 'forwarder cannot speak to the ingress as configured');
      else log.info({}, 'forwarder speaks to the ingress as configured again');
      publishReady();
    },
  );

  const route = (): IngressRoute | undefined => {
    const address = ingress.address;
    if (!address) return undefined;
    return {
      address,
      async open(url, source, timeoutMs, signal, onTransportUp) {
        const token = authtoken.token;
        const request: OpenRequest = {
          address,
          authtoken: token,
          url,
          source: source?.ip ? { ip: source.ip } : undefined,
          timeoutMs,
          signal,
          ...(onTransportUp ? { onTransportUp } : {}),
        };
        try {
          const u = await openWith(request);
          // v2 hands the stream over before the ingress answered: judge its answer when it comes.
          u.confirmed.then(
            () => judgeOk(token),
            (err: unknown) => judgeFailure(token, address, err),
          );
          return u;
        } catch (err) {
          judgeFailure(token, address, err);
          throw err;
        }
      },
    };
  };
  const judgeOk = (token: string) => {
    authtoken.observe(token, 'accepted');
    transport.observe({ ok: true });
  };
  const judgeFailure = (token: string, address: string, err: unknown) => {
    if (err instanceof IngressError && err.fromIngress)
      authtoken.observe(token, err.code === 'ERR_710' ? 'refused' : 'accepted', err.msg);
    if (err instanceof IngressError) {
      if (err.fromIngress || ['ERR_795', 'ERR_796'].includes(err.code) || (err.code === 'ERR_797' && tls))
        void transportVerdict(err, address).then((v) => transport.observe(v));
      // A plain client closed without a reply: a TLS ingress does that. Asked once at a time.
      else if ((err.code === 'ERR_790' || err.code === 'ERR_797') && !config.ingress.tls) transport.suspect();
    }
  };

  const listeners = new ListenerSet({
    host: config.listenHost,
    ingress: route,
    dialOn: config.dialOn,
    limits: config.limits,
    removedDrainMs: config.drain.timeoutSeconds * 1000,
    metrics,
    logger: log,
    turnedAway,
    ...(descriptorLimit !== undefined ? { descriptorLimit } : {}),
    onStateChange: () => publishReady(),
    observe: (port, url, result) => {
      urlHealth.record(url, result, clock.now());
      const outcome = result.ok ? 'ok' : (result.code ?? 'no_ingress');
      const key = `${port} ${outcome} ${url}`;
      const labels = (): { port: string; url: string; result: string } => ({
        port: String(port),
        url,
        result: outcome,
      });
      if (!urlSeries.has(key)) urlSeries.set(key, labels());
      metrics.tally.urlDials.add(key, labels);
    },
  });

  const cacheCommon = {
    kubeConfig: opts.kubeConfig,
    logger: log,
    metrics: registry,
    ...(opts.cacheTuning ? { options: opts.cacheTuning } : {}),
  };
  const services = createCache<Service>({
    ...cacheCommon,
    path: collectionPath(kinds.service, config.operatorNamespace),
    name: 'forwarder-internal-services',
    labelSelector: ownershipSelector(identity, ROLE_INTERNAL),
    schema: ServiceSchema,
  });
  const recordName = installRecordName(identity);
  const records = createCache<ConfigMap>({
    ...cacheCommon,
    path: collectionPath(kinds.configMap, config.operatorNamespace),
    name: 'forwarder-install-record',
    fieldSelector: `metadata.name=${recordName}`,
    schema: ConfigMapSchema,
  });

  let lastProblems = '';
  let lastIngressProblem: string | undefined;
  /** The ingress's identity when nothing in the config pins it: the first record's host. */
  const pin: IngressPin = {};
  const pinnedByConfig = config.ingress.address !== undefined || config.ingress.serverName !== undefined;
  let lastRefused: string | undefined;
  const events = new EventRecorder({
    kubeConfig: opts.kubeConfig,
    logger: log,
    metrics: registry,
    component: 'endpoint-binder-forwarder',
  });
  // Between the first sync and the first reconcile the listener set is empty, which must not read as "all bound".
  let reconciled = false;
  const reconcile = () => {
    scheduled = false;
    if (!services.synced || !records.synced) return;
    reconciled = true;
    const record = records.get(config.operatorNamespace, recordName);
    let next = resolveIngressAddress(config.ingress.address, record, identity, {
      plainTcp: !config.ingress.tls,
      pin,
    });
    if (next.refused !== undefined && next.address === undefined) {
      // A record naming another host than the one this forwarder started with: keep that one.
      next = ingress.address
        ? { ...ingress, refused: next.refused, ...(next.refusal ? { refusal: next.refusal } : {}) }
        : { ...next, ...(next.refusal ? { problem: next.refusal } : {}) };
    }
    if (next.source === 'install-record' && next.address && !pinnedByConfig && pin.learnedHost === undefined)
      pin.learnedHost = parseHostPort(next.address).host;
    noteRefusal(next, record);
    if (next.address !== ingress.address) {
      const fields = {
        address: next.address ?? null,
        previous: ingress.address ?? null,
        source: next.source,
        ...(next.operatorId ? { operator_id: next.operatorId } : {}),
      };
      // The first address is news; a change of it sends every new connection (and the token) elsewhere.
      if (ingress.address === undefined) log.info(fields, 'forwarder ingress address');
      else log.warn(fields, 'forwarder ingress address changed');
    }
    if (next.problem !== undefined && next.problem !== lastIngressProblem)
      log.warn({ problem: next.problem }, 'forwarder has no ingress address');
    lastIngressProblem = next.problem;
    ingress = next;
    const desired = desiredListeners(services.list(), identity, {
      portRange: config.portRange,
      ownPorts: [listen.port, httpPort].filter((p) => p > 0),
      recorded: recordedInternalOf(records.get(config.operatorNamespace, recordName), identity).uids,
    });
    const problemsKey = JSON.stringify(desired.problems);
    if (problemsKey !== lastProblems) {
      lastProblems = problemsKey;
      for (const p of desired.problems) logProblem(log, p);
    }
    listeners.reconcile(desired.routes);
    forgetRemovedUrls();
    publishReady();
  };
  /** A record naming another destination than the pinned one: a warning, a gauge and an Event, once per value. */
  function noteRefusal(next: IngressAddress, record: ConfigMap | undefined): void {
    metrics.ingressRecordRefused.set(next.refused !== undefined ? 1 : 0);
    if (next.refused === lastRefused) return;
    lastRefused = next.refused;
    if (next.refused === undefined) return;
    log.warn(
      { record_address: next.refused, address: next.address ?? null, problem: next.refusal },
      'forwarder install record names another ingress',
    );
    if (record)
      events.warning(objectRef(record, 'ConfigMap', 'v1'), 'IngressRecordRefused', next.refusal ?? '');
  }
  // Cache events come in bursts (initial list, relists); one reconcile per turn of the loop.
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(reconcile);
  };
  for (const cache of [services, records]) {
    cache.on('add', schedule);
    cache.on('update', schedule);
    cache.on('delete', schedule);
  }

  function readiness(): Readiness {
    const reasons: string[] = [];
    if (shuttingDown) reasons.push('shutting down');
    if (!services.synced || !records.synced || !reconciled)
      reasons.push('internal Services and the install record not listed yet');
    else if (ingress.problem !== undefined) reasons.push(ingress.problem);
    const tokenProblem = authtoken.problem;
    if (tokenProblem !== undefined) reasons.push(tokenProblem);
    const transportProblem = transport.problem;
    if (transportProblem !== undefined) reasons.push(transportProblem);
    for (const l of listeners.status()) {
      if (l.state !== 'bound')
        reasons.push(`port ${l.port} (${l.url}) ${l.state}${l.error ? `: ${l.error}` : ''}`);
    }
    return { ready: reasons.length === 0, reasons };
  }
  function forgetRemovedUrls(): void {
    const served = listeners.status();
    urlHealth.retain(served.map((l) => l.url));
    const live = new Set(served.map((l) => `${l.port} ${l.url}`));
    for (const [key, labels] of urlSeries) {
      if (live.has(`${labels.port} ${labels.url}`)) continue;
      metrics.tally.urlDials.drop((l) => l.port === labels.port && l.url === labels.url);
      metrics.urlDials.remove(labels);
      urlSeries.delete(key);
    }
  }
  function publishReady(): void {
    metrics.ready.set(readiness().ready ? 1 : 0);
  }

  const watches: FileWatch[] = [];
  const pollMs = opts.filePollMs ?? 10_000;
  if (config.authtokenFile) {
    const file = config.authtokenFile;
    watches.push(
      watchFile(file, {
        initial: await readFile(file, 'utf8').catch(() => ''),
        pollMs,
        onChange: (content) => {
          const parsed = parseAuthtoken(content);
          if (!parsed.ok) {
            metrics.authtokenReloads.inc({ result: 'invalid' });
            log.error(
              { file, problem: parsed.message },
              'forwarder authtoken file invalid, keeping the previous one',
            );
            return;
          }
          metrics.authtokenReloads.inc({ result: 'ok' });
          log.info({ file }, 'forwarder authtoken reloaded');
          authtoken.replace(parsed.token);
        },
        onError: (error) => log.warn({ file, error }, 'forwarder authtoken file unreadable'),
      }),
    );
  }
  if (config.ingress.tls && config.ingress.caFile) {
    const file = config.ingress.caFile;
    watches.push(
      watchFile(file, {
        initial: await readFile(file, 'utf8').catch(() => ''),
        pollMs,
        onChange: (content) => {
          if (!content.includes('-----BEGIN CERTIFICATE-----')) {
            log.error({ file }, 'forwarder CA bundle holds no PEM certificate, keeping the previous one');
            return;
          }
          try {
            tls = ingressTlsFor(config, content);
            log.info({ file }, 'forwarder CA bundle reloaded');
          } catch (err) {
            log.error(
              { file, error: err instanceof Error ? err.message : String(err) },
              'forwarder CA bundle invalid',
            );
          }
        },
        onError: (error) => log.warn({ file, error }, 'forwarder CA bundle unreadable'),
      }),
    );
  }

  let httpPort = 0;
  const http = await startProbeServer({
    host: listen.host,
    port: listen.port,
    registry,
    ready: () => {
      const r = readiness();
      return { ok: r.ready, reasons: r.reasons };
    },
    json: {
      '/status': () => forwarderStatus(readiness(), listeners.status(), urlHealth, clock.now()),
    },
  }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`http.listen: cannot listen on ${config.http.listen}: ${code}`);
  });
  httpPort = http.address.port;
  services.start();
  records.start();
  void Promise.all([services.waitForSync(), records.waitForSync()]).then(
    () => schedule(),
    () => undefined,
  );
  if (config.ingress.tls && !pinnedByConfig)
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
      http: http.address.address,
      ingress_override: config.ingress.address ?? null,
      ingress_tls: config.ingress.tls,
      authtoken_file: config.authtokenFile ?? null,
      port_range: config.portRange,
      dial_on: config.dialOn,
      limits: config.limits,
      open_files_limit: descriptorLimit ?? null,
      drain: config.drain,
    },
    'forwarder started',
  );

  const stopCtl = new AbortController();
  let finalStop: Promise<void> | undefined;
  const finish = (drainMs: number) =>
    stopInOrder(FORWARDER_STOP_ORDER, {
      'stop accepting': () => listeners.stopAccepting(),
      'drain connections': () => listeners.drain(drainMs, stopCtl.signal),
      'stop file watches': () => watches.forEach((w) => w.stop()),
      'stop authtoken checks': () => authtoken.stop(),
      'stop transport checks': () => transport.stop(),
      'stop turned-away log': () => turnedAway.stop(),
      'destroy ingress sessions': () => opener.destroy(),
      'stop event recorder': () => events.stop(1_000),
      'stop caches and HTTP server': () => Promise.all([services.stop(), records.stop(), http.close()]),
      'log stopped': () => log.info({}, 'forwarder stopped'),
    });

  return {
    httpAddress: http.address,
    registry,
    boundPorts: () => listeners.boundPorts(),
    listeners: () => listeners.status(),
    readiness,
    ingress: () => ingress,
    openConnections: () => listeners.openConnections(),
    bufferedBytes: () => listeners.bufferedBytes(),
    shutdown() {
      if (finalStop) return finalStop;
      shuttingDown = true;
      metrics.ready.set(0);
      const delayMs = config.drain.delaySeconds * 1000;
      const arrivalsAtSignal = listeners.arrivals();
      log.info(
        { delay_seconds: config.drain.delaySeconds, timeout_seconds: config.drain.timeoutSeconds },
        'forwarder shutting down',
      );
      finalStop = (async () => {
        await sleep(delayMs, stopCtl.signal);
        const timeoutMs = config.drain.timeoutSeconds * 1000;
        const arrivalsAtDelayEnd = listeners.arrivals();
        const extendedMs = await acceptWhileArriving(listeners, timeoutMs / 2, stopCtl.signal);
        const late = listeners.arrivals() - arrivalsAtDelayEnd;
        log.info({ connections: listeners.openConnections() }, 'forwarder stopped accepting');
        if (late > 0)
          log.warn(
            {
              extended_ms: extendedMs,
              late_connections: late,
              connections_since_signal: listeners.arrivals() - arrivalsAtSignal,
              problem: `connections still arrived ${config.drain.delaySeconds} s after SIGTERM, so the cluster kept routing to this pod longer than drain.delaySeconds; raise forwarder.drain.delaySeconds`,
            },
            'forwarder accepted past the drain delay',
          );
        throwIfStepFailed(await finish(stopCtl.signal.aborted ? 0 : timeoutMs - extendedMs));
      })();
      return finalStop;
    },
    stop() {
      shuttingDown = true;
      metrics.ready.set(0);
      stopCtl.abort();
      return (finalStop ??= finish(0).then(throwIfStepFailed));
    },
  };
}

/** How long the accept queue must stay empty before the listeners close. */
export const DRAIN_QUIET_MS = 1000;

/**
 * After the drain delay, keeps accepting while connections still arrive (until none came for
 * DRAIN_QUIET_MS, at most `limitMs`): closing a listener resets whatever waits in its accept
 * queue, and a connection that still arrives means the cluster still routes here. Returns how
 * long it kept accepting past the delay (0 when nothing arrived lately).
 */
async function acceptWhileArriving(
  listeners: ListenerSet,
  limitMs: number,
  signal: AbortSignal,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    const now = Date.now();
    const quietFor = now - listeners.lastArrivalAt();
    if (signal.aborted || quietFor >= DRAIN_QUIET_MS || now - start >= limitMs) return now - start;
    await sleep(Math.min(DRAIN_QUIET_MS - quietFor, limitMs - (now - start)), signal);
  }
}

function logProblem(log: Logger, p: DesiredProblem): void {
  log.warn(
    { service: p.service, kind: p.kind, ...(p.port ? { port: p.port } : {}), problem: p.message },
    'forwarder skipped service',
  );
}
