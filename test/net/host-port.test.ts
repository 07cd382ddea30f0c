import { describe, expect, it } from 'vitest';
import {
  formatHostPort,
  hostPortProblem,
  isLoopbackHost,
  isWildcardHost,
  parseHostPort,
  tryParseHostPort,
} from '../../src/net/host-port.js';

describe('host:port, the one parser', () => {
  it.each([
    ['127.0.0.1:443', { host: '127.0.0.1', port: 443 }],
    ['[::1]:8443', { host: '::1', port: 8443 }],
    ['[::ffff:127.0.0.1]:1', { host: '::ffff:127.0.0.1', port: 1 }],
    ['ingress.example.com:443', { host: 'ingress.example.com', port: 443 }],
    ['a:65535', { host: 'a', port: 65535 }],
  ])('parses %s', (text, want) => {
    expect(parseHostPort(text)).toEqual(want);
    expect(formatHostPort(want.host, want.port)).toBe(text);
  });

  it.each([
    ['no-port', 'must be host:port'],
    ['::1:443', 'must be host:port'],
    ['[notv6]:443', '"[notv6]" is not an IPv6 address'],
    ['a:70000', 'the port must be from 1 to 65535, got 70000'],
    ['a:0', 'the port must be from 1 to 65535, got 0'],
    [':8080', 'the host is missing'],
    ['a:', 'must be host:port'],
    ['a:b', 'must be host:port'],
  ])('refuses %s naming the rule', (text, message) => {
    expect(hostPortProblem(text)).toContain(message);
    expect(() => parseHostPort(text)).toThrow(message);
    expect(tryParseHostPort(text)).toBeUndefined();
  });

  it('allows port 0 and an empty host only when asked (listen addresses)', () => {
    expect(parseHostPort(':0', { allowZero: true, allowEmptyHost: true })).toEqual({ host: '', port: 0 });
    expect(parseHostPort('0.0.0.0:0', { allowZero: true })).toEqual({ host: '0.0.0.0', port: 0 });
  });

  it('tells loopback hosts in every spelling, and nothing else', () => {
    const yes = [
      '127.0.0.1',
      '127.9.9.9',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      '[::ffff:127.0.0.2]',
      '::ffff:7f00:1',
      'localhost',
      'LOCALHOST',
      'localhost.',
    ];
    const no = [
      '10.0.0.1',
      '128.0.0.1',
      '::ffff:10.0.0.1',
      'example.com',
      '::2',
      '::',
      '0.0.0.0',
      'localhost.example',
    ];
    expect(yes.filter((h) => !isLoopbackHost(h))).toEqual([]);
    expect(no.filter(isLoopbackHost)).toEqual([]);
  });

  it('tells wildcard listen hosts', () => {
    expect(['', '0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0'].every(isWildcardHost)).toBe(true);
    expect(['127.0.0.1', '::1', 'localhost'].some(isWildcardHost)).toBe(false);
  });
});
