import {
  OAUTH_PROVIDERS,
  type EndpointOAuthInput,
  type EndpointOAuthProviderInput,
} from '../../../api/schemas/modules/oauth.js';
import { fieldError } from './field-error.js';

const TEAM = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

const given = (v: string | undefined): boolean => v !== undefined && v !== '';

/** Exactly one provider; own client id and secret together; scopes only with them; GitHub teams as org/team. */
export function validateOAuth(input: EndpointOAuthInput, field: string): void {
  const at = `${field}.provider`;
  const named = OAUTH_PROVIDERS.filter((p) => input.provider[p] !== undefined);
  if (named.length !== 1) {
    throw fieldError(
      'ERR_360',
      at,
      `must name exactly one provider (one of ${OAUTH_PROVIDERS.join(', ')}), got ${named.length === 0 ? 'none' : named.join(', ')}`,
    );
  }
  const name = named[0]!;
  const settings = input.provider[name] as NonNullable<EndpointOAuthProviderInput[typeof name]>;
  const p = `${at}.${name}`;
  const hasId = given(settings.client_id);
  const hasSecret = given(settings.client_secret);
  if (hasId !== hasSecret) {
    throw fieldError(
      'ERR_361',
      `${p}.${hasId ? 'client_secret' : 'client_id'}`,
      'client_id and client_secret must be given together (or neither, to use the managed app)',
    );
  }
  if ((settings.scopes?.length ?? 0) > 0 && !hasId) {
    throw fieldError(
      'ERR_362',
      `${p}.scopes`,
      'scopes may be set only with your own client_id and client_secret',
    );
  }
  if (name === 'github') {
    const teams = input.provider.github?.teams ?? [];
    teams.forEach((team, i) => {
      if (!TEAM.test(team)) {
        throw fieldError('ERR_363', `${p}.teams[${i}]`, `"${team}" must have the form "<org>/<team>"`);
      }
    });
  }
}
