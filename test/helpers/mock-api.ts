import { request } from 'undici';
import { ManagementClient } from '../../src/api/client/index.js';
import type { MockConfigInput } from '../../src/mock/config.js';
import { startMockApi, type MockApi, type MockApiOptions } from '../../src/mock/server.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  json: any;
}

export interface RawOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  apiKey?: string | null;
  version?: string | null;
  contentType?: string | null;
  headers?: Record<string, string>;
}

export interface TestMock {
  api: MockApi;
  url: string;
  adminUrl: string;
  /** API key of the first account ("acme"), and of the second ("globex"). */
  key: string;
  otherKey: string;
  client: ManagementClient;
  otherClient: ManagementClient;
  /** A raw HTTP call to the public API, for the cases a typed client cannot express. */
  raw(method: string, path: string, opts?: RawOptions): Promise<RawResponse>;
  /** A raw HTTP call to the admin interface. */
  admin(method: string, path: string, body?: unknown): Promise<RawResponse>;
  close(): Promise<void>;
}

export const ACME_KEY = 'acme_api_key_0123456789';
export const GLOBEX_KEY = 'globex_api_key_0123456789';
export const ACME_AUTHTOKEN = 'acme_authtoken_0123456789';
export const GLOBEX_AUTHTOKEN = 'globex_authtoken_0123456789';

/** Backends and certificate authorities both accounts know (the mock does not serve them). */
export const CA_1 = 'ca_01hzzzzzzzzzzzzzzzzzzzzzz1';
export const CA_2 = 'ca_01hzzzzzzzzzzzzzzzzzzzzzz2';
export const BACKEND_1 = 'bkdbg_01hzzzzzzzzzzzzzzzzzzzzz1';
export const BACKEND_2 = 'bkdbg_01hzzzzzzzzzzzzzzzzzzzzz2';
const externalRefs = { backends: [BACKEND_1, BACKEND_2], certificate_authorities: [CA_1, CA_2] };

export const twoAccounts: MockConfigInput = {
  accounts: [
    { id: 'acme', api_keys: [ACME_KEY], authtokens: [ACME_AUTHTOKEN], ...externalRefs },
    { id: 'globex', api_keys: [GLOBEX_KEY], authtokens: [GLOBEX_AUTHTOKEN], ...externalRefs },
  ],
  rate_limit: { requests: 100_000, window_seconds: 60 },
  // Event ids 1, 2, 3, ... so tests can name them; the default starts at the server's start time.
  events: { first_id: 1 },
};

async function rawCall(
  base: string,
  method: string,
  path: string,
  opts: RawOptions = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.apiKey !== null && opts.apiKey !== undefined) headers['authorization'] = `Bearer ${opts.apiKey}`;
  if (opts.version !== null) headers['service-version'] = opts.version ?? '2';
  const body = opts.rawBody ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
  if (body !== undefined && opts.contentType !== null)
    headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await request(base + path, {
    method: method as 'GET',
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** Starts the mock with two accounts and its admin interface on OS-chosen loopback ports. */
export async function startTestMock(opts: MockApiOptions = {}): Promise<TestMock> {
  const api = await startMockApi({ config: twoAccounts, admin: {}, ...opts });
  const client = new ManagementClient({ baseUrl: api.url, apiKey: ACME_KEY, retry: { retries: 0 } });
  const otherClient = new ManagementClient({ baseUrl: api.url, apiKey: GLOBEX_KEY, retry: { retries: 0 } });
  return {
    api,
    url: api.url,
    adminUrl: api.adminUrl ?? '',
    key: ACME_KEY,
    otherKey: GLOBEX_KEY,
    client,
    otherClient,
    raw: (method, path, o = {}) => rawCall(api.url, method, path, { apiKey: ACME_KEY, ...o }),
    admin: (method, path, body) =>
      rawCall(api.adminUrl ?? '', method, path, { apiKey: null, version: null, body }),
    async close() {
      await Promise.all([client.close(), otherClient.close()]);
      await api.stop();
    },
  };
}
