import { ID_PREFIX } from '../../api/ids.js';
import {
  DEFAULT_ENDPOINT_SELECTOR,
  KubernetesOperatorCreate,
  KubernetesOperatorUpdate,
  type KubernetesOperator,
} from '../../api/schemas/operator.js';
import { operatorEventHub } from '../events/hub.js';
import { LAST_EVENT_ID_QUERY, serveEventStream } from '../events/stream.js';
import type { RequestContext } from '../http/context.js';
import { MockError, parseOrThrow } from '../http/errors.js';
import { requireNonEmptyUpdate } from './shared.js';
import type { RouteSpec } from '../http/router.js';
import { listReply } from '../paging.js';
import type { MockServices } from '../services.js';
import { boundEndpoints, renderDeletedEndpoint, renderEndpoint } from './endpoints.js';

export interface KubernetesOperatorRecord {
  id: string;
  created_at: string;
  updated_at: string;
  description: string;
  metadata?: string;
  enabled_features: string[];
  deployment: { name: string; namespace: string; version: string };
  /** The CEL expression as given; the mock stores it and never evaluates it. */
  endpoint_selector: string;
}

declare module '../store/account-state.js' {
  interface CollectionTypes {
    kubernetes_operators: KubernetesOperatorRecord;
  }
}

export function renderOperator(
  r: KubernetesOperatorRecord,
  baseUrl: string,
  services: MockServices,
): KubernetesOperator {
  return {
    id: r.id,
    uri: `${baseUrl}/kubernetes_operators/${r.id}`,
    created_at: r.created_at,
    updated_at: r.updated_at,
    description: r.description,
    ...(r.metadata !== undefined ? { metadata: r.metadata } : {}),
    enabled_features: [...r.enabled_features],
    deployment: { ...r.deployment },
    binding: {
      endpoint_selector: r.endpoint_selector,
      // Read at render time: the ingress may start (or move) after the operator registered.
      ingress_endpoint: services.ingressAddress ?? null,
    },
  };
}

export function findOperator(ctx: RequestContext, id: string): KubernetesOperatorRecord {
  const found = ctx.account.collection('kubernetes_operators').get(id);
  if (!found) {
    throw new MockError('ERR_150', `kubernetes operator ${id} not found`, {
      resource: 'kubernetes_operator',
    });
  }
  return found;
}

/** Lower-cased, duplicates dropped, in first-seen order. */
function normalizeFeatures(features: string[]): string[] {
  return [...new Set(features.map((f) => f.toLowerCase()))];
}

export function operatorRoutes(): RouteSpec[] {
  const params = { id: ID_PREFIX.kubernetesOperator };
  return [
    {
      method: 'POST',
      path: '/kubernetes_operators',
      handler(ctx) {
        const input = parseOrThrow(KubernetesOperatorCreate, ctx.body);
        const now = ctx.services.timestamp();
        const record: KubernetesOperatorRecord = {
          id: ctx.services.ids.mint(ID_PREFIX.kubernetesOperator),
          created_at: now,
          updated_at: now,
          description: input.description ?? '',
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
          enabled_features: normalizeFeatures(input.enabled_features ?? []),
          deployment: {
            name: input.deployment.name,
            namespace: input.deployment.namespace,
            version: input.deployment.version ?? '',
          },
          endpoint_selector: input.binding?.endpoint_selector ?? DEFAULT_ENDPOINT_SELECTOR,
        };
        ctx.account.collection('kubernetes_operators').put(record);
        return { status: 201, body: renderOperator(record, ctx.baseUrl, ctx.services) };
      },
    },
    {
      method: 'GET',
      path: '/kubernetes_operators',
      paged: true,
      handler(ctx) {
        return listReply(ctx, {
          key: 'operators',
          path: '/kubernetes_operators',
          prefix: ID_PREFIX.kubernetesOperator,
          newestFirst: ctx.account.collection('kubernetes_operators').newestFirst(),
          render: (r) => renderOperator(r, ctx.baseUrl, ctx.services),
        });
      },
    },
    {
      method: 'GET',
      path: '/kubernetes_operators/:id',
      params,
      handler(ctx) {
        const r = findOperator(ctx, ctx.params['id']!);
        return { status: 200, body: renderOperator(r, ctx.baseUrl, ctx.services) };
      },
    },
    {
      method: 'PATCH',
      path: '/kubernetes_operators/:id',
      params,
      handler(ctx) {
        const existing = findOperator(ctx, ctx.params['id']!);
        const input = parseOrThrow(KubernetesOperatorUpdate, ctx.body);
        if (input.deployment?.namespace !== undefined) {
          throw new MockError('ERR_602', 'body.deployment.namespace cannot be changed after registration', {
            field: 'body.deployment.namespace',
          });
        }
        // `{deployment: {}}` changes nothing either, so the nested fields are what counts.
        requireNonEmptyUpdate({
          description: input.description,
          metadata: input.metadata,
          enabled_features: input.enabled_features,
          name: input.deployment?.name,
          version: input.deployment?.version,
          endpoint_selector: input.binding?.endpoint_selector,
        });
        const next: KubernetesOperatorRecord = {
          ...existing,
          deployment: { ...existing.deployment },
          updated_at: ctx.services.timestamp(),
        };
        if (input.description !== undefined) next.description = input.description;
        if (input.metadata !== undefined) next.metadata = input.metadata;
        if (input.enabled_features !== undefined)
          next.enabled_features = normalizeFeatures(input.enabled_features);
        if (input.deployment?.name !== undefined) next.deployment.name = input.deployment.name;
        if (input.deployment?.version !== undefined) next.deployment.version = input.deployment.version;
        if (input.binding?.endpoint_selector !== undefined)
          next.endpoint_selector = input.binding.endpoint_selector;
        ctx.account.collection('kubernetes_operators').put(next);
        return { status: 200, body: renderOperator(next, ctx.baseUrl, ctx.services) };
      },
    },
    {
      method: 'DELETE',
      path: '/kubernetes_operators/:id',
      params,
      handler(ctx) {
        const existing = findOperator(ctx, ctx.params['id']!);
        ctx.account.collection('kubernetes_operators').delete(existing.id);
        operatorEventHub(ctx.services).closeOperator(existing.id);
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/kubernetes_operators/:id/bound_endpoints',
      params,
      paged: true,
      handler(ctx) {
        const op = findOperator(ctx, ctx.params['id']!);
        const path = `/kubernetes_operators/${op.id}/bound_endpoints`;
        return listReply(ctx, {
          key: 'endpoints',
          path,
          prefix: ID_PREFIX.endpoint,
          newestFirst: boundEndpoints(ctx.account),
          render: (r) => renderEndpoint(r, ctx.baseUrl),
        });
      },
    },
    {
      method: 'GET',
      path: '/kubernetes_operators/:id/events',
      params,
      query: [LAST_EVENT_ID_QUERY],
      handler(ctx) {
        const op = findOperator(ctx, ctx.params['id']!);
        return serveEventStream(ctx, {
          operatorId: op.id,
          renderEvent: (event) =>
            event.type === 'endpoint.deleted'
              ? { endpoint: renderDeletedEndpoint(event.endpoint, ctx.baseUrl) }
              : { endpoint: renderEndpoint(event.endpoint, ctx.baseUrl) },
        });
      },
    },
  ];
}
