import { z } from 'zod';
import { ID_PREFIX, idSchema } from '../../ids.js';
import { Ref } from '../common.js';
import { enabledInput } from './shared.js';

/** EndpointBackend (response): the backend as a Ref. */
export const EndpointBackend = z.object({ enabled: z.boolean(), backend: Ref });
export type EndpointBackend = z.infer<typeof EndpointBackend>;

/** EndpointBackendMutate (request): the backend by id. */
export const EndpointBackendMutate = z.strictObject({
  enabled: enabledInput,
  backend_id: idSchema(ID_PREFIX.backend),
});
export type EndpointBackendMutate = z.infer<typeof EndpointBackendMutate>;

/** EndpointIPPolicy (response): the ip_restriction module, its policies as Refs. */
export const EndpointIPPolicy = z.object({ enabled: z.boolean(), ip_policies: z.array(Ref) });
export type EndpointIPPolicy = z.infer<typeof EndpointIPPolicy>;

/** EndpointIPPolicyMutate (request): the policies by id. */
export const EndpointIPPolicyMutate = z.strictObject({
  enabled: enabledInput,
  ip_policy_ids: z.array(idSchema(ID_PREFIX.ipPolicy)),
});
export type EndpointIPPolicyMutate = z.infer<typeof EndpointIPPolicyMutate>;
