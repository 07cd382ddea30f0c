import type { IncomingMessage } from 'node:http';
import type { MockServices } from '../services.js';
import { MockError } from './errors.js';
import { singleHeader } from './host.js';

/**
 * `Bearer <key>`, the scheme case-insensitive (RFC 9110 §11.1), one or more spaces after it. Keys
 * are any run of non-space characters (config allows that), not only token68.
 */
const BEARER = /^bearer +(\S+) *$/i;

const AUTH_FAILURES = new Set(['ERR_102', 'ERR_103', 'ERR_104', 'ERR_105', 'ERR_107']);

function authenticate(req: IncomingMessage, services: MockServices): string {
  const header = singleHeader(req, 'authorization', 'ERR_107');
  if (header === undefined)
    throw new MockError('ERR_102', 'the Authorization header is required: "Bearer <API key>"');
  const match = BEARER.exec(header);
  if (!match)
    throw new MockError('ERR_103', 'the Authorization header must have the form "Bearer <API key>"');
  const key = match[1]!;
  const account = services.directory.accountForApiKey(key);
  if (account !== undefined) return account;
  if (services.directory.accountForAuthtoken(key) !== undefined) {
    throw new MockError('ERR_105', 'an agent authtoken was sent; the management API needs an API key');
  }
  throw new MockError('ERR_104', 'the API key is not valid');
}

/**
 * Authenticates, counting failures per source address: past the limit, the address gets 429s
 * without its keys being looked at, until the window has room again.
 */
export function authenticateLimited(req: IncomingMessage, services: MockServices): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  const locked = services.authFailures.retryAfter(address);
  if (locked !== undefined) {
    const { failures, window_seconds } = services.config.auth_failure_limit;
    throw new MockError(
      'ERR_161',
      `too many failed authentications from this address (limit ${failures} per ${window_seconds} s)`,
      {},
      { 'retry-after': String(locked) },
    );
  }
  try {
    return authenticate(req, services);
  } catch (err) {
    if (err instanceof MockError && AUTH_FAILURES.has(err.code)) services.authFailures.record(address);
    throw err;
  }
}
