import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { Agent, request } from 'undici';
import type { Loose } from '../kubesim/helpers.js';
// The pre-install config check is a hook Job nobody plays here; it has its own tests.
import { CHART, REQUIRED, find, helmTool, render, renderNotes, template, valuesFile } from './helm.js';
import { budget } from '../helpers/budget.js';

const NO_CHECK_HOOK = { ...REQUIRED, configCheck: { enabled: false } };

/**
 * The chart's fence (templates/fence.yaml) installed by the real helm into kubesim, which
 * evaluates ValidatingAdmissionPolicies with CEL: every request below is made with the
 * controller's (or the uninstall hook's) identity through impersonation, as a stolen token would.
 */
const kubectlTool = k8sTool('kubectl');
const skip = 'skip' in helmTool ? helmTool.skip : 'skip' in kubectlTool ? kubectlTool.skip : undefined;
if (skip) process.stdout.write(`fence tests skipped: ${skip}\n`);

const run = promisify(execFile);
const NS = 'ops';
const CONTROLLER = `system:serviceaccount:${NS}:eb-endpoint-binder-controller`;
const UNINSTALL = `system:serviceaccount:${NS}:eb-endpoint-binder-uninstall`;
const POLICY = `eb-endpoint-binder-${NS}-fence`;
const OURS = {
  'app.kubernetes.io/managed-by': 'endpoint-binder',
  'app.kubernetes.io/instance': 'eb',
  'endpoint-binder.io/operator-namespace': NS,
};

async function tool(path: string, args: string[], dir: string) {
  try {
    const { stdout, stderr } = await run(path, args, {
      timeout: budget(90_000),
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: dir,
        HELM_CACHE_HOME: join(dir, 'helm-cache'),
        HELM_CONFIG_HOME: join(dir, 'helm-config'),
        HELM_DATA_HOME: join(dir, 'helm-data'),
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A request to the TLS kubesim as its admin (who may impersonate), trusting its certificate. */
async function call(
  sim: Kubesim,
  agent: Agent,
  method: string,
  path: string,
  body?: unknown,
  opts: { headers?: Record<string, string>; contentType?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const res = await request(sim.url + path, {
    method: method as 'GET',
    dispatcher: agent,
    headers: {
      authorization: `Bearer ${sim.adminToken}`,
      'content-type': opts.contentType ?? 'application/json',
      ...opts.headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, body: parsed };
}

/** `helm install` of the chart as the tests here install it: defaults, no config-check hook. */
const installArgs = () => [
  'install',
  'eb',
  CHART,
  '-n',
  NS,
  '-f',
  valuesFile(NO_CHECK_HOOK),
  '--timeout',
  '60s',
];

describe.skipIf(skip !== undefined)('chart fence: the ValidatingAdmissionPolicy, enforced by kubesim', () => {
  let sim: Kubesim;
  let dir: string;
  let agent: Agent;
  const api = (
    _sim: Kubesim,
    method: string,
    path: string,
    body?: unknown,
    opts: { headers?: Record<string, string>; contentType?: string } = {},
  ) => call(sim, agent, method, path, body, opts);
  const kubeconfig = () => join(dir, 'kubeconfig.yaml');
  const helm = (args: string[]) =>
    tool((helmTool as { path: string }).path, ['--kubeconfig', kubeconfig(), ...args], dir);
  const kubectl = (args: string[]) =>
    tool(
      (kubectlTool as { path: string }).path,
      ['--kubeconfig', kubeconfig(), '--cache-dir', join(dir, 'cache'), ...args],
      dir,
    );
  const as = (user: string, method: string, path: string, body?: unknown) =>
    api(sim, method, path, body, { headers: { 'Impersonate-User': user } });
  const service = (
    ns: string,
    name: string,
    spec: Record<string, unknown>,
    labels?: Record<string, string>,
  ) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
    spec,
  });
  const alias = (ns: string, name: string) =>
    service(
      ns,
      name,
      { type: 'ExternalName', externalName: `ep-a.${NS}.svc.cluster.local` },
      { ...OURS, 'endpoint-binder.io/role': 'alias' },
    );
  const message = (r: { body: unknown }) => (r.body as Loose).message as string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eb-fence-'));
    sim = await startKubesim({
      tls: true,
      initialNamespaces: ['default', 'kube-system', NS, 'apps'],
      namespaceFinalizeDelayMs: 20,
    });
    await sim.writeKubeconfig(kubeconfig());
    agent = new Agent({ connect: { ca: sim.caPem } });
    await api(sim, 'POST', '/api/v1/namespaces', {
      metadata: { name: 'quiet', labels: { 'endpoint-binder.io/aliases': 'disabled' } },
    });
    await api(
      sim,
      'POST',
      '/api/v1/namespaces/kube-system/services',
      service('kube-system', 'kube-dns', { type: 'ClusterIP', ports: [{ port: 53, protocol: 'UDP' }] }),
    );
    await api(
      sim,
      'POST',
      '/api/v1/namespaces/apps/services',
      service('apps', 'tenant', { type: 'ClusterIP', ports: [{ port: 80 }] }),
    );
    const installed = await helm(installArgs());
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
  }, budget(120_000));
  afterAll(async () => {
    await agent?.close();
    await sim?.stop();
  });

  it('refuses the controller rewriting kube-system/kube-dns, with the policy message', async () => {
    const live = (await api(sim, 'GET', '/api/v1/namespaces/kube-system/services/kube-dns')).body as Loose;
    live.spec.type = 'ExternalName';
    live.spec.externalName = 'evil.example.com';
    const r = await as(CONTROLLER, 'PUT', '/api/v1/namespaces/kube-system/services/kube-dns', live);
    expect(r.status).toBe(403);
    expect(message(r)).toBe(
      `services "kube-dns" is forbidden: ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: endpoint-binder fence: this Service does not carry the ownership labels of release eb in namespace ${NS} (app.kubernetes.io/managed-by=endpoint-binder, app.kubernetes.io/instance=eb, endpoint-binder.io/operator-namespace=${NS}); the operator may not change or delete it`,
    );
    // Even with our labels patched onto it by someone with patch rights, kube-system stays closed.
    live.metadata.labels = { ...OURS };
    const labelled = (
      await api(sim, 'PUT', '/api/v1/namespaces/kube-system/services/kube-dns', {
        ...live,
        spec: { ...live.spec, type: 'ClusterIP', externalName: undefined },
      })
    ).body as Loose;
    expect(labelled.metadata.labels).toMatchObject(OURS);
    const del = await as(CONTROLLER, 'DELETE', '/api/v1/namespaces/kube-system/services/kube-dns');
    expect(del.status).toBe(403);
    expect(message(del)).toContain(
      'endpoint-binder fence: namespace kube-system is closed to the operator by namespaces.deny (kube-*, openshift, openshift-*)',
    );
    const still = await api(sim, 'GET', '/api/v1/namespaces/kube-system/services/kube-dns');
    expect(still.status).toBe(200);
  });

  it('refuses deleting or changing a tenant Service without our labels', async () => {
    const del = await as(CONTROLLER, 'DELETE', '/api/v1/namespaces/apps/services/tenant');
    expect(del.status).toBe(403);
    expect(message(del)).toContain('this Service does not carry the ownership labels');
    // The uninstall hook has no rights outside its hook's lifetime (RBAC refuses it first).
    const un = await as(UNINSTALL, 'DELETE', '/api/v1/namespaces/apps/services/tenant');
    expect(un.status).toBe(403);
  });

  it('refuses a Service without our labels, externalIPs, a wrong type, an alias in a closed namespace', async () => {
    const bare = await as(
      CONTROLLER,
      'POST',
      '/api/v1/namespaces/apps/services',
      service('apps', 'bare', { type: 'ExternalName', externalName: 'x.example' }),
    );
    expect(bare.status).toBe(403);
    expect(message(bare)).toContain('a Service written by the operator must carry the ownership labels');

    const ext = await as(
      CONTROLLER,
      'POST',
      `/api/v1/namespaces/${NS}/services`,
      service(
        NS,
        'ext',
        { type: 'ClusterIP', ports: [{ port: 80 }], externalIPs: ['203.0.113.7'] },
        { ...OURS },
      ),
    );
    expect(ext.status).toBe(403);
    expect(message(ext)).toContain('spec.externalIPs must be empty');

    const lb = await as(
      CONTROLLER,
      'POST',
      `/api/v1/namespaces/${NS}/services`,
      service(NS, 'lb', { type: 'LoadBalancer', ports: [{ port: 80 }] }, { ...OURS }),
    );
    expect(lb.status).toBe(403);
    expect(message(lb)).toContain('spec.type must be ClusterIP in the operator namespace');
    const cip = await as(
      CONTROLLER,
      'POST',
      '/api/v1/namespaces/apps/services',
      service('apps', 'cip', { type: 'ClusterIP', ports: [{ port: 80 }] }, { ...OURS }),
    );
    expect(cip.status).toBe(403);

    const sys = await as(
      CONTROLLER,
      'POST',
      '/api/v1/namespaces/kube-system/services',
      alias('kube-system', 'metrics'),
    );
    expect(sys.status).toBe(403);
    expect(message(sys)).toContain('namespace kube-system is closed to the operator by namespaces.deny');
    const quiet = await as(CONTROLLER, 'POST', '/api/v1/namespaces/quiet/services', alias('quiet', 'web'));
    expect(quiet.status).toBe(403);
    expect(message(quiet)).toContain(
      'namespace quiet does not match namespaces.selector (endpoint-binder.io/aliases notin (disabled))',
    );
    const hookCreate = await as(UNINSTALL, 'POST', '/api/v1/namespaces/apps/services', alias('apps', 'hook'));
    expect(hookCreate.status).toBe(403);
  });

  it('accepts every write of ours: internal Service, alias, update, delete; an opt-out still lets us delete', async () => {
    const internal = service(
      NS,
      'ep-a',
      {
        type: 'ClusterIP',
        ports: [{ name: 'http-80', port: 80, targetPort: 10001 }],
        selector: { app: 'fwd' },
      },
      { ...OURS, 'endpoint-binder.io/role': 'internal' },
    );
    expect((await as(CONTROLLER, 'POST', `/api/v1/namespaces/${NS}/services`, internal)).status).toBe(201);
    expect(
      (await as(CONTROLLER, 'POST', '/api/v1/namespaces/apps/services', alias('apps', 'web'))).status,
    ).toBe(201);
    const live = (await api(sim, 'GET', '/api/v1/namespaces/apps/services/web')).body as Loose;
    live.metadata.annotations = { 'endpoint-binder.io/endpoint-ids': '["ep_a"]' };
    expect((await as(CONTROLLER, 'PUT', '/api/v1/namespaces/apps/services/web', live)).status).toBe(200);
    expect((await as(CONTROLLER, 'DELETE', '/api/v1/namespaces/apps/services/web')).status).toBe(200);
    // An alias in a namespace that opts out afterwards: the controller may still delete it.
    await api(sim, 'POST', '/api/v1/namespaces', { metadata: { name: 'later' } });
    expect(
      (await as(CONTROLLER, 'POST', '/api/v1/namespaces/later/services', alias('later', 'web'))).status,
    ).toBe(201);
    await api(
      sim,
      'PATCH',
      '/api/v1/namespaces/later',
      { metadata: { labels: { 'endpoint-binder.io/aliases': 'disabled' } } },
      { contentType: 'application/merge-patch+json' },
    );
    expect((await as(CONTROLLER, 'DELETE', '/api/v1/namespaces/later/services/web')).status).toBe(200);
    expect((await as(CONTROLLER, 'DELETE', `/api/v1/namespaces/${NS}/services/ep-a`)).status).toBe(200);
  });

  // #30: an alias of ours whose managed-by a tenant removed may only be marked left behind.
  it('lets the controller mark an alias that lost managed-by left-behind, and change nothing else of it', async () => {
    const path = '/api/v1/namespaces/apps/services/lost';
    expect(
      (await as(CONTROLLER, 'POST', '/api/v1/namespaces/apps/services', alias('apps', 'lost'))).status,
    ).toBe(201);
    const stripped = (await api(sim, 'GET', path)).body as Loose;
    delete stripped.metadata.labels['app.kubernetes.io/managed-by'];
    stripped.metadata.labels['endpoint-binder.io/state'] = 'projected';
    expect((await api(sim, 'PUT', path, stripped)).status).toBe(200);
    const live = () => api(sim, 'GET', path).then((r) => r.body as Loose);
    const relabel = (o: Loose) => {
      o.metadata.labels['endpoint-binder.io/state'] = 'left-behind';
      o.metadata.annotations = { ...o.metadata.annotations, 'endpoint-binder.io/reason': 'lost managed-by' };
      return o;
    };
    const refusals: Array<[string, (o: Loose) => void]> = [
      ['its target', (o) => (o.spec.externalName = 'evil.example.com')],
      ['another label', (o) => (o.metadata.labels['team'] = 'x')],
      ['a finalizer', (o) => (o.metadata.finalizers = ['example.com/hold'])],
      ['the state to projected', (o) => (o.metadata.labels['endpoint-binder.io/state'] = 'projected')],
    ];
    for (const [what, change] of refusals) {
      const o = relabel(await live());
      change(o);
      const r = await as(CONTROLLER, 'PUT', path, o);
      expect({ what, status: r.status, message: message(r) }).toMatchObject({ what, status: 403 });
    }
    const r = await as(CONTROLLER, 'PUT', path, relabel(await live()));
    expect({ status: r.status, body: r.status === 200 ? '' : message(r) }).toEqual({ status: 200, body: '' });
    const after = await live();
    expect(after.metadata.labels['endpoint-binder.io/state']).toBe('left-behind');
    expect(after.spec.externalName).toBe(`ep-a.${NS}.svc.cluster.local`);
    // Still not ours: the controller may not delete it.
    expect((await as(CONTROLLER, 'DELETE', path)).status).toBe(403);
  });

  it('kubectl --as the controller sees the refusal as a user would', async () => {
    const r = await kubectl(['delete', 'service', 'tenant', '-n', 'apps', `--as=${CONTROLLER}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: endpoint-binder fence`,
    );
  });
});

describe.skipIf(skip !== undefined)('uninstall hook RBAC: hook resources only', () => {
  let sim: Kubesim;
  let dir: string;
  let agent: Agent;
  const kubeconfig = () => join(dir, 'kubeconfig.yaml');
  const helm = (args: string[]) =>
    tool((helmTool as { path: string }).path, ['--kubeconfig', kubeconfig(), ...args], dir);
  const canI = async (user: string, verb: string) => {
    const r = await tool(
      (kubectlTool as { path: string }).path,
      [
        '--kubeconfig',
        kubeconfig(),
        '--cache-dir',
        join(dir, 'cache'),
        'auth',
        'can-i',
        verb,
        'services',
        '-n',
        'apps',
        `--as=${user}`,
      ],
      dir,
    );
    return r.stdout.trim();
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eb-hook-rbac-'));
    sim = await startKubesim({
      tls: true,
      initialNamespaces: ['default', NS, 'apps'],
      namespaceFinalizeDelayMs: 20,
    });
    await sim.writeKubeconfig(kubeconfig());
    agent = new Agent({ connect: { ca: sim.caPem } });
  });
  afterAll(async () => {
    await agent?.close();
    await sim?.stop();
  });

  it(
    'the hook service account can touch no Service after install, while the hook runs it can, after uninstall it cannot',
    { timeout: budget(150_000) },
    async () => {
      const installed = await helm(installArgs());
      expect(installed.code, installed.stderr).toBe(0);
      expect(await canI(UNINSTALL, 'delete')).toBe('no');
      expect(await canI(UNINSTALL, 'update')).toBe('no');
      expect(await canI(CONTROLLER, 'create')).toBe('yes');

      // Play the Job controller: while helm waits for the pre-delete Job, its rights exist; then
      // report it Complete.
      const uninstalling = helm(['uninstall', 'eb', '-n', NS, '--wait', '--timeout', '60s']);
      let during = '';
      for (let i = 0; i < 400; i++) {
        const job = await call(
          sim,
          agent,
          'GET',
          `/apis/batch/v1/namespaces/${NS}/jobs/eb-endpoint-binder-uninstall`,
        );
        if (job.status === 200) {
          during = await canI(UNINSTALL, 'delete');
          const now = new Date().toISOString();
          const cond = (type: string) => ({
            type,
            status: 'True',
            lastProbeTime: now,
            lastTransitionTime: now,
          });
          const body = {
            ...(job.body as Loose),
            status: {
              conditions: [cond('SuccessCriteriaMet'), cond('Complete')],
              succeeded: 1,
              startTime: now,
              completionTime: now,
            },
          };
          const put = await call(
            sim,
            agent,
            'PUT',
            `/apis/batch/v1/namespaces/${NS}/jobs/eb-endpoint-binder-uninstall/status`,
            body,
          );
          expect(put.status).toBe(200);
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const done = await uninstalling;
      expect(done.code, done.stderr).toBe(0);
      expect(during).toBe('yes');
      expect(await canI(UNINSTALL, 'delete')).toBe('no');
      expect(await canI(UNINSTALL, 'update')).toBe('no');
    },
  );
});

describe.skipIf('skip' in helmTool)('chart fence: rendering', () => {
  it('is on by default and off with fence.enabled=false', async () => {
    const on = await render(REQUIRED);
    const policy = find(on, 'ValidatingAdmissionPolicy', POLICY);
    expect(policy['spec'].matchConditions[0].expression).toBe(
      `request.userInfo.username in ['${CONTROLLER}', '${UNINSTALL}']`,
    );
    expect(find(on, 'ValidatingAdmissionPolicyBinding', POLICY)['spec']).toEqual({
      policyName: POLICY,
      validationActions: ['Deny'],
    });
    const off = await render({ ...REQUIRED, fence: { enabled: false } });
    expect(off.some((o) => o.kind.startsWith('ValidatingAdmissionPolicy'))).toBe(false);
  });

  it('bindings.enabled false: the controller gets no Service or Namespace rights', async () => {
    const objs = await render({ ...REQUIRED, bindings: { enabled: false } });
    const role = find(objs, 'ClusterRole', `eb-endpoint-binder-${NS}-controller`);
    expect((role['rules'] as { resources: string[] }[]).flatMap((r) => r.resources)).toEqual(['events']);
  });

  it('the uninstall RBAC objects are pre-delete hooks, created before the Job and deleted after it', async () => {
    const objs = await render(REQUIRED);
    const hookRbac = objs.filter((o) => /Role/.test(o.kind) && o.metadata.name.includes('uninstall'));
    expect(hookRbac.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
    ]);
    for (const o of hookRbac)
      expect(o.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'pre-delete',
        'helm.sh/hook-weight': '-5',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
    expect(
      find(objs, 'Job', 'eb-endpoint-binder-uninstall').metadata.annotations?.['helm.sh/hook-weight'],
    ).toBe('0');
  });

  it.each(['controller', 'forwarder', 'uninstall'])(
    'refuses %s.serviceAccount.create false without a name (instead of binding rights to default)',
    async (component) => {
      const r = await template({ ...REQUIRED, [component]: { serviceAccount: { create: false } } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${component}.serviceAccount`);
      expect(r.stderr).toContain('name');
      const ok = await template({
        ...REQUIRED,
        [component]: { serviceAccount: { create: false, name: 'mine' } },
      });
      expect(ok.code, ok.stderr).toBe(0);
    },
  );

  it('NOTES say which namespaces are open, how tenants opt out, and whether the fence is on', async () => {
    const notes = await renderNotes(REQUIRED, { release: 'eb', namespace: NS });
    expect(notes).toContain(`denied by name: kube-*, openshift, openshift-*, and ${NS} itself`);
    expect(notes).toContain('a namespace must match: endpoint-binder.io/aliases notin (disabled)');
    expect(notes).toContain('kubectl label namespace NAME endpoint-binder.io/aliases=disabled');
    expect(notes).toContain(`Fence (ValidatingAdmissionPolicy eb-endpoint-binder-${NS}-fence): on`);
    expect(notes).toContain('namespace-denied');
    const optIn = await renderNotes(
      {
        ...REQUIRED,
        fence: { enabled: false },
        namespaces: {
          allow: ['kube-public'],
          selector: { matchLabels: { 'endpoint-binder.io/aliases': 'enabled' } },
        },
      },
      { release: 'eb', namespace: NS },
    );
    expect(optIn).toContain('(except kube-public)');
    expect(optIn).toContain('a namespace must match: endpoint-binder.io/aliases=enabled');
    expect(optIn).not.toContain('opt a namespace out');
    expect(optIn).toContain('OFF');
    const off = await renderNotes(
      { ...REQUIRED, bindings: { enabled: false } },
      { release: 'eb', namespace: NS },
    );
    // Bindings off: the cleanup hook applied the uninstall policy (issue #20); by hand only
    // when the hook is disabled.
    expect(off).toContain('post-upgrade hook Job eb-endpoint-binder-cleanup: deleted');
    expect(off).not.toContain('does not remove');
    expect(off).not.toContain('kubectl annotate svc');
    const offRetain = await renderNotes(
      { ...REQUIRED, bindings: { enabled: false }, uninstall: { policy: 'retain' } },
      { release: 'eb', namespace: NS },
    );
    expect(offRetain).toContain('kept, annotated endpoint-binder.io/orphaned');
    const offNoHook = await renderNotes(
      { ...REQUIRED, bindings: { enabled: false }, uninstall: { hook: { enabled: false } } },
      { release: 'eb', namespace: NS },
    );
    expect(offNoHook).toContain('no hook applied the uninstall policy');
    expect(offNoHook).toContain('kubectl annotate svc -A -l app.kubernetes.io/managed-by=endpoint-binder,');
  });

  it('follows namespaces: allow entries open a denied prefix, opt-in mode needs the label', async () => {
    const objs = await render({
      ...REQUIRED,
      namespaces: {
        allow: ['kube-public'],
        selector: { matchLabels: { 'endpoint-binder.io/aliases': 'enabled' } },
      },
    });
    const exprs = (
      find(objs, 'ValidatingAdmissionPolicy', POLICY)['spec'].validations as { expression: string }[]
    ).map((v) => v.expression);
    expect(
      exprs.some((e) =>
        e.includes("request.namespace == 'kube-public' || !(request.namespace.startsWith('kube-')"),
      ),
    ).toBe(true);
    expect(
      exprs.some((e) =>
        e.includes("namespaceObject.metadata.labels['endpoint-binder.io/aliases'] == 'enabled'"),
      ),
    ).toBe(true);
  });
});
