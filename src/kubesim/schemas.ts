import { z } from 'zod';

/**
 * zod schemas for every byte that crosses into kubesim: query parameters, the envelope of
 * request bodies (kind/apiVersion/metadata) and DeleteOptions. Resource-specific bodies are
 * checked by each resource's own schema (resources/*.ts).
 *
 * kubesim shares no code with src/kube (the client side): it stands in for the real API server,
 * and a schema or rule shared between the fake and its client could hide the same mistake in both.
 */

/** strconv.ParseBool, which is what the apiserver uses for boolean query parameters. */
const goBool = z
  .enum(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'])
  .transform((v) => ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v));

const uint = z
  .string()
  .regex(/^\d+$/, 'must be a non-negative integer')
  .transform((v) => Number(v));

export const listQuerySchema = z.object({
  labelSelector: z.string().optional(),
  fieldSelector: z.string().optional(),
  limit: uint.optional(),
  continue: z.string().optional(),
  resourceVersion: z.string().optional(),
  // Checked by validateListOptions (a 422 naming the supported values, as the real server does).
  resourceVersionMatch: z.string().optional(),
  watch: goBool.optional(),
  allowWatchBookmarks: goBool.optional(),
  timeoutSeconds: uint.optional(),
  sendInitialEvents: goBool.optional(),
});
export type ListQuery = z.infer<typeof listQuerySchema>;

export const writeQuerySchema = z.object({
  fieldManager: z.string().optional(),
  force: goBool.optional(),
  dryRun: z.string().optional(),
  /** Ignore, Warn (default) or Strict; checked by fieldValidationOf (a 422 like the real server's). */
  fieldValidation: z.string().optional(),
});
export type WriteQuery = z.infer<typeof writeQuerySchema>;

const stringMap = z.record(z.string(), z.string());

/** The metadata a client may send. Unknown metadata fields are kept (ownerReferences, finalizers, ...). */
export const objectMetaInSchema = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z.array(z.looseObject({})).optional(),
});

export const objectEnvelopeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: objectMetaInSchema.optional(),
});

export const deleteOptionsSchema = z.looseObject({
  kind: z.string().optional(),
  apiVersion: z.string().optional(),
  gracePeriodSeconds: z.number().int().optional(),
  propagationPolicy: z.enum(['Orphan', 'Background', 'Foreground']).optional(),
  preconditions: z
    .object({
      uid: z.string().optional(),
      resourceVersion: z.string().optional(),
    })
    .optional(),
});
export type DeleteOptions = z.infer<typeof deleteOptionsSchema>;

/** Continue tokens carry the list's RV and the key to resume after, like etcd3's. */
export const continueTokenSchema = z.object({
  v: z.literal('meta.k8s.io/v1'),
  rv: z.number().int(),
  start: z.string(),
});
export type ContinueToken = z.infer<typeof continueTokenSchema>;

/** First value of each query parameter, as the apiserver's parameter codec reads them. */
export function queryObject(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of params) if (!(k in out)) out[k] = v;
  return out;
}
