import { z } from 'zod';
import { isDnsLabel } from '../../binding/endpoint-url.js';
import { Timestamp, byteLength, descriptionInput, listEnvelope, metadataInput } from './common.js';
import { Endpoint } from './endpoint.js';

/** The only feature the mock models: receiving cluster-bound endpoints. */
export const OPERATOR_FEATURES = ['bindings'] as const;
export const MAX_SELECTOR_BYTES = 4096;
/** The selector an operator gets when it registers without one: every endpoint. */
export const DEFAULT_ENDPOINT_SELECTOR = 'true';

export const KubernetesOperator = z.object({
  id: z.string(),
  uri: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
  description: z.string().optional(),
  metadata: z.string().optional(),
  enabled_features: z.array(z.string()),
  deployment: z.object({ name: z.string(), namespace: z.string(), version: z.string() }),
  binding: z.object({
    endpoint_selector: z.string(),
    /** `host:port` of the binding ingress; null while the mock's ingress is not listening. */
    ingress_endpoint: z.string().nullable(),
  }),
});
export type KubernetesOperator = z.infer<typeof KubernetesOperator>;

const dnsLabelInput = z.string().refine(isDnsLabel, {
  message: 'must be a lower-case RFC 1123 label of at most 63 characters',
  params: { code: 'ERR_601' },
});

const enabledFeaturesInput = z.array(z.string()).superRefine((value, ctx) => {
  const bad = value.find((f) => !(OPERATOR_FEATURES as readonly string[]).includes(f.toLowerCase()));
  if (bad !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `"${bad}" is not a supported feature; supported: ${OPERATOR_FEATURES.join(', ')}`,
      params: { code: 'ERR_600' },
    });
  }
});

const selectorInput = z.string().refine((v) => byteLength(v) <= MAX_SELECTOR_BYTES, {
  message: `must be at most ${MAX_SELECTOR_BYTES} bytes of UTF-8`,
  params: { code: 'ERR_603' },
});

const BindingInput = z.strictObject({ endpoint_selector: selectorInput.optional() });

export const KubernetesOperatorCreate = z.strictObject({
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
  enabled_features: enabledFeaturesInput.optional(),
  deployment: z.strictObject({
    name: dnsLabelInput,
    namespace: dnsLabelInput,
    version: z.string().max(255).optional(),
  }),
  binding: BindingInput.optional(),
});
export type KubernetesOperatorCreate = z.infer<typeof KubernetesOperatorCreate>;

/** `deployment.namespace` is accepted by the schema only so the server can answer ERR_602 for it. */
export const KubernetesOperatorUpdate = z.strictObject({
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
  enabled_features: enabledFeaturesInput.optional(),
  deployment: z
    .strictObject({
      name: dnsLabelInput.optional(),
      namespace: z.unknown().optional(),
      version: z.string().max(255).optional(),
    })
    .optional(),
  binding: BindingInput.optional(),
});
export type KubernetesOperatorUpdate = z.infer<typeof KubernetesOperatorUpdate>;

export const KubernetesOperatorList = listEnvelope('operators', KubernetesOperator);
export type KubernetesOperatorList = z.infer<typeof KubernetesOperatorList>;

export const BoundEndpointList = listEnvelope('endpoints', Endpoint);
export type BoundEndpointList = z.infer<typeof BoundEndpointList>;

/** Notification payloads of `GET /kubernetes_operators/{id}/events` (the `data` of each SSE event). */
export const EndpointChangedData = z.object({ endpoint: Endpoint });
export const EndpointDeletedData = z.object({
  endpoint: z.object({ id: z.string(), uri: z.string(), url: z.string() }),
});
export const ResyncData = z.object({
  reason: z.string(),
  last_event_id: z.number().int(),
  requested_id: z.string().optional(),
});

/** A notification as the typed client yields it; `id` is the SSE event id. */
export type OperatorEvent =
  | { type: 'endpoint.created' | 'endpoint.updated'; id: string; endpoint: Endpoint }
  | { type: 'endpoint.deleted'; id: string; endpoint: { id: string; uri: string; url: string } }
  /** The stream is live; everything up to `id` was delivered (or, on a fresh stream, precedes it). */
  | { type: 'ready'; id: string }
  /**
   * Events were lost (the resume id was too old or unknown, or a payload was unreadable): the
   * caller must relist the endpoints; events after this one are changes after `id`.
   */
  | { type: 'resync'; id: string; reason: string };
