import { describe, expect, it } from 'vitest';
import type { FidelityServer, WatchEvent } from './server.js';

/**
 * Watches: ADDED/MODIFIED/DELETED with their resourceVersions, resuming from an RV, the initial
 * state, selector transitions, bookmarks (progress and initial-events-end), timeouts, and the
 * errors of bad RVs.
 */
export function defineWatches(server: FidelityServer): void {
  describe('watches', () => {
    const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
    // A real cluster's root-CA publisher puts kube-root-ca.crt in every namespace (documented).
    const ours = (evs: WatchEvent[]) => evs.filter((e) => e.object?.metadata?.name !== 'kube-root-ca.crt');
    const types = (evs: WatchEvent[], kinds = ['ADDED', 'MODIFIED', 'DELETED']) =>
      ours(evs)
        .filter((e) => kinds.includes(e.type))
        .map((e) => `${e.type} ${e.object.metadata.name}`);
    const listRv = async (path: string): Promise<string> =>
      (await server.api('GET', path)).body.metadata.resourceVersion;

    it('ADDED, MODIFIED, DELETED from a resourceVersion, each with its RV; resuming replays what followed', async () => {
      const ns = await server.namespace();
      const rv0 = await listRv(cms(ns));
      const w = await server.watch(`${cms(ns)}?watch=true&resourceVersion=${rv0}`);
      expect(w.status).toBe(200);
      const created = await server.api('POST', cms(ns), { metadata: { name: 'cm' }, data: { a: '1' } });
      const updated = await server.api(
        'PATCH',
        `${cms(ns)}/cm`,
        { data: { a: '2' } },
        { contentType: 'application/merge-patch+json' },
      );
      const deleted = await server.api('DELETE', `${cms(ns)}/cm`);
      expect(deleted.status).toBe(200);
      await w.waitFor((evs) => ours(evs).length >= 3, 'three events');
      w.close();
      expect(types(w.events)).toEqual(['ADDED cm', 'MODIFIED cm', 'DELETED cm']);
      const [added, modified, gone] = ours(w.events);
      expect(added!.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { a: '1' } });
      expect(added!.object.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
      expect(modified!.object.metadata.resourceVersion).toBe(updated.body.metadata.resourceVersion);
      expect(modified!.object.data).toEqual({ a: '2' });
      // The DELETED object is the last state with the resourceVersion of the delete itself.
      expect(Number(gone!.object.metadata.resourceVersion)).toBeGreaterThan(
        Number(updated.body.metadata.resourceVersion),
      );
      expect(gone!.object.data).toEqual({ a: '2' });

      const resumed = await server.watch(
        `${cms(ns)}?watch=true&resourceVersion=${created.body.metadata.resourceVersion}`,
      );
      await resumed.waitFor((evs) => ours(evs).length >= 2, 'the replay of MODIFIED and DELETED');
      resumed.close();
      expect(types(resumed.events)).toEqual(['MODIFIED cm', 'DELETED cm']);
    });

    it('without a resourceVersion: the current state as ADDED, then live; the legacy /watch/ path for one object', async () => {
      const ns = await server.namespace();
      await server.api('POST', cms(ns), { metadata: { name: 'old' } });
      const w = await server.watch(`${cms(ns)}?watch=true`);
      await w.waitFor((evs) => ours(evs).length >= 1, 'the initial ADDED');
      await server.api('POST', cms(ns), { metadata: { name: 'new' } });
      await w.waitFor((evs) => ours(evs).length >= 2, 'the live ADDED');
      w.close();
      expect(types(w.events)).toEqual(['ADDED old', 'ADDED new']);

      const one = await server.watch(`/api/v1/watch/namespaces/${ns}/configmaps/old`);
      await one.waitFor((evs) => ours(evs).length >= 1, 'ADDED old');
      await server.api('DELETE', `${cms(ns)}/new`);
      await server.api('DELETE', `${cms(ns)}/old`);
      await one.waitFor((evs) => ours(evs).length >= 2, 'DELETED old');
      one.close();
      expect(types(one.events)).toEqual(['ADDED old', 'DELETED old']);
    });

    it('a label selector: an object leaving the selection is DELETED, one entering is ADDED', async () => {
      const ns = await server.namespace();
      const rv = await listRv(cms(ns));
      const w = await server.watch(`${cms(ns)}?watch=true&labelSelector=on%3Dyes&resourceVersion=${rv}`);
      await server.api('POST', cms(ns), { metadata: { name: 'cm', labels: { on: 'no' } } });
      const merge = { contentType: 'application/merge-patch+json' };
      await server.api('PATCH', `${cms(ns)}/cm`, { metadata: { labels: { on: 'yes' } } }, merge);
      await server.api('PATCH', `${cms(ns)}/cm`, { data: { x: '1' } }, merge);
      const left = await server.api('PATCH', `${cms(ns)}/cm`, { metadata: { labels: { on: 'no' } } }, merge);
      await w.waitFor((evs) => ours(evs).length >= 3, 'three events');
      w.close();
      expect(types(w.events)).toEqual(['ADDED cm', 'MODIFIED cm', 'DELETED cm']);
      // The DELETED object is the last state that matched, with the RV of the write that moved it out.
      expect(ours(w.events)[2]!.object.metadata.labels).toEqual({ on: 'yes' });
      expect(ours(w.events)[2]!.object.data).toEqual({ x: '1' });
      expect(ours(w.events)[2]!.object.metadata.resourceVersion).toBe(left.body.metadata.resourceVersion);
    });

    it('initial-events-end BOOKMARK: with sendInitialEvents, and on a watch without RV that allows bookmarks', async () => {
      const ns = await server.namespace();
      await server.api('POST', cms(ns), { metadata: { name: 'cm' } });
      const isEnd = (e: WatchEvent) =>
        e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true';
      for (const query of [
        'watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan',
        'watch=true&allowWatchBookmarks=true',
        'watch=true&allowWatchBookmarks=true&resourceVersion=0',
      ]) {
        const w = await server.watch(`${cms(ns)}?${query}`);
        await w.waitFor((evs) => evs.some(isEnd), `${query}: the initial-events-end bookmark`);
        w.close();
        expect(ours(w.events)[0]!.type, query).toBe('ADDED');
        const end = w.events.find(isEnd)!;
        expect(end.object.kind).toBe('ConfigMap');
        expect(end.object.apiVersion).toBe('v1');
        expect(Object.keys(end.object.metadata).sort()).toEqual(['annotations', 'resourceVersion']);
      }
      const plain = await server.watch(`${cms(ns)}?watch=true&timeoutSeconds=1`);
      expect(await plain.ended).toBe('end');
      expect(
        ours(plain.events).map((e) => e.type),
        'no bookmark unless allowed',
      ).toEqual(['ADDED']);
      const missing = await server.api('GET', `${cms(ns)}?watch=true&sendInitialEvents=true`);
      expect(missing.status).toBe(422);
      expect(missing.body.message).toBe(
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      );
    });

    it('progress BOOKMARKs carry the RV of writes the watch does not show; timeoutSeconds ends the stream cleanly', async () => {
      const ns = await server.namespace();
      const other = await server.namespace();
      const rv = await listRv(cms(ns));
      const w = await server.watch(
        `${cms(ns)}?watch=true&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion=${rv}`,
      );
      const elsewhere = await server.api('POST', cms(other), { metadata: { name: 'elsewhere' } });
      const after = Number(elsewhere.body.metadata.resourceVersion);
      // A real server sends the bookmark 2 s before the watch's deadline, kubesim on its interval.
      await w.waitFor(
        (evs) => evs.some((e) => e.type === 'BOOKMARK' && Number(e.object.metadata.resourceVersion) >= after),
        'a BOOKMARK at or past the other namespace write',
      );
      expect(await w.ended, 'a clean end at timeoutSeconds').toBe('end');
      expect(
        ours(w.events).filter((e) => e.type !== 'BOOKMARK'),
        'only bookmarks',
      ).toEqual([]);
      const bm = w.events.find((e) => e.type === 'BOOKMARK')!;
      expect(bm.object.kind).toBe('ConfigMap');
      expect(Object.keys(bm.object.metadata)).toEqual(['resourceVersion']);
    });

    it('a watch from a future resourceVersion opens and stays quiet until it passes (a list would be 504)', async () => {
      const ns = await server.namespace();
      const future = Number(await listRv(cms(ns))) + 1_000_000;
      const w = await server.watch(`${cms(ns)}?watch=true&resourceVersion=${future}&timeoutSeconds=1`);
      expect(w.status).toBe(200);
      await server.api('POST', cms(ns), { metadata: { name: 'before-the-rv' } });
      expect(await w.ended).toBe('end');
      expect(ours(w.events)).toEqual([]);
    });

    it('an unparsable resourceVersion on a watch is a 500 without a reason, as the cacher answers', async () => {
      const ns = await server.namespace();
      const r = await server.api('GET', `${cms(ns)}?watch=true&resourceVersion=abc`);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
        code: 500,
      });
    });

    it('a watch from a resourceVersion older than the history kept: in-stream ERROR 410 Expired where the server has forgotten it', async () => {
      const ns = await server.namespace();
      await server.api('POST', cms(ns), { metadata: { name: 'cm' } });
      server.forgetHistory?.();
      const w = await server.watch(`${cms(ns)}?watch=true&resourceVersion=1&timeoutSeconds=2`);
      expect(w.status).toBe(200);
      await w.ended;
      const error = w.events.find((e) => e.type === 'ERROR');
      if (server.kind === 'kubesim') expect(error, 'kubesim, history compacted').toBeDefined();
      // A young real server serves RV 1 from its watch cache (divergence documented); when its
      // window has moved on, the ERROR must look exactly like kubesim's.
      if (!error) {
        expect(w.events.map((e) => e.type)).toContain('ADDED');
        return;
      }
      expect(w.events).toHaveLength(1);
      expect(error.object).toMatchObject({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
      });
      expect(error.object.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
    });
  });
}
