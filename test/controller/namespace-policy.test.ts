import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import type { Controller } from '../../src/controller/controller.js';
import { collectionPath, kinds, KubeTransport, listAll } from '../../src/kube/index.js';
import { EventSchema } from '../../src/kube/objects.js';
import { captured } from '../helpers/capture-io.js';
import { ACME_KEY } from '../helpers/mock-api.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

/** The namespace policy end to end: mock API + kubesim + an in-process controller (defaults). */
describe('controller: the namespace policy', () => {
  let env: ControllerEnv;
  let ctl: Controller;

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod', 'tenant', 'gated'] });
    // The Event of an endpoint without a Service goes on the controller's Pod.
    ctl = await env.startController({ pod: { name: 'controller-0', namespace: OPERATOR_NS } });
    await eventually(() => ctl.isReady(), 'controller ready');
  });
  afterAll(async () => {
    await env?.close();
  });

  const stateOf = (id: string) => ctl.status().endpoints.find((e) => e.id === id);
  const setLabel = (ns: string, value: string | null) =>
    env.kube.mergePatch(kinds.namespace, undefined, ns, {
      metadata: { labels: { 'endpoint-binder.io/aliases': value } },
    });

  it('http://x.kube-system is namespace-denied with the rule in the reason, a Warning Event, and no alias, internal Service or port', async () => {
    const ep = await env.createEndpoint('http://x.kube-system');
    const st = await eventually(
      () => (stateOf(ep.id)?.state === 'namespace-denied' ? stateOf(ep.id) : undefined),
      'namespace-denied',
    );
    expect(st.reason).toContain('namespace "kube-system" matches the deny entry "kube-*" (namespaces.deny)');
    // Issue #30 item 5: no alias can use them, so no internal Service and no forwarder port.
    expect(st.targetPort).toBeUndefined();
    const transport = new KubeTransport(env.sim.kubeConfig());
    const event = await eventually(async () => {
      const all = (await listAll({ transport, path: collectionPath(kinds.event), schema: EventSchema }))
        .items;
      return all.find((e) => e.reason === 'NamespaceDenied' && e.message?.includes(ep.id));
    }, 'NamespaceDenied event');
    expect(event.type).toBe('Warning');
    expect(event.message).toContain('deny entry "kube-*"');
    expect(await env.service('kube-system', 'x')).toBeUndefined();
    expect(await env.internalOf(ep.id)).toBeUndefined();
  });

  it('selector test shows the namespace-denied line with the rule', async () => {
    process.env['ENDPOINT_BINDER_API_KEY'] = ACME_KEY;
    try {
      const io = captured();
      const code = await runCli(['selector', 'test', 'true', '--api-url', env.mock.url]);
      const out = io.out();
      vi.restoreAllMocks();
      expect(code).toBe(0);
      expect(out).toMatch(
        /http:\/\/x\.kube-system:80\s+yes\s+selector is true, but namespace-denied: namespace "kube-system" matches the deny entry "kube-\*"/,
      );
      expect(out).toMatch(/\(1 of them namespace-denied: no alias would be written\)/);
      const io2 = captured();
      await runCli([
        'selector',
        'test',
        'true',
        '--api-url',
        env.mock.url,
        '--namespace-allow',
        'kube-system',
      ]);
      const allowed = io2.out();
      vi.restoreAllMocks();
      expect(allowed).toMatch(/http:\/\/x\.kube-system:80\s+yes\s+selector is true\n/);
    } finally {
      delete process.env['ENDPOINT_BINDER_API_KEY'];
    }
  });

  it('a tenant opt-out label removes our alias there (ours only), and removing it brings the alias back', async () => {
    const foreign = await env.kube.create(kinds.service, {
      metadata: { name: 'theirs', namespace: 'tenant' },
      spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] },
    });
    const ep = await env.createEndpoint('http://web.tenant');
    await eventually(() => env.service('tenant', 'web'), 'alias in tenant');
    // The alias is written before its internal Service (which records the alias's uid).
    await eventually(() => stateOf(ep.id)?.state === 'projected' || undefined, 'projected');

    await setLabel('tenant', 'disabled');
    await eventually(async () => ((await env.service('tenant', 'web')) ? undefined : true), 'alias removed');
    const st = await eventually(
      () => (stateOf(ep.id)?.state === 'namespace-denied' ? stateOf(ep.id) : undefined),
      'namespace-denied after opt-out',
    );
    expect(st.reason).toContain('its labels fail "endpoint-binder.io/aliases notin (disabled)"');
    expect((await env.service('tenant', 'theirs'))?.metadata.uid).toBe(foreign.metadata.uid);

    await setLabel('tenant', null);
    await eventually(() => env.service('tenant', 'web'), 'alias back after the label goes');
    await eventually(() => stateOf(ep.id)?.state === 'projected' || undefined, 'projected again');
  });
});

describe('controller: the namespace policy in opt-in mode', () => {
  let env: ControllerEnv;
  let ctl: Controller;

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['gated'] });
    ctl = await env.startController({
      bindings: { namespaces: { selector: { matchLabels: { 'endpoint-binder.io/aliases': 'enabled' } } } },
    });
    await eventually(() => ctl.isReady(), 'controller ready');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('an unlabelled namespace is closed; labelling it enabled opens it within seconds', async () => {
    const ep = await env.createEndpoint('http://app.gated');
    const st = await eventually(
      () => ctl.status().endpoints.find((e) => e.id === ep.id && e.state === 'namespace-denied'),
      'namespace-denied',
    );
    expect(st.reason).toContain('its labels fail "endpoint-binder.io/aliases=enabled"');
    expect(await env.service('gated', 'app')).toBeUndefined();
    await env.kube.mergePatch(kinds.namespace, undefined, 'gated', {
      metadata: { labels: { 'endpoint-binder.io/aliases': 'enabled' } },
    });
    await eventually(() => env.service('gated', 'app'), 'alias after opt-in');
  });
});
