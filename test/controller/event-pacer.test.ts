import { afterEach, describe, expect, it } from 'vitest';
import { EventPacer } from '../../src/controller/event-pacer.js';
import type { EventDecision } from '../../src/controller/decide/reporting.js';
import { collectionPath, EventRecorder, kinds, KubeTransport, listAll } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/time/clock.js';
import { waitFor } from '../kube/helpers.js';

/**
 * Issue #30 ("a restart with 4,000 endpoints in a problem state sends 0 Events"): the recorder's
 * queue holds 256 Events and drops the rest; a first sync that decides thousands of Warnings at
 * once lost most of them, so every later leader sent them again. Paced, every one is written.
 */
let sim: Kubesim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const N = 700;

describe('state Events are paced into the recorder', () => {
  it(`${N} Warnings decided at once are all written (the recorder's queue holds 256)`, async () => {
    sim = await startKubesim({ initialNamespaces: ['ops'] });
    const recorder = new EventRecorder({ kubeConfig: sim.kubeConfig(), logger: silentLogger() });
    const decisions: EventDecision[] = Array.from({ length: N }, (_, i) => ({
      target: { kind: 'Pod' },
      type: 'Warning',
      reason: 'InvalidURL',
      message: `Endpoint ep_${i} (http://9bad${i}.ops:80): cannot be a Service name`,
    }));
    const pod = { kind: 'Pod', apiVersion: 'v1', name: 'ctl', namespace: 'ops' };
    const pacer = new EventPacer({
      pending: () => recorder.pending,
      room: 200,
      send: (e) => recorder.record(pod, e.type, e.reason, e.message),
      isLeader: () => true,
      clock: systemClock,
    });
    const stop = new AbortController();
    pacer.push(decisions, stop.signal);
    const transport = new KubeTransport(sim.kubeConfig());
    const written = async (): Promise<number> =>
      (await listAll({ transport, path: collectionPath(kinds.event, 'ops'), schema: kinds.event.schema }))
        .items.length;
    await waitFor(
      async () => (pacer.waiting === 0 && recorder.pending === 0) || undefined,
      'all handed over',
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
    await recorder.flush();
    expect(await written(), 'Events in the cluster').toBe(N);
    stop.abort();
    await recorder.stop();
  });

  it('a replica that stops leading drops its backlog', async () => {
    let sent = 0;
    let leading = true;
    const pacer = new EventPacer({
      pending: () => 250, // the recorder is full
      room: 200,
      send: () => sent++,
      isLeader: () => leading,
      clock: systemClock,
    });
    const stop = new AbortController();
    pacer.push([{ target: { kind: 'Pod' }, type: 'Warning', reason: 'X', message: 'm' }], stop.signal);
    expect(pacer.waiting).toBe(1);
    leading = false;
    await waitFor(() => pacer.waiting === 0 || undefined, 'backlog dropped', {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    expect(sent).toBe(0);
    stop.abort();
  });
});
