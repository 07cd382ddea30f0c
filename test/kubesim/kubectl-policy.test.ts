import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { budget } from '../helpers/budget.js';

/**
 * The real kubectl 1.32 and helm 3.17 against kubesim on what a chart's admission fence and an
 * operator's least-privilege setup need: ValidatingAdmissionPolicies installed from manifests and
 * refusing requests with the real message, impersonation (`--as`), `auth can-i` and `auth
 * whoami`, Event field selectors and `get all`.
 */
const kubectlTool = k8sTool('kubectl');
const helmTool = k8sTool('helm');
const skip = 'skip' in kubectlTool ? kubectlTool.skip : 'skip' in helmTool ? helmTool.skip : undefined;
if (skip) process.stdout.write(`kubectl policy tests skipped: ${skip}\n`);

const run = promisify(execFile);
let sim: Kubesim;
let dir: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function tool(path: string, args: string[], input?: string, env?: NodeJS.ProcessEnv): Promise<Result> {
  const child = run(path, args, { timeout: budget(60_000), ...(env ? { env } : {}) });
  child.child.stdin?.end(input ?? '');
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function kubectl(args: string[], input?: string, kubeconfig = join(dir, 'kubeconfig.yaml')): Promise<Result> {
  if ('skip' in kubectlTool) throw new Error(kubectlTool.skip);
  return tool(
    kubectlTool.path,
    ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), '--request-timeout=20s', ...args],
    input,
  );
}

function helm(args: string[]): Promise<Result> {
  if ('skip' in helmTool) throw new Error(helmTool.skip);
  return tool(helmTool.path, ['--kubeconfig', join(dir, 'kubeconfig.yaml'), ...args], undefined, {
    PATH: process.env['PATH'] ?? '',
    HOME: dir,
    HELM_CACHE_HOME: join(dir, 'helm-cache'),
    HELM_CONFIG_HOME: join(dir, 'helm-config'),
    HELM_DATA_HOME: join(dir, 'helm-data'),
  });
}

const CONTROLLER = 'system:serviceaccount:ops:eb-controller';

/** The fence as a chart would render it (policy + binding), selecting the controller's requests. */
const fence = (name: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE, UPDATE, DELETE]
        resources: [services]
  matchConditions:
    - name: controller
      expression: "request.userInfo.username == '${CONTROLLER}'"
  validations:
    - expression: "object == null || (has(object.metadata.labels) && 'app.kubernetes.io/managed-by' in object.metadata.labels && object.metadata.labels['app.kubernetes.io/managed-by'] == 'endpoint-binder')"
      message: services must carry app.kubernetes.io/managed-by=endpoint-binder
      reason: Forbidden
    - expression: "object == null || object.spec.type in ['ClusterIP', 'ExternalName']"
      messageExpression: "'type ' + object.spec.type + ' is not allowed'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${name}
  validationActions: [Deny]
`;

/** Lets the controller's ServiceAccount do anything with Services, so that only the policy refuses. */
const controllerRbac = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: services-all}
rules:
  - {apiGroups: [""], resources: [services], verbs: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: eb-controller-services}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: services-all}
subjects:
  - {kind: ServiceAccount, name: eb-controller, namespace: ops}
`;

describe.skipIf(skip !== undefined)('kubectl and helm against kubesim: policies, impersonation, auth', () => {
  beforeAll(async () => {
    sim = await startKubesim({ tls: true, initialNamespaces: ['default', 'kube-system', 'ops', 'apps'] });
    dir = mkdtempSync(join(tmpdir(), 'eb-kubectl-policy-'));
    await sim.writeKubeconfig(join(dir, 'kubeconfig.yaml'));
    const rbac = await kubectl(['apply', '-f', '-'], controllerRbac);
    if (rbac.code !== 0) throw new Error(rbac.stderr);
  }, budget(60_000));
  afterAll(async () => {
    await sim.stop();
  });

  it('kubectl apply installs a policy and binding; the controller is refused with the real message', async () => {
    const applied = await kubectl(['apply', '-f', '-'], fence('fence-kubectl'));
    expect(applied.stderr).toBe('');
    expect(applied.stdout.trim().split('\n')).toEqual([
      'validatingadmissionpolicy.admissionregistration.k8s.io/fence-kubectl created',
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/fence-kubectl created',
    ]);
    const rv = async () =>
      (
        await kubectl([
          'get',
          'validatingadmissionpolicy',
          'fence-kubectl',
          '-o',
          'jsonpath={.metadata.resourceVersion}',
        ])
      ).stdout;
    const before = await rv();
    // The re-apply patches the atomic resourceRules list (the live one carries the defaulted
    // scope), which changes nothing: no write, no new resourceVersion.
    const again = await kubectl(['apply', '-f', '-'], fence('fence-kubectl'));
    expect(again.stderr).toBe('');
    expect(again.stdout).toContain(
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/fence-kubectl unchanged',
    );
    expect(await rv()).toBe(before);

    const refused = await kubectl([
      'create',
      'service',
      'clusterip',
      'web',
      '--tcp=80:8080',
      '-n',
      'apps',
      `--as=${CONTROLLER}`,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `error: failed to create ClusterIP service: services "web" is forbidden: ValidatingAdmissionPolicy 'fence-kubectl' with binding 'fence-kubectl' denied request: services must carry app.kubernetes.io/managed-by=endpoint-binder`,
    );
    // Anyone else is not fenced.
    const admin = await kubectl(['create', 'service', 'clusterip', 'web', '--tcp=80:8080', '-n', 'apps']);
    expect(admin.stdout.trim()).toBe('service/web created');
    // An update by the controller of a Service it does not own... passes the first rule only with labels.
    const typed = await kubectl(
      ['apply', '-n', 'apps', `--as=${CONTROLLER}`, '-f', '-'],
      `apiVersion: v1
kind: Service
metadata: {name: np, labels: {app.kubernetes.io/managed-by: endpoint-binder}}
spec: {type: NodePort, ports: [{port: 80}]}
`,
    );
    expect(typed.code).toBe(1);
    expect(typed.stderr).toContain(
      `The services "np" is invalid: : ValidatingAdmissionPolicy 'fence-kubectl' with binding 'fence-kubectl' denied request: type NodePort is not allowed`,
    );

    const listed = await kubectl(['get', 'validatingadmissionpolicies']);
    expect(
      listed.stdout
        .split('\n')[0]
        ?.trim()
        .split(/\s{2,}/),
    ).toEqual(['NAME', 'VALIDATIONS', 'PARAMKIND', 'AGE']);
    expect(listed.stdout).toMatch(/fence-kubectl\s+2\s+<unset>\s+\d+s/);
    const bindings = await kubectl(['get', 'validatingadmissionpolicybindings']);
    expect(bindings.stdout).toMatch(/fence-kubectl\s+fence-kubectl\s+<unset>\s+\d+s/);
    await kubectl(['delete', '-f', '-'], fence('fence-kubectl'));
  });

  it('kubectl refuses a policy with a CEL syntax error, as the server reports it', async () => {
    const bad = fence('broken').replace(
      `object.spec.type in ['ClusterIP', 'ExternalName']"`,
      `object.spec.type in ['ClusterIP'"`,
    );
    const res = await kubectl(['apply', '-f', '-'], bad);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('The ValidatingAdmissionPolicy "broken" is invalid');
    expect(res.stderr).toContain(
      `spec.validations[1].expression: Invalid value: "object == null || object.spec.type in ['ClusterIP'": compilation failed: ERROR: <input>:1:`,
    );
  });

  it(
    'helm installs the policy and binding; the fence then refuses the controller',
    { timeout: budget(120_000) },
    async () => {
      const chart = join(dir, 'fence-chart');
      mkdirSync(join(chart, 'templates'), { recursive: true });
      writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: fence\nversion: 0.1.0\n');
      writeFileSync(join(chart, 'templates', 'fence.yaml'), fence('{{ .Release.Name }}-fence'));
      const installed = await helm(['install', 'eb', chart, '-n', 'ops', '--wait', '--timeout', '60s']);
      expect(installed.stderr).toBe('');
      expect(installed.stdout).toContain('STATUS: deployed');
      const got = await kubectl([
        'get',
        'validatingadmissionpolicy',
        'eb-fence',
        '-o',
        'jsonpath={.spec.failurePolicy} {.metadata.labels}',
      ]);
      expect(got.stdout).toContain('Fail');
      expect(got.stdout).toContain('"app.kubernetes.io/managed-by":"Helm"');

      // The same create as the controller, before and after the fence is uninstalled.
      const createAsController = () =>
        kubectl([
          'create',
          'service',
          'clusterip',
          'helm-web',
          '--tcp=80:8080',
          '-n',
          'apps',
          `--as=${CONTROLLER}`,
        ]);
      const refused = await createAsController();
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `services "helm-web" is forbidden: ValidatingAdmissionPolicy 'eb-fence' with binding 'eb-fence' denied request: services must carry app.kubernetes.io/managed-by=endpoint-binder`,
      );
      const uninstalled = await helm(['uninstall', 'eb', '-n', 'ops', '--wait']);
      expect(uninstalled.code).toBe(0);
      const after = await createAsController();
      expect(after.stdout.trim()).toBe('service/helm-web created');
    },
  );

  it('auth can-i answers yes or no with the exit codes of a real server, also with --as', async () => {
    const yes = await kubectl(['auth', 'can-i', 'create', 'services', '-n', 'x']);
    expect([yes.code, yes.stdout.trim()]).toEqual([0, 'yes']);
    const sa = 'system:serviceaccount:ops:reader';
    const no = await kubectl(['auth', 'can-i', 'create', 'services', '-n', 'x', `--as=${sa}`]);
    expect([no.code, no.stdout.trim()]).toEqual([1, 'no']);
    const granted = await kubectl(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: svc-writer, namespace: x}
rules: [{apiGroups: [""], resources: [services], verbs: [create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: svc-writer, namespace: x}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: svc-writer}
subjects: [{kind: ServiceAccount, name: reader, namespace: ops}]
`,
    );
    // The namespace x does not exist: RBAC objects in it cannot be created.
    expect(granted.stderr).toContain('namespaces "x" not found');
    await kubectl(['create', 'namespace', 'x']);
    await kubectl(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: svc-writer, namespace: x}
rules: [{apiGroups: [""], resources: [services], verbs: [create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: svc-writer, namespace: x}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: svc-writer}
subjects: [{kind: ServiceAccount, name: reader, namespace: ops}]
`,
    );
    const now = await kubectl(['auth', 'can-i', 'create', 'services', '-n', 'x', `--as=${sa}`]);
    expect([now.code, now.stdout.trim()]).toEqual([0, 'yes']);
    const elsewhere = await kubectl(['auth', 'can-i', 'create', 'services', '-n', 'apps', `--as=${sa}`]);
    expect([elsewhere.code, elsewhere.stdout.trim()]).toEqual([1, 'no']);
    // The review as a manifest, as JSON. kubectl leaves validation to the server only for kinds
    // with a PATCH operation, so a review would need the protobuf /openapi/v2: --validate=false.
    const created = await kubectl(
      [
        'create',
        '--validate=false',
        '-o',
        'jsonpath={.status.allowed} {.status.reason}',
        `--as=${sa}`,
        '-f',
        '-',
      ],
      `apiVersion: authorization.k8s.io/v1
kind: SelfSubjectAccessReview
spec: {resourceAttributes: {verb: create, resource: services, namespace: x}}
`,
    );
    expect(created.stderr).toBe('');
    expect(created.stdout).toBe(
      'true RBAC: allowed by RoleBinding "svc-writer/x" of Role "svc-writer" to ServiceAccount "reader/ops"',
    );
    const list = await kubectl(['auth', 'can-i', '--list', '-n', 'x', `--as=${sa}`]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^services\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(list.stdout).toMatch(
      /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m,
    );
  });

  it('auth whoami shows the user, and the impersonated one with --as', async () => {
    const me = await kubectl(['auth', 'whoami']);
    expect(
      me.stdout
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s{2,}/)),
    ).toEqual([
      ['ATTRIBUTE', 'VALUE'],
      ['Username', 'kubesim-admin'],
      ['Groups', '[system:masters system:authenticated]'],
    ]);
    const sa = await kubectl(['auth', 'whoami', '--as=system:serviceaccount:ops:reader']);
    expect(sa.stdout).toMatch(/Username\s+system:serviceaccount:ops:reader/);
    expect(sa.stdout).toMatch(
      /Groups\s+\[system:serviceaccounts system:serviceaccounts:ops system:authenticated\]/,
    );
    const grouped = await kubectl(['auth', 'whoami', '--as=jane', '--as-group=devs', '-o', 'json']);
    expect(JSON.parse(grouped.stdout).status.userInfo).toEqual({
      username: 'jane',
      groups: ['devs', 'system:authenticated'],
    });
  });

  it('--as without the impersonate right is refused with the real 403', async () => {
    await kubectl(['create', 'serviceaccount', 'plain', '-n', 'ops']);
    const kc = join(dir, 'plain.kubeconfig');
    await sim.writeKubeconfig(kc, sim.serviceAccountToken('ops', 'plain'));
    const res = await kubectl(['get', 'services', '-n', 'ops', '--as=jane'], undefined, kc);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'Error from server (Forbidden): users "jane" is forbidden: User "system:serviceaccount:ops:plain" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  it('get all lists the kinds in the `all` category, as on a cluster', async () => {
    await kubectl(['create', 'namespace', 'everything']);
    await kubectl(['create', 'service', 'clusterip', 'web', '--tcp=80:8080', '-n', 'everything']);
    // Typed generators of Deployments and Jobs send protobuf, which kubesim only speaks for a few kinds.
    const workloads = await kubectl(
      ['apply', '-n', 'everything', '-f', '-'],
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27"}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: busybox, image: "busybox:1.36"}]
`,
    );
    expect(workloads.stderr).toBe('');
    await kubectl(['create', 'configmap', 'not-in-all', '-n', 'everything']);
    const res = await kubectl(['get', 'all', '-n', 'everything']);
    expect(res.stderr).toBe('');
    const blocks = res.stdout.trim().split(/\n\s*\n/);
    expect(
      blocks.map((b) =>
        b
          .split('\n')[0]
          ?.trim()
          .split(/\s{2,}/),
      ),
    ).toEqual([
      ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'],
      ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'],
      ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE'],
    ]);
    expect(res.stdout).toMatch(/^service\/web\s+ClusterIP\s+10\.\S+\s+<none>\s+80\/TCP\s+\S+$/m);
    expect(res.stdout).toMatch(/^deployment\.apps\/web\s+0\/1\s+0\s+0\s+\S+$/m);
    expect(res.stdout).toMatch(/^job\.batch\/once\s+Running\s+0\/1\s+\S+$/m);
    expect(res.stdout).not.toContain('not-in-all');
    const wide = await kubectl(['get', 'deployments', '-n', 'everything', '-o', 'wide']);
    expect(wide.stdout).toMatch(/web\s+0\/1\s+0\s+0\s+\S+\s+nginx\s+nginx:1\.27\s+app=web/);
    expect((await kubectl(['get', 'all', '-n', 'nothing-here'])).stderr.trim()).toBe(
      'No resources found in nothing-here namespace.',
    );
  });

  it('event field selectors as a real server supports them', async () => {
    const event = (name: string, kind: string, reason: string, type: string) => `apiVersion: v1
kind: Event
metadata: {name: ${name}, namespace: ops}
involvedObject: {kind: ${kind}, name: web, namespace: ops, apiVersion: v1, fieldPath: spec.ports}
reason: ${reason}
type: ${type}
message: m
source: {component: endpoint-binder}
`;
    await kubectl(
      ['apply', '-f', '-'],
      [event('e1', 'Service', 'Projected', 'Normal'), event('e2', 'Pod', 'Failed', 'Warning')].join('---\n'),
    );
    const names = async (selector: string) =>
      (
        await kubectl(['get', 'events', '-n', 'ops', '--field-selector', selector, '-o', 'name'])
      ).stdout.trim();
    expect(await names('involvedObject.kind=Service')).toBe('event/e1');
    expect(await names('involvedObject.kind=Service,reason=Projected,type=Normal')).toBe('event/e1');
    expect(await names('type=Warning')).toBe('event/e2');
    expect(
      await names(
        'involvedObject.fieldPath=spec.ports,involvedObject.apiVersion=v1,involvedObject.kind!=Service',
      ),
    ).toBe('event/e2');
    expect(await names('source=endpoint-binder,involvedObject.name=web,involvedObject.namespace=ops')).toBe(
      'event/e1\nevent/e2',
    );
    const bad = await kubectl(['get', 'events', '-n', 'ops', '--field-selector', 'message=m']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe(
      'Error from server (BadRequest): Unable to find "/v1, Resource=events" that match label selector "", field selector "message=m": field label not supported: message',
    );
  });
});
