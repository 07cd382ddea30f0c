import type { EndpointWebhookValidationInput } from '../../../api/schemas/modules/webhook.js';
import { fieldError } from './field-error.js';

/** The AWS SNS provider: the only one that takes no secret. */
export const SNS_PROVIDER = 'sns';

/** Supported webhook providers (lower-case identifiers; matched case-insensitively). */
export const WEBHOOK_PROVIDERS: readonly string[] = [
  'aftership',
  'airship',
  'alchemy',
  'sns',
  'autodesk',
  'bitbucket',
  'bolt',
  'box',
  'brex',
  'buildkite',
  'calendly',
  'castle',
  'chargify',
  'circleci',
  'clearbit',
  'clerk',
  'coinbase',
  'contentful',
  'docusign',
  'dropbox',
  'facebook_graph_api',
  'facebook_messenger',
  'frameio',
  'github',
  'gitlab',
  'go1',
  'heroku',
  'hostedhooks',
  'hubspot',
  'graphcms',
  'instagram',
  'intercom',
  'jira',
  'launch_darkly',
  'linear',
  'mailchimp',
  'mailgun',
  'microsoft_teams',
  'modern_treasury',
  'mongodb',
  'mux',
  'orb',
  'orbit',
  'pagerduty',
  'pinwheel',
  'plivo',
  'pusher',
  'sendgrid',
  'sentry',
  'shopify',
  'signal_sciences',
  'slack',
  'sonatype',
  'square',
  'stripe',
  'svix',
  'terraform',
  'tiktok',
  'trendmicro_conformity',
  'twilio',
  'twitter',
  'typeform',
  'vmware',
  'webex',
  'whatsapp',
  'worldline',
  'xero',
  'zendesk',
  'zoom',
];

/** Checks the provider and the secret rule; returns the provider's canonical (lower-case) identifier. */
export function validateWebhook(input: EndpointWebhookValidationInput, field: string): string {
  const provider = input.provider.toLowerCase();
  if (!WEBHOOK_PROVIDERS.includes(provider)) {
    throw fieldError(
      'ERR_370',
      `${field}.provider`,
      `"${input.provider}" is not a supported provider; supported: ${WEBHOOK_PROVIDERS.join(', ')}`,
    );
  }
  if (provider === SNS_PROVIDER && input.secret !== undefined) {
    throw fieldError('ERR_372', `${field}.secret`, 'must not be set for the AWS SNS provider ("sns")');
  }
  if (provider !== SNS_PROVIDER && !input.secret) {
    throw fieldError('ERR_371', `${field}.secret`, `is required for provider "${provider}"`);
  }
  return provider;
}
