import { describe, expect, it } from 'vitest';
import { advertisedAddress, parseAdvertise } from '../../src/mock/ingress/advertise.js';
import {
  findOwnListener,
  isLocalIp,
  normaliseIp,
  type ResolvedListener,
} from '../../src/mock/ingress/own-addresses.js';
import { ownListenersOf } from '../../src/mock/ingress/own-listeners.js';

describe('normaliseIp', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['[::FFFF:7F00:1]', '127.0.0.1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['Example.TEST', 'example.test'],
  ])('%s → %s', (input, out) => {
    expect(normaliseIp(input)).toBe(out);
  });
});

describe('findOwnListener', () => {
  const local = new Set(['10.1.2.3', 'fd00::5']);
  const listeners: ResolvedListener[] = [
    { label: 'admin interface', ip: '127.0.0.1', port: 9000 },
    { label: 'management API', ip: '0.0.0.0', port: 8080 },
    { label: 'binding ingress', ip: '::', port: 7443 },
    { label: 'binding ingress (advertised address)', ip: '10.96.0.10', port: 443 },
  ];
  const find = (ip: string, port: number) => findOwnListener({ ip, port }, listeners, local)?.label;

  it('matches a specific listener only by its own address, or a wildcard destination', () => {
    expect(find('127.0.0.1', 9000)).toBe('admin interface');
    expect(find('0.0.0.0', 9000)).toBe('admin interface');
    expect(find('::', 9000)).toBe('admin interface');
    expect(find('127.0.0.2', 9000)).toBeUndefined();
    expect(find('127.0.0.1', 9001)).toBeUndefined();
  });

  it('matches a wildcard listener through every local address, and nothing remote', () => {
    expect(find('127.0.0.9', 8080)).toBe('management API');
    expect(find('10.1.2.3', 8080)).toBe('management API');
    expect(find('::1', 7443)).toBe('binding ingress');
    expect(find('fd00::5', 7443)).toBe('binding ingress');
    expect(find('10.1.2.4', 8080)).toBeUndefined();
    expect(find('192.0.2.1', 7443)).toBeUndefined();
  });

  it('matches an advertised address by its resolved IP and port', () => {
    expect(find('10.96.0.10', 443)).toBe('binding ingress (advertised address)');
    expect(find('10.96.0.10', 80)).toBeUndefined();
  });

  it('treats loopback and wildcards as local', () => {
    expect(isLocalIp('127.5.5.5', new Set())).toBe(true);
    expect(isLocalIp('::', new Set())).toBe(true);
    expect(isLocalIp('192.0.2.1', new Set())).toBe(false);
  });
});

describe('ownListenersOf', () => {
  it('takes host and port from the listen URLs and public_base_url (default ports by scheme)', () => {
    expect(ownListenersOf('http://127.0.0.1:8080', 'http://[::]:9000', 'https://api.example.test')).toEqual([
      { label: 'management API', host: '127.0.0.1', port: 8080 },
      { label: 'admin interface', host: '::', port: 9000 },
      { label: 'management API (public_base_url)', host: 'api.example.test', port: 443 },
    ]);
    expect(ownListenersOf('http://127.0.0.1:8080', undefined, undefined)).toHaveLength(1);
  });
});

describe('ingress advertise address', () => {
  it.each([
    ['ingress.binder-system.svc:7443', { host: 'ingress.binder-system.svc', port: 7443 }],
    ['localhost', { host: 'localhost' }],
    ['10.0.0.1:443', { host: '10.0.0.1', port: 443 }],
    ['[fd00::1]:443', { host: '[fd00::1]', port: 443 }],
    ['[fd00::1]', { host: '[fd00::1]' }],
  ])('accepts %s', (input, out) => {
    expect(parseAdvertise(input)).toEqual(out);
  });

  it.each([
    '',
    'host:0',
    'host:65536',
    'fd00::1:443',
    'bad_host:80',
    'http://x:80',
    'a..b',
    '[nothex]:1',
    'x:',
  ])('refuses %j', (input) => {
    expect(parseAdvertise(input)).toBeUndefined();
  });

  it('completes a host-only address with the listen port', () => {
    expect(advertisedAddress(undefined, '127.0.0.1:5000', 5000)).toBe('127.0.0.1:5000');
    expect(advertisedAddress('localhost', '127.0.0.1:5000', 5000)).toBe('localhost:5000');
    expect(advertisedAddress('mock.ns.svc:443', '[::]:5000', 5000)).toBe('mock.ns.svc:443');
  });
});
