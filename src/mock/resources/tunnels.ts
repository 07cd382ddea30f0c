import { ID_PREFIX } from '../../api/ids.js';
import type { Tunnel } from '../../api/schemas/tunnel.js';
import type { RouteSpec } from '../http/router.js';
import { listReply } from '../paging.js';

/** An online tunnel. Endpoint tunnels come and go with their endpoint; label tunnels via the admin interface. */
export interface TunnelRecord {
  id: string;
  session_id: string;
  forwards_to: string;
  region: string;
  started_at: string;
  endpoint?: { id: string; proto: string; public_url: string };
  labels?: Record<string, string>;
}

declare module '../store/account-state.js' {
  interface CollectionTypes {
    tunnels: TunnelRecord;
  }
}

export function renderTunnel(r: TunnelRecord, baseUrl: string): Tunnel {
  return {
    id: r.id,
    ...(r.endpoint
      ? {
          endpoint: { id: r.endpoint.id, uri: `${baseUrl}/endpoints/${r.endpoint.id}` },
          proto: r.endpoint.proto,
          public_url: r.endpoint.public_url,
        }
      : {}),
    forwards_to: r.forwards_to,
    ...(r.labels ? { labels: r.labels } : {}),
    region: r.region,
    started_at: r.started_at,
    tunnel_session: { id: r.session_id, uri: `${baseUrl}/tunnel_sessions/${r.session_id}` },
  };
}

export function tunnelRoutes(): RouteSpec[] {
  return [
    {
      method: 'GET',
      path: '/tunnels',
      paged: true,
      handler(ctx) {
        return listReply(ctx, {
          key: 'tunnels',
          path: '/tunnels',
          prefix: ID_PREFIX.tunnel,
          newestFirst: ctx.account.collection('tunnels').newestFirst(),
          render: (r) => renderTunnel(r, ctx.baseUrl),
        });
      },
    },
  ];
}
