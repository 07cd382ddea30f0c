import { z } from 'zod';
import { ID_PREFIX, hasIdPrefix, type IdPrefix } from '../../api/ids.js';
import { StringMap } from '../../api/schemas/common.js';
import { FaultSpec } from '../faults.js';
import { MockError, parseOrThrow } from '../http/errors.js';
import { EXTERNAL_REF_KINDS, type ExternalRefKind } from '../resources/external-refs.js';
import { renderTunnel, type TunnelRecord } from '../resources/tunnels.js';
import type { MockServices } from '../services.js';
import type { AdminRouteSpec } from './context.js';

const ExternalRefInput = z.strictObject({ id: z.string().optional() });

const EXTERNAL_REF_PREFIX: Record<ExternalRefKind, IdPrefix> = {
  backends: ID_PREFIX.backend,
  certificate_authorities: ID_PREFIX.certificateAuthority,
};

/** POST/DELETE /admin/accounts/{account}/backends and .../certificate_authorities. */
function externalRefRoutes(kind: ExternalRefKind): AdminRouteSpec[] {
  const prefix = EXTERNAL_REF_PREFIX[kind];
  return [
    {
      method: 'POST',
      path: `/admin/accounts/:account/${kind}`,
      handler: ({ services, body, params, publicBaseUrl }) => {
        const state = accountState(services, params['account']!);
        const input = parseOrThrow(ExternalRefInput, body);
        if (input.id !== undefined && !hasIdPrefix(input.id, prefix)) {
          throw new MockError('ERR_140', `body.id: must be an id starting with "${prefix}"`, {
            field: 'body.id',
          });
        }
        const id = input.id ?? services.ids.mint(prefix);
        state.collection(kind).put({ id });
        return { status: 201, body: { id, uri: `${publicBaseUrl}/${kind}/${id}` } };
      },
    },
    {
      method: 'DELETE',
      path: `/admin/accounts/:account/${kind}/:id`,
      handler: ({ services, params }) => {
        const state = accountState(services, params['account']!);
        if (!state.collection(kind).delete(params['id']!)) {
          throw new MockError('ERR_150', `${kind} ${params['id']} not found`, { resource: kind });
        }
        return { status: 204 };
      },
    },
  ];
}

const LabelTunnelInput = z.strictObject({
  forwards_to: z.string().min(1),
  labels: StringMap.refine((m) => Object.keys(m).length > 0, { message: 'needs at least one label' }),
  region: z.string().optional(),
});

function accountState(services: MockServices, accountId: string) {
  if (!services.directory.accounts.has(accountId)) {
    throw new MockError('ERR_150', `account ${accountId} not found`, { resource: 'account' });
  }
  return services.state(accountId);
}

export function coreAdminRoutes(): AdminRouteSpec[] {
  return [
    ...EXTERNAL_REF_KINDS.flatMap(externalRefRoutes),
    {
      method: 'GET',
      path: '/admin/accounts',
      handler: ({ services }) => ({
        status: 200,
        body: {
          accounts: [...services.directory.accounts.values()].map((a) => ({
            id: a.id,
            name: a.name ?? a.id,
          })),
        },
      }),
    },
    {
      method: 'POST',
      path: '/admin/faults',
      handler: ({ services, body }) => ({
        status: 201,
        body: services.faults.inject(parseOrThrow(FaultSpec, body)),
      }),
    },
    {
      method: 'DELETE',
      path: '/admin/faults',
      handler: ({ services }) => {
        services.faults.clear();
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/admin/accounts/:account/tunnels',
      handler: ({ services, body, params, publicBaseUrl }) => {
        const state = accountState(services, params['account']!);
        const input = parseOrThrow(LabelTunnelInput, body);
        const record: TunnelRecord = {
          id: services.ids.mint(ID_PREFIX.tunnel),
          session_id: services.ids.mint(ID_PREFIX.tunnelSession),
          forwards_to: input.forwards_to,
          labels: input.labels,
          region: input.region ?? services.config.region,
          started_at: services.timestamp(),
        };
        state.collection('tunnels').put(record);
        return { status: 201, body: renderTunnel(record, publicBaseUrl) };
      },
    },
    {
      method: 'DELETE',
      path: '/admin/accounts/:account/tunnels/:id',
      handler: ({ services, params }) => {
        const state = accountState(services, params['account']!);
        if (!state.collection('tunnels').delete(params['id']!)) {
          throw new MockError('ERR_150', `tunnel ${params['id']} not found`, { resource: 'tunnel' });
        }
        return { status: 204 };
      },
    },
  ];
}
