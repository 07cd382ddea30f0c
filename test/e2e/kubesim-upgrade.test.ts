import { AppsV1Api, CoordinationV1Api, CoreV1Api, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ManagementClient } from '../../src/api/client/index.js';
import { STATE_LABEL } from '../../src/binding/identity.js';
import {
  ORPHANED_ANNOTATION,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
  ownershipSelector,
} from '../../src/binding/ownership/index.js';
import { EXTRA_KEYS_ANNOTATION } from '../../src/binding/services.js';
import { UNINSTALLED_AT_ANNOTATION } from '../../src/kube/leader/uninstall-mark.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { waitFor } from './exec.js';
import { startKubesimTarget, type KubesimTarget } from './kubesim-target.js';
import { deepMerge } from './scenario.js';
import type { ChartValues } from './target.js';
import { budget } from '../helpers/budget.js';

/**
 * Issue #20: `helm upgrade` cases into kubesim with the real helm, each checked afterwards with a
 * list straight from the API server (not the controller's view): a selector change, extra labels
 * and annotations removed, a port range change, fewer controller replicas, and a selector that
 * does not compile (refused by the pre-upgrade config check, nothing changed), bindings turned off
 * (the post-upgrade cleanup hook deletes this install's Services, or marks them orphaned under the
 * retain policy; the tenant's Services and the registration stay) and back on.
 */

const helm = k8sTool('helm');
const WAIT = { timeoutMs: 90_000, intervalMs: 250 };

/** A values file as `--set key=null` would leave it: null removes the key. */
function withoutNulls(v: ChartValues): ChartValues {
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null)
      .map(([k, x]) => [k, typeof x === 'object' && !Array.isArray(x) ? withoutNulls(x as ChartValues) : x]),
  );
}

describe.skipIf('skip' in helm).sequential('helm upgrade into kubesim, checked after each case', () => {
  let t: KubesimTarget;
  let core: CoreV1Api;
  let values: ChartValues;
  let base = 0;

  const owned = async (): Promise<V1Service[]> =>
    (
      await core.listServiceForAllNamespaces({
        labelSelector: ownershipSelector({ release: t.release, operatorNamespace: t.namespace }),
      })
    ).items;
  const aliases = async (): Promise<string[]> =>
    (await owned())
      .filter((s) => s.metadata?.labels?.[ROLE_LABEL] === ROLE_ALIAS)
      .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`)
      .sort();
  const internals = async (): Promise<V1Service[]> =>
    (await owned()).filter((s) => s.metadata?.labels?.[ROLE_LABEL] === ROLE_INTERNAL);
  const upgrade = async (extra: ChartValues): Promise<void> => {
    values = withoutNulls(deepMerge(values, extra));
    await t.upgrade(values);
  };

  beforeAll(async () => {
    t = await startKubesimTarget();
    core = t.kubeConfig().makeApiClient(CoreV1Api);
    const api = new ManagementClient({ baseUrl: t.api.baseUrl, apiKey: t.api.apiKey, retry: { retries: 3 } });
    try {
      for (const [name, ns, port] of [
        ['alpha', 'apps', 7100],
        ['beta', 'other', 7101],
      ] as const)
        await api.endpoints.create({
          url: `tcp://${name}.${ns}:${port}`,
          bindings: ['kubernetes'],
          upstream_url: t.echoUpstream,
        });
    } finally {
      await api.close();
    }
    base = (t.baseValues['bindings'] as { portRange: { min: number } }).portRange.min;
    values = deepMerge(t.baseValues, {
      bindings: { serviceLabels: { team: 'web', tier: 'front' }, serviceAnnotations: { note: 'a' } },
    });
    await t.install(values);
  }, budget(180_000));
  afterAll(async () => t?.close(), budget(120_000));

  it(
    'installs: both endpoints projected with the extra labels, annotations and their record',
    { timeout: budget(120_000) },
    async () => {
      await waitFor('two aliases', async () => ((await aliases()).length === 2 ? true : undefined), WAIT);
      expect(await aliases()).toEqual(['apps/alpha', 'other/beta']);
      for (const s of await owned()) {
        expect(s.metadata?.labels).toMatchObject({ team: 'web', tier: 'front' });
        expect(s.metadata?.annotations).toMatchObject({ note: 'a' });
        expect(JSON.parse(s.metadata?.annotations?.[EXTRA_KEYS_ANNOTATION] ?? '{}')).toEqual({
          labels: ['team', 'tier'],
          annotations: ['note'],
        });
      }
    },
  );

  it(
    'selector change: the endpoint no longer selected loses its Services',
    { timeout: budget(120_000) },
    async () => {
      await upgrade({ bindings: { endpointSelector: 'endpoint.namespace == "apps"' } });
      await waitFor(
        'only alpha',
        async () => ((await aliases()).join() === 'apps/alpha' ? true : undefined),
        WAIT,
      );
      expect((await internals()).length).toBe(1);
    },
  );

  it(
    'label and annotation removal: the dropped keys leave every Service, the kept ones stay',
    { timeout: budget(120_000) },
    async () => {
      await upgrade({ bindings: { serviceLabels: { tier: null }, serviceAnnotations: { note: null } } });
      await waitFor(
        'tier and note gone',
        async () =>
          (await owned()).every((s) => !s.metadata?.labels?.['tier'] && !s.metadata?.annotations?.['note'])
            ? true
            : undefined,
        WAIT,
      );
      for (const s of await owned()) expect(s.metadata?.labels?.['team']).toBe('web');
      expect(await aliases()).toEqual(['apps/alpha']);
    },
  );

  it(
    'port range change: the internal Service moves into the new range',
    { timeout: budget(180_000) },
    async () => {
      const min = base + 200;
      const max = base + 249;
      await upgrade({ bindings: { portRange: { min, max } } });
      await waitFor(
        'ports inside the new range',
        async () => {
          const ports = (await internals())
            .flatMap((s) => s.spec?.ports ?? [])
            .map((p) => Number(p.targetPort));
          return ports.length > 0 && ports.every((p) => p >= min && p <= max) ? true : undefined;
        },
        WAIT,
      );
      // The restarted forwarder opens its listeners once it has listed the internal Services: the
      // first connections may come before that.
      await waitFor(
        'alpha answers on its new port',
        async () =>
          (await t.exchange('alpha.apps', 7100, 'ping').catch(() => '')) === 'ping' ? true : undefined,
        WAIT,
      );
    },
  );

  it(
    'replicas: one controller after two; the Services are unchanged',
    { timeout: budget(120_000) },
    async () => {
      const before = (await owned()).map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort();
      await upgrade({ controller: { replicas: 1 } });
      const d = await t
        .kubeConfig()
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({
          namespace: t.namespace,
          name: `${t.release}-endpoint-binder-controller`,
        });
      expect(d.spec?.replicas).toBe(1);
      // The new single controller leads and keeps what is projected (a new endpoint shows it is working).
      const api = new ManagementClient({
        baseUrl: t.api.baseUrl,
        apiKey: t.api.apiKey,
        retry: { retries: 3 },
      });
      try {
        await api.endpoints.create({
          url: 'tcp://gamma.apps:7102',
          bindings: ['kubernetes'],
          upstream_url: t.echoUpstream,
        });
      } finally {
        await api.close();
      }
      await waitFor(
        'gamma projected',
        async () => ((await aliases()).includes('apps/gamma') ? true : undefined),
        WAIT,
      );
      const after = (await owned()).map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort();
      expect(after.filter((k) => before.includes(k))).toEqual(before);
    },
  );

  it(
    'a selector that does not compile fails helm upgrade with the CEL message and its caret; nothing changes',
    { timeout: budget(120_000) },
    async () => {
      const before = (await owned())
        .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}@${s.metadata?.resourceVersion}`)
        .sort();
      const configBefore = (
        await core.readNamespacedConfigMap({
          namespace: t.namespace,
          name: `${t.release}-endpoint-binder-controller`,
        })
      ).data?.['controller.yaml'];
      const runsBefore = t.hookRuns().length;

      const r = await t.tryUpgrade(
        deepMerge(values, { bindings: { endpointSelector: 'endpoint.namespace ==' } }),
      );
      expect(r.ok).toBe(false);
      expect(r.error).toContain('pre-upgrade hooks failed');
      const run = t.hookRuns().slice(runsBefore).pop();
      expect(run?.job).toBe(`${t.release}-endpoint-binder-config-check`);
      expect(run?.code).toBe(1);
      // What `kubectl logs job/<release>-endpoint-binder-config-check` shows: the field, the message, the caret.
      expect(run?.output).toContain('bindings.endpointSelector');
      expect(run?.output).toMatch(/\n\s*\^/);

      const configAfter = (
        await core.readNamespacedConfigMap({
          namespace: t.namespace,
          name: `${t.release}-endpoint-binder-controller`,
        })
      ).data?.['controller.yaml'];
      expect(configAfter).toBe(configBefore);
      expect(
        (parseYaml(configAfter ?? '') as { bindings: { endpointSelector: string } }).bindings
          .endpointSelector,
      ).toBe('endpoint.namespace == "apps"');
      const after = (await owned())
        .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}@${s.metadata?.resourceVersion}`)
        .sort();
      expect(after).toEqual(before);
      expect(t.crashes()).toEqual([]);
    },
  );
  /** Every Service of ours as namespace/name → its ports (port, and targetPort for internal ones). */
  const portsOf = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await owned()).map((s) => [
        `${s.metadata?.namespace}/${s.metadata?.name}`,
        (s.spec?.ports ?? [])
          .map((p) =>
            s.metadata?.labels?.[ROLE_LABEL] === ROLE_INTERNAL ? `${p.port}>${p.targetPort}` : `${p.port}`,
          )
          .sort()
          .join(','),
      ]),
    );
  const registrations = async (): Promise<string[]> => {
    const api = new ManagementClient({ baseUrl: t.api.baseUrl, apiKey: t.api.apiKey, retry: { retries: 3 } });
    try {
      const ids: string[] = [];
      for await (const op of api.kubernetesOperators.list())
        if (op.deployment.name === t.release && op.deployment.namespace === t.namespace) ids.push(op.id);
      return ids;
    } finally {
      await api.close();
    }
  };
  const tenantService = async (): Promise<V1Service> =>
    await core.readNamespacedService({ namespace: 'apps', name: 'tenant-web' });
  const leaseMarked = async (): Promise<boolean> => {
    const lease = await t
      .kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: t.namespace, name: `${t.release}-controller` });
    return Boolean(lease.metadata?.annotations?.[UNINSTALLED_AT_ANNOTATION]);
  };
  let projectedPorts: Record<string, string> = {};

  it(
    'bindings off (policy delete): the cleanup hook deletes every Service of ours; the tenant and the registration stay',
    { timeout: budget(180_000) },
    async () => {
      await core.createNamespacedService({
        namespace: 'apps',
        body: { metadata: { name: 'tenant-web' }, spec: { ports: [{ port: 80 }] } },
      });
      const tenantBefore = (await tenantService()).metadata?.resourceVersion;
      projectedPorts = await portsOf();
      expect(Object.keys(projectedPorts).length).toBeGreaterThanOrEqual(4);
      const registered = await registrations();
      expect(registered).toHaveLength(1);
      const runsBefore = t.hookRuns().length;

      await upgrade({ bindings: { enabled: false } });

      const run = t
        .hookRuns()
        .slice(runsBefore)
        .find((r) => r.job === `${t.release}-endpoint-binder-cleanup`);
      expect(run?.code, run?.output).toBe(0);
      const report = JSON.parse(
        (run?.output ?? '')
          .split('\n')
          .filter((l) => l.startsWith('{"policy"'))
          .pop() ?? '{}',
      ) as { deleted?: string[] };
      expect([...(report.deleted ?? [])].sort()).toEqual(Object.keys(projectedPorts).sort());
      // An independent list, once helm has returned: none of ours is left.
      expect(await owned()).toEqual([]);
      expect((await tenantService()).metadata?.resourceVersion).toBe(tenantBefore);
      // The operator stays registered (the same record) and the Lease was neither taken nor marked.
      expect(await registrations()).toEqual(registered);
      expect(await leaseMarked()).toBe(false);
      expect(t.crashes()).toEqual([]);
    },
  );

  it('bindings back on: the Services come back with their ports', { timeout: budget(180_000) }, async () => {
    await upgrade({ bindings: { enabled: true } });
    await waitFor(
      'every Service back',
      async () =>
        Object.keys(await portsOf()).length === Object.keys(projectedPorts).length ? true : undefined,
      WAIT,
    );
    const back = await portsOf();
    expect(Object.keys(back).sort()).toEqual(Object.keys(projectedPorts).sort());
    // The alias ports are the endpoints' ports; the internal ones too (the forwarder port is new).
    for (const [key, ports] of Object.entries(projectedPorts))
      expect(back[key]?.replace(/>\d+/g, '')).toBe(ports.replace(/>\d+/g, ''));
    await waitFor(
      'alpha answers',
      async () =>
        (await t.exchange('alpha.apps', 7100, 'back').catch(() => '')) === 'back' ? true : undefined,
      WAIT,
    );
    expect(t.crashes()).toEqual([]);
  });

  it(
    'bindings off under policy retain: every Service of ours stays, marked orphaned; back on, the same Services with their old ports',
    { timeout: budget(300_000) },
    async () => {
      await upgrade({ uninstall: { policy: 'retain' } });
      const before = await owned();
      const uids = Object.fromEntries(
        before.map((s) => [`${s.metadata?.namespace}/${s.metadata?.name}`, s.metadata?.uid]),
      );
      const ports = await portsOf();
      const tenantBefore = (await tenantService()).metadata?.resourceVersion;
      const registered = await registrations();

      await upgrade({ bindings: { enabled: false } });
      const off = await owned();
      expect(off.map((s) => s.metadata?.uid).sort()).toEqual(Object.values(uids).sort());
      for (const s of off) expect(s.metadata?.annotations?.[ORPHANED_ANNOTATION]).toBeTruthy();
      for (const s of off) expect(s.metadata?.labels?.[STATE_LABEL]).toBe('orphaned');
      expect((await tenantService()).metadata?.resourceVersion).toBe(tenantBefore);
      expect(await registrations()).toEqual(registered);
      expect(await leaseMarked()).toBe(false);

      await upgrade({ bindings: { enabled: true } });
      await waitFor(
        'the orphaned mark and state cleared',
        async () =>
          (await owned()).every(
            (s) =>
              !s.metadata?.annotations?.[ORPHANED_ANNOTATION] &&
              s.metadata?.labels?.[STATE_LABEL] !== 'orphaned',
          )
            ? true
            : undefined,
        WAIT,
      );
      const on = await owned();
      expect(
        Object.fromEntries(on.map((s) => [`${s.metadata?.namespace}/${s.metadata?.name}`, s.metadata?.uid])),
      ).toEqual(uids);
      expect(await portsOf()).toEqual(ports);
      await waitFor(
        'alpha answers',
        async () =>
          (await t.exchange('alpha.apps', 7100, 'kept').catch(() => '')) === 'kept' ? true : undefined,
        WAIT,
      );
      expect(t.crashes()).toEqual([]);
    },
  );
});
