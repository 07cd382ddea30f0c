import { z } from 'zod';
import { conditionSchema, objectSchema } from './meta-schema.js';

/** core/v1 Service with every field of k8s.io/api/core/v1 (Kubernetes 1.34). See meta-schema.ts. */

const int = () => z.number().int();

export const servicePortSchema = z.object({
  name: z.string().optional(),
  protocol: z.string().optional(),
  appProtocol: z.string().optional(),
  port: int().optional(),
  targetPort: z.union([int(), z.string()]).optional(),
  nodePort: int().optional(),
});

export const serviceSpecFullSchema = z.object({
  ports: z.array(servicePortSchema).optional(),
  selector: z.record(z.string(), z.string()).optional(),
  clusterIP: z.string().optional(),
  clusterIPs: z.array(z.string()).optional(),
  type: z.string().optional(),
  externalIPs: z.array(z.string()).optional(),
  sessionAffinity: z.string().optional(),
  loadBalancerIP: z.string().optional(),
  loadBalancerSourceRanges: z.array(z.string()).optional(),
  externalName: z.string().optional(),
  externalTrafficPolicy: z.string().optional(),
  healthCheckNodePort: int().optional(),
  publishNotReadyAddresses: z.boolean().optional(),
  sessionAffinityConfig: z
    .object({ clientIP: z.object({ timeoutSeconds: int().optional() }).optional() })
    .optional(),
  ipFamilies: z.array(z.string()).optional(),
  ipFamilyPolicy: z.string().optional(),
  allocateLoadBalancerNodePorts: z.boolean().optional(),
  loadBalancerClass: z.string().optional(),
  internalTrafficPolicy: z.string().optional(),
  trafficDistribution: z.string().optional(),
});

const portStatusSchema = z.object({
  port: int().optional(),
  protocol: z.string().optional(),
  error: z.string().optional(),
});

export const serviceStatusSchema = z.object({
  loadBalancer: z
    .object({
      ingress: z
        .array(
          z.object({
            ip: z.string().optional(),
            hostname: z.string().optional(),
            ipMode: z.string().optional(),
            ports: z.array(portStatusSchema).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  conditions: z.array(conditionSchema).optional(),
});

export const serviceObjectSchema = objectSchema({
  spec: serviceSpecFullSchema.optional(),
  status: serviceStatusSchema.optional(),
});
