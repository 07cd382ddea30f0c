/**
 * Pure: from this install's internal Services to the listeners the forwarder should have, one
 * per allocated port, each with the URL it serves. The format is fixed in docs/projection.md; the
 * forwarder reads only the ports annotation. Where the ingress is never comes from a Service:
 * anyone who may write Services in the operator namespace could otherwise send the authtoken to a
 * server of their choosing (see ingress-address.ts).
 */
import { PORTS_ANNOTATION } from '../binding/identity.js';
import { ROLE_INTERNAL, ROLE_LABEL, isOwnedBy, type InstallIdentity } from '../binding/ownership/index.js';
import { parsePortsAnnotation } from '../binding/service-format.js';

/** The part of a Service this function looks at. */
export interface ServiceLike {
  metadata: {
    name: string;
    namespace?: string | undefined;
    uid?: string | undefined;
    labels?: Record<string, string> | undefined;
    annotations?: Record<string, string> | undefined;
  };
}

export interface ListenerRoute {
  /** The canonical endpoint URL the port stands for. */
  url: string;
}

export interface DesiredProblem {
  /** `namespace/name` of the Service, or several joined by `, `. */
  service: string;
  /** Stable short kind, for logs and tests. */
  kind: 'foreign' | 'ports-annotation' | 'port-conflict' | 'port-range' | 'own-port';
  message: string;
  port?: number;
}

export interface DesiredListeners {
  routes: Map<number, ListenerRoute>;
  problems: DesiredProblem[];
}

export interface DesiredOptions {
  /** The allocated port range (`portRange`): a port outside it is refused. */
  portRange?: { min: number; max: number };
  /** The forwarder's own ports (its HTTP server): never an allocated port. */
  ownPorts?: readonly number[];
  /**
   * The install record's list of internal Services the controller created (undefined: none yet,
   * every labelled one counts): a Service not on it claims no port (docs/projection.md "Ownership").
   */
  recorded?: ReadonlySet<string> | undefined;
}

const keyOf = (s: ServiceLike): string => `${s.metadata.namespace ?? ''}/${s.metadata.name}`;

/**
 * Services are visited in name order so that the outcome never depends on the cache's order.
 * A port claimed with two URLs is a controller bug or a forged Service: reported and skipped (no
 * listener), never guessed. Several Services may list one port with the same URL (the internal
 * Services of one hostname each list every port of the hostname). A port outside the range or
 * equal to one of the forwarder's own is refused, so a Service cannot take the health port.
 */
export function desiredListeners(
  services: readonly ServiceLike[],
  identity: InstallIdentity,
  opts: DesiredOptions = {},
): DesiredListeners {
  const range = opts.portRange ?? { min: 1, max: 65535 };
  const own = new Set(opts.ownPorts ?? []);
  const problems: DesiredProblem[] = [];
  const claims = new Map<number, { url: string; services: string[] }>();
  const conflicted = new Map<number, Set<string>>();

  for (const svc of [...services].sort((a, b) => keyOf(a).localeCompare(keyOf(b)))) {
    const key = keyOf(svc);
    if (!isOwnedBy(svc, identity) || svc.metadata.labels?.[ROLE_LABEL] !== ROLE_INTERNAL) {
      problems.push({ service: key, kind: 'foreign', message: 'not an internal Service of this install' });
      continue;
    }
    if (
      opts.recorded !== undefined &&
      (svc.metadata.uid === undefined || !opts.recorded.has(svc.metadata.uid))
    ) {
      problems.push({
        service: key,
        kind: 'foreign',
        message: 'not listed in the install record (not created by the controller); claims no port',
      });
      continue;
    }
    const parsed = parsePortsAnnotation(svc.metadata.annotations?.[PORTS_ANNOTATION]);
    if (!parsed.ok) {
      problems.push({
        service: key,
        kind: 'ports-annotation',
        message: `${PORTS_ANNOTATION}: ${parsed.message}`,
      });
      continue;
    }
    for (const [port, url] of parsed.ports) {
      if (own.has(port)) {
        problems.push({
          service: key,
          kind: 'own-port',
          port,
          message: `port ${port} is one of the forwarder's own ports (http.listen); no listener`,
        });
        continue;
      }
      if (port < range.min || port > range.max) {
        problems.push({
          service: key,
          kind: 'port-range',
          port,
          message: `port ${port} is outside portRange ${range.min}-${range.max}; no listener`,
        });
        continue;
      }
      const claim = claims.get(port);
      if (!claim) {
        claims.set(port, { url, services: [key] });
        continue;
      }
      claim.services.push(key);
      if (claim.url !== url) {
        const urls = conflicted.get(port) ?? new Set([claim.url]);
        urls.add(url);
        conflicted.set(port, urls);
      }
    }
  }

  const routes = new Map<number, ListenerRoute>();
  for (const [port, claim] of [...claims].sort((a, b) => a[0] - b[0])) {
    const urls = conflicted.get(port);
    if (urls) {
      problems.push({
        service: claim.services.join(', '),
        kind: 'port-conflict',
        port,
        message: `port ${port} is listed with different URLs (${[...urls].join(', ')}); no listener until they agree`,
      });
      continue;
    }
    routes.set(port, { url: claim.url });
  }
  return { routes, problems };
}

/** True when two route maps would produce the same listeners and the same forwarding. */
export function sameRoutes(
  a: ReadonlyMap<number, ListenerRoute>,
  b: ReadonlyMap<number, ListenerRoute>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [port, r] of a) {
    const o = b.get(port);
    if (!o || o.url !== r.url) return false;
  }
  return true;
}
