import { z } from 'zod';
import { parseEndpointUrl } from './endpoint-url.js';
import { ENDPOINT_ID_ANNOTATION, ENDPOINT_IDS_ANNOTATION } from './identity.js';

/**
 * The per-port URL map an internal Service carries in its `endpoint-binder.io/ports`
 * annotation: `{"<allocated forwarder port>": "<canonical endpoint URL>"}`. The controller
 * writes it; the forwarder reads it (and nothing else) to know which URL each listener serves.
 */
export const PortsAnnotation = z.record(
  z.string().regex(/^[1-9][0-9]{0,4}$/, 'must be a port number without leading zeros'),
  z.string().refine((u) => {
    const r = parseEndpointUrl(u);
    return r.ok && r.value.url === u;
  }, 'must be a canonical cluster-bound endpoint URL (scheme://name.namespace:port)'),
);

/** Port → URL, ports as numbers. */
export type PortMap = Map<number, string>;

/** The annotation text for a port map: keys in ascending port order, so equal maps are equal strings. */
export function formatPortsAnnotation(ports: PortMap): string {
  const sorted = [...ports.entries()].sort((a, b) => a[0] - b[0]);
  return JSON.stringify(Object.fromEntries(sorted.map(([p, u]) => [String(p), u])));
}

export type ParsedPorts = { ok: true; ports: PortMap } | { ok: false; message: string };

/** Parses the annotation; a malformed one is reported, never thrown. */
export function parsePortsAnnotation(text: string | undefined): ParsedPorts {
  if (text === undefined) return { ok: false, message: 'annotation missing' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, message: 'annotation is not JSON' };
  }
  const r = PortsAnnotation.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { ok: false, message: `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` };
  }
  const ports: PortMap = new Map();
  for (const [p, u] of Object.entries(r.data)) {
    const n = Number(p);
    if (n > 65535) return { ok: false, message: `${p}: must be at most 65535` };
    ports.set(n, u);
  }
  return { ok: true, ports };
}

/**
 * The alias Service's `endpoint-binder.io/endpoint-ids` annotation: a JSON array of the ids of
 * the hostname's projected endpoints, oldest first.
 */
export function formatEndpointIdsAnnotation(ids: readonly string[]): string {
  return JSON.stringify(ids);
}

const EndpointIds = z.array(z.string());

/** The ids of an `endpoint-ids` annotation; a missing or malformed one holds none. */
export function parseEndpointIdsAnnotation(text: string | undefined): string[] {
  if (text === undefined) return [];
  try {
    const r = EndpointIds.safeParse(JSON.parse(text));
    return r.success ? r.data : [];
  } catch {
    return [];
  }
}

/**
 * The endpoints a projected Service serves, from its annotations: an internal Service's
 * `endpoint-id`, else an alias Service's `endpoint-ids`.
 */
export function servedEndpointIds(annotations: Readonly<Record<string, string>> | undefined): string[] {
  const one = annotations?.[ENDPOINT_ID_ANNOTATION];
  if (one) return [one];
  return parseEndpointIdsAnnotation(annotations?.[ENDPOINT_IDS_ANNOTATION]);
}
