import { z } from 'zod';
import { parseEndpointUrl, parseUpstreamUrl, type EndpointUrlRule } from '../../binding/endpoint-url.js';
import { Ref, Timestamp, descriptionInput, listEnvelope, metadataInput } from './common.js';

/** The binding value of cluster-bound endpoints, the only one this API models. */
export const KUBERNETES_BINDING = 'kubernetes';

/** The error code of each URL rule (spec 2.5). */
export const URL_RULE_CODES: Record<EndpointUrlRule, 'ERR_500' | 'ERR_501' | 'ERR_502' | 'ERR_503'> = {
  1: 'ERR_500',
  2: 'ERR_501',
  3: 'ERR_502',
  4: 'ERR_503',
};

/** A cluster-bound endpoint as the API returns it. `url` and `public_url` are canonical (with the port). */
export const Endpoint = z.object({
  id: z.string(),
  uri: z.string(),
  url: z.string(),
  proto: z.string(),
  host: z.string(),
  port: z.number().int(),
  hostport: z.string(),
  public_url: z.string(),
  bindings: z.array(z.string()),
  /** `cloud`, or `agent` while an online tunnel serves the endpoint (it has an upstream_url). */
  type: z.string(),
  description: z.string().optional(),
  metadata: z.string().optional(),
  created_at: Timestamp,
  updated_at: Timestamp,
  upstream_url: z.string().optional(),
  tunnel: Ref.optional(),
  pooling_enabled: z.boolean(),
});
export type Endpoint = z.infer<typeof Endpoint>;

/** A URL checked against rules 1–4; the error code names the rule that failed. */
export const endpointUrlInput = z.string().superRefine((value, ctx) => {
  const r = parseEndpointUrl(value);
  if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message, params: { code: URL_RULE_CODES[r.rule] } });
});

export const upstreamUrlInput = z.string().superRefine((value, ctx) => {
  const r = parseUpstreamUrl(value);
  if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message, params: { code: 'ERR_530' } });
});

export const bindingsInput = z.array(z.string()).superRefine((value, ctx) => {
  if (value.length !== 1 || value[0] !== KUBERNETES_BINDING) {
    ctx.addIssue({
      code: 'custom',
      message: `must be exactly ["${KUBERNETES_BINDING}"] (this API serves cluster-bound endpoints only), got ${JSON.stringify(value)}`,
      params: { code: 'ERR_510' },
    });
  }
});

export const EndpointCreate = z.strictObject({
  url: endpointUrlInput,
  bindings: bindingsInput,
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
  /** null is the same as leaving it out: no upstream, no tunnel. */
  upstream_url: upstreamUrlInput.nullable().optional(),
  pooling_enabled: z.boolean().optional(),
});
export type EndpointCreate = z.infer<typeof EndpointCreate>;

export const EndpointUpdate = z.strictObject({
  url: endpointUrlInput.optional(),
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
  /** null removes the upstream (and takes the tunnel offline). */
  upstream_url: upstreamUrlInput.nullable().optional(),
  pooling_enabled: z.boolean().optional(),
});
export type EndpointUpdate = z.infer<typeof EndpointUpdate>;

export const EndpointList = listEnvelope('endpoints', Endpoint);
export type EndpointList = z.infer<typeof EndpointList>;

/** The one list filter accepted (the real service's CEL form); whitespace around tokens is free. */
export const KUBERNETES_BINDING_FILTER = `"${KUBERNETES_BINDING}" in obj.bindings`;
