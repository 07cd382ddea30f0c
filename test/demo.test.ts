import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers/cli.js';
import { budget } from './helpers/budget.js';

/** `npm start` runs `endpoint-binder demo`; `--once` is the same script, ending with its verdict. */
describe('demo --once (what npm start shows)', () => {
  it('projects the sample endpoints, carries HTTP and TCP through the forwarder, and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eb-demo-'));
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    const child = spawn(process.execPath, [CLI, 'demo', '--once', '--kubeconfig', kubeconfig], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), budget(120_000));
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(err).toBe('');
    expect(code, out).toBe(0);
    expect(out).toContain('Every step worked.');
    expect(out).not.toContain('✗');
    expect(out.match(/✓ ok/g)).toHaveLength(6);
    // kubectl-style listing with the state label column, and both Services of the web endpoint
    expect(out).toMatch(/NAMESPACE\s+NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+STATE/);
    expect(out).toMatch(
      /demo\s+web\s+ExternalName\s+<none>\s+ep-[a-z0-9]+\.endpoint-binder\.svc\.cluster\.local\s+80\/TCP/,
    );
    expect(out).toMatch(
      /endpoint-binder\s+ep-[a-z0-9]+\s+ClusterIP\s+10\.\d+\.\d+\.\d+\s+<none>\s+7000\/TCP\s+\S+\s+projected/,
    );
    // the status table names every state the samples are in
    expect(out).toMatch(/http:\/\/api\.later:80\s+namespace-missing/);
    expect(out).toMatch(/http:\/\/secret\.private:80\s+not-selected/);
    // the data path the controller read from the forwarder, after the HTTP and TCP traffic
    expect(out).toMatch(/REASON\s+DATA PATH/);
    expect(out).toMatch(/tcp:\/\/echo\.demo:7000\s+projected\s.*\sok \d+s ago$/m);
    // the namespace policy: an alias refused in kube-system, one in an opted-out namespace
    expect(out).toMatch(/http:\/\/metrics\.kube-system:80\s+namespace-denied/);
    expect(out).toMatch(/http:\/\/app\.quiet:80\s+namespace-denied/);
    expect(out).not.toMatch(/kube-system\s+metrics\s+ExternalName/);
    // traffic really went through
    expect(out).toContain('answer: hello from the demo web upstream: GET /hello (Host: web.demo)');
    expect(out).toContain('echoed "hello, echo upstream"');
    expect(out).toMatch(/alias later\/api → ep-[a-z0-9]+\.endpoint-binder\.svc\.cluster\.local/);
    expect(readFileSync(kubeconfig, 'utf8')).toContain('certificate-authority-data');
  });
});
