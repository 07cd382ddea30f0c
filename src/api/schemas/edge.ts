import { z } from 'zod';
import { Timestamp, descriptionInput, listEnvelope, metadataInput } from './common.js';
import {
  EndpointMutualTLS,
  EndpointMutualTLSMutate,
  EndpointTLSTermination,
  EndpointTLSTerminationAtEdge,
} from './modules/edge-tls.js';
import { HTTPSEdgeRoute } from './route.js';

/** HTTPSEdge as the server answers it. */
export const HTTPSEdge = z.object({
  id: z.string(),
  uri: z.string(),
  created_at: Timestamp,
  description: z.string().optional(),
  metadata: z.string().optional(),
  hostports: z.array(z.string()).default([]),
  mutual_tls: EndpointMutualTLS.nullable().default(null),
  tls_termination: EndpointTLSTermination.nullable().default(null),
  routes: z.array(HTTPSEdgeRoute).default([]),
});
export type HTTPSEdge = z.infer<typeof HTTPSEdge>;

/** POST /edges/https. Hostport rules are the server's (docs/api/edges.md). */
export const HTTPSEdgeCreate = z.strictObject({
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
  hostports: z.array(z.string()).optional(),
  mutual_tls: EndpointMutualTLSMutate.optional(),
  tls_termination: EndpointTLSTerminationAtEdge.optional(),
});
export type HTTPSEdgeCreate = z.infer<typeof HTTPSEdgeCreate>;

/** PATCH /edges/https/{id}: omitted fields stay; a given list or module replaces the stored one. */
export const HTTPSEdgeUpdate = HTTPSEdgeCreate;
export type HTTPSEdgeUpdate = z.infer<typeof HTTPSEdgeUpdate>;

export const HTTPSEdgeList = listEnvelope('https_edges', HTTPSEdge);
export type HTTPSEdgeList = z.infer<typeof HTTPSEdgeList>;
