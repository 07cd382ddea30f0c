import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMock, twoAccounts, type TestMock } from '../helpers/mock-api.js';
import { rawHttp } from './raw-http.js';

let m: TestMock;
let host: string;
beforeAll(async () => {
  m = await startTestMock();
  host = new URL(m.url).host;
});
afterAll(async () => {
  await m.close();
});

/** A GET /ip_policies with exactly these extra header lines. */
function getWith(...lines: string[]) {
  return rawHttp(m.url, ['GET /ip_policies?limit=1 HTTP/1.1', ...lines]);
}

const auth = () => `Authorization: Bearer ${m.key}`;

describe('the Host header', () => {
  it.each([
    ['a path and query', 'evil.example.com/x?y='],
    ['user information', 'a@evil.com'],
    ['a space', 'evil.example.com x'],
    ['a port out of range', 'api.example.com:70000'],
    ['an empty port', 'api.example.com:'],
  ])('with %s is a 400 and never reaches a uri', async (_name, value) => {
    const res = await getWith(`Host: ${value}`, auth(), 'Service-Version: 2');
    expect([res.status, res.json.error_code, res.json.details.header]).toEqual([400, 'ERR_106', 'host']);
    expect(res.json.msg).toContain('host[:port]');
  });

  it('sent twice is a 400', async () => {
    const res = await getWith(`Host: ${host}`, 'Host: evil.example.com', auth(), 'Service-Version: 2');
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_106']);
    expect(res.json.msg).toContain('2 times');
  });

  it.each([['api.example.com:8443'], ['localhost'], ['127.0.0.1:1234'], ['[::1]:8080']])(
    'of the form host[:port] (%s) builds uri and next_page_uri',
    async (value) => {
      await m.client.ipPolicies.create();
      await m.client.ipPolicies.create();
      const res = await getWith(`Host: ${value}`, auth(), 'Service-Version: 2');
      expect(res.status).toBe(200);
      expect(res.json.uri).toBe(`http://${value}/ip_policies`);
      expect(res.json.next_page_uri).toMatch(
        new RegExp(`^http://${value.replace(/[[\].]/g, '\\$&')}/ip_policies\\?`),
      );
    },
  );
});

describe('the Authorization header', () => {
  it.each([['bearer'], ['BEARER'], ['BeArEr']])('takes the scheme %s case-insensitively', async (scheme) => {
    const res = await getWith(`Host: ${host}`, `Authorization: ${scheme} ${m.key}`, 'Service-Version: 2');
    expect(res.status).toBe(200);
  });

  it('sent twice is a 400, like a repeated header should be, whichever comes first', async () => {
    for (const [first, second] of [
      [m.key, 'not-the-key-123'],
      ['not-the-key-123', m.key],
      [m.key, m.key],
    ]) {
      const res = await getWith(
        `Host: ${host}`,
        `Authorization: Bearer ${first}`,
        `Authorization: Bearer ${second}`,
        'Service-Version: 2',
      );
      expect([res.status, res.json.error_code]).toEqual([400, 'ERR_107']);
    }
  });
});

describe('failed authentications', () => {
  it('are limited per source address: past the limit even a valid key gets a 429, other addresses do not', async () => {
    const limited = await startTestMock({
      config: { ...twoAccounts, auth_failure_limit: { failures: 3, window_seconds: 60 } },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const bad = await limited.raw('GET', '/ip_policies', { apiKey: `wrong-key-${i}-abcdef` });
        expect([bad.status, bad.json.error_code]).toEqual([403, 'ERR_104']);
      }
      const locked = await limited.raw('GET', '/ip_policies');
      expect([locked.status, locked.json.error_code]).toEqual([429, 'ERR_161']);
      expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // From a second loopback source address (Linux routes all of 127/8 to lo).
      const elsewhere = await rawHttp(
        limited.url,
        [
          'GET /ip_policies HTTP/1.1',
          `Host: ${new URL(limited.url).host}`,
          `Authorization: Bearer ${limited.key}`,
          'Service-Version: 2',
        ],
        '',
        { localAddress: '127.0.0.2' },
      );
      expect(elsewhere.status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('do not count successful ones', async () => {
    const limited = await startTestMock({
      config: { ...twoAccounts, auth_failure_limit: { failures: 1, window_seconds: 60 } },
    });
    try {
      for (let i = 0; i < 5; i++) expect((await limited.raw('GET', '/ip_policies')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
