import { z } from 'zod';
import { ID_PREFIX, idSchema } from '../../ids.js';
import { Ref } from '../common.js';
import { codedEnum, enabledInput } from './shared.js';

/** EndpointMutualTLS (response): CAs as Refs. */
export const EndpointMutualTLS = z.object({
  enabled: z.boolean(),
  certificate_authorities: z.array(Ref),
});
export type EndpointMutualTLS = z.infer<typeof EndpointMutualTLS>;

/** EndpointMutualTLSMutate (request): CAs by id. */
export const EndpointMutualTLSMutate = z.strictObject({
  enabled: enabledInput,
  certificate_authority_ids: z.array(idSchema(ID_PREFIX.certificateAuthority)),
});
export type EndpointMutualTLSMutate = z.infer<typeof EndpointMutualTLSMutate>;

export const TERMINATE_AT = ['edge', 'upstream'] as const;
export const TLS_VERSIONS = ['1.0', '1.1', '1.2', '1.3'] as const;
export const DEFAULT_MIN_TLS_VERSION = '1.2';

/** EndpointTLSTermination (response). */
export const EndpointTLSTermination = z.object({
  enabled: z.boolean(),
  terminate_at: z.string(),
  min_version: z.string().nullable(),
});
export type EndpointTLSTermination = z.infer<typeof EndpointTLSTermination>;

/**
 * EndpointTLSTerminationAtEdge (request). The spec's form has `enabled` and `min_version`; this
 * mock also accepts `terminate_at` (default "edge") so passthrough edges can be modelled.
 */
export const EndpointTLSTerminationAtEdge = z.strictObject({
  enabled: enabledInput,
  terminate_at: codedEnum(TERMINATE_AT, 'ERR_310').optional(),
  min_version: codedEnum(TLS_VERSIONS, 'ERR_311').nullable().optional(),
});
export type EndpointTLSTerminationAtEdge = z.infer<typeof EndpointTLSTerminationAtEdge>;
