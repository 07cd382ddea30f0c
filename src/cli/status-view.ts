import { z } from 'zod';
import { dataPathNotes } from '../controller/decide/data-path.js';
import { formatStatusTable, type StatusDocument } from '../controller/decide/status.js';

/**
 * What `endpoint-binder status` prints, saying only what the controller knows (issue #29 item 4):
 * before the first complete listing the endpoints are "not yet listed" (never "0 endpoints"),
 * with `N of M` when the controller reports its listing's progress and "progress unknown" when it
 * does not; with bindings disabled nothing was listed; a follower that sees no Lease holder says
 * so instead of naming a leader that does not exist. Pure.
 */

/**
 * The listing progress a controller reports in its status document while a listing runs
 * (StatusDocumentSchema's `listing`): `listing.listed` endpoints read so far of `listing.total`
 * (null when the API gives no total). Read on its own so a document without it still parses.
 */
export const ListingProgressSchema = z
  .object({
    listing: z
      .object({ listed: z.number().int().min(0), total: z.number().int().min(0).nullable() })
      .optional(),
  })
  .loose();
export type ListingProgress = z.infer<typeof ListingProgressSchema>['listing'];

const EMPTY = 'No cluster-bound endpoints in the account.';

/** The endpoints' state line when the controller has no complete listing to show, else undefined. */
export function notListedLine(doc: StatusDocument, progress: ListingProgress): string | undefined {
  if (!doc.bindingsEnabled)
    return 'Endpoints not listed: bindings are disabled (bindings.enabled: false), so this controller reads no endpoints and projects nothing.';
  if (doc.lastFullSync !== null) return undefined;
  const how = progress
    ? `listed ${progress.listed} of ${progress.total ?? 'an unknown number of'} endpoints so far`
    : 'progress unknown (this controller does not report it)';
  return `Endpoints not yet listed: the first complete listing has not finished (${how}); the table appears once it has.`;
}

/**
 * The DATA PATH column and its header notes, from the document's own data path (a controller
 * gathers it from the forwarders; `--forwarder-url` puts its own reads there); none when the
 * document has none (bindings disabled, an older controller).
 */
export function dataPathColumn(
  doc: StatusDocument,
): { cells: Map<string, string>; notes: string[] } | undefined {
  if (!doc.dataPath) return undefined;
  return {
    cells: new Map(doc.endpoints.map((e) => [e.id, e.dataPath ?? '-'])),
    notes: dataPathNotes(doc.dataPath),
  };
}

export function statusText(doc: StatusDocument, progress: ListingProgress): string {
  let text = formatStatusTable(doc, dataPathColumn(doc));
  if (!doc.leader && doc.leadership && !doc.leadership.holder)
    text = text.replace(
      'follower (writes happen on the leader)',
      'follower (no replica holds the Lease: nobody writes now)',
    );
  const notListed = notListedLine(doc, progress);
  if (notListed === undefined || doc.endpoints.length > 0) return text;
  // The table's empty body and its "0 endpoints" count would say the account has none.
  const at = text.lastIndexOf(EMPTY);
  return at < 0 ? text : `${text.slice(0, at)}${notListed}\n`;
}
