import { describe, expect, it } from 'vitest';
import {
  dataPathText,
  UrlHealthRecorder,
  WINDOW_MINUTES,
  type DialResult,
} from '../../src/forwarder/url-health.js';

const URL_A = 'tcp://db.prod:5432';
const URL_B = 'http://web.shop:80';
const T0 = Date.UTC(2026, 10, 24, 22, 0, 0);
const ok: DialResult = { ok: true };
const refused: DialResult = {
  ok: false,
  code: 'ERR_730',
  message: 'upstream 127.0.0.1:1 refused the connection',
};

describe('UrlHealthRecorder', () => {
  it.each([
    { name: 'never dialled', events: [], at: T0, want: 'no traffic yet', s: 0, f: 0 },
    { name: 'one success', events: [[ok, T0]], at: T0 + 2_000, want: 'ok 2s ago', s: 1, f: 0 },
    {
      name: 'refusal after success',
      events: [
        [ok, T0],
        [refused, T0 + 1_000],
      ],
      at: T0 + 6_000,
      want: 'upstream refused (ERR_730) 5s ago',
      s: 1,
      f: 1,
    },
    {
      name: 'success after refusal',
      events: [
        [refused, T0],
        [ok, T0 + 1_000],
      ],
      at: T0 + 3_000,
      want: 'ok 2s ago',
      s: 1,
      f: 1,
    },
    {
      name: 'a code the table does not shorten uses the catalogue title',
      events: [[{ ok: false, code: 'ERR_721', message: 'no such endpoint' }, T0]],
      at: T0 + 1_000,
      want: "No endpoint with this URL exists in the authtoken's account (ERR_721) 1s ago",
      s: 0,
      f: 1,
    },
    {
      name: 'no code: the observed message',
      events: [[{ ok: false, message: 'no binding ingress address is known' }, T0]],
      at: T0 + 180_000,
      want: 'no binding ingress address is known 3m ago',
      s: 0,
      f: 1,
    },
    {
      name: 'counts leave the window',
      events: [
        [ok, T0],
        [refused, T0 + 60_000],
        [ok, T0 + WINDOW_MINUTES * 60_000],
      ],
      at: T0 + WINDOW_MINUTES * 60_000,
      want: 'ok 0s ago',
      s: 1,
      f: 1,
    },
  ] as { name: string; events: [DialResult, number][]; at: number; want: string; s: number; f: number }[])(
    '$name',
    ({ events, at, want, s, f }) => {
      const r = new UrlHealthRecorder();
      for (const [result, t] of events) r.record(URL_A, result, t);
      const h = r.get(URL_A, at);
      expect(dataPathText(h, at)).toBe(want);
      expect([h.successes, h.failures]).toEqual([s, f]);
    },
  );

  it('keeps the catalogue title, the code and the observed message of the last failure', () => {
    const r = new UrlHealthRecorder();
    r.record(URL_A, refused, T0);
    expect(r.get(URL_A, T0).lastFailure).toEqual({
      at: T0,
      code: 'ERR_730',
      title: "The endpoint's upstream refused the connection.",
      message: 'upstream 127.0.0.1:1 refused the connection',
    });
  });

  it('keeps URLs apart and forgets the ones no longer served', () => {
    const r = new UrlHealthRecorder();
    r.record(URL_A, ok, T0);
    r.record(URL_B, refused, T0);
    expect(r.get(URL_A, T0).failures).toBe(0);
    expect(r.get(URL_B, T0).successes).toBe(0);
    r.retain([URL_B]);
    expect(r.urls()).toEqual([URL_B]);
    expect(r.get(URL_A, T0)).toMatchObject({ successes: 0, failures: 0 });
    expect(r.get(URL_A, T0).lastSuccessAt).toBeUndefined();
  });

  it('holds at most WINDOW_MINUTES buckets per URL however long it runs', () => {
    const r = new UrlHealthRecorder();
    for (let m = 0; m < 100; m++) r.record(URL_A, ok, T0 + m * 60_000);
    expect(r.get(URL_A, T0 + 99 * 60_000).successes).toBe(WINDOW_MINUTES);
  });
});
