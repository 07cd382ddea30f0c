import { ID_PREFIX } from '../../api/ids.js';
import { IPPolicyCreate, IPPolicyUpdate, type IPPolicy } from '../../api/schemas/ip-policy.js';
import type { RequestContext } from '../http/context.js';
import { MockError, parseOrThrow } from '../http/errors.js';
import type { RouteSpec } from '../http/router.js';
import { listReply } from '../paging.js';
import { requireNonEmptyUpdate } from './shared.js';

export interface IPPolicyRecord {
  id: string;
  created_at: string;
  description: string;
  /** Absent until set; once set (even to "") it is shown. */
  metadata?: string;
}

declare module '../store/account-state.js' {
  interface CollectionTypes {
    ip_policies: IPPolicyRecord;
  }
}

export function renderIPPolicy(r: IPPolicyRecord, baseUrl: string): IPPolicy {
  return {
    id: r.id,
    uri: `${baseUrl}/ip_policies/${r.id}`,
    created_at: r.created_at,
    description: r.description,
    ...(r.metadata !== undefined ? { metadata: r.metadata } : {}),
  };
}

/** Finds a policy of the caller's account or answers 404; other accounts' policies do not exist here. */
export function findIPPolicy(ctx: RequestContext, id: string): IPPolicyRecord {
  const found = ctx.account.collection('ip_policies').get(id);
  if (!found) throw new MockError('ERR_150', `IP policy ${id} not found`, { resource: 'ip_policy' });
  return found;
}

export function ipPolicyRoutes(): RouteSpec[] {
  const params = { id: ID_PREFIX.ipPolicy };
  return [
    {
      method: 'POST',
      path: '/ip_policies',
      handler(ctx) {
        const input = parseOrThrow(IPPolicyCreate, ctx.body);
        const record: IPPolicyRecord = {
          id: ctx.services.ids.mint(ID_PREFIX.ipPolicy),
          created_at: ctx.services.timestamp(),
          description: input.description ?? '',
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        };
        ctx.account.collection('ip_policies').put(record);
        return { status: 201, body: renderIPPolicy(record, ctx.baseUrl) };
      },
    },
    {
      method: 'GET',
      path: '/ip_policies',
      paged: true,
      handler(ctx) {
        return listReply(ctx, {
          key: 'ip_policies',
          path: '/ip_policies',
          prefix: ID_PREFIX.ipPolicy,
          newestFirst: ctx.account.collection('ip_policies').newestFirst(),
          render: (r) => renderIPPolicy(r, ctx.baseUrl),
        });
      },
    },
    {
      method: 'GET',
      path: '/ip_policies/:id',
      params,
      handler(ctx) {
        return { status: 200, body: renderIPPolicy(findIPPolicy(ctx, ctx.params['id']!), ctx.baseUrl) };
      },
    },
    {
      method: 'PATCH',
      path: '/ip_policies/:id',
      params,
      handler(ctx) {
        const existing = findIPPolicy(ctx, ctx.params['id']!);
        const input = requireNonEmptyUpdate(parseOrThrow(IPPolicyUpdate, ctx.body));
        const updated: IPPolicyRecord = {
          ...existing,
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        };
        ctx.account.collection('ip_policies').put(updated);
        return { status: 200, body: renderIPPolicy(updated, ctx.baseUrl) };
      },
    },
    {
      method: 'DELETE',
      path: '/ip_policies/:id',
      params,
      handler(ctx) {
        const existing = findIPPolicy(ctx, ctx.params['id']!);
        // References from route ip_restriction modules stay; they then act as a policy with no rules.
        ctx.account.collection('ip_policies').delete(existing.id);
        return { status: 204 };
      },
    },
  ];
}
