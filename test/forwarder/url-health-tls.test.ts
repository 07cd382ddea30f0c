import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ForwarderStatusSchema } from '../../src/forwarder/forwarder-status.js';
import { waitFor } from '../ingress/helpers.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  roundTrip,
  useEnv,
} from './helpers.js';

/** #19 item 2 over a TLS ingress: the forwarder's /status records ok and the ingress's ERR_730 per URL. */
describe('forwarder /status data-path health over a TLS ingress', () => {
  const setup = useEnv({ ingressTls: true });

  it('records a success for the live URL and ERR_730 for the dead one after one connection each', async () => {
    const env = await setup();
    const deadPort = await freePort();
    await endpoint(env, 'tcp://live.x:7600', env.echo.upstreamUrl);
    await endpoint(env, 'tcp://dead.x:7601', `tcp://127.0.0.1:${deadPort}`);
    const dir = await mkdtemp(join(tmpdir(), 'fwd-ca-'));
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, env.mock.api.ingressCaPem!);
    const fwd = await env.start({ ingress: { tls: true, caFile }, limits: { maxDialAttempts: 1 } });
    const [live, dead] = [await freePort(), await freePort()];
    await createService(
      env.sim,
      internalService('ep-h', { [live]: 'tcp://live.x:7600', [dead]: 'tcp://dead.x:7601' }),
    );
    await waitFor(() => fwd.boundPorts().includes(live) && fwd.boundPorts().includes(dead), 10_000);

    const s = await connectTo(live);
    expect(await roundTrip(s, 'over tls')).toBe('over tls');
    s.destroy();
    const d = await connectTo(dead);
    d.write('x');
    await new Promise<void>((r) => d.once('close', () => r()));

    const read = async () => {
      const res = await request(`http://${fwd.httpAddress.address}/status`);
      return ForwarderStatusSchema.parse(await res.body.json());
    };
    let doc = await read();
    for (let i = 0; i < 200 && !doc.urls.some((u) => u.port === dead && u.failures === 1); i++) {
      await new Promise((r) => setTimeout(r, 50));
      doc = await read();
    }
    const byPort = new Map(doc.urls.map((u) => [u.port, u]));
    expect(byPort.get(dead)).toMatchObject({ failures: 1, successes: 0, lastFailure: { code: 'ERR_730' } });
    expect(byPort.get(dead)!.dataPath).toMatch(/^upstream refused \(ERR_730\) \d+s ago$/);
    expect(byPort.get(live)).toMatchObject({ successes: 1, failures: 0 });
    expect(byPort.get(live)!.dataPath).toMatch(/^ok \d+s ago$/);
  });
});
