import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../ingress/helpers.js';
import {
  AUTHTOKEN,
  NS,
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  roundTrip,
  useEnv,
} from './helpers.js';

/**
 * File descriptors running out, for real: the forwarder CLI runs with a small descriptor limit and
 * more clients connect than it can hold. libuv answers accept()'s EMFILE itself (it closes the
 * pending connections with a reserved descriptor; only when that fails does the server emit the
 * error our listener handles by rebinding with backoff), and a dial that meets EMFILE fails like
 * any dial. Either way clients are closed, never left hanging, the process keeps running, and it
 * serves again once descriptors are free.
 */
describe('forwarder accept errors', () => {
  const setup = useEnv();

  it('survives running out of descriptors: clients are closed, not hung, and it serves again', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://fd.x:9200', env.echo.upstreamUrl);
    const port = await freePort();
    await createService(env.sim, internalService('ep-fd', { [port]: 'tcp://fd.x:9200' }, env.ingress));
    const dir = await mkdtemp(join(tmpdir(), 'fwd-emfile-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await env.sim.writeKubeconfig(kubeconfig);
    const config = join(dir, 'forwarder.yaml');
    await writeFile(
      config,
      JSON.stringify({
        releaseName: 'eb',
        operatorNamespace: NS,
        listenHost: '127.0.0.1',
        ingress: { tls: false },
        http: { listen: '127.0.0.1:0' },
        drain: { delaySeconds: 0, timeoutSeconds: 1 },
      }),
    );
    const node = `'${process.execPath}' --import tsx src/cli/main.ts forwarder --config '${config}' --kubeconfig '${kubeconfig}'`;
    const child = spawn('sh', ['-c', `ulimit -n 512 && exec ${node}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ENDPOINT_BINDER_AUTHTOKEN: AUTHTOKEN },
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const clients: Socket[] = [];
    const count = (msg: string) => out.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length;
    try {
      await waitFor(() => count('forwarder listener bound') === 1, 90_000);
      // Each client holds two descriptors in the forwarder (its socket and the ingress's): a few
      // hundred clients are more than 512 descriptors allow.
      let closed = 0;
      for (let burst = 0; burst < 40 && closed === 0; burst++) {
        const batch = await Promise.all(
          Array.from({ length: 25 }, () => connectTo(port).catch(() => undefined)),
        );
        await new Promise((r) => setTimeout(r, 100));
        for (const c of batch) {
          if (!c) continue;
          let counted = false;
          const turnedAway = () => {
            if (!counted) closed++;
            counted = true;
          };
          c.once('end', turnedAway);
          c.once('close', turnedAway);
          c.resume();
          clients.push(c);
        }
      }
      // Turned away (closed), not hanging: the forwarder could not hold them all.
      await waitFor(() => closed > 0, 30_000);
      expect(closed).toBeLessThan(clients.length);
      for (const c of clients) c.destroy();
      // Serving again once descriptors are free.
      await waitFor(() => count('forwarder connection') > 0 || out.includes('EMFILE'), 30_000);
      let back = '';
      for (let i = 0; i < 50 && back !== 'back'; i++) {
        const c = await connectTo(port);
        back = await roundTrip(c, 'back', 5_000).catch(() => '');
        c.destroy();
        if (back !== 'back') await new Promise((r) => setTimeout(r, 200));
      }
      expect(back).toBe('back');
      expect(out).toContain('EMFILE');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } catch (err) {
      console.log(out.slice(-3000));
      throw err;
    } finally {
      for (const s of clients) s.destroy();
      child.kill('SIGKILL');
    }
  }, 180_000);
});
