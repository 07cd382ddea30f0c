import type { IncomingMessage } from 'node:http';
import type { Reply } from '../handlers.js';
import type { ListBody } from '../list.js';
import type { ResourceDef } from '../resources/registry.js';
import type { KubeObject, WatchEventType } from '../types.js';
import {
  includeObjectOf,
  listTable,
  objectTable,
  TABLE_CONTENT_TYPE,
  tableVersion,
  watchTableEncoder,
} from './table.js';

/** The two calls server.ts makes: get/list replies and watch events, as Tables when asked for. */

export type { TableBody } from './table.js';

/** A get or list reply, turned into a Table when the request's Accept header asks for one. */
export function maybeTable(req: IncomingMessage, url: URL, def: ResourceDef, reply: Reply): Reply {
  const version = tableVersion(req.headers.accept);
  if (!version) return reply;
  const opts = { version, includeObject: includeObjectOf(url.searchParams) };
  // Handlers hand back either the typed list or one stored object.
  const body = reply.body as { kind?: unknown };
  const converted =
    body.kind === def.listKind
      ? listTable(def, body as ListBody, opts)
      : objectTable(def, body as KubeObject, opts);
  return { ...reply, body: converted, headers: { 'Content-Type': TABLE_CONTENT_TYPE(version) } };
}

/** The watch event encoder for a watch that asked for Tables, or undefined for plain events. */
export function watchTable(
  req: IncomingMessage,
  url: URL,
  def: ResourceDef,
): ((type: WatchEventType, object: unknown) => unknown) | undefined {
  const version = tableVersion(req.headers.accept);
  if (!version) return undefined;
  return watchTableEncoder(def, { version, includeObject: includeObjectOf(url.searchParams) });
}
