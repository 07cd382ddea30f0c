import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectThroughIngress, IngressError } from '../../src/api/ingress/dialer.js';
import { ACME_AUTHTOKEN, startTestMock, type TestMock } from '../helpers/mock-api.js';
import { createEndpoint, readAll, startEcho, startServer, type TestServer } from './helpers.js';

/**
 * One endpoint's clients never take every slot of the ingress (#27 item 1): each endpoint URL of
 * an account holds at most `max_connections_per_url` authenticated connections (ERR_744 beyond),
 * so clients of another endpoint are still served. Before, the 6th connection of a.x took one of
 * the last free slots and b.x was refused with ERR_740 once a.x's clients held them all.
 */
describe.each([false, true])('ingress share per endpoint URL (tls %s)', (tls) => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanup.splice(0).map((f) => f()));
  });

  it('refuses one URL past its share with ERR_744 and serves another URL from the rest', async () => {
    const mock: TestMock = await startTestMock({
      ingress: {},
      config: {
        accounts: [{ id: 'acme', api_keys: ['acme_api_key_0123456789'], authtokens: [ACME_AUTHTOKEN] }],
        ingress: { max_connections: 8, max_connections_per_url: 5, ...(tls ? { tls: true } : {}) },
      },
    });
    const silent: TestServer = await startServer(() => undefined);
    const echo = await startEcho();
    const held: Socket[] = [];
    cleanup.push(async () => {
      for (const s of held) s.destroy();
      await Promise.all([mock.close(), silent.close(), echo.close()]);
    });
    await createEndpoint(mock, 'tcp://a.x:7400', { upstream_url: silent.upstreamUrl });
    await createEndpoint(mock, 'tcp://b.x:7401', { upstream_url: echo.upstreamUrl });
    const dial = (url: string) =>
      connectThroughIngress({
        address: mock.api.ingressAddress!,
        authtoken: ACME_AUTHTOKEN,
        url,
        ...(tls ? { tls: { ca: mock.api.ingressCaPem! } } : {}),
        timeoutMs: 10_000,
      });

    // a.x's clients each send a byte; its upstream never answers, so they hold their slots.
    for (let i = 0; i < 5; i++) {
      const s = await dial('tcp://a.x:7400');
      s.write('x');
      held.push(s);
    }
    const sixth = await dial('tcp://a.x:7400').then(
      (s) => {
        held.push(s);
        return 'served';
      },
      (e: unknown) => (e instanceof IngressError ? e.code : String(e)),
    );
    expect(sixth).toBe('ERR_744');

    for (let i = 0; i < 3; i++) {
      const s = await dial('tcp://b.x:7401');
      const all = readAll(s);
      s.end(`b ${i}`);
      expect((await all).toString()).toBe(`b ${i}`);
    }
  });
});
