import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceDef } from '../resources/registry.js';
import { ApiError, errors } from '../status.js';
import { documentHash, v2Document, v3Document, v3Index } from './document.js';

/**
 * The HTTP side of /openapi/v2 and /openapi/v3: JSON only (kubesim has no protobuf encoder, so a
 * client that accepts nothing but protobuf gets 406), ETag/If-None-Match, and the v3 documents'
 * content-addressed URLs (`?hash=`): a matching hash is cacheable forever, a stale one redirects.
 */

function notAcceptable(): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'only the following media types are accepted: application/json',
    reason: 'NotAcceptable',
    code: 406,
  });
}

/** Whether an Accept header admits JSON (absent and `*` forms included). */
export function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const type = (part.split(';')[0] ?? '').trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  cache: 'immutable' | 'revalidate',
): void {
  const text = JSON.stringify(body);
  const etag = `"${documentHash(text)}"`;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    ETag: etag,
    Vary: 'Accept',
    'Cache-Control': cache === 'immutable' ? 'public, immutable' : 'no-cache, private',
  };
  if (cache === 'immutable') headers.Expires = new Date(Date.now() + 365 * 24 * 3600_000).toUTCString();
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  headers['Content-Length'] = String(Buffer.byteLength(text));
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** Serves one /openapi/... request; throws an ApiError for the error replies. */
export function serveOpenApi(
  req: IncomingMessage,
  res: ServerResponse,
  defs: readonly ResourceDef[],
  url: URL,
): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw errors.methodNotAllowed();
  const path = url.pathname.replace(/\/+$/, '');
  if (path !== '/openapi/v2' && path !== '/openapi/v3' && !path.startsWith('/openapi/v3/'))
    throw errors.pathNotFound();
  if (!acceptsJson(req.headers.accept)) throw notAcceptable();
  if (path === '/openapi/v2') {
    sendJson(req, res, v2Document(defs), 'revalidate');
    return;
  }
  if (path === '/openapi/v3') {
    sendJson(req, res, v3Index(defs), 'revalidate');
    return;
  }
  const parts = path.slice('/openapi/v3/'.length).split('/');
  const [root, a, b] = parts;
  const gv =
    root === 'api' && parts.length === 2 && a
      ? { group: '', version: a }
      : root === 'apis' && parts.length === 3 && a && b
        ? { group: a, version: b }
        : undefined;
  const doc = gv ? v3Document(defs, gv.group, gv.version) : undefined;
  if (!doc) throw errors.pathNotFound();
  const hash = documentHash(JSON.stringify(doc));
  const asked = url.searchParams.get('hash');
  if (asked !== null && asked !== hash) {
    // The apiserver's answer to an outdated content address: go to the current one.
    res.writeHead(301, { Location: `${url.pathname}?hash=${hash}`, 'Cache-Control': 'no-cache, private' });
    res.end();
    return;
  }
  sendJson(req, res, doc, asked === null ? 'revalidate' : 'immutable');
}
