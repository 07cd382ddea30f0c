import { z } from 'zod';
import { sessionFields, sessionInputFields } from './oauth.js';
import { enabledInput } from './shared.js';

export const EndpointOIDC = z.object({
  enabled: z.boolean(),
  ...sessionFields,
  issuer: z.string(),
  client_id: z.string(),
  client_secret: z.string(),
  scopes: z.array(z.string()).optional(),
});
export type EndpointOIDC = z.infer<typeof EndpointOIDC>;

const required = z.string().min(1, { message: 'must not be empty' });

export const EndpointOIDCInput = z.strictObject({
  enabled: enabledInput,
  ...sessionInputFields,
  issuer: required,
  client_id: required,
  client_secret: required,
  scopes: z.array(z.string()).optional(),
});
export type EndpointOIDCInput = z.infer<typeof EndpointOIDCInput>;
