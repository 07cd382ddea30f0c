import { budget } from '../helpers/budget.js';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { locateControlPlane } from '../helpers/control-plane/binaries.js';
import { startControlPlane } from '../helpers/control-plane/control-plane.js';
import { realCluster } from '../helpers/control-plane/use.js';
import { REAL_CLUSTER_USERS } from '../helpers/control-plane/users.js';

/**
 * The harness itself: the shared control plane is the real thing (its version, its bootstrap
 * namespaces, RBAC, TokenRequest, the audit log), and a control plane never outlives its test
 * process, stopped or crashed.
 */
const rc = realCluster();
const d = 'skip' in rc ? describe.skip : describe;
if ('skip' in rc) console.log(`[real cluster] control-plane.real.ts skipped: ${rc.skip}`);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

d('the real control plane', () => {
  const cluster = 'skip' in rc ? undefined! : rc.cluster;

  it('reports the version it was built as, and has the bootstrap namespaces', async () => {
    expect(cluster.version, 'gitVersion from /version (the build ldflags)').toMatch(/^v1\.\d+\.\d+$/);
    for (const ns of ['default', 'kube-system', 'kube-public']) {
      const r = await cluster.fetch('GET', `/api/v1/namespaces/${ns}`);
      expect(r.status, `namespace ${ns}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });

  it('issues ServiceAccount tokens through TokenRequest that authenticate as the account', async () => {
    const token = await cluster.serviceAccountToken('default', 'default');
    const r = await cluster.fetch(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      token,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const user = z
      .object({ status: z.object({ userInfo: z.object({ username: z.string() }) }) })
      .parse(r.body).status.userInfo.username;
    expect(user).toBe('system:serviceaccount:default:default');
    // RBAC is on: the default account may not list Services.
    const denied = await cluster.fetch('GET', '/api/v1/namespaces/default/services', undefined, token);
    expect(denied.status, JSON.stringify(denied.body)).toBe(403);
  });

  it("authenticates the named test users' static tokens as those users, with their groups", async () => {
    for (const [user, groups] of Object.entries(REAL_CLUSTER_USERS)) {
      const r = await cluster.fetch(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        cluster.userTokens[user],
      );
      expect(r.status, `${user}: ${JSON.stringify(r.body)}`).toBe(201);
      const info = z
        .object({
          status: z.object({ userInfo: z.object({ username: z.string(), groups: z.array(z.string()) }) }),
        })
        .parse(r.body).status.userInfo;
      expect(info.username).toBe(user);
      expect(info.groups).toEqual(expect.arrayContaining(groups));
    }
  });

  it('records writes to Services in the audit log', async () => {
    const name = `audited-${Date.now().toString(36)}`;
    const r = await cluster.fetch('POST', '/api/v1/namespaces/default/services', {
      metadata: { name },
      spec: { ports: [{ port: 80 }] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await cluster.fetch('DELETE', `/api/v1/namespaces/default/services/${name}`);
    const seen = cluster
      .audit()
      .filter((e) => e.objectRef?.resource === 'services' && e.objectRef.name === name)
      .map((e) => `${e.verb} ${e.responseStatus?.code}`);
    expect(seen, 'audit entries for the Service').toEqual(['create 201', 'delete 200']);
  });
});

d('a control plane never outlives its test process', () => {
  it('stop() ends every process and frees the ports', async () => {
    const found = locateControlPlane();
    if ('skip' in found) throw new Error(found.skip);
    const cp = await startControlPlane({ bin: found.bin, controllers: [] });
    const port = Number(new URL(cp.url).port);
    const pids = pidsUnder(cp.dir);
    expect(pids.length, 'etcd and kube-apiserver found by their data folder').toBeGreaterThanOrEqual(2);
    await cp.stop();
    expect(pids.filter(alive), 'processes left after stop()').toEqual([]);
    expect(await portOpen(port), `port ${port} still open`).toBe(false);
  });

  it(
    'a SIGKILLed test process leaves no control plane behind (the watchdog ends it)',
    async () => {
      // A child starts a control plane, prints its folder, and is then killed with SIGKILL.
      const script = `
      import { locateControlPlane } from './test/helpers/control-plane/binaries.ts';
      import { startControlPlane } from './test/helpers/control-plane/control-plane.ts';
      const found = locateControlPlane();
      const cp = await startControlPlane({ bin: found.bin, controllers: [] });
      console.log('DIR ' + cp.dir + ' URL ' + cp.url);
      setInterval(() => {}, 1000);
    `;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CONTROL_PLANE_KEEP: '1' },
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const m = await new Promise<RegExpMatchArray>((resolve, reject) => {
        const timer = setInterval(() => {
          const hit = /DIR (\S+) URL (\S+)/.exec(out);
          if (hit) {
            clearInterval(timer);
            resolve(hit);
          } else if (child.exitCode !== null) {
            clearInterval(timer);
            reject(new Error(`child exited ${child.exitCode}: ${out}`));
          }
        }, 100);
      });
      const pids = pidsUnder(m[1]!);
      expect(pids.length, `control-plane processes of ${m[1]}`).toBeGreaterThanOrEqual(2);
      child.kill('SIGKILL');
      const deadline = Date.now() + 30_000;
      while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      expect(pids.filter(alive), 'control-plane processes alive 30 s after their test process died').toEqual(
        [],
      );
      expect(await portOpen(Number(new URL(m[2]!).port))).toBe(false);
    },
    budget(180_000),
  );
});

/** Pids of processes whose command line names this control plane's folder. */
function pidsUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(dir) && !cmd.includes('watchdog')) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}
