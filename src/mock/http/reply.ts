import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../../api/schemas/common.js';
import type { MockError } from './errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (status === 204 || body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Answers with the API's error body. An error given before the request body ended (too large,
 * too slow, refused before reading) also closes the connection: the rest of that body cannot be
 * skipped reliably to reach a next request, and must not hold the connection open.
 */
export function sendError(res: ServerResponse, err: MockError, operationId: string): void {
  if (!res.req.complete) res.setHeader('connection', 'close');
  const body: ErrorBody = {
    error_code: err.code,
    status_code: err.status,
    msg: err.message,
    details: { ...err.details, operation_id: operationId },
  };
  sendJson(res, err.status, body, err.headers);
}
