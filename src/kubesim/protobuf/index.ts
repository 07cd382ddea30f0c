import type { IncomingMessage } from 'node:http';
import type { ResourceDef } from '../resources/registry.js';
import { readBodyBytes } from '../body.js';
import { decodeProtobufObject } from './decode.js';

export { PROTOBUF_TYPE } from './decode.js';

/** Reads a protobuf request body and returns the object it encodes, as JSON. */
export async function readProtobufObject(req: IncomingMessage, def: ResourceDef): Promise<unknown> {
  return decodeProtobufObject(await readBodyBytes(req), def);
}
