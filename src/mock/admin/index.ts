import type { AdminRouteSpec } from './context.js';
import { coreAdminRoutes } from './routes.js';

/** Every admin route; resource modules that need admin operations add theirs here. */
export function adminRoutes(): AdminRouteSpec[] {
  return [...coreAdminRoutes()];
}
