import { ID_PREFIX } from '../../api/ids.js';
import {
  EndpointCreate,
  EndpointUpdate,
  KUBERNETES_BINDING,
  KUBERNETES_BINDING_FILTER,
  type Endpoint,
} from '../../api/schemas/endpoint.js';
import { parseEndpointUrl } from '../../binding/endpoint-url.js';
import { operatorEventHub } from '../events/hub.js';
import type { EndpointEventType } from '../events/log.js';
import type { RequestContext } from '../http/context.js';
import { MockError, parseOrThrow } from '../http/errors.js';
import type { RouteSpec } from '../http/router.js';
import { listReply } from '../paging.js';
import type { MockServices } from '../services.js';
import type { AccountState } from '../store/account-state.js';
import { requireNonEmptyUpdate } from './shared.js';
import type { StoredEndpoint } from './stored-endpoint.js';
import type { TunnelRecord } from './tunnels.js';

/** @deprecated The stored record is `StoredEndpoint`; this name remains for `src/mock/ingress/upstream.ts` until it moves. */
export type EndpointRecord = StoredEndpoint;

/** The account's endpoints whose canonical URL is `canonicalUrl`, oldest first (pooled endpoints share a URL). */
export function endpointsForUrl(state: AccountState, canonicalUrl: string): StoredEndpoint[] {
  return state
    .collection('endpoints')
    .newestFirst()
    .filter((e) => e.url === canonicalUrl)
    .reverse();
}

export function renderEndpoint(r: StoredEndpoint, baseUrl: string): Endpoint {
  const host = `${r.name}.${r.namespace}`;
  return {
    id: r.id,
    uri: `${baseUrl}/endpoints/${r.id}`,
    url: r.url,
    proto: r.scheme,
    host,
    port: r.port,
    hostport: `${host}:${r.port}`,
    public_url: r.url,
    bindings: [...r.bindings],
    type: r.tunnel_id ? 'agent' : 'cloud',
    description: r.description,
    ...(r.metadata !== undefined ? { metadata: r.metadata } : {}),
    created_at: r.created_at,
    updated_at: r.updated_at,
    ...(r.upstream_url !== undefined ? { upstream_url: r.upstream_url } : {}),
    ...(r.tunnel_id ? { tunnel: { id: r.tunnel_id, uri: `${baseUrl}/tunnels/${r.tunnel_id}` } } : {}),
    pooling_enabled: r.pooling_enabled,
  };
}

/** The short form of a deleted endpoint in notifications. */
export function renderDeletedEndpoint(
  r: StoredEndpoint,
  baseUrl: string,
): { id: string; uri: string; url: string } {
  return { id: r.id, uri: `${baseUrl}/endpoints/${r.id}`, url: r.url };
}

/** Finds an endpoint of the caller's account or answers 404; other accounts' endpoints do not exist here. */
function findEndpoint(ctx: RequestContext, id: string): StoredEndpoint {
  const found = ctx.account.collection('endpoints').get(id);
  if (!found) throw new MockError('ERR_150', `endpoint ${id} not found`, { resource: 'endpoint' });
  return found;
}

/**
 * Rule 5 and pooling: within one account, endpoints may share a canonical URL only when every one
 * of them has pooling enabled. Other accounts never conflict.
 */
function checkPooling(state: AccountState, url: string, pooling: boolean, selfId?: string): void {
  const others = endpointsForUrl(state, url).filter((e) => e.id !== selfId);
  if (others.length === 0) return;
  if (!pooling) {
    throw new MockError(
      'ERR_520',
      `${url} is already used by endpoint ${others[0]!.id}; identical URLs are allowed only with pooling_enabled on all of them`,
      { url, conflicting_endpoint: others[0]!.id },
    );
  }
  const unpooled = others.find((e) => !e.pooling_enabled);
  if (unpooled) {
    throw new MockError(
      'ERR_521',
      `${url} is already used by endpoint ${unpooled.id}, which has pooling disabled; enable pooling on it first`,
      { url, conflicting_endpoint: unpooled.id },
    );
  }
}

/** Brings the endpoint's tunnel in line with its upstream: created, updated in place, or taken offline. */
function syncTunnel(services: MockServices, state: AccountState, r: StoredEndpoint): StoredEndpoint {
  const tunnels = state.collection('tunnels');
  const existing = r.tunnel_id ? tunnels.get(r.tunnel_id) : undefined;
  if (r.upstream_url === undefined) {
    if (r.tunnel_id) tunnels.delete(r.tunnel_id);
    const { tunnel_id: _gone, ...rest } = r;
    return rest;
  }
  const endpoint = { id: r.id, proto: r.scheme, public_url: r.url };
  const tunnel: TunnelRecord = existing
    ? { ...existing, forwards_to: r.upstream_url, endpoint }
    : {
        id: services.ids.mint(ID_PREFIX.tunnel),
        session_id: services.ids.mint(ID_PREFIX.tunnelSession),
        forwards_to: r.upstream_url,
        region: services.config.region,
        started_at: services.timestamp(),
        endpoint,
      };
  tunnels.put(tunnel);
  return { ...r, tunnel_id: tunnel.id };
}

/**
 * Stores a created or updated endpoint: its tunnel follows its upstream, and the account's
 * operators are notified, always together. Answers the stored record.
 */
function commit(ctx: RequestContext, type: EndpointEventType, r: StoredEndpoint): StoredEndpoint {
  const stored = syncTunnel(ctx.services, ctx.account, r);
  ctx.account.collection('endpoints').put(stored);
  operatorEventHub(ctx.services).record(ctx.account.id, type, stored);
  return stored;
}

function checkFilter(query: ReadonlyMap<string, string>): void {
  const filter = query.get('filter');
  if (filter === undefined) return;
  const normalized = filter.trim().replace(/\s+/g, ' ');
  if (normalized !== KUBERNETES_BINDING_FILTER) {
    throw new MockError(
      'ERR_540',
      `filter ${JSON.stringify(filter)} is not supported; the only filter accepted is ${KUBERNETES_BINDING_FILTER}`,
      { parameter: 'filter' },
    );
  }
}

/** Every cluster-bound endpoint of the account, newest first (all endpoints here are cluster-bound). */
export function boundEndpoints(state: AccountState): StoredEndpoint[] {
  return state
    .collection('endpoints')
    .newestFirst()
    .filter((e) => e.bindings.includes(KUBERNETES_BINDING));
}

export function endpointRoutes(): RouteSpec[] {
  const params = { id: ID_PREFIX.endpoint };
  return [
    {
      method: 'POST',
      path: '/endpoints',
      handler(ctx) {
        const input = parseOrThrow(EndpointCreate, ctx.body);
        const parsed = parseEndpointUrl(input.url);
        if (!parsed.ok) throw new Error('unreachable: the schema checked the URL');
        const url = parsed.value;
        const pooling = input.pooling_enabled ?? false;
        checkPooling(ctx.account, url.url, pooling);
        const now = ctx.services.timestamp();
        const record: EndpointRecord = {
          id: ctx.services.ids.mint(ID_PREFIX.endpoint),
          url: url.url,
          scheme: url.scheme,
          name: url.name,
          namespace: url.namespace,
          port: url.port,
          ...(input.upstream_url != null ? { upstream_url: input.upstream_url } : {}),
          pooling_enabled: pooling,
          bindings: [...input.bindings],
          description: input.description ?? '',
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
          created_at: now,
          updated_at: now,
        };
        return { status: 201, body: renderEndpoint(commit(ctx, 'endpoint.created', record), ctx.baseUrl) };
      },
    },
    {
      method: 'GET',
      path: '/endpoints',
      paged: true,
      query: ['filter'],
      handler(ctx) {
        checkFilter(ctx.query);
        return listReply(ctx, {
          key: 'endpoints',
          path: '/endpoints',
          prefix: ID_PREFIX.endpoint,
          newestFirst: ctx.account.collection('endpoints').newestFirst(),
          render: (r) => renderEndpoint(r, ctx.baseUrl),
        });
      },
    },
    {
      method: 'GET',
      path: '/endpoints/:id',
      params,
      handler(ctx) {
        return { status: 200, body: renderEndpoint(findEndpoint(ctx, ctx.params['id']!), ctx.baseUrl) };
      },
    },
    {
      method: 'PATCH',
      path: '/endpoints/:id',
      params,
      handler(ctx) {
        const existing = findEndpoint(ctx, ctx.params['id']!);
        const input = requireNonEmptyUpdate(parseOrThrow(EndpointUpdate, ctx.body));
        let next: EndpointRecord = { ...existing };
        if (input.url !== undefined) {
          const parsed = parseEndpointUrl(input.url);
          if (!parsed.ok) throw new Error('unreachable: the schema checked the URL');
          const u = parsed.value;
          next = {
            ...next,
            url: u.url,
            scheme: u.scheme,
            name: u.name,
            namespace: u.namespace,
            port: u.port,
          };
        }
        if (input.pooling_enabled !== undefined) next.pooling_enabled = input.pooling_enabled;
        if (input.description !== undefined) next.description = input.description;
        if (input.metadata !== undefined) next.metadata = input.metadata;
        if (input.upstream_url === null) delete next.upstream_url;
        else if (input.upstream_url !== undefined) next.upstream_url = input.upstream_url;
        if (input.url !== undefined || input.pooling_enabled !== undefined) {
          checkPooling(ctx.account, next.url, next.pooling_enabled, next.id);
        }
        next.updated_at = ctx.services.timestamp();
        return { status: 200, body: renderEndpoint(commit(ctx, 'endpoint.updated', next), ctx.baseUrl) };
      },
    },
    {
      method: 'DELETE',
      path: '/endpoints/:id',
      params,
      handler(ctx) {
        const existing = findEndpoint(ctx, ctx.params['id']!);
        if (existing.tunnel_id) ctx.account.collection('tunnels').delete(existing.tunnel_id);
        ctx.account.collection('endpoints').delete(existing.id);
        operatorEventHub(ctx.services).record(ctx.account.id, 'endpoint.deleted', existing);
        return { status: 204 };
      },
    },
  ];
}
