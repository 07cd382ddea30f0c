import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { pollUntil } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

/**
 * The real kubectl 1.32 against kubesim, on what needs more than CRUD: OpenAPI (client-side
 * apply, server-side validation, explain), server-side printing (Tables) and protobuf bodies.
 */
const tool = k8sTool('kubectl');
if ('skip' in tool) process.stdout.write(`kubectl API server tests skipped: ${tool.skip}\n`);

const run = promisify(execFile);
let sim: Kubesim;
let baseArgs: string[];

async function kubectl(
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  if ('skip' in tool) throw new Error(tool.skip);
  const child = run(tool.path, [...baseArgs, ...args], { timeout: budget(30_000) });
  child.child.stdin?.end(input ?? '');
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Splits kubectl's column output into cells (columns are separated by at least two spaces). */
function table(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

const service = (name: string, port: number, state?: string) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: default
${state ? `  labels: {endpoint-binder.io/state: ${state}}\n` : ''}spec:
  selector: {app: ${name}}
  ports:
    - {name: http, port: ${port}, targetPort: 8080}
`;

describe.skipIf('skip' in tool)('kubectl against kubesim: OpenAPI, Tables, protobuf', () => {
  beforeAll(async () => {
    sim = await startKubesim({ tls: true });
    const dir = mkdtempSync(join(tmpdir(), 'eb-kubectl-api-'));
    await sim.writeKubeconfig(join(dir, 'kubeconfig.yaml'));
    // A private cache: discovery and OpenAPI documents of another kubesim on the same port never leak in.
    baseArgs = [
      '--kubeconfig',
      join(dir, 'kubeconfig.yaml'),
      '--cache-dir',
      join(dir, 'cache'),
      '--request-timeout=20s',
    ];
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('apply -f validates through the server and patches with the OpenAPI merge keys', async () => {
    const created = await kubectl(['apply', '-f', '-'], service('web', 80, 'projected'));
    expect(created.stderr).toBe('');
    expect(created.stdout.trim()).toBe('service/web created');

    const again = await kubectl(['apply', '-f', '-'], service('web', 81, 'projected'));
    // kubectl warns here when it cannot compute the patch from the OpenAPI document.
    expect(again.stderr).toBe('');
    expect(again.stdout.trim()).toBe('service/web configured');
    const got = JSON.parse((await kubectl(['get', 'svc', 'web', '-o', 'json'])).stdout);
    expect(got.spec.ports).toEqual([{ name: 'http', port: 81, protocol: 'TCP', targetPort: 8080 }]);

    const dry = await kubectl(['apply', '--dry-run=server', '-f', '-'], service('web', 82, 'projected'));
    expect(dry.stderr).toBe('');
    expect(dry.stdout.trim()).toBe('service/web configured (server dry run)');
    const still = JSON.parse((await kubectl(['get', 'svc', 'web', '-o', 'json'])).stdout);
    expect(still.spec.ports[0].port).toBe(81);
  });

  it('explain svc.spec.ports prints the fields of ServicePort', async () => {
    const res = await kubectl(['explain', 'svc.spec.ports']);
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain('KIND:       Service');
    expect(res.stdout).toContain('FIELD: ports <[]ServicePort>');
    expect(res.stdout).toMatch(/port\t<integer> -required-/);
    expect(res.stdout).toMatch(/targetPort\t</);
    expect(res.stdout).toMatch(/protocol\t<string>\n\s+enum: SCTP, TCP, UDP/);
    const lease = await kubectl(['explain', 'lease.spec.holderIdentity']);
    expect(lease.stdout).toContain('GROUP:      coordination.k8s.io');
    expect(lease.stdout).toContain('FIELD: holderIdentity <string>');
  });

  it('get svc -A -o wide prints the columns of a real server', async () => {
    await kubectl(['apply', '-f', '-'], service('api', 443));
    const res = await kubectl(['get', 'svc', '-A', '-o', 'wide']);
    expect(res.stderr).toBe('');
    const [header, ...rows] = table(res.stdout);
    expect(header).toEqual([
      'NAMESPACE',
      'NAME',
      'TYPE',
      'CLUSTER-IP',
      'EXTERNAL-IP',
      'PORT(S)',
      'AGE',
      'SELECTOR',
    ]);
    const api = rows.find((r) => r[1] === 'api');
    expect(api).toEqual([
      'default',
      'api',
      'ClusterIP',
      expect.stringMatching(/^10\.\d+\.\d+\.\d+$/),
      '<none>',
      '443/TCP',
      expect.stringMatching(/^\d+(s|m)/),
      'app=api',
    ]);

    const narrow = table((await kubectl(['get', 'svc', 'api'])).stdout);
    expect(narrow[0]).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
    expect(narrow[1]?.slice(0, 2)).toEqual(['api', 'ClusterIP']);

    const ns = table((await kubectl(['get', 'namespaces'])).stdout);
    expect(ns[0]).toEqual(['NAME', 'STATUS', 'AGE']);
    expect(ns.find((r) => r[0] === 'default')?.[1]).toBe('Active');
  });

  it('get svc -A -L adds the label column from the included object metadata', async () => {
    await kubectl(['apply', '-f', '-'], service('web', 81, 'projected'));
    await kubectl(['apply', '-f', '-'], service('api', 443));
    const res = await kubectl(['get', 'svc', '-A', '-L', 'endpoint-binder.io/state']);
    expect(res.stderr).toBe('');
    const lines = res.stdout.trimEnd().split('\n');
    const header = table(res.stdout)[0];
    expect(header).toEqual([
      'NAMESPACE',
      'NAME',
      'TYPE',
      'CLUSTER-IP',
      'EXTERNAL-IP',
      'PORT(S)',
      'AGE',
      'STATE',
    ]);
    const stateAt = lines[0]!.indexOf('STATE');
    const cell = (name: string) =>
      lines
        .find((l) => l.split(/\s+/)[1] === name)
        ?.slice(stateAt)
        .trim();
    expect(cell('web')).toBe('projected');
    expect(cell('api')).toBe('');
  });

  it('get events and kubectl events print events as on a cluster', async () => {
    const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const created = await kubectl(
      ['create', '-f', '-'],
      `apiVersion: v1
kind: Event
metadata: {name: web.1, namespace: default}
involvedObject: {kind: Service, name: web, namespace: default}
reason: Projected
message: bound to 3 endpoints
type: Normal
source: {component: endpoint-binder}
firstTimestamp: "${ago(30)}"
lastTimestamp: "${ago(10)}"
count: 3
`,
    );
    expect(created.stdout.trim()).toBe('event/web.1 created');
    const get = table((await kubectl(['get', 'events'])).stdout);
    expect(get[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    expect(get[1]).toEqual([
      expect.stringMatching(/^1\dm$/),
      'Normal',
      'Projected',
      'service/web',
      'bound to 3 endpoints',
    ]);
    const wide = table((await kubectl(['get', 'events', '-o', 'wide'])).stdout);
    expect(wide[0]).toEqual([
      'LAST SEEN',
      'TYPE',
      'REASON',
      'OBJECT',
      'SUBOBJECT',
      'SOURCE',
      'MESSAGE',
      'FIRST SEEN',
      'COUNT',
      'NAME',
    ]);
    const events = await kubectl(['events']);
    expect(events.stderr).toBe('');
    expect(events.stdout).toMatch(
      /1\dm \(x3 over 3\dm\)\s+Normal\s+Projected\s+Service\/web\s+bound to 3 endpoints/,
    );
  });

  it('create namespace and create service send protobuf, which kubesim decodes', async () => {
    const ns = await kubectl(['create', 'namespace', 'team-a']);
    expect(ns.stderr).toBe('');
    expect(ns.stdout.trim()).toBe('namespace/team-a created');
    expect((await kubectl(['get', 'ns', 'team-a', '-o', 'jsonpath={.status.phase}'])).stdout).toBe('Active');

    const svc = await kubectl([
      'create',
      'service',
      'clusterip',
      'backend',
      '--tcp=5678:8080',
      '-n',
      'team-a',
    ]);
    expect(svc.stderr).toBe('');
    expect(svc.stdout.trim()).toBe('service/backend created');
    const got = JSON.parse((await kubectl(['get', 'svc', 'backend', '-n', 'team-a', '-o', 'json'])).stdout);
    expect(got.spec.ports).toEqual([{ name: '5678-8080', port: 5678, protocol: 'TCP', targetPort: 8080 }]);
    expect(got.spec.selector).toEqual({ app: 'backend' });
  });

  it('helm validates a chart against the OpenAPI documents', async () => {
    const helm = k8sTool('helm');
    if ('skip' in helm) return;
    const dir = mkdtempSync(join(tmpdir(), 'eb-helm-'));
    mkdirSync(join(dir, 'chart', 'templates'), { recursive: true });
    writeFileSync(join(dir, 'chart', 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 0.1.0\n');
    writeFileSync(join(dir, 'chart', 'templates', 'svc.yaml'), service('{{ .Release.Name }}-svc', 80));
    const kubeconfig = baseArgs[1]!;
    const env = { ...process.env, HELM_CACHE_HOME: dir, HELM_CONFIG_HOME: dir, HELM_DATA_HOME: dir };
    const res = await run(
      helm.path,
      ['template', 'demo', join(dir, 'chart'), '--validate', '--kubeconfig', kubeconfig],
      {
        env,
        timeout: budget(30_000),
      },
    ).catch((err: { stdout?: string; stderr?: string }) => ({
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    }));
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain('name: demo-svc');
  });

  it('get -w streams new rows as a real server does', { timeout: budget(60_000) }, async () => {
    if ('skip' in tool) return;
    await kubectl(['create', 'namespace', 'watched']);
    const child = spawn(tool.path, [...baseArgs, 'get', 'svc', '-n', 'watched', '-w'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const waitFor = async (pred: () => boolean, what: string) =>
      pollUntil(
        `kubectl -w: ${what}`,
        () => (pred() ? true : out),
        (seen) => seen === true,
        {
          timeoutMs: 20_000,
          intervalMs: 100,
        },
      );
    try {
      await kubectl(['create', 'service', 'clusterip', 'early', '--tcp=80', '-n', 'watched']);
      await waitFor(() => out.includes('early'), 'initial row');
      await kubectl(['create', 'service', 'clusterip', 'late', '--tcp=81', '-n', 'watched']);
      await waitFor(() => out.includes('late'), 'row for the new service');
    } finally {
      child.kill();
    }
    const rows = table(out);
    expect(rows[0]).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
    expect(rows.find((r) => r[0] === 'late')?.slice(1, 2)).toEqual(['ClusterIP']);
    expect(rows.find((r) => r[0] === 'late')?.[4]).toBe('81/TCP');
    // Column headers are printed once.
    expect(rows.filter((r) => r[0] === 'NAME')).toHaveLength(1);
  });
});
