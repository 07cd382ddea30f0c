import { z } from 'zod';

/** A failure injected into the public API for the next `count` matching requests (tests, demos). */
export const FaultSpec = z.strictObject({
  status: z.union([z.literal(429), z.literal(500), z.literal(502), z.literal(503)]),
  count: z.number().int().min(1).max(1000).default(1),
  retry_after_seconds: z.number().int().min(0).max(3600).optional(),
  /** Only requests whose path starts with this are affected. */
  path_prefix: z.string().startsWith('/').optional(),
  /** Answer with a non-JSON body, as a proxy in front of the API would. */
  html: z.boolean().default(false),
  /** Accept the request but never answer it, to exercise client timeouts. */
  hang: z.boolean().default(false),
});
export type FaultSpec = z.infer<typeof FaultSpec>;
export type FaultSpecInput = z.input<typeof FaultSpec>;

export class FaultInjector {
  private queue: { spec: FaultSpec; left: number }[] = [];

  inject(input: FaultSpecInput): FaultSpec {
    const spec = FaultSpec.parse(input);
    this.queue.push({ spec, left: spec.count });
    return spec;
  }

  clear(): void {
    this.queue = [];
  }

  /** The fault that applies to this request, consuming one of its uses. */
  take(path: string): FaultSpec | undefined {
    const entry = this.queue.find((f) => !f.spec.path_prefix || path.startsWith(f.spec.path_prefix));
    if (!entry) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) this.queue = this.queue.filter((f) => f !== entry);
    return entry.spec;
  }
}
