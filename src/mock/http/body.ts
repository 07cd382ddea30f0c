import type { IncomingMessage } from 'node:http';
import { MockError } from './errors.js';
import { MAX_BODY_NESTING, contentTypeCharset, findBodyProblem, jsonNesting } from './json-guards.js';

const BODYLESS = new Set(['GET', 'DELETE', 'HEAD']);

export interface BodyLimits {
  /** Largest accepted body, in bytes. */
  bytes: number;
  /** How long the whole body may take to arrive once the headers are in. */
  timeoutMs: number;
}

function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

function readCapped(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limits.bytes) {
    return Promise.reject(
      new MockError(
        'ERR_112',
        `request body of ${declared} bytes is larger than the limit of ${limits.bytes} bytes`,
      ),
    );
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | undefined): void => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (err) {
        req.pause();
        reject(err);
      } else {
        resolve(Buffer.concat(chunks));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.bytes) {
        done(new MockError('ERR_112', `request body is larger than the limit of ${limits.bytes} bytes`));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => done(undefined);
    const onError = (err: Error): void => done(err);
    const onClose = (): void => done(new Error('the client closed the connection before the body ended'));
    const timer = setTimeout(() => {
      done(
        new MockError(
          'ERR_116',
          `the request body did not arrive within ${limits.timeoutMs} ms (${size} bytes received)`,
        ),
      );
    }, limits.timeoutMs);
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw new MockError('ERR_117', 'request body is not valid UTF-8 (JSON bodies must be UTF-8 encoded)');
  }
}

function checkContentType(req: IncomingMessage): void {
  const header = req.headers['content-type'] ?? '';
  const type = header.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new MockError(
      'ERR_110',
      type
        ? `Content-Type "${type}" is not supported; send application/json`
        : 'Content-Type is missing; send application/json',
    );
  }
  const charset = contentTypeCharset(header);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new MockError(
      'ERR_110',
      `Content-Type charset "${charset}" is not supported; JSON bodies are UTF-8 (send charset=utf-8 or none)`,
    );
  }
}

/**
 * Reads and parses the request body by the API's rules: none on GET/DELETE, JSON objects only
 * elsewhere, with an explicit JSON content type, under the size cap and the body timeout, in
 * strict UTF-8, nested at most MAX_BODY_NESTING deep, with no lone surrogate and no `__proto__`
 * key anywhere. An absent body on a write is an empty object, so "create with no fields" and
 * "empty update" reach the handler's rules.
 */
export async function readJsonBody(
  req: IncomingMessage,
  method: string,
  limits: BodyLimits,
): Promise<unknown> {
  if (BODYLESS.has(method)) {
    if (declaresBody(req)) throw new MockError('ERR_113', `${method} requests take no body`);
    return undefined;
  }
  const raw = await readCapped(req, limits);
  if (raw.length === 0) return {};
  checkContentType(req);
  const text = decodeUtf8(raw);
  if (jsonNesting(raw) > MAX_BODY_NESTING) {
    throw new MockError('ERR_115', `request body nests deeper than ${MAX_BODY_NESTING} levels of [ and {`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new MockError(
      'ERR_111',
      `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new MockError('ERR_114', 'request body must be a JSON object');
  }
  const problem = findBodyProblem(parsed);
  if (problem?.kind === 'lone-surrogate') {
    throw new MockError(
      'ERR_117',
      `${problem.field}: contains a lone UTF-16 surrogate escape; text must be valid Unicode`,
      { field: problem.field },
    );
  }
  if (problem?.kind === 'proto-key') {
    throw new MockError(
      'ERR_121',
      `${problem.field}: the key "__proto__" is not accepted in any object or map`,
      { field: problem.field },
    );
  }
  return parsed;
}
