import { describe, expect, it } from 'vitest';
import {
  ingressCheck,
  protocolLabel,
  type DialSeen,
  type IngressTarget,
  type ProtocolSeen,
} from '../../src/check/ingress-decisions.js';

/** The ingress line's protocol wording and the forced-v2 failure, decided from what a dial saw (pure). */
const tlsTarget: IngressTarget = { address: 'ingress.example:443', source: 'config', tls: true };

/** The ingress line for one dial to tlsTarget. */
const lineFor = (seen: DialSeen, protocol: ProtocolSeen) =>
  ingressCheck({ kind: 'dialled', target: tlsTarget, seen, protocol });

describe('check: the ingress line names the protocol spoken', () => {
  it.each([
    [{ setting: 'auto', used: 'v2' } as const, true, 'v2 (h2)'],
    [{ setting: 'auto', used: 'v2' } as const, false, 'v2 (h2c)'],
    [{ setting: 'auto', used: 'v1' } as const, true, 'v1 (the ingress offered no h2)'],
    [{ setting: 'v1', used: 'v1' } as const, true, 'v1 (ingress.protocol: v1)'],
  ])('%j over %s: %s', (protocol, tls, label) => {
    expect(protocolLabel(protocol, tls)).toBe(label);
  });

  it('a passing dial carries the protocol in its title; a transport failure does not claim one', () => {
    const ok = lineFor({ ok: true }, { setting: 'auto', used: 'v2' });
    expect(ok.status).toBe('ok');
    expect(ok.title).toBe(
      'binding ingress reachable at ingress.example:443 with TLS and the authtoken accepted, over v2 (h2)',
    );
    const down = lineFor(
      { ok: false, code: 'ERR_793', msg: 'ECONNREFUSED' },
      { setting: 'auto', used: 'v2' },
    );
    expect(down.status).toBe('fail');
    expect(down.title).not.toContain('over v');
  });

  it('forced v2 without h2 (ERR_797) fails with one line naming forwarder.ingressProtocol and the fix', () => {
    const line = lineFor(
      { ok: false, code: 'ERR_797', msg: 'the ingress did not select h2 (ALPN): speak v1' },
      { setting: 'v2', used: 'v2' },
    );
    expect(line.status).toBe('fail');
    expect(line.hint).toMatch(/^ERR_797: Dialer: the ingress did not select HTTP\/2/);
    expect(line.hint).toContain("ingress.protocol is v2 (the chart's forwarder.ingressProtocol)");
    expect(line.hint).toContain('set it to auto (v2 when offered, else v1) or v1');
    expect(line.hint).not.toContain('\n');
  });
});
