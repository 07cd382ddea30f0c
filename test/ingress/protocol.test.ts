import { describe, expect, it } from 'vitest';
import {
  encodeLine,
  LineReader,
  MAX_PREFACE_BYTES,
  parsePreface,
  parseReply,
} from '../../src/api/ingress/protocol.js';
import { errorCatalogue } from '../../src/api/error-codes/index.js';

const buf = (s: string) => Buffer.from(s, 'utf8');

describe('LineReader', () => {
  const input = buf('{"v":1,"authtoken":"tok","url":"http://a.b:80"}\nSTREAM-BYTES');
  const lineEnd = input.indexOf(0x0a);

  it('splits correctly at every chunk boundary and keeps the bytes after the newline', () => {
    for (let cut = 0; cut <= input.length; cut++) {
      const r = new LineReader(1024);
      const first = r.push(input.subarray(0, cut));
      if (cut <= lineEnd) {
        expect(first.kind).toBe('more');
        const second = r.push(input.subarray(cut));
        expect(second).toMatchObject({ kind: 'line' });
        if (second.kind !== 'line') throw new Error('unreachable');
        expect(second.line.toString()).toBe(input.subarray(0, lineEnd).toString());
        expect(second.rest.toString()).toBe('STREAM-BYTES');
      } else {
        if (first.kind !== 'line') throw new Error(`cut ${cut}: expected a line`);
        expect(first.line.toString()).toBe(input.subarray(0, lineEnd).toString());
        expect(first.rest.toString()).toBe(input.subarray(lineEnd + 1, cut).toString());
      }
    }
  });

  it('assembles a line fed one byte at a time', () => {
    const r = new LineReader(1024);
    let result;
    for (let i = 0; i < input.length; i++) {
      result = r.push(input.subarray(i, i + 1));
      if (result.kind !== 'more') break;
    }
    expect(result?.kind).toBe('line');
    if (result?.kind === 'line') expect(result.rest.length).toBe(0);
  });

  it('strips a trailing carriage return', () => {
    const r = new LineReader(100).push(buf('abc\r\nrest'));
    expect(r.kind === 'line' && r.line.toString()).toBe('abc');
  });

  it('reports too_long without a newline past the limit, and with a late newline', () => {
    const r = new LineReader(10);
    expect(r.push(buf('0123456789')).kind).toBe('more');
    expect(r.push(buf('x')).kind).toBe('too_long');
    expect(new LineReader(10).push(buf('01234567890\n')).kind).toBe('too_long');
    expect(new LineReader(10).push(buf('0123456789\n')).kind).toBe('line');
  });

  it('refuses to be used after its verdict', () => {
    const r = new LineReader(10);
    r.push(buf('a\n'));
    expect(() => r.push(buf('b'))).toThrow(/already/);
  });
});

describe('parsePreface', () => {
  const ok = { v: 1, authtoken: 'tok', url: 'http://a.b:80' };

  it('accepts a valid preface with and without source', () => {
    expect(parsePreface(buf(JSON.stringify(ok)))).toEqual({ ok: true, value: ok });
    const withSource = { ...ok, source: { pod: 'p', namespace: 'default', ip: '10.0.0.1' } };
    expect(parsePreface(buf(JSON.stringify(withSource)))).toEqual({ ok: true, value: withSource });
  });

  it.each([
    ['not json', 'ERR_700'],
    ['[1,2]', 'ERR_700'],
    ['"string"', 'ERR_700'],
    [Buffer.from([0xff, 0xfe]).toString('latin1'), 'ERR_700'],
    ['{"v":2,"authtoken":"t","url":"http://a.b"}', 'ERR_702'],
    ['{"authtoken":"t","url":"http://a.b"}', 'ERR_702'],
    ['{"v":1,"authtoken":"t","url":"http://a.b","extra":1}', 'ERR_703'],
    ['{"v":1,"url":"http://a.b"}', 'ERR_703'],
    ['{"v":1,"authtoken":"","url":"http://a.b"}', 'ERR_703'],
    ['{"v":1,"authtoken":"t","url":"http://a.b","source":{"node":"x"}}', 'ERR_703'],
  ])('rejects %s with %s', (line, code) => {
    const r = parsePreface(Buffer.from(line, 'latin1'));
    expect(r).toMatchObject({ ok: false, code });
  });

  it('names unknown fields in the message', () => {
    const r = parsePreface(buf('{"v":1,"authtoken":"t","url":"http://a.b","bogus":1}'));
    expect(!r.ok && r.msg).toMatch(/"bogus"/);
  });
});

describe('parseReply and encodeLine', () => {
  it('round-trips replies', () => {
    const okLine = encodeLine({ ok: true, endpoint_id: 'ep_1' });
    expect(okLine.at(-1)).toBe(0x0a);
    expect(parseReply(okLine.subarray(0, -1))).toEqual({
      ok: true,
      value: { ok: true, endpoint_id: 'ep_1' },
    });
    const err = { ok: false as const, code: 'ERR_710', msg: 'no' };
    expect(parseReply(encodeLine(err).subarray(0, -1))).toEqual({ ok: true, value: err });
  });

  it('rejects malformed replies with ERR_792', () => {
    expect(parseReply(buf('{"ok":"yes"}'))).toMatchObject({ ok: false, code: 'ERR_792' });
    expect(parseReply(buf('HTTP/1.1 400 Bad Request'))).toMatchObject({ ok: false, code: 'ERR_792' });
  });

  it('uses only catalogued ERR_7xx codes and a sane preface limit', () => {
    for (const code of [
      'ERR_700',
      'ERR_701',
      'ERR_702',
      'ERR_703',
      'ERR_704',
      'ERR_710',
      'ERR_740',
      'ERR_794',
    ])
      expect(code in errorCatalogue).toBe(true);
    expect(MAX_PREFACE_BYTES).toBeGreaterThanOrEqual(2048 + 512 + 256);
  });
});
