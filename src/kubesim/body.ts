import type { IncomingMessage } from 'node:http';
import { errors } from './status.js';

/** The apiserver's request body limit (3 MiB). */
export const MAX_BODY = 3 * 1024 * 1024;

/** A request body, refused with 413 past MAX_BODY (the rest is drained, not kept). */
export function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(errors.requestEntityTooLarge());
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
