import type { ResourceDef } from './resources/registry.js';
import { apiVersionOf, resourceKey } from './resources/registry.js';
import { continueTokenSchema, type ContinueToken, type ListQuery } from './schemas.js';
import { matches, type ObjectFilter } from './selectors.js';
import { errors } from './status.js';
import { objectKey, type Store } from './store.js';
import { clone, type KubeObject } from './types.js';
import { field, invalidError, type FieldError } from './validation/field.js';

/**
 * List semantics of the etcd3 storage layer: resourceVersion/resourceVersionMatch, limit and
 * continue. A continued list is served from a snapshot at the first page's RV (reconstructed
 * from the event log), so pages are consistent; once that history is compacted the token is 410.
 */

export interface ListBody {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: Omit<KubeObject, 'kind' | 'apiVersion'>[];
}

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list ' +
  'without the continue parameter, or use the continue token in this response to retrieve the remainder of the ' +
  'results. Continuing with the provided token results in an inconsistent list - objects that were created, ' +
  'modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** RV -1 marks an "inconsistent continuation": resume at the latest state (what 410 offers). */
const LATEST = -1;

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  // storage.DecodeContinue's errors, wrapped as the list handler reports them.
  const invalid = (why: string) =>
    errors.badRequest(`invalid continue token: continue key is not valid${why}`);
  if (!/^[A-Za-z0-9_-]*$/.test(raw))
    throw invalid(': illegal base64 data at input byte ' + raw.search(/[^A-Za-z0-9_-]/));
  const text = Buffer.from(raw, 'base64url').toString('latin1');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // encoding/json's first complaint about a body that is not JSON.
    const first = text.trimStart()[0];
    throw invalid(
      first
        ? `: invalid character '${first}' looking for beginning of value`
        : ': unexpected end of JSON input',
    );
  }
  const parsed = continueTokenSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw invalid(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

/** Parses an RV query value; the apiserver answers a non-numeric one with 400. */
export function parseResourceVersion(raw: string, forWatch = false): number {
  if (!/^\d+$/.test(raw)) {
    const message = `resourceVersion: Invalid value: ${JSON.stringify(raw)}: strconv.ParseUint: parsing ${JSON.stringify(raw)}: invalid syntax`;
    // The watch cache returns the parse error as is, which the handler turns into a bare 500.
    throw forWatch
      ? errors.unclassified(500, message)
      : errors.badRequest(`invalid resource version: ${message}`);
  }
  return Number(raw);
}

/**
 * ValidateListOptions (apimachinery/pkg/apis/meta/internalversion/validation): a list and a watch
 * accept different combinations of resourceVersionMatch and sendInitialEvents. Runs before any
 * storage read, so every error is reported at once as a 422 on kind ListOptions.
 */
export function validateListOptions(q: ListQuery, watch: boolean): void {
  const errs: FieldError[] = [];
  const match = q.resourceVersionMatch ?? '';
  const supported = ['Exact', 'NotOlderThan', ''];
  if (watch) {
    if (q.sendInitialEvents !== undefined) {
      if (match !== 'NotOlderThan') {
        errs.push(
          field.forbidden(
            'resourceVersionMatch',
            'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
          ),
        );
      }
    } else if (match !== '') {
      errs.push(
        field.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
  } else {
    if (match !== '') {
      if (!q.resourceVersion) {
        errs.push(
          field.forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden unless resourceVersion is provided',
          ),
        );
      }
      if (q.continue) {
        errs.push(
          field.forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden when continue is provided',
          ),
        );
      }
      if (!supported.includes(match)) errs.push(field.notSupported('resourceVersionMatch', match, supported));
      if (match === 'Exact' && q.resourceVersion === '0') {
        errs.push(
          field.forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
          ),
        );
      }
    }
    if (q.sendInitialEvents !== undefined) {
      errs.push(field.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
    }
  }
  if (errs.length) throw invalidError('meta.k8s.io', 'ListOptions', '', errs);
}

export function listObjects(
  store: Store,
  def: ResourceDef,
  namespace: string | undefined,
  query: ListQuery,
  filter: ObjectFilter,
): ListBody {
  validateListOptions(query, false);
  const resource = resourceKey(def);
  const rvParam = query.resourceVersion ?? '';
  let items: readonly KubeObject[];
  let listRv: number;
  let startKey = '';

  if (query.continue) {
    if (rvParam !== '' && rvParam !== '0') {
      throw errors.badRequest('specifying resource version is not allowed when using continue');
    }
    const token = decodeContinue(query.continue);
    startKey = token.start;
    if (token.rv === LATEST) {
      listRv = store.currentRv();
      items = store.view(resource, namespace);
    } else {
      const snapshot = store.viewAt(resource, token.rv, namespace);
      if (!snapshot) {
        throw errors.expired(
          EXPIRED_CONTINUE,
          encodeContinue({ v: 'meta.k8s.io/v1', rv: LATEST, start: token.start }),
        );
      }
      listRv = token.rv;
      items = snapshot;
    }
  } else {
    const current = store.currentRv();
    if (rvParam !== '' && rvParam !== '0') {
      const rv = parseResourceVersion(rvParam);
      // The server front has already waited a while for a future RV (waitForFreshness).
      if (rv > current) throw errors.tooLargeResourceVersion(rv, current);
      if (query.resourceVersionMatch === 'Exact') {
        const snapshot = store.viewAt(resource, rv, namespace);
        if (!snapshot) throw errors.expired(`too old resource version: ${rv} (${store.oldestAvailableRv()})`);
        items = snapshot;
        listRv = rv;
      } else {
        items = store.view(resource, namespace);
        listRv = current;
      }
    } else {
      items = store.view(resource, namespace);
      listRv = current;
    }
  }

  const limit = query.limit ?? 0;
  let i = startKey ? items.findIndex((o) => objectKey(o) >= startKey) : 0;
  if (i < 0) i = items.length;
  const out: KubeObject[] = [];
  for (; i < items.length && (limit === 0 || out.length < limit); i++) {
    const obj = items[i];
    if (obj && matches(filter, obj)) out.push(obj);
  }
  const metadata: ListBody['metadata'] = { resourceVersion: String(listRv) };
  const last = out[out.length - 1];
  if (limit > 0 && out.length === limit && i < items.length && last) {
    metadata.continue = encodeContinue({
      v: 'meta.k8s.io/v1',
      rv: listRv,
      start: `${objectKey(last)}\u0000`,
    });
    if (filter.empty) metadata.remainingItemCount = items.length - i;
  }
  return {
    kind: def.listKind,
    apiVersion: apiVersionOf(def),
    metadata,
    // Typed lists from a real server carry no kind/apiVersion on their items.
    // Only the returned page is copied (the store's objects are shared, read-only).
    items: out.map((obj) => {
      const { kind: _k, apiVersion: _a, ...rest } = clone(obj);
      return rest;
    }),
  };
}
