import type { IncomingMessage } from 'node:http';
import type { ResourceDef } from '../resources/registry.js';
import { errors } from '../status.js';
import { decodeProtobufDeleteOptions, decodeProtobufObject } from './decode.js';

export { PROTOBUF_TYPE } from './decode.js';

/** The apiserver's request body limit (3 MiB), as server.ts applies it to JSON bodies. */
const MAX_BODY = 3 * 1024 * 1024;

function readBytes(req: IncomingMessage): Promise<Buffer> {
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

/** Reads a protobuf request body and returns the object it encodes, as JSON. */
export async function readProtobufObject(req: IncomingMessage, def: ResourceDef): Promise<unknown> {
  return decodeProtobufObject(await readBytes(req), def);
}

/** Reads a protobuf DeleteOptions request body. */
export async function readProtobufDeleteOptions(req: IncomingMessage): Promise<Record<string, unknown>> {
  return decodeProtobufDeleteOptions(await readBytes(req));
}
