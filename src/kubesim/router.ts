import type { Registry, ResourceDef } from './resources/registry.js';
import type { Verb } from './types.js';

/**
 * Maps a request path to what it addresses, following the apiserver's RequestInfoFactory:
 * /api/v1/... (core) and /apis/{group}/{version}/..., optional legacy /watch/ prefix, cluster
 * or namespace scope, collection or single object.
 */

export type Route =
  | { kind: 'public'; path: '/version' | '/healthz' | '/livez' | '/readyz' }
  | { kind: 'discovery'; path: string; group?: string; version?: string }
  /** /openapi/v2, /openapi/v3[/...]: served by openapi/serve.ts. */
  | { kind: 'openapi' }
  | {
      kind: 'resource';
      def: ResourceDef;
      namespace: string | undefined;
      name: string | undefined;
      /** `status`, for kinds that serve it. */
      subresource?: 'status';
      /** Legacy /watch/ path prefix, equivalent to ?watch=true. */
      watchPath: boolean;
    }
  | { kind: 'unknown' };

const PUBLIC = new Set(['/version', '/healthz', '/livez', '/readyz']);

export function route(registry: Registry, pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (PUBLIC.has(path)) return { kind: 'public', path: path as '/version' };
  if (path === '/openapi' || path.startsWith('/openapi/')) return { kind: 'openapi' };
  let parts: string[];
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { kind: 'unknown' }; // malformed percent-encoding addresses nothing
  }
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (parts[0] === 'api') {
    group = '';
    version = parts[1];
    rest = parts.slice(2);
    if (!version) return { kind: 'discovery', path: '/api' };
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'discovery', path: '/apis' };
    group = parts[1] ?? '';
    version = parts[2];
    rest = parts.slice(3);
    if (!version) return { kind: 'discovery', path: '/apis/group', group };
  } else {
    return { kind: 'unknown' };
  }
  if (rest.length === 0) return { kind: 'discovery', path: '/resources', group, version };
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  if (!plural || rest.length > 3) return { kind: 'unknown' };
  const def = registry.find(group, version, plural);
  if (!def) return { kind: 'unknown' };
  if (!def.namespaced && namespace !== undefined) return { kind: 'unknown' };
  if (subresource !== undefined) {
    if (subresource !== 'status' || !def.statusSubresource || watchPath) return { kind: 'unknown' };
    return { kind: 'resource', def, namespace, name, watchPath, subresource };
  }
  return { kind: 'resource', def, namespace, name, watchPath };
}

/** The authorization verb of a resource request. */
export function verbOf(method: string, hasName: boolean, watch: boolean): Verb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return hasName ? undefined : 'create';
    case 'PUT':
      return hasName ? 'update' : undefined;
    case 'PATCH':
      return hasName ? 'patch' : undefined;
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}
