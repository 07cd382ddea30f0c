import { budget } from '../helpers/budget.js';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoordinationV1Api, CoreV1Api, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_ID_ANNOTATION, STATE_LABEL } from '../../src/binding/identity.js';
import {
  installRecordName,
  INTERNAL_SERVICES_KEY,
  ownershipLabels,
  ownershipSelector,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
} from '../../src/binding/ownership/index.js';
import type { AuditEvent } from '../helpers/control-plane/control-plane.js';
import { realCluster } from '../helpers/control-plane/use.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { exec, waitFor } from '../e2e/exec.js';
import { ACME_AUTHTOKEN } from '../helpers/mock-api.js';
import { freePort } from '../forwarder/helpers.js';
import { startRealTarget, type RealTarget } from '../e2e/real-target.js';
import { deepMerge } from '../e2e/scenario.js';

/**
 * The product on a real kube-apiserver, beyond the e2e scenario (e2e.real.ts): what the real
 * server enforces with the controller's own ServiceAccount token (RBAC and the chart's admission
 * fence), and the controller's promises counted by the real server's audit log: a restart of
 * every replica writes no Service, a truncated listing deletes nothing, a namespace opt-out
 * removes the aliases and an opt-in brings them back; and `endpoint-binder check` against it.
 */
const rc = realCluster();
const helm = k8sTool('helm');
const skip = 'skip' in rc ? rc.skip : 'skip' in helm ? helm.skip : undefined;
if (skip) console.log(`[real cluster] product.real.ts skipped: ${skip}`);

const RELEASE = 'ebp';
const NAMESPACE = 'eb-product';
const APPS = 'papps';
const ENDPOINTS = 6;

describe.skipIf(skip !== undefined)('the product on a real kube-apiserver', () => {
  let t: RealTarget;
  let core: CoreV1Api;
  /** The ids of svc-0 .. svc-<ENDPOINTS-1> in APPS. */
  const endpointIds: string[] = [];
  const controllerUser = `system:serviceaccount:${NAMESPACE}:${RELEASE}-endpoint-binder-controller`;
  const owned = async (): Promise<V1Service[]> =>
    (
      await core.listServiceForAllNamespaces({
        labelSelector: ownershipSelector({ release: RELEASE, operatorNamespace: NAMESPACE }),
      })
    ).items;
  const aliasesIn = async (ns: string): Promise<number> =>
    (await owned()).filter(
      (s) => s.metadata?.namespace === ns && s.metadata.labels?.[ROLE_LABEL] === ROLE_ALIAS,
    ).length;
  /** Service writes by the controller's account since `from` (an index into the audit log). */
  const serviceWrites = (from: number): AuditEvent[] =>
    t.cluster
      .audit()
      .slice(from)
      .filter(
        (e) =>
          e.user.username === controllerUser &&
          e.objectRef?.resource === 'services' &&
          ['create', 'update', 'patch', 'delete'].includes(e.verb),
      );
  const describeWrites = (w: AuditEvent[]): string =>
    w
      .map((e) => `${e.verb} ${e.objectRef?.namespace}/${e.objectRef?.name} ${e.responseStatus?.code}`)
      .join('\n');
  /** Where a pod's `http` container port answers: its pod IP, as from another pod in the cluster. */
  const httpUrlOf = async (name: string): Promise<string> => {
    const pod = await waitFor(
      `pod ${name} Running with an IP`,
      async () => {
        const p = await core.readNamespacedPod({ namespace: NAMESPACE, name });
        return p.status?.phase === 'Running' && p.status.podIP ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const port = pod.spec?.containers[0]?.ports?.find((p) => p.name === 'http')?.containerPort;
    if (port === undefined) throw new Error(`pod ${name} declares no http container port`);
    return `http://${pod.status?.podIP}:${port}`;
  };

  beforeAll(async () => {
    if ('skip' in rc) return;
    t = await startRealTarget(rc.cluster, {
      release: RELEASE,
      namespace: NAMESPACE,
      appNamespaces: [APPS, 'pother'],
      portWindow: 4,
    });
    core = t.kubeConfig().makeApiClient(CoreV1Api);
    await t.install(deepMerge(t.baseValues, { controller: { resyncIntervalSeconds: 10 } }));
    for (let i = 0; i < ENDPOINTS; i++)
      endpointIds.push(
        (
          await t.mock.client.endpoints.create({
            url: `tcp://svc-${i}.${APPS}:7000`,
            bindings: ['kubernetes'],
            upstream_url: t.echoUpstream,
          })
        ).id,
      );
    await waitFor(
      'every endpoint projected',
      async () => ((await owned()).length === 2 * ENDPOINTS ? true : undefined),
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );
  }, budget(240_000));

  afterAll(async () => {
    if (!t) return;
    await t.uninstall().catch(() => undefined);
    await t.close();
  }, budget(240_000));

  it("the real API server refuses the controller's token outside this install (RBAC and the fence)", async () => {
    const token = await t.cluster.serviceAccountToken(NAMESPACE, `${RELEASE}-endpoint-binder-controller`);
    const labels = ownershipLabels({ release: RELEASE, operatorNamespace: NAMESPACE });
    const alias = (name: string, l: Record<string, string> | undefined) => ({
      metadata: { name, ...(l ? { labels: l } : {}) },
      spec: { type: 'ExternalName', externalName: 'x.example.com' },
    });
    // A tenant's Service and a kube-dns stand-in, made by the admin.
    await t.cluster.fetch('POST', `/api/v1/namespaces/${APPS}/services`, {
      metadata: { name: 'tenant-web' },
      spec: { ports: [{ port: 80 }] },
    });
    await t.cluster.fetch('POST', '/api/v1/namespaces/kube-system/services', {
      metadata: { name: 'kube-dns' },
      spec: { ports: [{ port: 53, protocol: 'UDP' }] },
    });
    const as = (method: string, path: string, body?: unknown) => t.cluster.fetch(method, path, body, token);
    const refused = {
      'create in kube-system': await as(
        'POST',
        '/api/v1/namespaces/kube-system/services',
        alias('eb-probe', labels),
      ),
      'delete kube-system/kube-dns': await as('DELETE', '/api/v1/namespaces/kube-system/services/kube-dns'),
      "delete a tenant's Service": await as('DELETE', `/api/v1/namespaces/${APPS}/services/tenant-web`),
      "patch a tenant's Service": await t.cluster
        .fetch('GET', `/api/v1/namespaces/${APPS}/services/tenant-web`)
        .then((r) =>
          as('PUT', `/api/v1/namespaces/${APPS}/services/tenant-web`, {
            ...(r.body as Record<string, unknown>),
            metadata: { ...(r.body as { metadata: Record<string, unknown> }).metadata, labels },
          }),
        ),
      'create without the ownership labels': await as(
        'POST',
        `/api/v1/namespaces/${APPS}/services`,
        alias('unlabelled', undefined),
      ),
      'create a ClusterIP Service outside the operator namespace': await as(
        'POST',
        `/api/v1/namespaces/${APPS}/services`,
        {
          metadata: { name: 'clusterip', labels },
          spec: { ports: [{ port: 80 }] },
        },
      ),
    };
    for (const [what, r] of Object.entries(refused))
      expect(r.status, `${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(403);
    // The fence answered where RBAC allows the verb: its message names it.
    const fenced = JSON.stringify(refused['create without the ownership labels'].body);
    expect(fenced, 'the refusal names the fence').toContain('endpoint-binder fence');
    // The install's own kind of write passes.
    const own = await as('POST', `/api/v1/namespaces/${APPS}/services`, alias('fence-probe', labels));
    expect(own.status, JSON.stringify(own.body).slice(0, 300)).toBe(201);
    const gone = await as('DELETE', `/api/v1/namespaces/${APPS}/services/fence-probe`);
    expect(gone.status).toBe(200);
  });

  // #30: the fence lets the controller mark an alias that lost managed-by left behind, and no more.
  it('the real fence lets the controller relabel a left-behind alias and refuses any other change to it', async () => {
    const token = await t.cluster.serviceAccountToken(NAMESPACE, `${RELEASE}-endpoint-binder-controller`);
    const labels = ownershipLabels({ release: RELEASE, operatorNamespace: NAMESPACE });
    const path = `/api/v1/namespaces/${APPS}/services/lost-alias`;
    const as = (method: string, p: string, body?: unknown) => t.cluster.fetch(method, p, body, token);
    const made = await as('POST', `/api/v1/namespaces/${APPS}/services`, {
      metadata: { name: 'lost-alias', labels: { ...labels, 'endpoint-binder.io/state': 'projected' } },
      spec: { type: 'ExternalName', externalName: 'x.example.com' },
    });
    expect(made.status, JSON.stringify(made.body).slice(0, 300)).toBe(201);
    type Svc = {
      metadata: {
        labels: Record<string, string>;
        annotations?: Record<string, string>;
        finalizers?: string[];
      };
      spec: { externalName: string };
    };
    const live = async () => (await t.cluster.fetch('GET', path)).body as Svc;
    const stripped = await live();
    delete stripped.metadata.labels['app.kubernetes.io/managed-by'];
    expect((await t.cluster.fetch('PUT', path, stripped)).status).toBe(200);
    const relabel = (o: Svc): Svc => {
      o.metadata.labels['endpoint-binder.io/state'] = 'left-behind';
      o.metadata.annotations = { ...o.metadata.annotations, 'endpoint-binder.io/reason': 'lost managed-by' };
      return o;
    };
    const refusals: Array<[string, (o: Svc) => void]> = [
      ['its target', (o) => (o.spec.externalName = 'evil.example.com')],
      ['another label', (o) => (o.metadata.labels['team'] = 'x')],
      ['a finalizer', (o) => (o.metadata.finalizers = ['example.com/hold'])],
    ];
    for (const [what, change] of refusals) {
      const o = relabel(await live());
      change(o);
      const r = await as('PUT', path, o);
      expect(r.status, `${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(403);
    }
    const r = await as('PUT', path, relabel(await live()));
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect((await live()).metadata.labels['endpoint-binder.io/state']).toBe('left-behind');
    expect((await as('DELETE', path)).status, 'still not ours to delete').toBe(403);
    await t.cluster.fetch('DELETE', path);
  });

  it(
    'a restart of every controller replica writes no Service (counted by the audit log)',
    async () => {
      const coordination = t.kubeConfig().makeApiClient(CoordinationV1Api);
      const holder = async () =>
        (await coordination.readNamespacedLease({ namespace: NAMESPACE, name: `${RELEASE}-controller` })).spec
          ?.holderIdentity ?? '';
      const before = await owned();
      const mark = t.cluster.audit().length;
      const old = (
        await core.listNamespacedPod({
          namespace: NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=controller',
        })
      ).items.map((p) => p.metadata?.name ?? '');
      expect(old.length, 'controller pods').toBe(2);
      await Promise.all(old.map((name) => core.deleteNamespacedPod({ namespace: NAMESPACE, name })));
      const leader = await waitFor(
        'a leader among the new pods',
        async () => {
          const h = await holder();
          return h && !old.some((o) => h.startsWith(o)) ? h : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      // Not a fixed sleep (under load the first sync may take longer): the new leader is ready,
      // that is caught up with its first sync, and then a resync interval (10 s) has passed.
      const url = await httpUrlOf(leader.replace(/_[0-9a-f]+$/, ''));
      await waitFor(
        `the new leader ${leader} ready at ${url}`,
        async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      await new Promise((r) => setTimeout(r, 11_000));
      const writes = serviceWrites(mark);
      expect(writes, `Service writes by ${leader} after the restart:\n${describeWrites(writes)}`).toEqual([]);
      const after = await owned();
      expect(after.map((s) => s.metadata?.resourceVersion).sort()).toEqual(
        before.map((s) => s.metadata?.resourceVersion).sort(),
      );
    },
    budget(180_000),
  );

  it(
    'kill -9 of the leader, again and again during a 200-endpoint burst, leaves nothing broken or orphaned',
    async () => {
      const BURST = 200;
      const ns = 'pother';
      const coordination = t.kubeConfig().makeApiClient(CoordinationV1Api);
      const leaderPod = async (): Promise<string> =>
        (
          (await coordination.readNamespacedLease({ namespace: NAMESPACE, name: `${RELEASE}-controller` }))
            .spec?.holderIdentity ?? ''
        ).replace(/_[0-9a-f]+$/, '');
      const ids: string[] = [];
      let created = 0;
      const creating = (async () => {
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (created < BURST) {
              const i = created++;
              const ep = await t.mock.client.endpoints.create({
                url: `tcp://burst-${i}.${ns}:${7100 + (i % 50)}`,
                bindings: ['kubernetes'],
                upstream_url: t.echoUpstream,
              });
              ids.push(ep.id);
            }
          }),
        );
      })();
      // SIGKILL whichever controller process leads, every 1.5 s, until ten leaders died (a
      // replacement must first take the Lease), while the burst goes on.
      const kills: string[] = [];
      const deadline = Date.now() + 120_000;
      while (kills.length < 10 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1500));
        const pod = await leaderPod().catch(() => '');
        const pid = pod ? t.agent.pid(pod) : undefined;
        if (pid === undefined) continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          continue; // it exited between the look-up and the kill
        }
        kills.push(pod);
      }
      await creating;
      expect(kills.length, `leaders killed: ${kills.join(', ')}`).toBe(10);
      const want = new Set(ids);
      const internals = async () =>
        (await owned()).filter((s) => s.metadata?.labels?.[ROLE_LABEL] === ROLE_INTERNAL);
      const problems = async (): Promise<string[]> => {
        const services = await internals();
        const byId = new Map(
          services.map((s) => [s.metadata?.annotations?.[ENDPOINT_ID_ANNOTATION] ?? '', s]),
        );
        const out: string[] = [];
        for (const id of want) {
          const svc = byId.get(id);
          if (!svc) out.push(`${id}: no internal Service`);
          else if (svc.metadata?.labels?.[STATE_LABEL] !== 'projected')
            out.push(`${id}: state ${svc.metadata?.labels?.[STATE_LABEL]}`);
        }
        const aliases = (await owned()).filter((s) => s.metadata?.namespace === ns);
        if (aliases.length !== BURST) out.push(`${aliases.length} aliases in ${ns}, not ${BURST}`);
        return out;
      };
      let last: string[] = [];
      await waitFor(
        'every burst endpoint projected after the kills',
        async () => {
          last = await problems();
          return last.length === 0 ? true : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 2000 },
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${last.slice(0, 20).join('\n')}`, { cause: err });
      });
      // No port serves two URLs: every internal Service's targetPorts are its own.
      const ports = new Map<number, string>();
      const shared: string[] = [];
      for (const s of await internals())
        for (const p of s.spec?.ports ?? []) {
          const port = Number(p.targetPort);
          const other = ports.get(port);
          if (other && other !== s.metadata?.name) shared.push(`${port}: ${other} and ${s.metadata?.name}`);
          ports.set(port, s.metadata?.name ?? '');
        }
      expect(shared, 'forwarder ports named by two internal Services').toEqual([]);
      // Deleting them leaves no orphan.
      for (const id of ids) await t.mock.client.endpoints.delete(id);
      await waitFor(
        'the burst Services gone',
        async () => {
          const left = (await owned()).filter(
            (s) =>
              s.metadata?.namespace === ns ||
              want.has(s.metadata?.annotations?.[ENDPOINT_ID_ANNOTATION] ?? ''),
          );
          last = left.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);
          return left.length === 0 ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 2000 },
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${last.slice(0, 20).join('\n')}`, { cause: err });
      });
    },
    budget(420_000),
  );

  it(
    'a truncated listing deletes nothing',
    async () => {
      const before = (await owned()).length;
      const mark = t.cluster.audit().length;
      const served = t.proxy.pagesServed;
      let truncated = 0;
      // The next listing's first page loses half its endpoints and says it is the last one.
      t.proxy.rewrite((page, index) => {
        if (truncated > 0 || index !== 0) return page;
        truncated++;
        return { ...page, endpoints: page.endpoints.slice(0, ENDPOINTS / 2), next_page_uri: null };
      });
      await waitFor(
        'the truncated listing and two more',
        async () => (t.proxy.pagesServed >= served + 3 && truncated ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 500,
        },
      );
      t.proxy.rewrite(undefined);
      const deletes = serviceWrites(mark).filter((e) => e.verb === 'delete');
      expect(deletes, describeWrites(deletes)).toEqual([]);
      expect((await owned()).length).toBe(before);
    },
    budget(120_000),
  );

  it(
    "a namespace's opt-out removes its aliases; opting in again brings them back",
    async () => {
      const label = (value: string | null) =>
        t.cluster.fetch('PATCH', `/api/v1/namespaces/${APPS}`, {
          metadata: { labels: { 'endpoint-binder.io/aliases': value } },
        });
      expect(await aliasesIn(APPS)).toBe(ENDPOINTS);
      expect((await label('disabled')).status, 'label the namespace').toBe(200);
      await waitFor('the aliases gone', async () => ((await aliasesIn(APPS)) === 0 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 500,
      });
      expect((await label(null)).status, 'unlabel the namespace').toBe(200);
      await waitFor(
        'the aliases back',
        async () => ((await aliasesIn(APPS)) === ENDPOINTS ? true : undefined),
        {
          timeoutMs: 30_000,
          intervalMs: 500,
        },
      );
    },
    budget(90_000),
  );

  it(
    "`endpoint-binder check` passes from an admin kubeconfig and with the controller's own token",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'eb-real-check-'));
      const cm = await core.readNamespacedConfigMap({
        namespace: NAMESPACE,
        name: `${RELEASE}-endpoint-binder-controller`,
      });
      const config = join(dir, 'controller.yaml');
      writeFileSync(config, cm.data?.['controller.yaml'] ?? '');
      // The ingress line dials as the forwarder does: with the forwarder's config (plain here).
      const fwd = await core.readNamespacedConfigMap({
        namespace: NAMESPACE,
        name: `${RELEASE}-endpoint-binder-forwarder`,
      });
      const authtokenFile = join(dir, 'AUTHTOKEN');
      writeFileSync(authtokenFile, ACME_AUTHTOKEN);
      const forwarderConfig = join(dir, 'forwarder.yaml');
      writeFileSync(
        forwarderConfig,
        (fwd.data?.['forwarder.yaml'] ?? '').replace(
          /^authtokenFile: .*$/m,
          `authtokenFile: ${authtokenFile}`,
        ),
      );
      const token = await t.cluster.serviceAccountToken(NAMESPACE, `${RELEASE}-endpoint-binder-controller`);
      const kubeconfigs = {
        controller: join(dir, 'controller.kubeconfig'),
        admin: join(dir, 'admin.kubeconfig'),
      };
      t.cluster.writeKubeconfig(kubeconfigs.controller, token);
      t.cluster.writeKubeconfig(kubeconfigs.admin);
      // check reads each controller's /status at its pod IP, as in a cluster (the API server's
      // pod proxy, its fallback, refuses a loopback pod IP): no --controller-url.
      const check = (kc: string) =>
        exec(
          process.execPath,
          [
            'bin/endpoint-binder.js',
            'check',
            '--config',
            config,
            '--forwarder-config',
            forwarderConfig,
            '--kubeconfig',
            kc,
          ],
          {
            timeoutMs: 120_000,
            env: {
              ...process.env,
              ENDPOINT_BINDER_API_KEY: t.mock.key,
              ENDPOINT_BINDER_AUTHTOKEN: ACME_AUTHTOKEN,
              POD_NAMESPACE: NAMESPACE,
            },
          },
        );
      const admin = await check(kubeconfigs.admin);
      expect(
        admin.code,
        `check from an admin kubeconfig exited ${admin.code}:\n${admin.stdout}\n${admin.stderr}`,
      ).toBe(0);
      expect(admin.stdout).not.toContain('✗');
      // With the controller's own token, as in its pod (NOTES' first command): every line holds,
      // the forwarder pods' too (the chart lets the controller list pods in its namespace).
      const own = await check(kubeconfigs.controller);
      expect(
        own.code,
        `check with the controller's token exited ${own.code}:\n${own.stdout}\n${own.stderr}`,
      ).toBe(0);
      expect(own.stdout).not.toContain('✗');
      expect(own.stdout).toMatch(/✓ .*may get, list, watch, create, update, delete services/);
      expect(own.stdout).toMatch(/✓ forwarder pods ready/);
    },
    budget(180_000),
  );
  // #27 item 5: the DATA PATH column on the real server with no flag. The controller lists the
  // forwarder pods through the API server and reads each one's /status at podIP:http (the node
  // agent gives each pod its own loopback IP, as a CNI gives each pod its own address).
  it(
    "`endpoint-binder status` shows each endpoint's data path as the forwarder pods saw it, and unknown while none can be read",
    async () => {
      const coordination = t.kubeConfig().makeApiClient(CoordinationV1Api);
      const leader = (
        (await coordination.readNamespacedLease({ namespace: NAMESPACE, name: `${RELEASE}-controller` })).spec
          ?.holderIdentity ?? ''
      ).replace(/_[0-9a-f]+$/, '');
      // `kubectl exec <leader> -- endpoint-binder status` asks the controller in its own pod; here
      // the leader's pod address is where it listens.
      const url = await httpUrlOf(leader);
      const status = async (): Promise<string> => {
        const r = await exec(process.execPath, ['bin/endpoint-binder.js', 'status', '--url', url], {
          timeoutMs: 60_000,
        });
        if (r.code !== 0) throw new Error(`status exited ${r.code}: ${r.stderr}`);
        return r.stdout;
      };
      /** The table once `holds` passes for it; a timeout names what was missing and shows the table. */
      const tableWhere = (what: string, holds: (table: string) => string[]) =>
        waitFor(
          what,
          async () => {
            const table = await status();
            const missing = holds(table);
            if (missing.length) throw new Error(`${missing.join('; ')}\n${table}`);
            return table;
          },
          { timeoutMs: 90_000, intervalMs: 2000 },
        );
      const rowOf = (table: string, id: string): string =>
        table.split('\n').find((line) => line.includes(id)) ?? `(no row for ${id})`;

      const refusing = await freePort();
      const dead = await t.mock.client.endpoints.create({
        url: `tcp://dead.${APPS}:7000`,
        bindings: ['kubernetes'],
        upstream_url: `tcp://127.0.0.1:${refusing}`,
      });
      const forwarders = (
        await core.listNamespacedPod({
          namespace: NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=forwarder',
        })
      ).items.map((p) => p.metadata?.name ?? '');
      let stopped: number | undefined;
      try {
        // One connection through every endpoint, from a client pod's side (alias → Service → a
        // ready forwarder pod's IP), and one to the endpoint whose upstream refuses.
        for (let i = 0; i < ENDPOINTS; i++)
          await waitFor(
            `an echo through svc-${i}.${APPS}:7000`,
            async () => ((await t.exchange(`svc-${i}.${APPS}`, 7000, 'ping')) === 'ping' ? true : undefined),
            { timeoutMs: 60_000, intervalMs: 500 },
          );
        const okCell = /\bok \d+s ago/;
        const refusedCell = /upstream refused \(ERR_730\) \d+s ago/;
        await waitFor(
          `a connection to dead.${APPS}:7000 ended by the forwarder`,
          async () => {
            // Until the alias and the listener exist the attempt fails before reaching the forwarder.
            await t.exchange(`dead.${APPS}`, 7000, 'ping').catch((err: { code?: string }) => {
              if (err.code !== 'ECONNRESET') throw err;
            });
            return true;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        const table = await tableWhere('every DATA PATH cell a fact the forwarders observed', (tbl) => [
          ...(/DATA PATH/.test(tbl) ? [] : ['no DATA PATH column']),
          ...endpointIds.flatMap((id) =>
            okCell.test(rowOf(tbl, id)) ? [] : [`${id} not ok: ${rowOf(tbl, id)}`],
          ),
          ...(refusedCell.test(rowOf(tbl, dead.id))
            ? []
            : [`${dead.id} not refused: ${rowOf(tbl, dead.id)}`]),
        ]);
        expect(table, 'no cell or header line is unknown').not.toMatch(/unknown/);

        // A forwarder that cannot be read (its process stopped: no answer within the read's
        // timeout) makes the cells unknown, never a stale ok, and the header names it.
        expect(forwarders.length, `forwarder pods: ${forwarders.join(', ')}`).toBe(1);
        const pid = t.agent.pid(forwarders[0]!);
        expect(pid, `the forwarder ${forwarders[0]} runs here`).toBeDefined();
        process.kill(pid!, 'SIGSTOP');
        stopped = pid;
        await tableWhere('the cells unknown while the only forwarder does not answer', (tbl) => [
          ...(tbl.includes(`data path: forwarder pod ${forwarders[0]} unknown (no answer within`)
            ? []
            : ['no header line naming the forwarder']),
          ...[...endpointIds, dead.id].flatMap((id) =>
            rowOf(tbl, id).includes('unknown (no forwarder read)') ? [] : [`${id}: ${rowOf(tbl, id)}`],
          ),
        ]);
        process.kill(pid!, 'SIGCONT');
        stopped = undefined;
        await tableWhere('the cells facts again once the forwarder answers', (tbl) =>
          endpointIds.flatMap((id) => (okCell.test(rowOf(tbl, id)) ? [] : [`${id}: ${rowOf(tbl, id)}`])),
        );
      } finally {
        if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
        await t.mock.client.endpoints.delete(dead.id);
        await waitFor(
          "the dead endpoint's Services gone",
          async () =>
            (await owned()).some((s) => s.metadata?.annotations?.[ENDPOINT_ID_ANNOTATION] === dead.id)
              ? undefined
              : true,
          { timeoutMs: 60_000, intervalMs: 1000 },
        );
      }
    },
    budget(300_000),
  );
  it(
    "a delete another controller's finalizer holds keeps the internal Service listed as ours until it is gone",
    async () => {
      const ep = await t.mock.client.endpoints.create({
        url: `tcp://held.${APPS}:7000`,
        bindings: ['kubernetes'],
        upstream_url: t.echoUpstream,
      });
      const internalOf = async (): Promise<V1Service | undefined> =>
        (await owned()).find(
          (s) =>
            s.metadata?.annotations?.[ENDPOINT_ID_ANNOTATION] === ep.id &&
            s.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL,
        );
      const listed = async (): Promise<string> =>
        (
          await core.readNamespacedConfigMap({
            namespace: NAMESPACE,
            name: installRecordName({ release: RELEASE, operatorNamespace: NAMESPACE }),
          })
        ).data?.[INTERNAL_SERVICES_KEY] ?? '';
      const internal = await waitFor('the internal Service of held', internalOf, {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      const { name, uid } = internal.metadata!;
      await waitFor(`its uid ${uid} in the install record`, async () =>
        (await listed()).includes(uid!) ? true : undefined,
      );
      const path = `/api/v1/namespaces/${NAMESPACE}/services/${name}`;
      const hold = await t.cluster.fetch('PATCH', path, { metadata: { finalizers: ['example.com/hold'] } });
      expect(hold.status, 'the admin adds a finalizer').toBe(200);
      try {
        await t.mock.client.endpoints.delete(ep.id);
        await waitFor('the delete accepted and held', async () =>
          (await internalOf())?.metadata?.deletionTimestamp ? true : undefined,
        );
        // Resyncs run every 10 s: two of them pass while the Service waits, and it stays listed.
        await new Promise((r) => setTimeout(r, 21_000));
        expect(await internalOf(), 'still there, held by the finalizer').toBeDefined();
        expect(await listed(), `uid ${uid} of the held Service`).toContain(uid!);
      } finally {
        const release = await t.cluster.fetch('PATCH', path, { metadata: { finalizers: null } });
        expect(release.status, 'the admin removes the finalizer').toBe(200);
      }
      await waitFor('the held Service gone once the finalizer is removed', async () =>
        (await internalOf()) ? undefined : true,
      );
    },
    budget(120_000),
  );
});
