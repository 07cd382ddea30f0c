import { z } from 'zod';
import { enabledInput } from './shared.js';

/** EndpointUserAgentFilter: `allow`/`deny` are regular expressions; `enabled` defaults to true here too. */
export const EndpointUserAgentFilter = z.object({
  enabled: z.boolean(),
  allow: z.array(z.string()).default([]),
  deny: z.array(z.string()).default([]),
});
export type EndpointUserAgentFilter = z.infer<typeof EndpointUserAgentFilter>;

export const EndpointUserAgentFilterInput = z.strictObject({
  enabled: enabledInput,
  allow: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
});
export type EndpointUserAgentFilterInput = z.infer<typeof EndpointUserAgentFilterInput>;
