import { describe, expect, it } from 'vitest';
import { canonicalEndpointUrl, parseEndpointUrl, parseUpstreamUrl } from '../../src/binding/endpoint-url.js';

describe('parseEndpointUrl: valid URLs', () => {
  it.each([
    ['http://app.example', 'http', 'app', 'example', 80, 'http://app.example:80'],
    ['http://app.example:12345', 'http', 'app', 'example', 12345, 'http://app.example:12345'],
    ['tcp://app.example:443', 'tcp', 'app', 'example', 443, 'tcp://app.example:443'],
    ['http://a.b:80', 'http', 'a', 'b', 80, 'http://a.b:80'],
    ['http://my-svc.ns-1:1', 'http', 'my-svc', 'ns-1', 1, 'http://my-svc.ns-1:1'],
    ['tcp://0a.9z:65535', 'tcp', '0a', '9z', 65535, 'tcp://0a.9z:65535'],
    [`http://${'a'.repeat(63)}.b`, 'http', 'a'.repeat(63), 'b', 80, `http://${'a'.repeat(63)}.b:80`],
  ])('%s', (input, scheme, name, namespace, port, url) => {
    const r = parseEndpointUrl(input);
    expect(r).toEqual({
      ok: true,
      value: {
        scheme,
        name,
        namespace,
        host: `${name}.${namespace}`,
        port,
        hostport: `${name}.${namespace}:${port}`,
        url,
      },
    });
  });

  it('gives one canonical form for a URL with and without the default http port', () => {
    expect(canonicalEndpointUrl('http://a.b')).toBe(canonicalEndpointUrl('http://a.b:80'));
    expect(canonicalEndpointUrl('tcp://a.b')).toBeUndefined();
  });
});

describe('parseEndpointUrl: invalid URLs name the rule they break', () => {
  it.each([
    ['https://app.example', 2],
    ['tls://app.example:12345', 2],
    ['ftp://app.example:21', 2],
    ['HTTP://app.example', 2],
    ['http://app.foo.bar', 3],
    ['http://app', 3],
    ['http://*.ns', 3],
    ['http://app.*', 3],
    ['http://App.example', 3],
    ['http://app.Example', 3],
    ['http://-app.ns', 3],
    ['http://app-.ns', 3],
    ['http://app_x.ns', 3],
    ['http://app..ns', 3],
    [`http://${'a'.repeat(64)}.b`, 3],
    ['http://:80', 3],
    ['tcp://app.example', 4],
    ['http://app.ns:0', 4],
    ['http://app.ns:65536', 4],
    ['http://app.ns:', 4],
    ['http://app.ns:080', 4],
    ['http://app.ns:8a', 4],
    ['http://app.ns:-1', 4],
    ['app.ns', 1],
    ['', 1],
    ['//app.ns', 1],
    ['http://app.ns/', 1],
    ['http://app.ns/path', 1],
    ['http://app.ns?x=1', 1],
    ['http://app.ns#f', 1],
    ['http://user@app.ns', 1],
    ['http://app.ns:80:81', 1],
    ['http://app .ns', 1],
  ] as const)('%s → rule %i', (input, rule) => {
    const r = parseEndpointUrl(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.rule).toBe(rule);
      expect(r.message).toMatch(new RegExp(`^rule ${rule}: `));
    }
  });
});

describe('parseUpstreamUrl', () => {
  it.each([
    ['http://127.0.0.1:8080', { scheme: 'http', host: '127.0.0.1', port: 8080 }],
    ['http://localhost', { scheme: 'http', host: 'localhost', port: 80 }],
    ['http://app.internal:3000/', { scheme: 'http', host: 'app.internal', port: 3000 }],
    ['tcp://[::1]:5432', { scheme: 'tcp', host: '::1', port: 5432 }],
  ])('%s is valid', (input, value) => {
    expect(parseUpstreamUrl(input)).toEqual({ ok: true, value });
  });

  it.each([
    'tcp://127.0.0.1',
    'https://a.b:443',
    'http://a.b/path',
    'http://u@a.b:1',
    'http://a.b:0',
    'http://a.b:70000',
    '127.0.0.1:80',
  ])('%s is invalid', (input) => {
    expect(parseUpstreamUrl(input).ok).toBe(false);
  });
});
