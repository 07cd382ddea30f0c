import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectThroughIngress, IngressError } from '../../src/api/ingress/dialer.js';
import { reusableTls } from '../../src/api/ingress/tls-client.js';
import { devCertificate, type DevCertificate } from '../../src/net/dev-cert.js';

/**
 * Every point where a TLS ingress can go away while the dialer waits: during the handshake,
 * after it (the preface was sent or is being read), in the middle of the reply line; by a clean
 * close (FIN) or a reset (RST). The dialer must reject with an IngressError each time, and no
 * error may surface as an uncaught exception (which would end a forwarder).
 */

type Behaviour = (raw: Socket, tls: TLSSocket | undefined) => void;

let cert: DevCertificate;
const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => {
  uncaught.push(err);
};

beforeAll(async () => {
  cert = await devCertificate();
  process.on('uncaughtException', onUncaught);
});
afterAll(() => {
  process.off('uncaughtException', onUncaught);
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

/** A TLS server whose raw sockets are handed to `atHello` (before the handshake) or `afterHandshake`. */
async function fakeTlsIngress(opts: {
  atHello?: (raw: Socket) => void;
  afterHandshake?: Behaviour;
}): Promise<string> {
  const raws = new Map<string, Socket>();
  const tls = createTlsServer({ key: cert.key, cert: cert.cert, allowHalfOpen: true }, (s) => {
    s.on('error', () => undefined);
    const raw = raws.get(`${s.remoteAddress}|${s.remotePort}`)!;
    opts.afterHandshake?.(raw, s);
  });
  tls.on('tlsClientError', () => undefined);
  const front = createServer((raw) => {
    raw.on('error', () => undefined);
    raws.set(`${raw.remoteAddress}|${raw.remotePort}`, raw);
    if (opts.atHello) {
      raw.once('data', () => opts.atHello!(raw));
      return;
    }
    tls.emit('connection', raw);
  });
  servers.push(front);
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(front.address() as AddressInfo).port}`;
}

/** Reads the preface line, then runs `then`. */
const afterPreface =
  (then: Behaviour): Behaviour =>
  (raw, s) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString('latin1');
      if (!buf.includes('\n')) return;
      s!.off('data', onData);
      then(raw, s);
    };
    s!.on('data', onData);
  };

/** Lets every queued error and close event run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));
}

async function dialFails(
  address: string,
  extra: { servername?: string; ca?: string } = {},
): Promise<IngressError> {
  const err = await connectThroughIngress({
    address,
    authtoken: 'tok_0123456789',
    url: 'tcp://a.b:1',
    tls: { ca: extra.ca ?? cert.cert, ...(extra.servername ? { servername: extra.servername } : {}) },
    timeoutMs: 5_000,
  }).then(
    (s) => {
      s.destroy();
      return new Error('resolved');
    },
    (e: unknown) => e,
  );
  await settle();
  expect(err).toBeInstanceOf(IngressError);
  return err as IngressError;
}

describe('connectThroughIngress over TLS: every failure point rejects, nothing is thrown', () => {
  afterEach(() => {
    expect(uncaught).toEqual([]);
    uncaught.length = 0;
  });

  it('the ingress closes during the handshake (FIN after the ClientHello)', async () => {
    const address = await fakeTlsIngress({ atHello: (raw) => raw.end() });
    for (let i = 0; i < 5; i++) {
      const err = await dialFails(address);
      expect(err.code).toBe('ERR_790');
      expect(err.msg).toContain('TLS handshake');
    }
  });

  it('the ingress resets during the handshake', async () => {
    const address = await fakeTlsIngress({ atHello: (raw) => raw.resetAndDestroy() });
    expect((await dialFails(address)).code).toBe('ERR_790');
  });

  it('the ingress closes or resets right after the handshake, before reading the preface', async () => {
    const closing = await fakeTlsIngress({ afterHandshake: (_raw, s) => s!.destroy() });
    expect((await dialFails(closing)).code).toBe('ERR_790');
    const resetting = await fakeTlsIngress({ afterHandshake: (raw) => raw.resetAndDestroy() });
    expect((await dialFails(resetting)).code).toBe('ERR_790');
  });

  it('the ingress closes or resets after the preface, before or in the middle of the reply', async () => {
    const silentClose = await fakeTlsIngress({ afterHandshake: afterPreface((_raw, s) => s!.end()) });
    expect((await dialFails(silentClose)).code).toBe('ERR_790');
    const halfReply = await fakeTlsIngress({
      afterHandshake: afterPreface((_raw, s) => s!.end('{"ok":tr')),
    });
    expect((await dialFails(halfReply)).code).toBe('ERR_790');
    const resetMidReply = await fakeTlsIngress({
      afterHandshake: afterPreface((raw, s) => {
        s!.write('{"ok":tr', () => raw.resetAndDestroy());
      }),
    });
    expect((await dialFails(resetMidReply)).code).toBe('ERR_790');
  });

  it('a refused certificate has its own code, ERR_795 (untrusted, or another name)', async () => {
    const address = await fakeTlsIngress({ afterHandshake: afterPreface((_raw, s) => s!.end()) });
    const other = await devCertificate();
    const untrusted = await connectThroughIngress({
      address,
      authtoken: 'tok_0123456789',
      url: 'tcp://a.b:1',
      tls: {},
    }).catch((e: unknown) => e);
    expect(untrusted).toMatchObject({ code: 'ERR_795' });
    expect((await dialFails(address, { servername: 'not-the-name.example', ca: other.cert })).code).toBe(
      'ERR_795',
    );
  });

  it('with a reused context and session cache: resumes, and still survives every failure', async () => {
    let resumed = 0;
    let full = 0;
    const tls = createTlsServer({ key: cert.key, cert: cert.cert, allowHalfOpen: true }, (s) => {
      s.on('error', () => undefined);
      if (s.isSessionReused()) resumed++;
      else full++;
      s.once('data', () => s.end('{"ok":true}\n'));
    });
    servers.push(tls);
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(tls.address() as AddressInfo).port}`;
    const opts = reusableTls({ ca: cert.cert });
    for (let i = 0; i < 5; i++) {
      const s = await connectThroughIngress({ address, authtoken: 't', url: 'tcp://a.b:1', tls: opts });
      s.once('end', () => s.end());
      s.resume();
      await new Promise((r) => s.once('close', r));
    }
    expect(full).toBeGreaterThanOrEqual(1);
    expect(resumed).toBeGreaterThanOrEqual(3);
    const closing = await fakeTlsIngress({ atHello: (raw) => raw.end() });
    const err = await connectThroughIngress({
      address: closing,
      authtoken: 't',
      url: 'tcp://a.b:1',
      tls: opts,
    }).catch((e: unknown) => e);
    await settle();
    expect(err).toMatchObject({ code: 'ERR_790' });
  });
});
