import { request } from 'undici';

/**
 * Creates a cluster-bound TCP endpoint on the mock management API whose upstream is a loopback
 * port (the benchmarks' echo and sink servers); throws with the API's answer unless it is a 201.
 */
export async function createTcpEndpoint(
  apiUrl: string,
  apiKey: string,
  url: string,
  upstreamPort: number,
): Promise<void> {
  const res = await request(`${apiUrl}/endpoints`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'service-version': '2',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ url, bindings: ['kubernetes'], upstream_url: `tcp://127.0.0.1:${upstreamPort}` }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 201) throw new Error(`POST /endpoints: ${res.statusCode} ${text}`);
}
