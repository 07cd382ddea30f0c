import type { RouteSpec } from '../http/router.js';
import { ipPolicyRoutes } from './ip-policies.js';
import { tunnelRoutes } from './tunnels.js';

/** Every public API route of the mock; each resource module contributes its own list. */
export function publicRoutes(): RouteSpec[] {
  return [...ipPolicyRoutes(), ...tunnelRoutes()];
}
