import type { IncomingMessage, ServerResponse } from 'node:http';
import { ID_PREFIX, hasIdPrefix } from '../../api/ids.js';
import type { MockServices } from '../services.js';
import { readJsonBody } from './body.js';
import type { RequestContext } from './context.js';
import { MockError } from './errors.js';
import { authenticateLimited } from './auth.js';
import { checkHost } from './host.js';
import { PAGING_PARAMS, parseQuery } from './query.js';
import { sendError, sendJson } from './reply.js';
import type { RouteSpec, Router } from './router.js';

export const SUPPORTED_VERSION = '2';

function baseUrlOf(req: IncomingMessage, services: MockServices): string {
  const configured = services.config.public_base_url;
  if (configured) return configured.replace(/\/+$/, '');
  // checkHost has vetted the header: it is host[:port] and nothing else.
  const local = req.socket.localAddress ?? '127.0.0.1';
  const host =
    req.headers.host ?? `${local.includes(':') ? `[${local}]` : local}:${req.socket.localPort ?? 80}`;
  return `http://${host}`;
}

function checkVersion(req: IncomingMessage): void {
  const v = req.headers['service-version'];
  if (v === undefined) {
    throw new MockError(
      'ERR_100',
      `the Service-Version header is required; supported versions: ${SUPPORTED_VERSION}`,
    );
  }
  if (v !== SUPPORTED_VERSION) {
    throw new MockError(
      'ERR_101',
      `Service-Version "${String(v)}" is not supported; supported versions: ${SUPPORTED_VERSION}`,
    );
  }
}

function checkPathIds(route: RouteSpec, params: Record<string, string>): void {
  for (const [name, prefix] of Object.entries(route.params ?? {})) {
    const value = params[name] ?? '';
    if (!hasIdPrefix(value, prefix)) {
      throw new MockError(
        'ERR_140',
        `"${value}" is not a valid id: expected an id starting with "${prefix}"`,
        {
          parameter: name,
        },
      );
    }
  }
}

function applyFault(services: MockServices, path: string, res: ServerResponse, operationId: string): boolean {
  const fault = services.faults.take(path);
  if (!fault) return false;
  if (fault.hang) return true; // the client's timeout is what is under test
  const headers: Record<string, string> = {};
  if (fault.retry_after_seconds !== undefined) headers['retry-after'] = String(fault.retry_after_seconds);
  if (fault.html) {
    res.writeHead(fault.status, { 'content-type': 'text/html', ...headers });
    res.end(`<html><body><h1>${fault.status}</h1>injected by the mock</body></html>`);
    return true;
  }
  const code = fault.status === 429 ? 'ERR_160' : fault.status === 500 ? 'ERR_170' : 'ERR_171';
  const err = new MockError(code, `injected ${fault.status} fault`, {}, headers);
  sendJson(
    res,
    fault.status,
    { error_code: code, status_code: fault.status, msg: err.message, details: { operation_id: operationId } },
    headers,
  );
  return true;
}

/**
 * One public API request, in the order the real service checks things: Host, route, version,
 * auth (with its per-address failure limit), rate limit, query, path ids, body; then the handler. Every failure is an error body with the
 * operation id in `details` and in the `operation-id` header.
 */
export async function handlePublicRequest(
  router: Router,
  services: MockServices,
  req: IncomingMessage,
  res: ServerResponse,
  state: { shuttingDown: boolean },
): Promise<void> {
  const started = services.now();
  const operationId = services.ids.mint(ID_PREFIX.operation);
  res.setHeader('operation-id', operationId);
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', 'http://mock.invalid');
  const path = url.pathname;
  let accountId: string | undefined;
  try {
    if (state.shuttingDown) throw new MockError('ERR_171', 'the server is shutting down');
    checkHost(req);
    const match = router.match(method, path);
    if (match.kind === 'no-path') throw new MockError('ERR_151', `no operation at ${path}`, { path });
    if (match.kind === 'wrong-method') {
      throw new MockError(
        'ERR_152',
        `${method} is not allowed on ${path}; allowed: ${match.allow.join(', ')}`,
        { path },
        {
          allow: match.allow.join(', '),
        },
      );
    }
    checkVersion(req);
    accountId = authenticateLimited(req, services);
    if (applyFault(services, path, res, operationId)) return;
    const retryAfter = services.rateLimiter.take(accountId);
    if (retryAfter !== undefined) {
      const { requests, window_seconds } = services.config.rate_limit;
      throw new MockError(
        'ERR_160',
        `the account is limited to ${requests} requests per ${window_seconds} s`,
        {},
        {
          'retry-after': String(retryAfter),
        },
      );
    }
    const route = match.route;
    const query = parseQuery(url.searchParams, [
      ...(route.query ?? []),
      ...(route.paged ? PAGING_PARAMS : []),
    ]);
    checkPathIds(route, match.params);
    const body = await readJsonBody(req, method, {
      bytes: services.config.body_limit_bytes,
      timeoutMs: services.config.body_timeout_ms,
    });
    const ctx: RequestContext = {
      method,
      path,
      params: match.params,
      query,
      body,
      account: services.state(accountId),
      baseUrl: baseUrlOf(req, services),
      operationId,
      log: services.log.child({ operation_id: operationId }),
      services,
      req,
      res,
    };
    const result = await route.handler(ctx);
    if (result !== 'streamed') sendJson(res, result.status, result.body, result.headers);
  } catch (err) {
    if (err instanceof MockError) {
      sendError(res, err, operationId);
    } else {
      services.log.error({ err, operation_id: operationId, method, path }, 'mock api handler failed');
      sendError(res, new MockError('ERR_170', 'internal server error'), operationId);
    }
  } finally {
    services.log.info(
      {
        method,
        path,
        status: res.statusCode,
        account: accountId,
        operation_id: operationId,
        ms: services.now() - started,
      },
      'mock api request',
    );
  }
}
