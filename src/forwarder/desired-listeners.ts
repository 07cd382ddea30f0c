/**
 * Pure: from this install's internal Services to the listeners the forwarder should have, one
 * per allocated port, each with the URL it serves and the ingress to dial. The format is fixed in
 * docs/projection.md; the forwarder reads only the ports and ingress annotations.
 */
import {
  INGRESS_ANNOTATION,
  PORTS_ANNOTATION,
  ROLE_INTERNAL,
  ROLE_LABEL,
  isOwnedBy,
  type InstallIdentity,
} from '../binding/identity.js';
import { parsePortsAnnotation } from '../binding/service-format.js';
import { isLoopbackHost, tryParseHostPort } from '../net/host-port.js';

/** The part of a Service this function looks at. */
export interface ServiceLike {
  metadata: {
    name: string;
    namespace?: string | undefined;
    labels?: Record<string, string> | undefined;
    annotations?: Record<string, string> | undefined;
  };
}

export interface ListenerRoute {
  /** The canonical endpoint URL the port stands for. */
  url: string;
  /** `host:port` of the binding ingress; undefined while no Service names one and no override is set. */
  ingress: string | undefined;
}

export interface DesiredProblem {
  /** `namespace/name` of the Service, or several joined by `, `. */
  service: string;
  /** Stable short kind, for logs and tests. */
  kind: 'foreign' | 'ports-annotation' | 'ingress-annotation' | 'port-conflict';
  message: string;
  port?: number;
}

export interface DesiredListeners {
  routes: Map<number, ListenerRoute>;
  problems: DesiredProblem[];
}

const keyOf = (s: ServiceLike): string => `${s.metadata.namespace ?? ''}/${s.metadata.name}`;

/**
 * Services are visited in name order so that the outcome never depends on the cache's order.
 * A port claimed with two URLs is a controller bug: reported and skipped (no listener), never
 * guessed. The ingress of a port is the first valid annotation among the Services that list it,
 * unless `ingressOverride` is set.
 */
export function desiredListeners(
  services: readonly ServiceLike[],
  identity: InstallIdentity,
  opts: {
    /** `ingress.address` from the config: wins over every annotation. */
    ingressOverride?: string | undefined;
    /** Plain TCP (`ingress.tls: false`) may only reach a loopback ingress. */
    plainTcp?: boolean;
  } = {},
): DesiredListeners {
  const { ingressOverride, plainTcp = false } = opts;
  const problems: DesiredProblem[] = [];
  const claims = new Map<number, { url: string; ingress: string | undefined; services: string[] }>();
  const conflicted = new Map<number, Set<string>>();

  for (const svc of [...services].sort((a, b) => keyOf(a).localeCompare(keyOf(b)))) {
    const key = keyOf(svc);
    if (!isOwnedBy(svc, identity) || svc.metadata.labels?.[ROLE_LABEL] !== ROLE_INTERNAL) {
      problems.push({ service: key, kind: 'foreign', message: 'not an internal Service of this install' });
      continue;
    }
    const annotations = svc.metadata.annotations ?? {};
    const parsed = parsePortsAnnotation(annotations[PORTS_ANNOTATION]);
    if (!parsed.ok) {
      problems.push({
        service: key,
        kind: 'ports-annotation',
        message: `${PORTS_ANNOTATION}: ${parsed.message}`,
      });
      continue;
    }
    let ingress = ingressOverride === undefined ? annotations[INGRESS_ANNOTATION] : undefined;
    if (ingress !== undefined) {
      const addr = tryParseHostPort(ingress);
      const shown = JSON.stringify(ingress.slice(0, 100));
      const message = !addr
        ? `${INGRESS_ANNOTATION}: must be host:port, got ${shown}`
        : plainTcp && !isLoopbackHost(addr.host)
          ? `${INGRESS_ANNOTATION}: ${shown} is not a loopback address, and ingress.tls is false (plain TCP only to a loopback ingress)`
          : undefined;
      if (message) {
        problems.push({ service: key, kind: 'ingress-annotation', message });
        ingress = undefined;
      }
    }
    for (const [port, url] of parsed.ports) {
      const claim = claims.get(port);
      if (!claim) {
        claims.set(port, { url, ingress, services: [key] });
        continue;
      }
      claim.services.push(key);
      claim.ingress ??= ingress;
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
    routes.set(port, { url: claim.url, ingress: ingressOverride ?? claim.ingress });
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
    if (!o || o.url !== r.url || o.ingress !== r.ingress) return false;
  }
  return true;
}
