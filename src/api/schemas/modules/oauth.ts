import { z } from 'zod';
import { enabledInput, uint32 } from './shared.js';

export const OAUTH_PROVIDERS = [
  'github',
  'facebook',
  'microsoft',
  'google',
  'linkedin',
  'gitlab',
  'twitch',
  'amazon',
] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

const providerFields = {
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  email_addresses: z.array(z.string()).optional(),
  email_domains: z.array(z.string()).optional(),
};
const githubFields = {
  teams: z.array(z.string()).optional(),
  organizations: z.array(z.string()).optional(),
};

/** One provider's settings; GitHub alone also has `teams` and `organizations`. */
export const EndpointOAuthProviderSettings = z.object(providerFields);
export const EndpointOAuthGitHub = z.object({ ...providerFields, ...githubFields });
export type EndpointOAuthProviderSettings = z.infer<typeof EndpointOAuthProviderSettings>;
export type EndpointOAuthGitHub = z.infer<typeof EndpointOAuthGitHub>;

const ProviderInput = z.strictObject(providerFields);
const GitHubInput = z.strictObject({ ...providerFields, ...githubFields });

/** EndpointOAuthProvider: the members are alternatives, exactly one is set (checked by the server). */
export const EndpointOAuthProvider = z.object({
  github: EndpointOAuthGitHub.optional(),
  facebook: EndpointOAuthProviderSettings.optional(),
  microsoft: EndpointOAuthProviderSettings.optional(),
  google: EndpointOAuthProviderSettings.optional(),
  linkedin: EndpointOAuthProviderSettings.optional(),
  gitlab: EndpointOAuthProviderSettings.optional(),
  twitch: EndpointOAuthProviderSettings.optional(),
  amazon: EndpointOAuthProviderSettings.optional(),
});
export type EndpointOAuthProvider = z.infer<typeof EndpointOAuthProvider>;

export const EndpointOAuthProviderInput = z.strictObject({
  github: GitHubInput.optional(),
  facebook: ProviderInput.optional(),
  microsoft: ProviderInput.optional(),
  google: ProviderInput.optional(),
  linkedin: ProviderInput.optional(),
  gitlab: ProviderInput.optional(),
  twitch: ProviderInput.optional(),
  amazon: ProviderInput.optional(),
});
export type EndpointOAuthProviderInput = z.infer<typeof EndpointOAuthProviderInput>;

/** Session settings shared by OAuth, SAML and OIDC. */
export const sessionFields = {
  options_passthrough: z.boolean().optional(),
  cookie_prefix: z.string().optional(),
  inactivity_timeout: z.number().optional(),
  maximum_duration: z.number().optional(),
};
export const sessionInputFields = {
  options_passthrough: z.boolean().optional(),
  cookie_prefix: z.string().optional(),
  inactivity_timeout: uint32.optional(),
  maximum_duration: uint32.optional(),
};

export const EndpointOAuth = z.object({
  enabled: z.boolean(),
  provider: EndpointOAuthProvider,
  ...sessionFields,
  auth_check_interval: z.number().optional(),
});
export type EndpointOAuth = z.infer<typeof EndpointOAuth>;

export const EndpointOAuthInput = z.strictObject({
  enabled: enabledInput,
  provider: EndpointOAuthProviderInput,
  ...sessionInputFields,
  auth_check_interval: uint32.optional(),
});
export type EndpointOAuthInput = z.infer<typeof EndpointOAuthInput>;
