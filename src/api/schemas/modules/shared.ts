import { z } from 'zod';

export const UINT32_MAX = 4_294_967_295;

/** A uint32 on the wire: a whole number from 0 to 4294967295. */
export const uint32 = z.number().refine((v) => Number.isInteger(v) && v >= 0 && v <= UINT32_MAX, {
  message: `must be a whole number from 0 to ${UINT32_MAX} (uint32)`,
  params: { code: 'ERR_351' },
});

/** `enabled` of every module: true applies it, false switches it off; the server defaults it to true. */
export const enabledInput = z.boolean().optional();

/**
 * A string restricted to a set of values, whose violation answers a specific error code. A missing
 * value stays a "required" error and a non-string stays a type error.
 */
export function codedEnum<const T extends readonly string[]>(values: T, code: string) {
  const list = values.map((v) => `"${v}"`).join(', ');
  return z.string().pipe(
    z.custom<T[number]>((v) => typeof v === 'string' && (values as readonly string[]).includes(v), {
      message: `must be one of ${list}`,
      params: { code },
    }),
  );
}
