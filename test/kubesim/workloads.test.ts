import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Kubesim } from '../../src/kubesim/index.js';
import { api, sleep, useSim, type Loose } from './helpers.js';
import { deployment, PORT, tinyRunner } from './tiny-pods.js';
import { pollUntil } from '../helpers/wait.js';

/**
 * kubesim's opt-in process-backed workloads against real child processes: a tiny HTTP server per
 * pod (answers /readyz, and its own pod name on /), started by a runner on the pod IP kubesim
 * gives it. Environment switches in the pod template make a pod never ready (NEVER_READY) or
 * ignore SIGTERM (IGNORE_TERM).
 */

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const PODS = '/api/v1/namespaces/default/pods';

async function until<T>(what: string, fn: () => Promise<T | undefined>, limitMs = 20_000): Promise<T> {
  const v = await pollUntil(what, fn, (x) => x !== undefined, {
    timeoutMs: limitMs,
    intervalMs: 50,
    onError: 'throw',
  });
  return v as T;
}

async function pods(sim: Kubesim): Promise<Loose[]> {
  return (await api(sim, 'GET', PODS)).body.items as Loose[];
}

const ready = (p: Loose): boolean =>
  (p.status?.conditions ?? []).some((c: Loose) => c.type === 'Ready' && c.status === 'True');

async function rolledOut(sim: Kubesim, name: string, replicas: number): Promise<Loose> {
  const d = (await api(sim, 'GET', `${DEPLOYS}/${name}`)).body;
  const s = d.status ?? {};
  const done =
    s.observedGeneration === d.metadata.generation &&
    s.updatedReplicas === replicas &&
    s.replicas === replicas &&
    s.availableReplicas === replicas;
  if (!done) return undefined;
  const all = await pods(sim);
  return all.length === replicas ? d : undefined;
}

const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

describe('kubesim process-backed workloads', () => {
  const sim = useSim();

  it('serves no pods unless a pod runner is given', async () => {
    const s = await sim();
    expect((await api(s, 'GET', PODS)).status).toBe(404);
  });

  it('validates pods as the pods registry does and deletes an unbound pod at once', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    const bare = { metadata: { name: 'bare' }, spec: { containers: [{ name: 'c', image: 'one' }] } };
    const made = await api(s, 'POST', PODS, bare);
    expect(made.status).toBe(201);
    expect(made.body.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(made.body.spec).toMatchObject({ restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
    const noContainers = await api(s, 'POST', PODS, { metadata: { name: 'x' }, spec: { containers: [] } });
    expect(noContainers.status).toBe(422);
    expect(noContainers.body.details.causes[0]).toMatchObject({
      field: 'spec.containers',
      reason: 'FieldValueRequired',
    });
    // Only images (and a few fields) of a pod's spec may change.
    const image = await api(
      s,
      'PATCH',
      `${PODS}/bare`,
      { spec: { containers: [{ name: 'c', image: 'two' }] } },
      {
        contentType: 'application/strategic-merge-patch+json',
      },
    );
    expect(image.status).toBe(200);
    const grace = await api(
      s,
      'PATCH',
      `${PODS}/bare`,
      { spec: { restartPolicy: 'Never' } },
      {
        contentType: 'application/merge-patch+json',
      },
    );
    expect(grace.status).toBe(422);
    expect(grace.body.message).toContain('pod updates may not change fields other than');
    // Not bound to the node: nothing runs it, and a delete removes it at once.
    const del = await api(s, 'DELETE', `${PODS}/bare`);
    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toBeUndefined();
    expect((await api(s, 'GET', `${PODS}/bare`)).status).toBe(404);
    expect(started).toEqual([]);
  });

  it('scales a Deployment up to Ready pods running as processes on their own pod IPs', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    expect((await api(s, 'POST', DEPLOYS, deployment('web'))).status).toBe(201);
    const d = await until('rolled out', () => rolledOut(s, 'web', 2));
    expect(d.status).toMatchObject({ readyReplicas: 2, updatedReplicas: 2, observedGeneration: 1 });
    expect(d.status.unavailableReplicas).toBeUndefined();
    const list = await pods(s);
    const ips = new Set<string>();
    for (const p of list) {
      const hash = p.metadata.labels['pod-template-hash'];
      expect(p.metadata.name).toMatch(new RegExp(`^web-${hash}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
      expect(p.metadata.labels.app).toBe('web');
      expect(p.metadata.ownerReferences[0]).toMatchObject({
        kind: 'Deployment',
        name: 'web',
        controller: true,
      });
      expect(p.status.phase).toBe('Running');
      expect(p.status.podIP).toMatch(/^127\.([1-9]\d*)\.\d+\.\d+$/);
      expect(p.status.containerStatuses[0]).toMatchObject({ name: 'web', ready: true, restartCount: 0 });
      ips.add(p.status.podIP);
      // The process behind the pod answers on its pod IP, with the env resolved from the fieldRef.
      const res = await fetch(`http://${p.status.podIP}:${PORT}/`);
      expect(await res.text()).toBe(p.metadata.name);
    }
    expect(ips.size).toBe(2);
    expect(started).toHaveLength(2);
  });

  it('rolls a restart (kubectl rollout restart) with maxSurge 1 / maxUnavailable 0 without losing a ready pod', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    await api(s, 'POST', DEPLOYS, deployment('web', { env: { TERM_DELAY_MS: '300' }, minReady: 1 }));
    await until('first rollout', () => rolledOut(s, 'web', 2));
    const before = await pods(s);
    const oldHash = before[0].metadata.labels['pod-template-hash'];

    // What kubectl rollout restart sends.
    const patched = await api(
      s,
      'PATCH',
      `${DEPLOYS}/web`,
      {
        spec: {
          template: {
            metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } },
          },
        },
      },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    expect(patched.status).toBe(200);
    let fewestReady = Infinity;
    let mostActive = 0;
    let sawTerminating = false;
    const d = await until('restart rolled out', async () => {
      const all = await pods(s);
      const active = all.filter((p) => !p.metadata.deletionTimestamp);
      sawTerminating ||= all.some((p) => p.metadata.deletionTimestamp);
      fewestReady = Math.min(fewestReady, active.filter(ready).length);
      mostActive = Math.max(mostActive, active.length);
      const done = await rolledOut(s, 'web', 2);
      return done && all.every((p) => p.metadata.labels['pod-template-hash'] !== oldHash) ? done : undefined;
    });
    expect(d.status.observedGeneration).toBe(2);
    expect(fewestReady).toBeGreaterThanOrEqual(2); // maxUnavailable 0
    expect(mostActive).toBeLessThanOrEqual(3); // maxSurge 1
    expect(sawTerminating).toBe(true);
    const oldProcesses = started.filter((p) => before.some((b: Loose) => b.metadata.name === p.pod));
    expect(oldProcesses).toHaveLength(2);
    for (const p of oldProcesses) expect(await p.exit).toEqual({ code: 0, signal: null });
    expect(started).toHaveLength(4);
  });

  it('stalls a roll at maxUnavailable 0 while the new pod never becomes ready', async () => {
    const { runner } = tinyRunner();
    const s = await sim({ podRunner: runner });
    await api(s, 'POST', DEPLOYS, deployment('web'));
    await until('first rollout', () => rolledOut(s, 'web', 2));
    const old = new Set((await pods(s)).map((p) => p.metadata.name as string));
    const bad = deployment('web', { env: { NEVER_READY: '1' } });
    const put = await api(
      s,
      'PATCH',
      `${DEPLOYS}/web`,
      { spec: bad.spec },
      { contentType: 'application/merge-patch+json' },
    );
    expect(put.status).toBe(200);
    const fresh = await until('the surge pod runs', async () => {
      const p = (await pods(s)).find((x) => !old.has(x.metadata.name) && x.status?.phase === 'Running');
      return p;
    });
    // Several probe periods (1 s) later: still unready, and no old pod was deleted.
    await sleep(3500);
    const all = await pods(s);
    expect(all.map((p) => p.metadata.name).sort()).toEqual([...old, fresh.metadata.name].sort());
    expect(all.filter((p) => p.metadata.deletionTimestamp)).toEqual([]);
    expect(ready(all.find((p) => p.metadata.name === fresh.metadata.name))).toBe(false);
    const d = (await api(s, 'GET', `${DEPLOYS}/web`)).body;
    expect(d.status).toMatchObject({
      replicas: 3,
      updatedReplicas: 1,
      availableReplicas: 2,
      observedGeneration: 2,
    });
  });

  it('deletes a pod as the kubelet does: terminating, SIGTERM, SIGKILL after the grace period, then gone', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    await api(
      s,
      'POST',
      DEPLOYS,
      deployment('stubborn', { replicas: 1, grace: 1, env: { IGNORE_TERM: '1' } }),
    );
    await until('rolled out', () => rolledOut(s, 'stubborn', 1));
    const [pod] = await pods(s);
    const del = await api(s, 'DELETE', `${PODS}/${pod.metadata.name}`);
    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toBeDefined();
    expect(del.body.metadata.deletionGracePeriodSeconds).toBe(1);
    const first = started.find((p) => p.pod === pod.metadata.name);
    expect(first).toBeDefined();
    // The object stays, terminating, while its process runs.
    const still = await api(s, 'GET', `${PODS}/${pod.metadata.name}`);
    expect(still.status).toBe(200);
    expect(still.body.metadata.deletionTimestamp).toBeDefined();
    expect(await first!.exit).toEqual({ code: null, signal: 'SIGKILL' });
    await until('pod object gone', async () =>
      (await api(s, 'GET', `${PODS}/${pod.metadata.name}`)).status === 404 ? true : undefined,
    );
    // The Deployment replaced it.
    await until('replacement ready', () => rolledOut(s, 'stubborn', 1));
  });

  it('a pod that exits on SIGTERM is removed when it exits, before its grace period', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    await api(s, 'POST', DEPLOYS, deployment('polite', { replicas: 1, grace: 30 }));
    await until('rolled out', () => rolledOut(s, 'polite', 1));
    const [pod] = await pods(s);
    await api(s, 'DELETE', `${PODS}/${pod.metadata.name}`);
    const proc = started.find((p) => p.pod === pod.metadata.name)!;
    expect(await proc.exit).toEqual({ code: 0, signal: null });
    await until('pod object gone', async () =>
      (await api(s, 'GET', `${PODS}/${pod.metadata.name}`)).status === 404 ? true : undefined,
    );
  });

  it('keeps a terminating pod, unready once its probe fails, until its process exits', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    await api(s, 'POST', DEPLOYS, deployment('draining', { replicas: 1, env: { TERM_DELAY_MS: '4000' } }));
    await until('rolled out', () => rolledOut(s, 'draining', 1));
    const [pod] = await pods(s);
    await api(s, 'DELETE', `${PODS}/${pod.metadata.name}`);
    const proc = started.find((p) => p.pod === pod.metadata.name)!;
    // The kubelet keeps probing a terminating pod: the server answers 503 after SIGTERM.
    const unready = await until('terminating and unready', async () => {
      const r = await api(s, 'GET', `${PODS}/${pod.metadata.name}`);
      return r.status === 200 && r.body.metadata.deletionTimestamp && !ready(r.body) ? r.body : undefined;
    });
    expect(unready.status.containerStatuses[0].ready).toBe(false);
    expect(alive(proc.child)).toBe(true);
    expect(await proc.exit).toEqual({ code: 0, signal: null });
    await until('pod object gone', async () =>
      (await api(s, 'GET', `${PODS}/${pod.metadata.name}`)).status === 404 ? true : undefined,
    );
  });

  it('deleting the Deployment deletes its pods and their processes', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner });
    await api(s, 'POST', DEPLOYS, deployment('web'));
    await until('rolled out', () => rolledOut(s, 'web', 2));
    expect((await api(s, 'DELETE', `${DEPLOYS}/web`)).status).toBe(200);
    await until('no pods', async () => ((await pods(s)).length === 0 ? true : undefined));
    for (const p of started) expect(alive(p.child)).toBe(false);
  });

  it('leaves no process behind when kubesim stops, even one that ignores SIGTERM', async () => {
    const { runner, started } = tinyRunner();
    const s = await sim({ podRunner: runner, podStopGraceMs: 300 });
    await api(s, 'POST', DEPLOYS, deployment('stubborn', { env: { IGNORE_TERM: '1' } }));
    await until('rolled out', () => rolledOut(s, 'stubborn', 2));
    expect(started.every((p) => alive(p.child))).toBe(true);
    await s.stop();
    for (const p of started) expect(alive(p.child)).toBe(false);
    expect((await Promise.all(started.map((p) => p.exit))).map((e) => e.signal)).toEqual([
      'SIGKILL',
      'SIGKILL',
    ]);
  });
});
