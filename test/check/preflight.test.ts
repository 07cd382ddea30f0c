import { describe, expect, it } from 'vitest';
import { preflightVerdict, type PreflightObservation } from '../../src/check/preflight.js';

const ok = { kind: 'ok', value: null } as const;
const base: PreflightObservation = {
  apiUrl: 'https://api.example.com',
  api: ok,
  server: 'https://k8s:6443',
  cluster: ok,
  namespace: 'ops',
  namespaceAnswer: ok,
};

describe('preflight verdict (what stops the controller, what it waits for)', () => {
  it('starts when both APIs answer and the namespace exists', () => {
    expect(preflightVerdict(base)).toEqual({ kind: 'ok' });
  });

  it.each([
    [
      'API TLS failure',
      { api: { kind: 'tls', message: 'self-signed certificate' } },
      /^api\.baseUrl .*TLS verification failed/,
    ],
    [
      'API key 401',
      { api: { kind: 'status', status: 401, message: 'invalid key' } },
      /^ENDPOINT_BINDER_API_KEY: .*HTTP 401/,
    ],
    [
      'API key 403',
      { api: { kind: 'status', status: 403, message: 'forbidden' } },
      /^ENDPOINT_BINDER_API_KEY: .*HTTP 403/,
    ],
    [
      'not the management API (404)',
      { api: { kind: 'status', status: 404, message: 'not found' } },
      /^api\.baseUrl .*HTTP 404/,
    ],
    ['cluster TLS failure', { cluster: { kind: 'tls', message: 'unable to verify' } }, /^kubeconfig: TLS/],
    [
      'cluster 401',
      { cluster: { kind: 'status', status: 401, message: 'Unauthorized' } },
      /^kubeconfig: .*HTTP 401/,
    ],
    [
      'namespace missing',
      { namespaceAnswer: { kind: 'status', status: 404, message: 'not found' } },
      /^operatorNamespace: namespace ops does not exist/,
    ],
  ] as const)('stops with one line on %s', (_name, change, line) => {
    const v = preflightVerdict({ ...base, ...change });
    expect(v.kind).toBe('fatal');
    expect(v.kind === 'fatal' && v.line).toMatch(line);
    expect(v.kind === 'fatal' && v.line.includes('\n')).toBe(false);
  });

  it.each([
    ['API connection refused', { api: { kind: 'network', message: 'connect ECONNREFUSED' } }],
    ['API 503', { api: { kind: 'status', status: 503, message: 'unavailable' } }],
    ['API 429', { api: { kind: 'status', status: 429, message: 'slow down' } }],
    [
      'cluster DNS',
      { cluster: { kind: 'network', message: 'getaddrinfo ENOTFOUND k8s' }, namespaceAnswer: undefined },
    ],
  ] as const)('waits and retries on %s', (_name, change) => {
    const v = preflightVerdict({ ...base, ...change });
    expect(v.kind).toBe('retry');
  });
});
