import type { IncomingMessage } from 'node:http';
import { MockError } from './errors.js';

const BODYLESS = new Set(['GET', 'DELETE', 'HEAD']);

function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

async function readCapped(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    throw new MockError(
      'ERR_112',
      `request body of ${declared} bytes is larger than the limit of ${limit} bytes`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      throw new MockError('ERR_112', `request body is larger than the limit of ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads and parses the request body by the API's rules: none on GET/DELETE, JSON objects only
 * elsewhere, with an explicit JSON content type, under the size cap. An absent body on a write
 * is an empty object, so "create with no fields" and "empty update" reach the handler's rules.
 */
export async function readJsonBody(req: IncomingMessage, method: string, limit: number): Promise<unknown> {
  if (BODYLESS.has(method)) {
    if (declaresBody(req)) throw new MockError('ERR_113', `${method} requests take no body`);
    return undefined;
  }
  const raw = await readCapped(req, limit);
  if (raw.length === 0) return {};
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new MockError(
      'ERR_110',
      type
        ? `Content-Type "${type}" is not supported; send application/json`
        : 'Content-Type is missing; send application/json',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new MockError(
      'ERR_111',
      `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new MockError('ERR_114', 'request body must be a JSON object');
  }
  return parsed;
}
