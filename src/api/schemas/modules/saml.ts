import { z } from 'zod';
import { sessionFields, sessionInputFields } from './oauth.js';
import { enabledInput } from './shared.js';

export const NAMEID_FORMAT_PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

/** The subset of SAML name identifier formats the service supports; the first is the default. */
export const SAML_NAMEID_FORMATS = [
  NAMEID_FORMAT_PERSISTENT,
  'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
] as const;

/** Fields the server generates; sending one is an error. */
export const SAML_GENERATED_FIELDS = [
  'entity_id',
  'assertion_consumer_service_url',
  'single_logout_url',
  'request_signing_certificate_pem',
  'metadata_url',
] as const;

/** EndpointSAML as answered: the request fields plus the server-generated ones. */
export const EndpointSAML = z.object({
  enabled: z.boolean(),
  ...sessionFields,
  idp_metadata: z.string(),
  force_authn: z.boolean().optional(),
  allow_idp_initiated: z.boolean().optional(),
  authorized_groups: z.array(z.string()).optional(),
  entity_id: z.string(),
  assertion_consumer_service_url: z.string(),
  single_logout_url: z.string(),
  request_signing_certificate_pem: z.string(),
  metadata_url: z.string(),
  nameid_format: z.string(),
});
export type EndpointSAML = z.infer<typeof EndpointSAML>;

/** EndpointSAMLMutate: what a client may send. */
export const EndpointSAMLInput = z.strictObject({
  enabled: enabledInput,
  ...sessionInputFields,
  idp_metadata: z.string(),
  force_authn: z.boolean().optional(),
  allow_idp_initiated: z.boolean().optional(),
  authorized_groups: z.array(z.string()).optional(),
  nameid_format: z.string().optional(),
});
export type EndpointSAMLInput = z.infer<typeof EndpointSAMLInput>;
