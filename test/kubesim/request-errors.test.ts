import { describe, expect, it } from 'vitest';
import { api, createSvc, openWatch, sleep, useSim } from './helpers.js';

/** List, watch and patch requests the real server refuses, with its status, reason and wording. */

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';

describe('list options', () => {
  it('resourceVersion=0 with resourceVersionMatch=Exact is 422 on ListOptions', async () => {
    const sim = await start();
    const r = await api(sim, 'GET', `${SVC}?resourceVersion=0&resourceVersionMatch=Exact`);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      reason: 'Invalid',
      message:
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      details: {
        group: 'meta.k8s.io',
        kind: 'ListOptions',
        causes: [
          {
            reason: 'FieldValueForbidden',
            message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            field: 'resourceVersionMatch',
          },
        ],
      },
    });
  });

  it('sendInitialEvents on a plain list is 422 (whatever its value)', async () => {
    const sim = await start();
    for (const v of ['true', 'false']) {
      const r = await api(sim, 'GET', `${SVC}?sendInitialEvents=${v}`);
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
      );
    }
  });

  it('reports every violation at once, and an unsupported match with the supported values', async () => {
    const sim = await start();
    const r = await api(sim, 'GET', `${SVC}?resourceVersionMatch=Sometime&sendInitialEvents=true`);
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'resourceVersionMatch',
      'resourceVersionMatch',
      'sendInitialEvents',
    ]);
    expect(r.body.message).toContain(
      'resourceVersionMatch: Unsupported value: "Sometime": supported values: "Exact", "NotOlderThan", ""',
    );
  });

  it('a watch with resourceVersionMatch but no sendInitialEvents is 422', async () => {
    const sim = await start();
    const r = await api(sim, 'GET', `${SVC}?watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
  });
});

describe('a future resourceVersion', () => {
  it('a watch is not refused: it opens at once and stays quiet until the RV passes (as kube-apiserver 1.34)', async () => {
    const sim = await start({ futureResourceVersionWaitMs: 100 });
    await createSvc(sim, 'default', 'a');
    const r = await api(sim, 'GET', `${SVC}?watch=true&resourceVersion=999999999&timeoutSeconds=1`);
    expect(r.status).toBe(200);
    expect(r.body).toBe('');
  });

  it('a watch whose RV arrives within the wait is served from that RV', async () => {
    const sim = await start({ futureResourceVersionWaitMs: 20_000 });
    const a = await createSvc(sim, 'default', 'a');
    const next = Number(a.metadata.resourceVersion) + 1;
    const pending = openWatch(sim, `${SVC}?watch=true&resourceVersion=${next}`);
    // The watch is parked until RV `next` exists; these two writes make `next` and `next + 1`.
    await sleep(50);
    await createSvc(sim, 'default', 'b');
    await createSvc(sim, 'default', 'c');
    const w = await pending;
    expect(w.status).toBe(200);
    await w.waitFor((e) => e.length === 1);
    // Only what came after `next` is sent: c, not a or b.
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'c']]);
    w.close();
  });

  it('a list waits too, then answers 504', async () => {
    const sim = await start({ futureResourceVersionWaitMs: 100 });
    const r = await api(sim, 'GET', `${SVC}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(504);
    expect(r.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });
});

describe('JSON patch errors', () => {
  const patch = (sim: Parameters<typeof api>[0], body: unknown) =>
    api(sim, 'PATCH', `${SVC}/j`, body, { contentType: 'application/json-patch+json' });

  it('an unknown op is 422 "Unexpected kind", and nothing is applied', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'j');
    const r = await patch(sim, [
      { op: 'add', path: '/metadata/labels', value: { a: 'b' } },
      { op: 'frob', path: '/spec' },
    ]);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ reason: 'Invalid', message: 'Unexpected kind: frob', code: 422 });
    const after = await api(sim, 'GET', `${SVC}/j`);
    expect(after.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(after.body.metadata.labels).toBeUndefined();
  });

  it('a body that is not an array of operations is 400 with the decoder message', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'j');
    const obj = await patch(sim, { op: 'add', path: '/x', value: 1 });
    expect(obj.status).toBe(400);
    expect(obj.body).toMatchObject({
      reason: 'BadRequest',
      message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    });
    const num = await patch(sim, [1]);
    expect(num.status).toBe(400);
    expect(num.body.message).toBe('json: cannot unmarshal number into Go value of type jsonpatch.Operation');
  });

  it('an operation without its path is a one-line 422 naming the member', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'j');
    const r = await patch(sim, [{ op: 'remove' }]);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('remove operation at index 0: "path" is missing');
  });
});
