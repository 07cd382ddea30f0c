/**
 * `status --forwarder-url`: the DATA PATH column from forwarders the caller names, instead of the
 * ones the controller gathered (its `/status` carries them: controller/decide/data-path.ts). The reads are the
 * controller's own (forwarder-health.ts), and so is the merge; this file only puts them in place
 * of the controller's answer.
 */
import { dataPathCells, dataPathDocument } from '../controller/decide/data-path.js';
import { gatherDataPath, staticForwarderSource } from '../controller/forwarder-health.js';
import type { StatusDocument } from '../controller/decide/status.js';

/** The status document with its data path read from `bases` (each a forwarder's HTTP server) now. */
export async function withForwarders(doc: StatusDocument, bases: readonly string[]): Promise<StatusDocument> {
  const snap = await gatherDataPath(
    staticForwarderSource(() => bases),
    {
      now: () => Date.now(),
      timeoutMs: 5_000,
      concurrency: 8,
      signal: new AbortController().signal,
    },
  );
  const cells = dataPathCells(doc.endpoints, snap, Date.now());
  return {
    ...doc,
    dataPath: dataPathDocument(snap),
    endpoints: doc.endpoints.map((e) => ({ ...e, dataPath: cells.get(e.id) ?? '-' })),
  };
}
