import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { budget } from '../helpers/budget.js';

/** The real kubectl (1.32, client-go) against kubesim: the strongest check that kubesim talks like an API server. */
const tool = k8sTool('kubectl');
if ('skip' in tool) process.stdout.write(`kubectl compatibility tests skipped: ${tool.skip}\n`);

const run = promisify(execFile);
let sim: Kubesim;
let kubeconfig: string;

async function kubectl(
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  if ('skip' in tool) throw new Error(tool.skip);
  const child = run(tool.path, ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args], {
    timeout: budget(20_000),
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const service = (port: number) => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
  labels: {app.kubernetes.io/managed-by: test}
spec:
  selector: {app: web}
  ports:
    - {name: http, port: ${port}, targetPort: 8080}
`;

describe.skipIf('skip' in tool)('kubectl against kubesim', () => {
  beforeAll(async () => {
    sim = await startKubesim({ tls: true });
    kubeconfig = join(mkdtempSync(join(tmpdir(), 'eb-kubectl-')), 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('lists namespaces through discovery', async () => {
    const res = await kubectl(['get', 'namespaces', '-o', 'name']);
    expect(res.stderr).toBe('');
    expect(res.stdout.split('\n')).toEqual(
      expect.arrayContaining(['namespace/default', 'namespace/kube-system']),
    );
  });

  it('applies, reads, re-applies and deletes a Service', async () => {
    const created = await kubectl(['apply', '--validate=false', '-f', '-'], service(80));
    expect(created.stdout.trim()).toBe('service/web created');

    const got = await kubectl(['get', 'service', 'web', '-n', 'default', '-o', 'json']);
    const svc = JSON.parse(got.stdout) as { spec: { clusterIP: string; ports: { port: number }[] } };
    expect(svc.spec.clusterIP).toMatch(/^10\.(9[6-9]|1[01][0-9])\.\d+\.\d+$/);
    expect(svc.spec.ports[0]!.port).toBe(80);

    const again = await kubectl(['apply', '--validate=false', '-f', '-'], service(81));
    expect(again.stdout.trim()).toBe('service/web configured');
    const after = JSON.parse((await kubectl(['get', 'service', 'web', '-o', 'json'])).stdout) as typeof svc;
    expect(after.spec.ports.map((p) => p.port)).toEqual([81]);
    expect(after.spec.clusterIP).toBe(svc.spec.clusterIP);

    const selected = await kubectl([
      'get',
      'services',
      '-l',
      'app.kubernetes.io/managed-by=test',
      '-o',
      'name',
    ]);
    expect(selected.stdout.trim()).toBe('service/web');

    const deleted = await kubectl(['delete', 'service', 'web']);
    expect(deleted.stdout.trim()).toBe('service "web" deleted');
    const gone = await kubectl(['get', 'service', 'web']);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('services "web" not found');
  });

  it('replaces a Service: creates a missing one, updates without a resourceVersion, refuses a stale one', async () => {
    const manifest = service(80).replace('name: web', 'name: swap');
    const created = await kubectl(['replace', '--validate=false', '-f', '-'], manifest);
    expect(created.stderr).toBe('');
    expect(created.stdout.trim()).toBe('service/swap replaced');
    const first = JSON.parse((await kubectl(['get', 'service', 'swap', '-o', 'json'])).stdout) as {
      metadata: { resourceVersion: string; generation?: number };
      spec: { clusterIP: string };
    };
    expect(first.metadata.generation).toBeUndefined();

    const replaced = await kubectl(
      ['replace', '--validate=false', '-f', '-'],
      service(90).replace('name: web', 'name: swap'),
    );
    expect(replaced.stderr).toBe('');
    expect(replaced.stdout.trim()).toBe('service/swap replaced');
    const second = JSON.parse((await kubectl(['get', 'service', 'swap', '-o', 'json'])).stdout) as {
      metadata: { resourceVersion: string };
      spec: { clusterIP: string; ports: { port: number }[] };
    };
    expect(second.spec.ports.map((p) => p.port)).toEqual([90]);
    expect(second.spec.clusterIP).toBe(first.spec.clusterIP);

    const stale = await kubectl(
      ['replace', '--validate=false', '-f', '-'],
      service(91)
        .replace('name: web', 'name: swap')
        .replace(
          'namespace: default',
          `namespace: default\n  resourceVersion: "${first.metadata.resourceVersion}"`,
        ),
    );
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain(
      'Operation cannot be fulfilled on services "swap": the object has been modified; please apply your changes to the latest version and try again',
    );
    await kubectl(['delete', 'service', 'swap']);
  });

  it('prints validation errors with the field paths of a real server', async () => {
    const bad = `apiVersion: v1
kind: Service
metadata: {name: Bad_Name, namespace: default}
spec: {type: ExternalName}
`;
    const res = await kubectl(['create', '--validate=false', '-f', '-'], bad);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('The Service "Bad_Name" is invalid');
    expect(res.stderr).toContain('metadata.name: Invalid value: "Bad_Name"');
    expect(res.stderr).toContain('spec.externalName: Required value');
  });

  it('refuses content in a missing namespace with NotFound', async () => {
    const res = await kubectl(
      ['apply', '--validate=false', '-n', 'nowhere', '-f', '-'],
      service(80).replace('namespace: default', 'namespace: nowhere'),
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('namespaces "nowhere" not found');
  });
});
