import { z } from 'zod';
import { microTimeSchema, objectReferenceSchema, objectSchema, timeSchema } from './meta-schema.js';

/**
 * Events with every field of k8s.io/api/core/v1 Event and k8s.io/api/events/v1 Event (the same
 * stored object seen through two API groups, with renamed fields). See meta-schema.ts.
 */

const int = () => z.number().int();
const eventSourceSchema = z.object({ component: z.string().optional(), host: z.string().optional() });

export const coreEventObjectSchema = objectSchema({
  involvedObject: objectReferenceSchema.optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
  source: eventSourceSchema.optional(),
  firstTimestamp: timeSchema.nullable().optional(),
  lastTimestamp: timeSchema.nullable().optional(),
  count: int().optional(),
  type: z.string().optional(),
  eventTime: microTimeSchema.nullable().optional(),
  series: z.object({ count: int().optional(), lastObservedTime: microTimeSchema.optional() }).optional(),
  action: z.string().optional(),
  related: objectReferenceSchema.optional(),
  reportingComponent: z.string().optional(),
  reportingInstance: z.string().optional(),
});

export const eventsV1ObjectSchema = objectSchema({
  eventTime: microTimeSchema.nullable().optional(),
  series: z.object({ count: int().optional(), lastObservedTime: microTimeSchema.optional() }).optional(),
  reportingController: z.string().optional(),
  reportingInstance: z.string().optional(),
  action: z.string().optional(),
  reason: z.string().optional(),
  regarding: objectReferenceSchema.optional(),
  related: objectReferenceSchema.optional(),
  note: z.string().optional(),
  type: z.string().optional(),
  deprecatedSource: eventSourceSchema.optional(),
  deprecatedFirstTimestamp: timeSchema.nullable().optional(),
  deprecatedLastTimestamp: timeSchema.nullable().optional(),
  deprecatedCount: int().optional(),
});
