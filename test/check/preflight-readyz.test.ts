import { createServer, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preflightServingProbes } from '../../src/cli/controller-preflight.js';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { waitFor } from '../kube/helpers.js';

/** #19: before registration (the preflight), `/readyz` answers ready=false with the reason. */

let sim: Kubesim;
beforeAll(async () => {
  sim = await startKubesim({ initialNamespaces: ['default', 'ops'] });
});
afterAll(async () => {
  await sim?.stop();
});

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('controller preflight serves /readyz', () => {
  it('answers 503 ready=false with why it waits while the management API is unreachable; closed once preflight ends', async () => {
    const apiPort = await closedPort();
    const r = resolveControllerConfig(
      {
        api: { baseUrl: `http://127.0.0.1:${apiPort}` },
        operatorNamespace: 'ops',
        http: { listen: '127.0.0.1:0' },
      },
      { ENDPOINT_BINDER_API_KEY: 'key_0123456789' },
    );
    if (!r.ok) throw new Error(r.errors.join('\n'));
    const stop = new AbortController();
    let url: string | undefined;
    const run = preflightServingProbes(r.config, sim.kubeConfig(), silentLogger(), stop.signal, {
      onListening: (u) => (url = u),
    });
    try {
      await waitFor(() => url, 'the probe server');
      const read = async () => {
        const res = await request(`${url}/readyz`);
        return {
          status: res.statusCode,
          body: (await res.body.json()) as { ready: boolean; reasons: string[] },
        };
      };
      // After the first attempt the reason names what it waits for.
      const answer = await waitFor(async () => {
        const a = await read();
        return a.body.reasons[0]?.startsWith('preflight: waiting for') ? a : undefined;
      }, 'the reason of the first attempt');
      expect(answer.status).toBe(503);
      expect(answer.body.ready).toBe(false);
      expect(answer.body.reasons).toHaveLength(1);
      expect(answer.body.reasons[0]).toContain(`127.0.0.1:${apiPort}`);
      const health = await request(`${url}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
    } finally {
      stop.abort();
    }
    expect((await run).kind).toBe('retry');
    await expect(request(`${url}/readyz`)).rejects.toThrow();
  });
});
