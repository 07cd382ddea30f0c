import type protobuf from 'protobufjs';
import { z } from 'zod';
import type { ResourceDef } from '../resources/registry.js';
import { apiVersionOf } from '../resources/registry.js';
import { errors } from '../status.js';
import { isRecord } from '../types.js';
import { DeleteOptionsMessage, KEEP_ZERO, KIND_MESSAGES, Unknown } from './messages.js';

/**
 * Decodes a `application/vnd.kubernetes.protobuf` request body into the JSON object the
 * handlers work on: the `k8s\0` magic, the runtime.Unknown envelope (typeMeta, raw,
 * contentEncoding, contentType), then the kind's message, converted with Go's JSON rules
 * (omitempty, metav1.Time as RFC 3339, IntOrString as a number or a string).
 */

export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = [0x6b, 0x38, 0x73, 0x00];

const envelopeSchema = z.object({
  typeMeta: z.object({ apiVersion: z.string().default(''), kind: z.string().default('') }).default({
    apiVersion: '',
    kind: '',
  }),
  raw: z.instanceof(Uint8Array).default(new Uint8Array()),
  contentEncoding: z.string().default(''),
  contentType: z.string().default(''),
});

const timeSchema = z.object({ seconds: z.number().default(0), nanos: z.number().default(0) });
const intOrStringSchema = z.object({
  type: z.number().default(0),
  intVal: z.number().default(0),
  strVal: z.string().default(''),
});

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

/** One decoded message as JSON, field by field, following the message's own definition. */
function toJson(type: protobuf.Type, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const v = value[field.name];
    if (v === undefined || v === null) continue;
    const keepZero = KEEP_ZERO.has(`${type.name}.${field.name}`);
    const sub = field.resolve().resolvedType;
    const convert = (item: unknown): unknown =>
      sub && 'fieldsArray' in sub && isRecord(item) ? message(sub, item) : item;
    if (field.map) {
      if (isRecord(v) && Object.keys(v).length > 0) out[field.name] = v;
    } else if (field.repeated) {
      if (Array.isArray(v) && v.length > 0) out[field.name] = v.map(convert);
    } else if (sub && 'fieldsArray' in sub) {
      const converted = isRecord(v) ? message(sub, v) : undefined;
      if (converted !== undefined) out[field.name] = converted;
    } else if (keepZero || !isZero(v)) {
      out[field.name] = v;
    }
  }
  return out;
}

/** Messages with a JSON form of their own; undefined means "omit the field". */
function message(type: protobuf.Type, value: Record<string, unknown>): unknown {
  if (type.name === 'Time') {
    const t = timeSchema.parse(value);
    if (t.seconds === 0 && t.nanos === 0) return undefined; // the zero time: null in Go's JSON
    return new Date(t.seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  }
  if (type.name === 'IntOrString') {
    const v = intOrStringSchema.parse(value);
    return v.type === 1 ? v.strVal : v.intVal;
  }
  return toJson(type, value);
}

function cannotDecode(def: ResourceDef, why: string) {
  return errors.badRequest(
    `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${why}`,
  );
}

/** The JSON object a protobuf request body stands for; 400 when it is not valid protobuf. */
export function decodeProtobufObject(bytes: Uint8Array, def: ResourceDef): Record<string, unknown> {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw cannotDecode(
      def,
      `provided data does not appear to be a protobuf message, expected prefix [${MAGIC.join(' ')}]`,
    );
  }
  let env: z.infer<typeof envelopeSchema>;
  try {
    env = envelopeSchema.parse(Unknown.toObject(Unknown.decode(bytes.subarray(MAGIC.length))));
  } catch (err) {
    throw cannotDecode(def, `runtime.Unknown: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (env.contentEncoding !== '' || (env.contentType !== '' && env.contentType !== PROTOBUF_TYPE)) {
    throw cannotDecode(
      def,
      `unsupported contentEncoding ${JSON.stringify(env.contentEncoding)} / contentType ${JSON.stringify(env.contentType)}`,
    );
  }
  const { apiVersion, kind } = env.typeMeta;
  const type = KIND_MESSAGES[`${apiVersion}/${kind}`];
  if (!type) {
    // Only a few core kinds have hand-written messages; anything else must come as JSON.
    throw errors.unsupportedMediaType(`${PROTOBUF_TYPE} (${apiVersion}/${kind})`, [
      'application/json',
      'application/yaml',
      `${PROTOBUF_TYPE} (v1 Namespace, Service, Secret, ConfigMap and ServiceAccount, and the self reviews, only)`,
    ]);
  }
  let decoded: Record<string, unknown>;
  try {
    // bytes as base64: the JSON form of Go's []byte (Secret.data, ConfigMap.binaryData).
    decoded = type.toObject(type.decode(env.raw), { longs: Number, bytes: String });
  } catch (err) {
    throw cannotDecode(def, `${kind}: ${err instanceof Error ? err.message : String(err)}`);
  }
  // The kind and version the body claims; the handler rejects them if they do not fit the URL.
  return { apiVersion: apiVersion || apiVersionOf(def), kind: kind || def.kind, ...toJson(type, decoded) };
}

/** A protobuf DeleteOptions body (runtime.Unknown envelope) as JSON; 400 when it is not one. */
export function decodeProtobufDeleteOptions(bytes: Uint8Array): Record<string, unknown> {
  const bad = (why: string) => errors.badRequest(`DeleteOptions: ${why}`);
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b))
    throw bad(`provided data does not appear to be a protobuf message, expected prefix [${MAGIC.join(' ')}]`);
  try {
    const env = envelopeSchema.parse(Unknown.toObject(Unknown.decode(bytes.subarray(MAGIC.length))));
    if (env.typeMeta.kind !== '' && env.typeMeta.kind !== 'DeleteOptions')
      throw new Error(`expected DeleteOptions, got ${env.typeMeta.kind}`);
    const decoded = DeleteOptionsMessage.toObject(DeleteOptionsMessage.decode(env.raw), { longs: Number });
    return toJson(DeleteOptionsMessage, decoded);
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err));
  }
}
