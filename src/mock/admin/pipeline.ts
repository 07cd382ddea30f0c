import type { IncomingMessage, ServerResponse } from 'node:http';
import { ID_PREFIX } from '../../api/ids.js';
import { readJsonBody } from '../http/body.js';
import { MockError } from '../http/errors.js';
import { sendError, sendJson } from '../http/reply.js';
import type { Router } from '../http/router.js';
import type { MockServices } from '../services.js';
import type { AdminRouteSpec } from './context.js';

/**
 * The admin interface: no version header or API key (it listens on its own loopback port and is
 * off unless asked for), JSON bodies and the same error bodies as the public API.
 */
export async function handleAdminRequest(
  router: Router<AdminRouteSpec>,
  services: MockServices,
  publicBaseUrl: () => string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const operationId = services.ids.mint(ID_PREFIX.operation);
  res.setHeader('operation-id', operationId);
  const method = req.method ?? 'GET';
  const path = new URL(req.url ?? '/', 'http://admin.invalid').pathname;
  try {
    const match = router.match(method, path);
    if (match.kind === 'no-path') throw new MockError('ERR_151', `no admin operation at ${path}`, { path });
    if (match.kind === 'wrong-method') {
      throw new MockError(
        'ERR_152',
        `${method} is not allowed on ${path}`,
        { path },
        { allow: match.allow.join(', ') },
      );
    }
    const body = await readJsonBody(req, method, {
      bytes: services.config.body_limit_bytes,
      timeoutMs: services.config.body_timeout_ms,
    });
    const reply = await match.route.handler({
      params: match.params,
      body,
      services,
      publicBaseUrl: publicBaseUrl(),
    });
    sendJson(res, reply.status, reply.body, reply.headers);
  } catch (err) {
    if (err instanceof MockError) {
      sendError(res, err, operationId);
    } else {
      services.log.error({ err, method, path }, 'mock admin handler failed');
      sendError(res, new MockError('ERR_170', 'internal server error'), operationId);
    }
  }
}
