import { budget } from '../helpers/budget.js';
import { describe, expect, it } from 'vitest';
import { ENDPOINT_ID_ANNOTATION, PORTS_ANNOTATION } from '../../src/binding/identity.js';
import { ROLE_INTERNAL, ROLE_LABEL, isOwnedBy } from '../../src/binding/ownership/index.js';
import { parsePortsAnnotation } from '../../src/binding/service-format.js';
import type { Controller } from '../../src/controller/controller.js';
import { kinds, type Service } from '../../src/kube/index.js';
import { buildKubeConfig } from '../../src/kubesim/kubeconfig.js';
import { captureLogs } from '../helpers/logs.js';
import { startCrashSeam } from './crash-seam.js';
import { OPERATOR_NS, controllerStarter, eventually, startEnv } from './env.js';

const IDENTITY = { release: 'endpoint-binder', operatorNamespace: OPERATOR_NS };
const DISTRUST = [
  "internal Service carries this install's labels but the install record does not list it; claims no port, left alone",
  "service carries this install's labels but no internal Service names it; left alone",
];

/** URL → forwarder port over every internal Service of ours; a port naming two URLs is reported. */
function portsOf(services: readonly Service[]): { byUrl: Map<string, number>; clashes: string[] } {
  const byPort = new Map<number, string>();
  const byUrl = new Map<string, number>();
  const clashes: string[] = [];
  for (const s of services) {
    if (s.metadata.labels?.[ROLE_LABEL] !== ROLE_INTERNAL) continue;
    const parsed = parsePortsAnnotation(s.metadata.annotations?.[PORTS_ANNOTATION]);
    if (!parsed.ok) continue;
    for (const [port, url] of parsed.ports) {
      const other = byPort.get(port);
      if (other !== undefined && other !== url) clashes.push(`${port}: ${other} and ${url}`);
      byPort.set(port, url);
      byUrl.set(url, port);
    }
  }
  return { byUrl, clashes };
}

interface RunResult {
  /** Writes of the pass the seam let through before the kill. */
  writes: number;
  killed: boolean;
}

/**
 * One run: leader A converges over three endpoints; then the account changes so that A's passes
 * create (a new hostname, a new group member), update (the group's target and alias) and delete
 * (a deleted endpoint's two Services); A is killed after the k-th write of those passes (the
 * install record's writes counted among them); successor B takes over. The cluster must end
 * exactly as the account says: nothing missing, no orphan, every port kept, nothing distrusted.
 */
async function crashAfter(k: number): Promise<RunResult> {
  const env = await startEnv({ namespaces: ['prod'] });
  const seam = await startCrashSeam(env.sim.url);
  const token = env.sim.kubeConfig().getCurrentUser()?.token ?? '';
  const controllers: Controller[] = [];
  const throughSeam = controllerStarter(env.mock.url, buildKubeConfig(seam.url, token), controllers);
  try {
    const a = await throughSeam({ identity: 'a' });
    const e1 = await env.createEndpoint('http://a.prod');
    const gone = await env.createEndpoint('http://c.prod');
    const group = await env.createEndpoint('http://g.prod');
    await eventually(
      () => (a.isReady() && a.status().endpoints.every((e) => e.state === 'projected') ? true : undefined),
      'A projects the first three',
    );
    const recordSettled = (n: number) =>
      eventually(async () => {
        const cm = await env.kube.get(kinds.configMap, OPERATOR_NS, 'endpoint-binder-install');
        const listed = (cm?.data?.['internal-services'] ?? '').split(',').filter(Boolean);
        return listed.length === n && (cm?.data?.['intents'] ?? '') === '' ? true : undefined;
      }, `the record lists ${n} internal Services and no write-ahead entry`);
    await recordSettled(3);
    const before = portsOf(env.writes.cache.list().filter((s) => isOwnedBy(s, IDENTITY)));

    seam.arm(k);
    await env.mock.client.endpoints.delete(gone.id);
    const fresh = await env.createEndpoint('http://d.prod');
    const member = await env.createEndpoint('http://g.prod:8080');
    const live = [e1, group, fresh, member];
    const services = (): Service[] => env.writes.cache.list().filter((s) => isOwnedBy(s, IDENTITY));
    const converged = (c: Controller): boolean => {
      if (!c.isLeader() || !c.isReady()) return false;
      const st = c.status().endpoints;
      if (st.length !== 4 || !st.every((e) => e.state === 'projected')) return false;
      const have = services();
      const internal = have.filter((s) => s.metadata.namespace === OPERATOR_NS);
      const aliases = have.filter((s) => s.metadata.namespace === 'prod').map((s) => s.metadata.name);
      return (
        internal.length === 4 &&
        internal.every((s) => live.some((e) => e.id === s.metadata.annotations?.[ENDPOINT_ID_ANNOTATION])) &&
        aliases.sort().join() === 'a,d,g'
      );
    };
    // A converges, or dies on the way.
    await eventually(() => seam.dead || converged(a) || undefined, 'A converges or is killed');
    if (!seam.dead) await recordSettled(4);
    await new Promise((r) => setTimeout(r, 300));
    const writes = seam.writes;
    const killed = seam.dead;
    if (!killed) await a.stop();

    const logs = captureLogs('info');
    const b = await env.startController({ identity: 'b', logger: logs.logger });
    try {
      await eventually(() => converged(b) || undefined, 'B converges to the account', 20_000);
    } catch (err) {
      const seen = services().map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
      const st = b.status().endpoints.map((e) => `${e.url}=${e.state}: ${e.reason}`);
      throw new Error(
        `k=${k} (killed=${killed}, writes=${writes}): ${String(err)}\nservices: ${seen.join(' ')}\nstates: ${st.join('\n')}`,
        { cause: err },
      );
    }
    // Every port a URL had before the crash is the one it has now; no port serves two URLs.
    const after = portsOf(services());
    expect(after.clashes, `k=${k}: ports naming two URLs`).toEqual([]);
    for (const [url, port] of before.byUrl)
      if (after.byUrl.has(url)) expect(after.byUrl.get(url), `k=${k}: port of ${url}`).toBe(port);
    // Nothing distrusted: B found every Service of ours provable.
    const distrusted = logs.lines.filter((l) => DISTRUST.includes(String(l['msg'])));
    expect(
      distrusted.map((l) => l['service']),
      `k=${k}: Services B left alone`,
    ).toEqual([]);
    // Every internal Service ends up listed by uid, every write-ahead entry resolved.
    await eventually(async () => {
      const cm = await env.kube.get(kinds.configMap, OPERATOR_NS, 'endpoint-binder-install');
      const listed = new Set((cm?.data?.['internal-services'] ?? '').split(',').filter(Boolean));
      const internal = services().filter((s) => s.metadata.namespace === OPERATOR_NS);
      return internal.every((s) => listed.has(s.metadata.uid!)) && (cm?.data?.['intents'] ?? '') === ''
        ? true
        : undefined;
    }, `k=${k}: record lists every internal Service and no entry is left`);
    return { writes, killed };
  } finally {
    await seam.close();
    await Promise.all(controllers.map((c) => c.stop()));
    await env.close();
  }
}

describe('controller: a crash after any write of a pass loses nothing (issue #30 item 1)', () => {
  it(
    'for every k, a successor converges with no orphan, nothing missing, every port kept, nothing distrusted',
    async () => {
      const full = await crashAfter(Number.POSITIVE_INFINITY);
      expect(full.killed).toBe(false);
      // Creates, updates and deletes, and the install record's writes among them.
      expect(full.writes).toBeGreaterThanOrEqual(8);
      const failures: string[] = [];
      for (let k = 1; k <= full.writes; k++) {
        try {
          const r = await crashAfter(k);
          expect(r.killed, `k=${k} killed`).toBe(true);
        } catch (err) {
          failures.push(String(err));
        }
      }
      expect(failures).toEqual([]);
    },
    budget(600_000),
  );
});
