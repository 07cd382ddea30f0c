import { z } from 'zod';
import { enabledInput, uint32 } from './shared.js';

export const MAX_NUM_BUCKETS = 128;

/** EndpointCircuitBreaker as the server answers it. */
export const EndpointCircuitBreaker = z.object({
  enabled: z.boolean(),
  tripped_duration: z.number(),
  rolling_window: z.number(),
  num_buckets: z.number(),
  volume_threshold: z.number(),
  error_threshold_percentage: z.number(),
});
export type EndpointCircuitBreaker = z.infer<typeof EndpointCircuitBreaker>;

const positiveSeconds = uint32.refine((v) => v > 0, {
  message: 'must be a positive number of seconds',
  params: { code: 'ERR_354' },
});

/** The request form: every field optional; the server fills documented defaults. */
export const EndpointCircuitBreakerInput = z.strictObject({
  enabled: enabledInput,
  tripped_duration: positiveSeconds.optional(),
  rolling_window: positiveSeconds.optional(),
  num_buckets: uint32
    .refine((v) => v >= 1 && v <= MAX_NUM_BUCKETS, {
      message: `must be from 1 to ${MAX_NUM_BUCKETS}`,
      params: { code: 'ERR_352' },
    })
    .optional(),
  volume_threshold: uint32.optional(),
  error_threshold_percentage: z
    .number()
    .refine((v) => v >= 0 && v <= 1, {
      message: 'must be a fraction from 0 to 1.0 (not a percentage from 0 to 100)',
      params: { code: 'ERR_353' },
    })
    .optional(),
});
export type EndpointCircuitBreakerInput = z.infer<typeof EndpointCircuitBreakerInput>;
