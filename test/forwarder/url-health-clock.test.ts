import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ForwarderStatusSchema } from '../../src/forwarder/forwarder-status.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { waitFor } from '../ingress/helpers.js';
import { connectTo, createService, endpoint, freePort, internalService, useEnv } from './helpers.js';

/** #19 item 2: the per-URL health and `/status` read time from the forwarder's Clock seam. */
describe('forwarder /status on the Clock seam', () => {
  const setup = useEnv();

  it('stamps a failure with the clock and ages it as the clock moves', async () => {
    const env = await setup();
    const start = Date.UTC(2026, 5, 1, 12, 0, 0);
    const clock = new ManualClock(start);
    const deadPort = await freePort();
    await endpoint(env, 'tcp://dead-clock.x:7700', `tcp://127.0.0.1:${deadPort}`);
    const fwd = await env.start({ limits: { maxDialAttempts: 1 } }, { clock });
    const port = await freePort();
    await createService(env.sim, internalService('ep-clock', { [port]: 'tcp://dead-clock.x:7700' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);

    const read = async () => {
      const res = await request(`http://${fwd.httpAddress.address}/status`);
      return ForwarderStatusSchema.parse(await res.body.json());
    };
    let doc = await read();
    expect(doc.now).toBe(new Date(start).toISOString());
    expect(doc.urls.find((u) => u.port === port)!.dataPath).toBe('no traffic yet');

    const c = await connectTo(port);
    c.write('x');
    await new Promise<void>((r) => c.once('close', () => r()));
    for (let i = 0; i < 200 && !doc.urls.some((u) => u.port === port && u.failures === 1); i++) {
      await new Promise((r) => setTimeout(r, 25));
      doc = await read();
    }
    const row = doc.urls.find((u) => u.port === port)!;
    expect(row.lastFailure).toMatchObject({ at: new Date(start).toISOString(), code: 'ERR_730' });
    expect(row.dataPath).toBe('upstream refused (ERR_730) 0s ago');

    await clock.advance(5_000);
    doc = await read();
    expect(doc.now).toBe(new Date(start + 5_000).toISOString());
    expect(doc.urls.find((u) => u.port === port)!.dataPath).toBe('upstream refused (ERR_730) 5s ago');
  });
});
