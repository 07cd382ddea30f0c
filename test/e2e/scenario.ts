import { randomBytes } from 'node:crypto';
import { CoordinationV1Api, CoreV1Api, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagementClient, collect } from '../../src/api/client/index.js';
import {
  ENDPOINT_ID_ANNOTATION,
  ENDPOINT_URL_ANNOTATION,
  PORTS_ANNOTATION,
  STATE_LABEL,
} from '../../src/binding/identity.js';
import {
  ORPHANED_ANNOTATION,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
  ownershipLabels,
  ownershipSelector,
} from '../../src/binding/ownership/index.js';
import { waitFor } from './exec.js';
import type { ChartValues, E2eTarget } from './target.js';

/**
 * The end-to-end scenario, written once against any E2eTarget: cluster-bound endpoints created
 * through the management API are projected, reachable at name.namespace from a pod, follow a
 * selector change on upgrade, and are retained or deleted by helm uninstall as the policy says.
 * Steps run in order and build on each other.
 */

/** Endpoints of the scenario: one per app namespace, both served by the echo upstream. */
const FIRST = { name: 'echo', port: 7000 };
const SECOND = { name: 'echo2', port: 7001 };
/** An endpoint whose name a foreign Service holds at first (events, then projection, then delete). */
const CLASH = { name: 'clash', port: 7002 };

export interface ScenarioOptions {
  /** Bounds every wait of one step. */
  stepTimeoutMs?: number;
  /** Bounds setup (a kind cluster and an image build take minutes). */
  setupTimeoutMs?: number;
}

export function defineScenario(
  title: string,
  setup: () => Promise<E2eTarget>,
  opts: ScenarioOptions = {},
): void {
  const wait = { timeoutMs: opts.stepTimeoutMs ?? 240_000, intervalMs: 2_000 };
  // A step waits for a few conditions in turn and may install or uninstall once.
  const stepTimeout = 4 * wait.timeoutMs + 10 * 60_000;

  describe.sequential(title, () => {
    let t: E2eTarget;
    let api: ManagementClient;
    let core: CoreV1Api;
    let coordination: CoordinationV1Api;
    let nsA: string;
    let nsB: string;
    const ids: Record<string, string> = {};

    const values = (extra: ChartValues): ChartValues => deepMerge(t.baseValues, extra);
    const owned = async (): Promise<V1Service[]> =>
      (
        await core.listServiceForAllNamespaces({
          labelSelector: ownershipSelector({ release: t.release, operatorNamespace: t.namespace }),
        })
      ).items;
    const readService = async (namespace: string, name: string): Promise<V1Service | undefined> => {
      try {
        return await core.readNamespacedService({ namespace, name });
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    };
    /** The alias and internal Service of one endpoint, once both are there and projected. */
    const projected = async (ns: string, name: string, id: string) =>
      waitFor(
        `${name}.${ns} projected`,
        async () => {
          const alias = await readService(ns, name);
          if (alias?.metadata?.labels?.[ROLE_LABEL] !== ROLE_ALIAS) return undefined;
          const internal = (await owned()).find(
            (s) =>
              s.metadata?.labels?.[ROLE_LABEL] === ROLE_INTERNAL &&
              s.metadata.annotations?.[ENDPOINT_ID_ANNOTATION] === id &&
              s.metadata.labels[STATE_LABEL] === 'projected',
          );
          return internal ? { alias, internal } : undefined;
        },
        wait,
      );
    /** Connects from a pod until the echo answers (the forwarders may still be opening the port). */
    const roundTrip = async (host: string, port: number): Promise<void> => {
      const payload = `e2e-${randomBytes(6).toString('hex')}`;
      const answer = await waitFor(
        `an echo through ${host}:${port}`,
        async () => {
          const got = await t.exchange(host, port, payload);
          if (got !== payload) throw new Error(`answer ${JSON.stringify(got.slice(0, 200))}`);
          return got;
        },
        wait,
      );
      expect(answer).toBe(payload);
    };
    /** The controller's Events (core/v1, any namespace) with this reason about this endpoint. */
    const eventFor = async (reason: string, id: string) =>
      waitFor(
        `a ${reason} event about ${id}`,
        async () =>
          (await core.listEventForAllNamespaces()).items.find(
            (e) =>
              e.reason === reason && e.message?.includes(id) && e.source?.component === 'endpoint-binder',
          ),
        wait,
      );
    const leaseHolder = async (): Promise<string | undefined> =>
      (await coordination.readNamespacedLease({ namespace: t.namespace, name: `${t.release}-controller` }))
        .spec?.holderIdentity ?? undefined;
    /** The alias is edited by hand: the leading controller puts it back. */
    const revertsEditedAlias = async (ns: string, ep: { name: string; port: number }): Promise<void> => {
      const { alias } = await projected(ns, ep.name, ids[ep.name]!);
      const wanted = alias.spec?.externalName;
      await core.replaceNamespacedService({
        namespace: ns,
        name: ep.name,
        body: { ...alias, spec: { ...alias.spec, externalName: 'elsewhere.example.com' } },
      });
      await waitFor(
        `${ep.name}.${ns} reverted`,
        async () => ((await readService(ns, ep.name))?.spec?.externalName === wanted ? true : undefined),
        wait,
      );
      await roundTrip(`${ep.name}.${ns}`, ep.port);
    };
    const registered = async (): Promise<string[]> =>
      (await collect(api.kubernetesOperators.list()))
        .filter((o) => o.deployment.name === t.release && o.deployment.namespace === t.namespace)
        .map((o) => o.id);

    beforeAll(
      async () => {
        t = await setup();
        [nsA = 'apps', nsB = 'other'] = t.appNamespaces;
        api = new ManagementClient({ baseUrl: t.api.baseUrl, apiKey: t.api.apiKey, retry: { retries: 3 } });
        core = t.kubeConfig().makeApiClient(CoreV1Api);
        coordination = t.kubeConfig().makeApiClient(CoordinationV1Api);
        for (const [ep, ns] of [
          [FIRST, nsA],
          [SECOND, nsB],
        ] as const) {
          const created = await api.endpoints.create({
            url: `tcp://${ep.name}.${ns}:${ep.port}`,
            bindings: ['kubernetes'],
            upstream_url: t.echoUpstream,
            description: 'endpoint-binder e2e',
            metadata: JSON.stringify({ e2e: ep.name, note: 'a, "quoted" value' }),
          });
          ids[ep.name] = created.id;
        }
      },
      opts.setupTimeoutMs ?? 30 * 60_000,
    );

    afterAll(
      async () => {
        for (const id of Object.values(ids)) await api?.endpoints.delete(id).catch(() => undefined);
        await api?.close();
        await t?.close();
      },
      opts.setupTimeoutMs ?? 30 * 60_000,
    );

    it(
      'installs the chart and projects the selected endpoint as an alias and an internal Service',
      async () => {
        await t.install(values({ bindings: { endpointSelector: `endpoint.namespace == "${nsA}"` } }));
        const { alias, internal } = await projected(nsA, FIRST.name, ids[FIRST.name]!);
        expect(alias.spec?.type).toBe('ExternalName');
        expect(alias.spec?.externalName).toBe(`${internal.metadata?.name}.${t.namespace}.svc.cluster.local`);
        expect(internal.metadata?.namespace).toBe(t.namespace);
        expect(internal.spec?.ports?.map((p) => p.port)).toEqual([FIRST.port]);
        // The other endpoint is not selected: nothing of it in the cluster.
        expect(await readService(nsB, SECOND.name)).toBeUndefined();
        expect(await registered()).toHaveLength(1);
      },
      stepTimeout,
    );

    it(
      'carries a connection from a pod to name.namespace:port through to the upstream',
      async () => {
        await roundTrip(`${FIRST.name}.${nsA}`, FIRST.port);
      },
      stepTimeout,
    );

    it(
      'repairs drift: a hand-edited alias is put back',
      async () => {
        await revertsEditedAlias(nsA, FIRST);
      },
      stepTimeout,
    );

    it(
      'repairs drift: a deleted internal Service comes back with the same forwarder port',
      async () => {
        const { internal } = await projected(nsA, FIRST.name, ids[FIRST.name]!);
        const name = internal.metadata!.name!;
        const port = internal.spec?.ports?.[0]?.targetPort;
        await core.deleteNamespacedService({ namespace: t.namespace, name });
        const back = await waitFor(
          `${t.namespace}/${name} re-created`,
          async () => {
            const svc = await readService(t.namespace, name);
            return svc && svc.metadata?.uid !== internal.metadata?.uid ? svc : undefined;
          },
          wait,
        );
        expect(back.spec?.ports?.[0]?.targetPort).toBe(port);
        await roundTrip(`${FIRST.name}.${nsA}`, FIRST.port);
      },
      stepTimeout,
    );

    it(
      'a hand-made internal Service with our labels claiming a held port moves no port and is left alone',
      async () => {
        const { internal } = await projected(nsA, FIRST.name, ids[FIRST.name]!);
        const port = internal.spec?.ports?.[0]?.targetPort as number;
        const url = `tcp://forged.${nsA}:${FIRST.port}`;
        // Someone who may create Services in the operator namespace, not the controller.
        const forged = await core.createNamespacedService({
          namespace: t.namespace,
          body: {
            metadata: {
              name: 'ep-forged',
              labels: {
                ...ownershipLabels({ release: t.release, operatorNamespace: t.namespace }),
                [ROLE_LABEL]: ROLE_INTERNAL,
              },
              annotations: {
                [PORTS_ANNOTATION]: JSON.stringify({ [String(port)]: url }),
                [ENDPOINT_URL_ANNOTATION]: url,
              },
            },
            spec: {
              ports: [{ name: `tcp-${FIRST.port}`, port: FIRST.port, targetPort: port, protocol: 'TCP' }],
            },
          },
        });
        try {
          // Passes ran with it there: drift on the alias is repaired, the data path still works.
          await revertsEditedAlias(nsA, FIRST);
          const now = await readService(t.namespace, internal.metadata!.name!);
          expect(now?.spec?.ports?.[0]?.targetPort).toBe(port);
          expect(now?.metadata?.resourceVersion).toBe(internal.metadata?.resourceVersion);
          const live = await readService(t.namespace, 'ep-forged');
          expect(live?.metadata?.uid).toBe(forged.metadata?.uid);
          expect(live?.metadata?.resourceVersion).toBe(forged.metadata?.resourceVersion);
          // The alias it names is not created.
          expect(await readService(nsA, 'forged')).toBeUndefined();
        } finally {
          await core.deleteNamespacedService({ namespace: t.namespace, name: 'ep-forged' });
        }
      },
      stepTimeout,
    );

    it(
      'reports a name conflict as a Warning event, projects once it is gone, removes a deleted endpoint',
      async () => {
        await core.createNamespacedService({
          namespace: nsA,
          body: { metadata: { name: CLASH.name }, spec: { ports: [{ port: 80 }] } },
        });
        const created = await api.endpoints.create({
          url: `tcp://${CLASH.name}.${nsA}:${CLASH.port}`,
          bindings: ['kubernetes'],
          upstream_url: t.echoUpstream,
        });
        ids[CLASH.name] = created.id;
        const warning = await eventFor('NameConflict', created.id);
        expect(warning.type).toBe('Warning');
        await core.deleteNamespacedService({ namespace: nsA, name: CLASH.name });
        await projected(nsA, CLASH.name, created.id);
        expect((await eventFor('Projected', created.id)).type).toBe('Normal');
        await roundTrip(`${CLASH.name}.${nsA}`, CLASH.port);
        await api.endpoints.delete(created.id);
        delete ids[CLASH.name];
        await waitFor(
          `the Services of ${CLASH.name}.${nsA} removed`,
          async () => {
            const left = (await owned()).filter(
              (s) =>
                s.metadata?.annotations?.[ENDPOINT_ID_ANNOTATION] === created.id ||
                s.metadata?.name === CLASH.name,
            );
            return left.length === 0 && !(await readService(nsA, CLASH.name)) ? true : undefined;
          },
          wait,
        );
      },
      stepTimeout,
    );

    it(
      'elects one leader among the controller replicas, and another takes over when its pod goes',
      async () => {
        const first = await waitFor('a leader', leaseHolder, wait);
        const pod = first.replace(/_[0-9a-f]+$/, '');
        await t.deletePod(pod);
        const next = await waitFor(
          'a new leader',
          async () => {
            const h = await leaseHolder();
            return h && h !== first ? h : undefined;
          },
          wait,
        );
        expect(next.startsWith(pod)).toBe(false);
        // The new leader does the work: drift is repaired under it too.
        await revertsEditedAlias(nsA, FIRST);
      },
      stepTimeout,
    );

    it(
      'follows a changed selector on helm upgrade: the newly selected appears, the other goes',
      async () => {
        // A selector with quotes and a comma, as a user would write it in values.yaml.
        await t.upgrade(
          values({
            bindings: { endpointSelector: `endpoint.namespace in ["${nsB}", "none"] && endpoint.port > 0` },
          }),
        );
        await projected(nsB, SECOND.name, ids[SECOND.name]!);
        await waitFor(
          `${FIRST.name}.${nsA} removed`,
          async () => ((await readService(nsA, FIRST.name)) ? undefined : true),
          wait,
        );
        const internals = (await owned()).filter((s) => s.metadata?.labels?.[ROLE_LABEL] === ROLE_INTERNAL);
        expect(internals.map((s) => s.metadata?.annotations?.[ENDPOINT_ID_ANNOTATION])).toEqual([
          ids[SECOND.name],
        ]);
        await roundTrip(`${SECOND.name}.${nsB}`, SECOND.port);
      },
      stepTimeout,
    );

    it(
      'keeps the Services, marked orphaned, and the registration on uninstall with policy retain',
      async () => {
        const selector = `endpoint.namespace == "${nsB}"`;
        await t.upgrade(
          values({ bindings: { endpointSelector: selector }, uninstall: { policy: 'retain' } }),
        );
        const before = (await owned()).map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort();
        expect(before.length).toBe(2);
        await t.uninstall();
        const after = await owned();
        expect(after.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort()).toEqual(before);
        for (const s of after)
          expect(s.metadata?.annotations?.[ORPHANED_ANNOTATION], s.metadata?.name).toBeTruthy();
        expect(await registered()).toHaveLength(1);
      },
      stepTimeout,
    );

    it(
      'adopts retained Services on a new install, and removes everything on uninstall with policy delete',
      async () => {
        await t.install(
          values({
            bindings: { endpointSelector: `endpoint.namespace == "${nsB}"` },
            uninstall: { policy: 'delete' },
          }),
        );
        await waitFor(
          'the orphaned marks cleared by the new install',
          async () => {
            const svcs = await owned();
            return svcs.length === 2 && svcs.every((s) => !s.metadata?.annotations?.[ORPHANED_ANNOTATION])
              ? true
              : undefined;
          },
          wait,
        );
        await roundTrip(`${SECOND.name}.${nsB}`, SECOND.port);
        await t.uninstall();
        expect(await owned()).toEqual([]);
        expect(await readService(nsB, SECOND.name)).toBeUndefined();
        expect(await registered()).toEqual([]);
      },
      stepTimeout,
    );
  });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Values merged as helm merges -f files: objects key by key, everything else replaced. */
export function deepMerge(base: ChartValues, extra: ChartValues): ChartValues {
  const out: ChartValues = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? deepMerge(b, v) : v;
  }
  return out;
}
