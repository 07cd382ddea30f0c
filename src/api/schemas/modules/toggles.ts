import { z } from 'zod';
import { enabledInput } from './shared.js';

/** EndpointCompression: `enabled` only. */
export const EndpointCompression = z.object({ enabled: z.boolean() });
export type EndpointCompression = z.infer<typeof EndpointCompression>;
export const EndpointCompressionInput = z.strictObject({ enabled: enabledInput });
export type EndpointCompressionInput = z.infer<typeof EndpointCompressionInput>;

/** EndpointWebsocketTCPConverter: `enabled` only. */
export const EndpointWebsocketTCPConverter = z.object({ enabled: z.boolean() });
export type EndpointWebsocketTCPConverter = z.infer<typeof EndpointWebsocketTCPConverter>;
export const EndpointWebsocketTCPConverterInput = z.strictObject({ enabled: enabledInput });
export type EndpointWebsocketTCPConverterInput = z.infer<typeof EndpointWebsocketTCPConverterInput>;
