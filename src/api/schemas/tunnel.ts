import { z } from 'zod';
import { Ref, StringMap, Timestamp, listEnvelope } from './common.js';

/**
 * One shape covers both tunnel forms: endpoint-based tunnels carry endpoint, proto and public_url;
 * label-based tunnels carry labels instead.
 */
export const Tunnel = z.object({
  id: z.string(),
  endpoint: Ref.optional(),
  forwards_to: z.string(),
  proto: z.string().optional(),
  public_url: z.string().optional(),
  labels: StringMap.optional(),
  region: z.string(),
  started_at: Timestamp,
  tunnel_session: Ref,
});
export type Tunnel = z.infer<typeof Tunnel>;

export const TunnelList = listEnvelope('tunnels', Tunnel);
export type TunnelList = z.infer<typeof TunnelList>;
