import type { IdPrefix } from '../../api/ids.js';
import type { RequestContext } from './context.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** `streamed` means the handler wrote the response itself (server-sent events). */
export type HandlerResult = Reply | 'streamed';

export interface RouteSpec {
  method: Method;
  /** Path pattern with `:name` parameters, e.g. `/ip_policies/:id`. */
  path: string;
  /** Query parameters the operation accepts besides paging. */
  query?: readonly string[];
  /** Lists accept `limit` and `before_id`. */
  paged?: boolean;
  /** Id prefix each path parameter must carry; a wrong prefix is a 400, not a 404. */
  params?: Record<string, IdPrefix>;
  handler(ctx: RequestContext): HandlerResult | Promise<HandlerResult>;
}

interface CompiledRoute<S> {
  spec: S;
  segments: string[];
}

export type RouteMatch<S = RouteSpec> =
  | { kind: 'found'; route: S; params: Record<string, string> }
  | { kind: 'wrong-method'; allow: Method[] }
  | { kind: 'no-path' };

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const a = actual[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(a);
      } catch {
        return undefined; // malformed percent-encoding can name no resource
      }
    } else if (p !== a) {
      return undefined;
    }
  }
  return params;
}

/** Literal segments win over parameters, so `/edges/https/:id/routes` never captures a module name. */
function specificity(segments: string[]): number {
  return segments.reduce((n, s) => n * 2 + (s.startsWith(':') ? 0 : 1), 1);
}

/** Matches method and path to a route; generic so the admin interface reuses it with its own specs. */
export class Router<S extends { method: Method; path: string } = RouteSpec> {
  private readonly routes: CompiledRoute<S>[] = [];

  add(...specs: S[]): this {
    for (const spec of specs) this.routes.push({ spec, segments: split(spec.path) });
    this.routes.sort((a, b) => specificity(b.segments) - specificity(a.segments));
    return this;
  }

  match(method: string, path: string): RouteMatch<S> {
    const actual = split(path);
    const allow: Method[] = [];
    for (const r of this.routes) {
      const params = matchSegments(r.segments, actual);
      if (!params) continue;
      if (r.spec.method === method) return { kind: 'found', route: r.spec, params };
      if (!allow.includes(r.spec.method)) allow.push(r.spec.method);
    }
    return allow.length > 0 ? { kind: 'wrong-method', allow } : { kind: 'no-path' };
  }
}
