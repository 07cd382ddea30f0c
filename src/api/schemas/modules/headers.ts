import { z } from 'zod';
import { StringMap } from '../common.js';
import { enabledInput } from './shared.js';

/**
 * EndpointRequestHeaders / EndpointResponseHeaders. `add` keys are header names exactly as the
 * user wrote them (`X-Custom-Header`): user data, never case-converted by client or server.
 */
export const EndpointHeaders = z.object({
  enabled: z.boolean(),
  add: StringMap.default({}),
  remove: z.array(z.string()).default([]),
});
export type EndpointHeaders = z.infer<typeof EndpointHeaders>;

export const EndpointHeadersInput = z.strictObject({
  enabled: enabledInput,
  add: StringMap.optional(),
  remove: z.array(z.string()).optional(),
});
export type EndpointHeadersInput = z.infer<typeof EndpointHeadersInput>;

export const EndpointRequestHeaders = EndpointHeaders;
export type EndpointRequestHeaders = EndpointHeaders;
export const EndpointRequestHeadersInput = EndpointHeadersInput;
export type EndpointRequestHeadersInput = EndpointHeadersInput;
export const EndpointResponseHeaders = EndpointHeaders;
export type EndpointResponseHeaders = EndpointHeaders;
export const EndpointResponseHeadersInput = EndpointHeadersInput;
export type EndpointResponseHeadersInput = EndpointHeadersInput;
