import type { ErrorCatalogue } from './types.js';

/** ERR_1xx: request plumbing shared by every route (version, auth, bodies, queries, ids, limits). */
export const coreCodes = {
  ERR_100: { status: 400, title: 'The Service-Version header is missing.' },
  ERR_101: {
    status: 400,
    title: 'The Service-Version header names an unsupported version (only 2 is supported).',
  },
  ERR_102: { status: 403, title: 'The Authorization header is missing.' },
  ERR_103: { status: 403, title: 'The Authorization header is not of the form "Bearer <API key>".' },
  ERR_104: { status: 403, title: 'The API key is not valid for any account.' },
  ERR_105: { status: 403, title: 'An agent authtoken was sent where an API key is required.' },
  ERR_106: {
    status: 400,
    title: 'The Host header is not of the form host[:port], or was sent more than once.',
  },
  ERR_107: { status: 400, title: 'The Authorization header was sent more than once.' },
  ERR_110: { status: 400, title: 'A request body was sent without Content-Type: application/json.' },
  ERR_111: { status: 400, title: 'The request body is not valid JSON.' },
  ERR_112: { status: 413, title: 'The request body is larger than the server accepts.' },
  ERR_113: { status: 400, title: 'A request body was sent on a method that takes none.' },
  ERR_114: { status: 400, title: 'The request body must be a JSON object.' },
  ERR_115: { status: 400, title: 'The request body nests deeper than 32 levels of [ and {.' },
  ERR_116: {
    status: 408,
    title:
      'The request body did not arrive in time (body timeout, 30 s by default); the connection is closed.',
  },
  ERR_117: {
    status: 400,
    title: 'The request body is not valid UTF-8, or a string in it holds a lone surrogate escape.',
  },
  ERR_120: { status: 400, title: 'The request body has a field the operation does not accept.' },
  ERR_121: { status: 400, title: 'A field has an invalid value; the message names the field and the rule.' },
  ERR_122: { status: 400, title: 'A required field is missing.' },
  ERR_123: { status: 400, title: 'An update (PATCH) must change at least one field.' },
  ERR_124: { status: 400, title: 'description is longer than 255 bytes.' },
  ERR_125: { status: 400, title: 'metadata is longer than 4096 bytes.' },
  ERR_130: { status: 400, title: 'The query string has a parameter the operation does not accept.' },
  ERR_131: { status: 400, title: 'A query parameter was given more than once.' },
  ERR_132: { status: 400, title: 'limit must be a whole number from 1 to 100.' },
  ERR_133: { status: 400, title: 'before_id is not an id of the listed resource.' },
  ERR_140: { status: 400, title: 'An id is malformed or has the wrong prefix for the resource.' },
  ERR_150: { status: 404, title: 'The resource does not exist in this account.' },
  ERR_151: { status: 404, title: 'No operation is served at this path.' },
  ERR_152: { status: 405, title: 'The path exists but does not accept this method.' },
  ERR_160: {
    status: 429,
    title: 'The account is over its request rate limit; retry after Retry-After seconds.',
  },
  ERR_161: {
    status: 429,
    title: 'Too many failed authentications from this address; retry after Retry-After seconds.',
  },
  ERR_170: { status: 500, title: 'Internal server error.' },
  ERR_171: { status: 503, title: 'The server is shutting down or temporarily unavailable.' },
} as const satisfies ErrorCatalogue;
