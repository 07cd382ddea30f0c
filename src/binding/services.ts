import { z } from 'zod';
import type { Service, ServicePort } from '../kube/objects.js';
import type { EndpointUrl } from './endpoint-url.js';
import {
  ENDPOINT_ID_ANNOTATION,
  ENDPOINT_IDS_ANNOTATION,
  ENDPOINT_URL_ANNOTATION,
  OWNED_KEY_PREFIX,
  PORTS_ANNOTATION,
  REASON_ANNOTATION,
  STATE_LABEL,
  forwarderPodLabels,
} from './identity.js';
import {
  ALIAS_ANNOTATION,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
  ownershipLabels,
} from './ownership/index.js';
import { formatEndpointIdsAnnotation, formatPortsAnnotation } from './service-format.js';
import type { ProjectionConfig, ProjectionState } from './types.js';

/**
 * The two Service shapes of docs/projection.md, complete and with no server-defaulted field, so
 * that a desired object can be created as is and compared field by field with a live one.
 */

/** Configured extras cannot set keys under our prefix: every key there is ours. */
function extras(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([k]) => !k.startsWith(OWNED_KEY_PREFIX)));
}

/**
 * On a projected Service with configured extra labels or annotations: the keys of those it
 * carries, as JSON `{"labels":[…],"annotations":[…]}` (sorted). A key dropped from the config is
 * then known to be ours and removed at the next write (plan.ts), on upgrade as on rollback.
 */
export const EXTRA_KEYS_ANNOTATION = `${OWNED_KEY_PREFIX}extra-keys`;

export interface ExtraKeys {
  labels: string[];
  annotations: string[];
}

const extraKeysSchema = z.object({
  labels: z.array(z.string()).default([]),
  annotations: z.array(z.string()).default([]),
});

export function formatExtraKeys(keys: ExtraKeys): string {
  return JSON.stringify({ labels: [...keys.labels].sort(), annotations: [...keys.annotations].sort() });
}

/** The keys a live Service records; none when the annotation is absent or not ours to read. */
export function parseExtraKeys(text: string | undefined): ExtraKeys {
  if (text === undefined) return { labels: [], annotations: [] };
  try {
    const r = extraKeysSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : { labels: [], annotations: [] };
  } catch {
    return { labels: [], annotations: [] };
  }
}

/** Our labels and annotations with the configured extras under them (ours win a clash), and the record of the extras. */
function withExtras(
  config: ProjectionConfig,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): { labels: Record<string, string>; annotations: Record<string, string> } {
  const extraLabels = Object.entries(extras(config.serviceLabels)).filter(([k]) => !(k in labels));
  const extraAnnotations = Object.entries(extras(config.serviceAnnotations)).filter(
    ([k]) => !(k in annotations),
  );
  const out = {
    labels: { ...Object.fromEntries(extraLabels), ...labels },
    annotations: { ...Object.fromEntries(extraAnnotations), ...annotations },
  };
  if (extraLabels.length > 0 || extraAnnotations.length > 0)
    out.annotations[EXTRA_KEYS_ANNOTATION] = formatExtraKeys({
      labels: extraLabels.map(([k]) => k),
      annotations: extraAnnotations.map(([k]) => k),
    });
  return out;
}

/** One URL of a hostname group with its allocated forwarder port. */
export interface GroupPort {
  url: EndpointUrl;
  forwarderPort: number;
}

/** The group's ports, ascending by the URL's port. */
function servicePorts(ports: readonly GroupPort[], target: (p: GroupPort) => number): ServicePort[] {
  return [...ports]
    .sort((a, b) => a.url.port - b.url.port)
    .map((p) => ({
      name: `${p.url.scheme}-${p.url.port}`,
      protocol: 'TCP',
      port: p.url.port,
      targetPort: target(p),
    }));
}

export interface InternalServiceInput {
  name: string;
  endpointId: string;
  url: EndpointUrl;
  state: ProjectionState;
  /** Empty for `projected`. */
  reason: string;
  groupPorts: readonly GroupPort[];
  config: ProjectionConfig;
  /** The alias this install created for it (`namespace/name/uid`); absent until it exists. */
  alias?: string;
}

export function internalService(input: InternalServiceInput): Service {
  const { config } = input;
  const annotations: Record<string, string> = {
    [ENDPOINT_ID_ANNOTATION]: input.endpointId,
    [ENDPOINT_URL_ANNOTATION]: input.url.url,
    [PORTS_ANNOTATION]: formatPortsAnnotation(
      new Map(input.groupPorts.map((p) => [p.forwarderPort, p.url.url])),
    ),
  };
  if (input.state !== 'projected') annotations[REASON_ANNOTATION] = input.reason;
  if (input.alias !== undefined) annotations[ALIAS_ANNOTATION] = input.alias;
  const meta = withExtras(
    config,
    { ...ownershipLabels(config.identity), [ROLE_LABEL]: ROLE_INTERNAL, [STATE_LABEL]: input.state },
    annotations,
  );
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: input.name,
      namespace: config.identity.operatorNamespace,
      ...meta,
    },
    spec: {
      type: 'ClusterIP',
      selector: forwarderPodLabels(config.identity),
      ports: servicePorts(input.groupPorts, (p) => p.forwarderPort),
    },
  };
}

export interface AliasServiceInput {
  /** The hostname's name and namespace parts. */
  name: string;
  namespace: string;
  externalName: string;
  /** Ids of the group's projected endpoints, oldest first. */
  endpointIds: readonly string[];
  groupPorts: readonly GroupPort[];
  config: ProjectionConfig;
}

export function aliasService(input: AliasServiceInput): Service {
  const { config } = input;
  const meta = withExtras(
    config,
    { ...ownershipLabels(config.identity), [ROLE_LABEL]: ROLE_ALIAS, [STATE_LABEL]: 'projected' },
    { [ENDPOINT_IDS_ANNOTATION]: formatEndpointIdsAnnotation(input.endpointIds) },
  );
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      ...meta,
    },
    spec: {
      type: 'ExternalName',
      externalName: input.externalName,
      // What the API server would default targetPort to; informational for ExternalName.
      ports: servicePorts(input.groupPorts, (p) => p.url.port),
    },
  };
}
