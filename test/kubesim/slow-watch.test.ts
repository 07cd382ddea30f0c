import { request, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Kubesim } from '../../src/kubesim/index.js';
import { captureLogs } from '../helpers/logs.js';
import { api, createSvc, openWatch, useSim, type WatchEvent } from './helpers.js';

/**
 * A watch client that stops reading must not grow kubesim's memory: once the events queued for it
 * exceed `watchBufferBytes`, kubesim ends that watch (as the watch cache terminates a watcher that
 * cannot keep up) and the client re-watches from the last resourceVersion it received.
 */

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';
const CLOSED = 'kubesim closed a slow watcher';
/** 100 kB per event: the socket and kernel buffers fill after a few dozen updates. */
const PAD = 'x'.repeat(100_000);

interface PausedWatch {
  /** Starts reading; resolves with every event once the server ends the stream. */
  drain(): Promise<{ events: WatchEvent[]; ending: 'end' | 'error' }>;
}

/** Opens a watch whose response is not read at all until `drain()`. */
function pausedWatch(sim: Kubesim, path: string): Promise<PausedWatch> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(sim.url + path), { headers: { Authorization: `Bearer ${sim.adminToken}` } });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      res.pause();
      resolve({
        drain: () =>
          new Promise((done) => {
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (buf += chunk));
            const finish = (ending: 'end' | 'error') => {
              const events = buf
                .split('\n')
                .filter((l) => l.trim())
                .map((l) => JSON.parse(l) as WatchEvent);
              done({ events, ending });
            };
            res.on('end', () => finish('end'));
            res.on('error', () => finish('error'));
            res.resume();
          }),
      });
    });
    req.end();
  });
}

/** Merge-patches the `seq` annotation (with 100 kB of padding) until kubesim reports the close. */
async function updateUntilClosed(sim: Kubesim, count: () => number, max = 400): Promise<number> {
  let seq = 0;
  while (count() === 0 && seq < max) {
    seq++;
    const r = await api(
      sim,
      'PATCH',
      `${SVC}/big`,
      { metadata: { annotations: { seq: String(seq), pad: PAD } } },
      { contentType: 'application/merge-patch+json' },
    );
    if (r.status !== 200) throw new Error(`patch ${seq}: ${r.status}`);
  }
  return seq;
}

const seqOf = (e: WatchEvent): number => Number(e.object.metadata.annotations.seq);

describe('slow watch readers', () => {
  it('a paused watcher is closed cleanly once its queue exceeds watchBufferBytes; a re-watch loses nothing', async () => {
    const logs = captureLogs('info');
    const sim = await start({ watchBufferBytes: 256 * 1024, logger: logs.logger });
    const created = await createSvc(sim, 'default', 'big');
    const w = await pausedWatch(sim, `${SVC}?watch=true&resourceVersion=${created.metadata.resourceVersion}`);

    const sent = await updateUntilClosed(sim, () => logs.count(CLOSED));
    expect(logs.count(CLOSED)).toBe(1);
    const line = logs.lines.find((l) => l['msg'] === CLOSED)!;
    expect(line['queuedBytes']).toBeGreaterThan(256 * 1024);
    // Later updates are not queued for the closed watcher any more.
    for (let i = 0; i < 3; i++) {
      await api(
        sim,
        'PATCH',
        `${SVC}/big`,
        { metadata: { annotations: { seq: String(sent + i + 1) } } },
        { contentType: 'application/merge-patch+json' },
      );
    }
    const total = sent + 3;

    const { events, ending } = await w.drain();
    expect(ending).toBe('end');
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(total);
    // What arrived is an unbroken prefix: 1, 2, 3, ... (queued events were dropped, not reordered).
    expect(events.map(seqOf)).toEqual(events.map((_, i) => i + 1));

    // The client resumes from the last RV it saw and gets exactly the rest.
    const last = events[events.length - 1]!.object.metadata.resourceVersion as string;
    const again = await openWatch(sim, `${SVC}?watch=true&resourceVersion=${last}`);
    const rest = await again.waitFor((e) => e.length > 0 && seqOf(e[e.length - 1]!) === total, 10_000);
    expect(rest.map(seqOf)).toEqual(rest.map((_, i) => events.length + i + 1));
    again.close();
  });

  it('a watcher that keeps reading is never closed, however many events', async () => {
    const logs = captureLogs('info');
    const sim = await start({ watchBufferBytes: 64 * 1024, logger: logs.logger });
    await createSvc(sim, 'default', 'big');
    const w = await openWatch(sim, `${SVC}?watch=true`);
    await w.waitFor((e) => e.length === 1);
    for (let seq = 1; seq <= 20; seq++) {
      await api(
        sim,
        'PATCH',
        `${SVC}/big`,
        { metadata: { annotations: { seq: String(seq), pad: PAD } } },
        { contentType: 'application/merge-patch+json' },
      );
      // Reading keeps up: wait for each event before the next write.
      await w.waitFor((e) => e.length === seq + 1, 10_000);
    }
    expect(logs.count(CLOSED)).toBe(0);
    expect(w.events.slice(1).map(seqOf)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    w.close();
  });
});
