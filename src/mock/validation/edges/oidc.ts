import type { EndpointOIDCInput } from '../../../api/schemas/modules/oidc.js';
import { fieldError } from './field-error.js';

export function validateOidc(input: EndpointOIDCInput, field: string): void {
  let url: URL | undefined;
  try {
    url = new URL(input.issuer);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
    throw fieldError('ERR_385', `${field}.issuer`, `"${input.issuer}" must be an absolute http(s) URL`);
  }
}
