import type { Method, Reply } from '../http/router.js';
import type { MockServices } from '../services.js';

export interface AdminContext {
  params: Record<string, string>;
  body: unknown;
  services: MockServices;
  /** Base URL of the public API, for `uri` fields in what admin routes return. */
  publicBaseUrl: string;
}

export interface AdminRouteSpec {
  method: Method;
  path: string;
  handler(ctx: AdminContext): Reply | Promise<Reply>;
}
