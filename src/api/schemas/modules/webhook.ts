import { z } from 'zod';
import { enabledInput } from './shared.js';

/** EndpointWebhookValidation. The supported providers are checked by the server (docs/api/edges.md). */
export const EndpointWebhookValidation = z.object({
  enabled: z.boolean(),
  provider: z.string(),
  secret: z.string().optional(),
});
export type EndpointWebhookValidation = z.infer<typeof EndpointWebhookValidation>;

export const EndpointWebhookValidationInput = z.strictObject({
  enabled: enabledInput,
  provider: z.string(),
  secret: z.string().optional(),
});
export type EndpointWebhookValidationInput = z.infer<typeof EndpointWebhookValidationInput>;
