import { afterEach, describe, expect, it } from 'vitest';
import { kinds } from '../../src/kube/index.js';
import { startApiProxy, type ApiProxy } from '../helpers/api-proxy.js';
import { eventually, startEnv, type ControllerEnv } from './env.js';

/**
 * Issue #30 item 2 (last part): a delete that follows from a cluster fact (a tenant's opt-out,
 * the deny list) needs no API listing and no proof from the API: it is applied while every call
 * to the API fails.
 */
describe('controller: a namespace opt-out is applied from the cluster alone', () => {
  let env: ControllerEnv | undefined;
  let proxy: ApiProxy | undefined;
  afterEach(async () => {
    await env?.close();
    await proxy?.close();
    env = undefined;
    proxy = undefined;
  });

  it('the Services of a namespace labelled aliases=disabled go while the API path is cut; the others stay', async () => {
    env = await startEnv({ namespaces: ['team', 'other'] });
    proxy = await startApiProxy(env.mock.url);
    const ctl = await env.startController({ api: { baseUrl: proxy.url, timeoutMs: 500 } });
    const eps: { id: string }[] = [];
    for (let i = 0; i < 12; i++) eps.push(await env.createEndpoint(`http://svc-${i}.team`));
    const other = await env.createEndpoint('http://keep.other');
    await eventually(() => ctl.status().counts['projected'] === 13 || undefined, 'all projected');

    // Every listing, proof and notification fails from now on. 12 alias deletes of 26 Services:
    // what the old count-based rule held for a confirming listing that could never come.
    proxy.cut(true);
    await eventually(() => !ctl.status().notificationsLive || undefined, 'notifications down');
    await env.kube.mergePatch(kinds.namespace, undefined, 'team', {
      metadata: { labels: { 'endpoint-binder.io/aliases': 'disabled' } },
    });
    await eventually(async () => {
      for (let i = 0; i < 12; i++) if (await env!.service('team', `svc-${i}`)) return undefined;
      for (const e of eps) if (await env!.internalOf(e.id)) return undefined;
      return true;
    }, "every alias in the opted-out namespace and its endpoints' internal Services deleted");
    // Nothing else moved: the other namespace's alias and internal Service stand.
    expect(await env.service('other', 'keep')).toBeDefined();
    expect(await env.internalOf(other.id)).toBeDefined();
    expect(ctl.status().endpoints.filter((e) => e.state === 'namespace-denied')).toHaveLength(12);
  });
});
