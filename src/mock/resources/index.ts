import type { RouteSpec } from '../http/router.js';
import { endpointRoutes } from './endpoints.js';
import { httpsEdgeApiRoutes } from './edges.js';
import { ipPolicyRoutes } from './ip-policies.js';
import { operatorRoutes } from './operators.js';
import { tunnelRoutes } from './tunnels.js';

/** Every public API route of the mock; each resource module contributes its own list. */
export function publicRoutes(): RouteSpec[] {
  return [
    ...ipPolicyRoutes(),
    ...tunnelRoutes(),
    ...httpsEdgeApiRoutes(),
    ...endpointRoutes(),
    ...operatorRoutes(),
  ];
}
