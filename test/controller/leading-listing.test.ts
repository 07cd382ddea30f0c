import { afterEach, describe, expect, it } from 'vitest';
import { startApiProxy, type ApiProxy } from '../helpers/api-proxy.js';
import { captureLogs } from '../helpers/logs.js';
import { kinds } from '../../src/kube/index.js';
import { OPERATOR_NS, eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

const msgIndex = (lines: Record<string, unknown>[], match: (l: Record<string, unknown>) => boolean): number =>
  lines.findIndex(match);

describe("controller: a new leader's own listing", () => {
  let env: ControllerEnv | undefined;
  let proxy: ApiProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    await env?.close();
    env = proxy = undefined;
  });

  it('a restart deletes what went away while no controller ran, only after a complete listing of its own term', async () => {
    env = await startEnv();
    const first = await env.startController();
    await env.createEndpoint('http://a.prod');
    const gone = await env.createEndpoint('http://b.prod');
    await eventually(() => env!.service('prod', 'b'), 'b projected');
    await eventually(() => first.isReady(), 'first ready');
    const goneInternal = await eventually(() => env!.internalOf(gone.id), 'b internal');
    await first.stop();

    // While no controller runs, b is deleted and c created.
    await env.mock.client.endpoints.delete(gone.id);
    await env.createEndpoint('http://c.prod');
    const logs = captureLogs('info');
    await env.startController({ logger: logs.logger });
    await eventually(() => env!.service('prod', 'c'), 'c projected');
    await eventually(
      async () =>
        !(await env!.service('prod', 'b')) &&
        !(await env!.service(goneInternal.metadata.namespace!, goneInternal.metadata.name)),
      'b removed',
    );

    const firstSync = msgIndex(logs.lines, (l) => l['msg'] === 'first complete sync applied');
    const leading = msgIndex(
      logs.lines,
      (l) => l['msg'] === 'endpoint listing complete' && l['reason'] === 'leading',
    );
    const firstDelete = msgIndex(logs.lines, (l) => l['msg'] === 'service deleted');
    expect(firstSync).toBeGreaterThanOrEqual(0);
    expect(leading).toBeGreaterThan(firstSync);
    expect(firstDelete).toBeGreaterThan(leading);
  });

  it('a resync of unchanged endpoints runs no pass and writes nothing', async () => {
    env = await startEnv();
    const ctl = await env.startController();
    for (const url of ['http://a.prod', 'http://b.prod', 'tcp://c.prod:5432']) await env.createEndpoint(url);
    await eventually(() => ctl.isReady() && ctl.status().counts['projected'] === 3, 'projected');
    // The new leader's own listing and the pass after the writes have run.
    expect(await quietFor(env.writes, 500)).toBe(0);
    const passes = ctl.passCount();
    env.writes.reset();
    expect(await ctl.resyncNow()).toBe(true);
    expect(await quietFor(env.writes, 300)).toBe(0);
    expect(ctl.passCount()).toBe(passes);
  });

  it("a new leader whose every listing fails still deletes a deleted endpoint, on that endpoint's own proof", async () => {
    env = await startEnv();
    proxy = await startApiProxy(env.mock.url);
    const a = await env.startController({ identity: 'replica-a' });
    await eventually(() => a.isLeader(), 'a leads');
    const b = await env.startController({ identity: 'replica-b', api: { baseUrl: proxy.url } });
    await env.createEndpoint('http://keep.prod');
    const gone = await env.createEndpoint('http://gone.prod');
    await eventually(() => env!.service('prod', 'gone'), 'gone projected');
    await eventually(() => b.isReady() && b.status().endpoints.length === 2, 'b knows both');
    // Both internal Services are in the install record (what makes them, and their aliases, ours
    // for b too).
    await eventually(async () => {
      const record = await env!.kube.get(kinds.configMap, OPERATOR_NS, 'endpoint-binder-install');
      return record?.data?.['internal-services']?.split(',').length === 2;
    }, 'both internal Services recorded');

    // b's listings fail from now on (an empty page that names a next one); its notifications flow.
    proxy.rewrite((p) => ({
      ...p,
      endpoints: [],
      next_page_uri: `${String(p['uri'])}?limit=100&before_id=ep_0`,
    }));
    await a.stop();
    await eventually(() => b.isLeader(), 'b takes over');
    await env.mock.client.endpoints.delete(gone.id);
    // b learns the deletion from the stream, proves it with GET /endpoints/{id} (the API's own
    // not-found): no listing is needed, and none succeeded.
    await eventually(
      async () => !(await env!.service('prod', 'gone')) && !(await env!.internalOf(gone.id)),
      'both Services of the deleted endpoint removed',
    );
    expect(b.status().endpoints.map((e) => e.url)).toEqual(['http://keep.prod:80']);
    expect(await env.service('prod', 'keep')).toBeDefined();
  });
});
