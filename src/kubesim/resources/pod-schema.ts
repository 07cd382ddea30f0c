import { z } from 'zod';
import { objectSchema } from './meta-schema.js';
import { podSpecSchema } from './workload-schema.js';

/**
 * core/v1 Pod, as far as kubesim's process-backed pods use it: the PodSpec of a template (open
 * for the rest of the very large PodSpec) plus the binding (`nodeName`), and a status block the
 * kubelet writes (phase, podIP, conditions, containerStatuses), open for the rest.
 */

const int = () => z.number().int();

export const podConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  lastProbeTime: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

export const podStatusSchema = z.looseObject({
  phase: z.string().optional(),
  conditions: z.array(podConditionSchema).optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  hostIP: z.string().optional(),
  podIP: z.string().optional(),
  podIPs: z.array(z.object({ ip: z.string() })).optional(),
  startTime: z.string().optional(),
  containerStatuses: z
    .array(z.looseObject({ name: z.string(), ready: z.boolean(), restartCount: int() }))
    .optional(),
  qosClass: z.string().optional(),
});

export const podObjectSchema = objectSchema({
  spec: podSpecSchema.extend({ nodeName: z.string().optional() }).optional(),
  status: podStatusSchema.optional(),
});
