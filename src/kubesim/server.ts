import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Socket } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../log/logger.js';
import { listen } from '../net/listen.js';
import type { WriteContext } from './admission/attributes.js';
import type { AuditRecord } from './audit.js';
import { forbidden, type Authenticator, type Identity, type RequestAttributes } from './auth.js';
import type { Authorizer } from './authorizer.js';
import { planImpersonation } from './impersonation.js';
import type { Reviews } from './reviews.js';
import { coreVersions, group, groupList, resourceList, versionInfo } from './discovery.js';
import type { Faults } from './faults.js';
import { buildFilter, nameFromFieldSelector } from './filter.js';
import type { ResourceHandlers, Reply, RequestBody } from './handlers.js';
import { parseResourceVersion, validateListOptions } from './list.js';
import { serveOpenApi } from './openapi/serve.js';
import { PROTOBUF_TYPE, readProtobufObject } from './protobuf/index.js';
import { decodeProtobufDeleteOptions } from './protobuf/decode.js';
import { statusView, type Registry, type ResourceDef } from './resources/registry.js';
import { route, verbOf } from './router.js';
import { listQuerySchema, queryObject, writeQuerySchema, type ListQuery } from './schemas.js';
import { ApiError, errors } from './status.js';
import type { Store } from './store.js';
import { findDuplicateKeys } from './validation/duplicate-fields.js';
import { warningHeader } from './validation/field-validation.js';
import { maybeTable, watchTable } from './table/index.js';
import type { WatchHub, WatchRequest } from './watch.js';
import { readBodyBytes } from './body.js';

/**
 * The HTTP front: authentication, fault injection, routing, authorization, body reading and
 * reply encoding. Everything resource-specific lives behind ResourceHandlers and WatchHub.
 */

export interface ServerDeps {
  registry: Registry;
  handlers: ResourceHandlers;
  watches: WatchHub;
  faults: Faults;
  auth: Authenticator;
  /** Decides resource requests and `impersonate` checks (static rules, stored RBAC, bootstrap policy). */
  authorizer: Authorizer;
  /** Answers the self reviews (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview). */
  reviews: Reviews;
  /** Sees every authorized-or-denied resource request; admission may annotate the record later. */
  audit: (record: AuditRecord) => void;
  log: Logger;
  store: Store;
  /** How long a list or watch at a future resourceVersion waits for it before the 504. */
  futureRvWaitMs: number;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // The apiserver's JSON serializer ends every document with a newline.
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** One `Warning` header per warning, as the apiserver's warning recorder writes them. */
function warningHeaders(warnings: string[] | undefined): Record<string, string[]> {
  return warnings?.length ? { Warning: warnings.map(warningHeader) } : {};
}

async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString('utf8');
}

/** Body types a real server decodes; kubesim speaks no CBOR (and protobuf for a few kinds only), and says so with a 415 like a server without them. */
const BODY_TYPES = ['application/json', 'application/yaml'];

async function readObject(req: IncomingMessage, def: ResourceDef): Promise<RequestBody> {
  const type = (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (type === PROTOBUF_TYPE) return { value: await readProtobufObject(req, def), duplicates: [] };
  if (!BODY_TYPES.includes(type)) throw errors.unsupportedMediaType(type, [...BODY_TYPES, PROTOBUF_TYPE]);
  const raw = await readBody(req);
  try {
    if (type === 'application/yaml') return { value: parseYaml(raw), duplicates: [] };
    const value: unknown = JSON.parse(raw);
    return { value, duplicates: findDuplicateKeys(raw) };
  } catch (err) {
    throw errors.badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function parseQuery(params: URLSearchParams): ListQuery {
  const parsed = listQuerySchema.safeParse(queryObject(params));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw errors.badRequest(`${issue?.path.join('.') ?? 'query'}: ${issue?.message ?? 'invalid value'}`);
  }
  return parsed.data;
}

export class KubesimServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly deps: ServerDeps,
    tls?: { key: string; cert: string },
  ) {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      void this.handle(req, res);
    };
    this.server = tls ? createTlsServer({ key: tls.key, cert: tls.cert }, handler) : createServer(handler);
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async listen(host: string, port: number): Promise<number> {
    return (await listen(this.server, host, port)).port;
  }

  /** Stops listening and tears down every connection, watches included. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.deps.watches.close();
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
      this.sockets.clear();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { log } = this.deps;
    const method = req.method ?? 'GET';
    try {
      await this.deps.faults.delay();
      const url = new URL(req.url ?? '/', 'http://kubesim');
      const reply = await this.dispatch(req, res, method, url);
      if (reply)
        send(res, reply.status, reply.body, { ...warningHeaders(reply.warnings), ...(reply.headers ?? {}) });
      log.debug({ method, path: url.pathname, status: reply?.status ?? 200 }, 'kubesim request');
    } catch (err) {
      if (err instanceof ApiError) {
        send(res, err.code, err.status, err.headers);
        log.debug(
          { method, url: req.url, status: err.code, reason: err.status.reason },
          'kubesim request failed',
        );
      } else {
        log.error({ err, method, url: req.url }, 'kubesim internal error');
        const e = errors.internal(err instanceof Error ? err.message : String(err));
        send(res, 500, e.status);
      }
    }
  }

  /** Returns the reply to send, or undefined when the response was taken over (watch). */
  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    url: URL,
  ): Promise<Reply | undefined> {
    const { registry, handlers, faults, auth } = this.deps;
    const r = route(registry, url.pathname);
    if (r.kind === 'public') {
      if (r.path === '/version') return { status: 200, body: versionInfo() };
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return undefined;
    }
    const authenticated = auth.authenticate(req.headers.authorization);
    if (!authenticated) throw errors.unauthorized();
    const user = this.impersonate(req, res, authenticated);
    if (!user) return undefined;
    if (r.kind === 'unknown') throw errors.pathNotFound();
    if (r.kind === 'openapi') {
      const injected = faults.failureFor('get', undefined);
      if (injected) throw injected;
      serveOpenApi(req, res, registry.all(), url);
      return undefined;
    }

    if (r.kind === 'discovery') {
      if (method !== 'GET') throw errors.methodNotAllowed();
      const injected = faults.failureFor('get', undefined);
      if (injected) throw injected;
      const host = req.headers.host ?? '';
      let body: unknown;
      if (r.path === '/api') body = coreVersions(host);
      else if (r.path === '/apis') body = groupList(registry);
      else if (r.path === '/apis/group') body = group(registry, r.group ?? '');
      else body = resourceList(registry, r.group ?? '', r.version ?? '');
      if (!body) throw errors.pathNotFound();
      return { status: 200, body };
    }

    const { namespace, name, subresource } = r;
    if (subresource && (name === undefined || !['GET', 'PUT', 'PATCH'].includes(method)))
      throw errors.methodNotAllowed();
    const def = subresource ? statusView(r.def) : r.def;
    if (def.namespaced && namespace === undefined && name !== undefined) throw errors.pathNotFound();
    const query = parseQuery(url.searchParams);
    const watch = r.watchPath || (method === 'GET' && query.watch === true);
    const verb = verbOf(method, name !== undefined, watch);
    if (!verb || !def.verbs.includes(verb)) throw errors.methodNotAllowed();
    if (def.namespaced && namespace === undefined && verb !== 'list' && verb !== 'watch')
      throw errors.methodNotAllowed();

    const injected = faults.failureFor(verb, def.plural);
    if (injected) throw injected;
    const attrs: RequestAttributes = {
      verb,
      group: def.group,
      resource: def.plural,
      ...(subresource ? { subresource } : {}),
      namespace,
      // A list or watch of one object by field selector is authorized as that object (RBAC resourceNames).
      name:
        name ??
        (verb === 'list' || verb === 'watch' ? nameFromFieldSelector(query.fieldSelector) : undefined),
    };
    const { allowed } = this.deps.authorizer.decide(user, { resource: attrs });
    const record: AuditRecord = {
      user: user.user,
      groups: user.groups,
      ...(user.impersonator ? { impersonator: user.impersonator.user } : {}),
      attrs,
      allowed,
    };
    this.deps.audit(record);
    if (!allowed) throw forbidden(user, attrs);
    const ctx: WriteContext = {
      user,
      annotate(key, value) {
        record.annotations = { ...record.annotations, [key]: value };
      },
    };
    if (def.review) {
      if (verb !== 'create') throw errors.methodNotAllowed();
      return this.deps.reviews.answer(def, (await readObject(req, def)).value, user);
    }

    const wq = writeQuerySchema.safeParse(queryObject(url.searchParams));
    if (!wq.success) throw errors.badRequest(wq.error.issues[0]?.message ?? 'invalid query');
    switch (verb) {
      case 'get':
        return maybeTable(req, url, def, handlers.get(def, namespace, name ?? ''));
      case 'list':
        validateListOptions(query, false);
        await this.waitForFreshness(query);
        return maybeTable(req, url, def, handlers.list(def, namespace, query));
      case 'watch':
        validateListOptions(query, true);
        this.serveWatch(def, namespace, name, query, res, watchTable(req, url, def));
        return undefined;
      case 'create':
        return handlers.create(def, namespace, await readObject(req, def), wq.data, ctx);
      case 'update':
        return handlers.update(def, namespace, name ?? '', await readObject(req, def), wq.data, ctx);
      case 'patch':
        return handlers.patch(
          def,
          namespace,
          name ?? '',
          req.headers['content-type'] ?? '',
          await readBody(req),
          wq.data,
          ctx,
        );
      case 'delete': {
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type === PROTOBUF_TYPE)
          return handlers.delete(
            def,
            namespace,
            name ?? '',
            decodeProtobufDeleteOptions(await readBodyBytes(req)),
            ctx,
          );
        const raw = (await readBody(req)).trim();
        let body: unknown;
        try {
          body = raw ? JSON.parse(raw) : undefined;
        } catch {
          throw errors.badRequest('DeleteOptions: body is not valid JSON');
        }
        return handlers.delete(def, namespace, name ?? '', body, ctx);
      }
      default:
        throw errors.methodNotAllowed();
    }
  }

  /**
   * The identity a request runs as: the authenticated one, or the one its `Impersonate-*` headers
   * ask for once each `impersonate` check passed (403 otherwise). Undefined when the response
   * was already written (the filter's plain-text 500 for groups without a user).
   */
  private impersonate(req: IncomingMessage, res: ServerResponse, who: Identity): Identity | undefined {
    const result = planImpersonation(req.headersDistinct, who);
    if (result.kind === 'none') return who;
    if (result.kind === 'error') {
      // responsewriters.InternalError: text, not a Status, with the request URI quoted.
      const text = `Internal Server Error: ${JSON.stringify(req.url ?? '')}: ${result.message}`
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;');
      res.writeHead(500, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(`${text}\n`);
      return undefined;
    }
    for (const check of result.plan.checks) {
      const { allowed } = this.deps.authorizer.decide(who, { resource: check });
      this.deps.audit({ user: who.user, groups: who.groups, attrs: check, allowed });
      if (!allowed) throw forbidden(who, check);
    }
    return result.plan.identity;
  }

  /** A read at a future resourceVersion first waits for it, as the watch cache does (~3 s). */
  private async waitForFreshness(q: ListQuery): Promise<void> {
    const raw = q.resourceVersion ?? '';
    if (raw === '' || raw === '0' || q.continue) return;
    const rv = parseResourceVersion(raw);
    await this.deps.store.waitForRv(rv, this.deps.futureRvWaitMs);
  }

  private serveWatch(
    def: ResourceDef,
    namespace: string | undefined,
    name: string | undefined,
    q: ListQuery,
    res: ServerResponse,
    encode?: WatchRequest['encode'],
  ): void {
    // A watch on one object (legacy /watch/.../name) is a watch with a metadata.name field selector.
    const fieldSelector = [q.fieldSelector, name !== undefined ? `metadata.name=${name}` : undefined]
      .filter((s) => s)
      .join(',');
    const filter = buildFilter(def, q.labelSelector, fieldSelector);
    const rvRaw = q.resourceVersion ?? '';
    const rv = rvRaw === '' || rvRaw === '0' ? undefined : parseResourceVersion(rvRaw, true);
    // A watch from a future RV is not refused (only a list is, with 504): the stream opens at
    // once and carries the events after that RV when they come, as the watch cache serves it.
    const current = this.deps.store.currentRv();
    // SetListOptionsDefaults (WatchList on, the default since 1.32): a watch that starts from the
    // current state and allows bookmarks ends that state with the initial-events-end BOOKMARK.
    const legacyInitialEvents =
      rv === undefined &&
      q.allowWatchBookmarks === true &&
      q.sendInitialEvents === undefined &&
      !q.resourceVersionMatch;
    this.deps.watches.serve(
      {
        def,
        namespace,
        filter,
        // sendInitialEvents=false without an RV: "start at most recent", no initial state.
        resourceVersion: rv ?? (q.sendInitialEvents === false ? current : undefined),
        allowBookmarks: q.allowWatchBookmarks === true,
        timeoutSeconds: q.timeoutSeconds,
        sendInitialEvents: q.sendInitialEvents === true || legacyInitialEvents,
        encode,
      },
      res,
    );
  }
}
