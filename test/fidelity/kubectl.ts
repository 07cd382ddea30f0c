import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { k8sTool } from '../helpers/k8s-tools.js';
import type { FidelityServer } from './server.js';
import { budget } from '../helpers/budget.js';

const run = promisify(execFile);

/** The real kubectl against the server: get (server-side columns), apply, auth can-i, delete. */
export function defineKubectl(server: FidelityServer): void {
  const tool = k8sTool('kubectl');
  const d = 'skip' in tool ? describe.skip : describe;
  d('kubectl', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eb-fidelity-kubectl-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const kubectl = async (args: string[], token?: string) => {
      const kubeconfig = join(dir, `${token ? 'sa' : 'admin'}.kubeconfig`);
      await server.writeKubeconfig(kubeconfig, token);
      if ('skip' in tool) throw new Error(tool.skip);
      try {
        const r = await run(tool.path, ['--kubeconfig', kubeconfig, ...args], { timeout: budget(60_000) });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      }
    };
    /** Columns of kubectl's table output, AGE blanked. */
    const table = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) =>
          l
            .trim()
            .split(/\s{2,}/)
            .map((c) => (/^\d+s$/.test(c) ? '<age>' : c)),
        );

    it('apply creates, reports unchanged and configured, and get prints the server columns', async () => {
      const ns = await server.namespace();
      const manifest = (port: number) => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${ns}
  labels: {app: web}
spec:
  selector: {app: web}
  ports: [{port: ${port}, name: http}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
data: {mode: fast}
`;
      const file = join(dir, `${ns}.yaml`);
      writeFileSync(file, manifest(80));
      const first = await kubectl(['apply', '-f', file]);
      expect(first, first.stderr).toMatchObject({ code: 0 });
      expect(first.stdout.trim().split('\n')).toEqual(['service/web created', 'configmap/settings created']);
      const again = await kubectl(['apply', '-f', file]);
      expect(again.stdout.trim().split('\n')).toEqual([
        'service/web unchanged',
        'configmap/settings unchanged',
      ]);
      writeFileSync(file, manifest(8080));
      const changed = await kubectl(['apply', '-f', file]);
      expect(changed.stdout.trim().split('\n')).toEqual([
        'service/web configured',
        'configmap/settings unchanged',
      ]);

      const ip = JSON.parse((await kubectl(['get', 'svc', 'web', '-n', ns, '-o', 'json'])).stdout).spec
        .clusterIP;
      const get = await kubectl(['get', 'svc', '-n', ns, '-o', 'wide']);
      expect(table(get.stdout)).toEqual([
        ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR'],
        ['web', 'ClusterIP', ip, '<none>', '8080/TCP', '<age>', 'app=web'],
      ]);
      const cms = await kubectl(['get', 'configmap', 'settings', '-n', ns]);
      expect(table(cms.stdout)).toEqual([
        ['NAME', 'DATA', 'AGE'],
        ['settings', '1', '<age>'],
      ]);
      const missing = await kubectl(['get', 'svc', 'nope', '-n', ns]);
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim()).toBe('Error from server (NotFound): services "nope" not found');
      const invalid = await kubectl(['create', 'service', 'clusterip', 'Bad_Name', '--tcp=80:80', '-n', ns]);
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toContain('is invalid: metadata.name: Invalid value: "Bad_Name"');
    });

    it('auth can-i and whoami with a ServiceAccount token; delete namespace', async () => {
      const ns = await server.namespace();
      await server.api('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'bot' } });
      const token = await server.serviceAccountToken(ns, 'bot');
      const no = await kubectl(['auth', 'can-i', 'list', 'services', '-n', ns], token);
      expect([no.code, no.stdout.trim()]).toEqual([1, 'no']);
      const who = await kubectl(['auth', 'whoami', '-o', 'json'], token);
      expect(JSON.parse(who.stdout).status.userInfo.username).toBe(`system:serviceaccount:${ns}:bot`);
      const yes = await kubectl([
        'auth',
        'can-i',
        'list',
        'services',
        '-n',
        ns,
        `--as=system:serviceaccount:${ns}:bot`,
        '--as-group=system:masters',
      ]);
      expect([yes.code, yes.stdout.trim()]).toEqual([0, 'yes']);
      const del = await kubectl(['delete', 'namespace', ns, '--wait=false']);
      expect(del.stdout.trim()).toBe(`namespace "${ns}" deleted`);
    });
  });
}
