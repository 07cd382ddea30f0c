import { z } from 'zod';
import { enabledInput } from './shared.js';

/** EndpointTrafficPolicy: `value` is a policy document as a JSON or YAML string, kept verbatim. */
export const EndpointTrafficPolicy = z.object({ enabled: z.boolean(), value: z.string() });
export type EndpointTrafficPolicy = z.infer<typeof EndpointTrafficPolicy>;

export const EndpointTrafficPolicyInput = z.strictObject({ enabled: enabledInput, value: z.string() });
export type EndpointTrafficPolicyInput = z.infer<typeof EndpointTrafficPolicyInput>;
