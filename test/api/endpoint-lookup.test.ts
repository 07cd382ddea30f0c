import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/api/client/index.js';
import { startTestMock } from '../helpers/mock-api.js';

/** A server that answers every request with one fixed response (something between us and the API). */
async function fixed(
  status: number,
  contentType: string,
  body: string,
): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("endpoints.lookup: only the API's own not-found proves an endpoint gone (issue #30 item 2)", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  });

  it('the mock API: found, then ERR_150 with its operation id once deleted', async () => {
    const mock = await startTestMock();
    try {
      const ep = await mock.client.endpoints.create({ url: 'http://api.prod', bindings: ['kubernetes'] });
      expect(await mock.client.endpoints.lookup(ep.id)).toMatchObject({
        found: true,
        endpoint: { id: ep.id },
      });
      await mock.client.endpoints.delete(ep.id);
      const gone = await mock.client.endpoints.lookup(ep.id);
      expect(gone).toMatchObject({ found: false, errorCode: 'ERR_150' });
      expect(gone.found === false && gone.operationId).toBeTruthy();
    } finally {
      await mock.close();
    }
  });

  it.each([
    ['a bare 404', 404, 'text/plain', ''],
    ['an HTML 404 page', 404, 'text/html', '<html><body>404 Not Found</body></html>'],
    [
      'a JSON 404 for an unknown route (ERR_151)',
      404,
      'application/json',
      JSON.stringify({ error_code: 'ERR_151', status_code: 404, msg: 'no route', details: {} }),
    ],
    [
      'a 503',
      503,
      'application/json',
      JSON.stringify({ error_code: 'ERR_199', status_code: 503, msg: 'down', details: {} }),
    ],
  ])('%s proves nothing: it is thrown', async (_what, status, type, body) => {
    const f = await fixed(status, type, body);
    server = f.server;
    const client = new ManagementClient({ baseUrl: f.url, apiKey: 'k', retry: { retries: 0 } });
    try {
      await expect(client.endpoints.lookup('ep_x')).rejects.toThrow(`HTTP ${status}`);
    } finally {
      await client.close();
    }
  });
});
