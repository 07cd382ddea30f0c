import { z } from 'zod';

export const MAX_DESCRIPTION_BYTES = 255;
export const MAX_METADATA_BYTES = 4096;

export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** Limits are in UTF-8 bytes, not characters: "é" counts twice. */
export const descriptionInput = z.string().refine((v) => byteLength(v) <= MAX_DESCRIPTION_BYTES, {
  message: `must be at most ${MAX_DESCRIPTION_BYTES} bytes of UTF-8`,
  params: { code: 'ERR_124' },
});

export const metadataInput = z.string().refine((v) => byteLength(v) <= MAX_METADATA_BYTES, {
  message: `must be at most ${MAX_METADATA_BYTES} bytes of UTF-8`,
  params: { code: 'ERR_125' },
});

/** A reference to another resource. */
export const Ref = z.object({ id: z.string(), uri: z.string() });
export type Ref = z.infer<typeof Ref>;

/** RFC 3339 timestamp as the server sends it. */
export const Timestamp = z.string();

/** A string-to-string map whose keys are user data (header names, labels): never transformed. */
export const StringMap = z.record(z.string(), z.string());

/** The envelope every list operation answers with, keyed by the resource's list name. */
export function listEnvelope<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z.object({
    [key]: z.array(item),
    uri: z.string(),
    next_page_uri: z.string().nullable(),
  } as { [P in K]: z.ZodArray<T> } & { uri: z.ZodString; next_page_uri: z.ZodNullable<z.ZodString> });
}

/** The error body of every failed request. */
export const ErrorBody = z.object({
  error_code: z.string().optional(),
  status_code: z.number().int(),
  msg: z.string(),
  details: z.record(z.string(), z.string()).default({}),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Paging parameters of every list operation. */
export interface PageOptions {
  limit?: number;
  beforeId?: string;
}
