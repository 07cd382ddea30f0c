import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/api/ingress/cancel.js';
import { connectThroughIngress, IngressError } from '../../src/api/ingress/dialer.js';
import { closedPort, readBytes, startServer, type TestServer } from './helpers.js';

/** A fake ingress that reads the preface line and then does whatever `behave` says. */
async function fakeIngress(behave: (s: Socket, preface: string) => void): Promise<TestServer> {
  return startServer((s) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString('latin1');
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      s.off('data', onData);
      behave(s, buf.slice(0, nl));
    };
    s.on('data', onData);
  });
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(behave: (s: Socket, preface: string) => void): Promise<string> {
  const srv = await fakeIngress(behave);
  servers.push(srv);
  return `127.0.0.1:${srv.port}`;
}

async function expectIngressError(p: Promise<unknown>, code: string): Promise<IngressError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IngressError);
  expect((err as IngressError).code).toBe(code);
  return err as IngressError;
}

describe('connectThroughIngress against a fake ingress', () => {
  it('sends the preface with source and keeps bytes that arrive in the same chunk as the reply', async () => {
    let seen = '';
    const address = await fake((s, preface) => {
      seen = preface;
      s.write('{"ok":true,"endpoint_id":"ep_x"}\nBANNER');
      s.end();
    });
    const sock = await connectThroughIngress({
      address,
      authtoken: 'tok_123456789',
      url: 'http://a.b:80',
      source: { pod: 'web-1', namespace: 'default', ip: '10.1.2.3' },
    });
    expect((await readBytes(sock, 6)).toString()).toBe('BANNER');
    sock.destroy();
    expect(JSON.parse(seen)).toEqual({
      v: 1,
      authtoken: 'tok_123456789',
      url: 'http://a.b:80',
      source: { pod: 'web-1', namespace: 'default', ip: '10.1.2.3' },
    });
  });

  it('rejects with the ingress code on ok:false', async () => {
    const address = await fake((s) => s.end('{"ok":false,"code":"ERR_710","msg":"bad token"}\n'));
    const err = await expectIngressError(
      connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80' }),
      'ERR_710',
    );
    expect(err.msg).toBe('bad token');
    expect(err.fromIngress).toBe(true);
  });

  it('ERR_790 when the ingress closes before replying', async () => {
    const address = await fake((s) => s.end());
    const err = await expectIngressError(
      connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80' }),
      'ERR_790',
    );
    expect(err.fromIngress).toBe(false);
  });

  it('ERR_791 when no reply comes within timeoutMs', async () => {
    const address = await fake(() => undefined);
    await expectIngressError(
      connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80', timeoutMs: 100 }),
      'ERR_791',
    );
  });

  it('ERR_792 on a malformed reply', async () => {
    const address = await fake((s) => s.write('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await expectIngressError(
      connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80' }),
      'ERR_792',
    );
  });

  it('ERR_793 when nothing listens', async () => {
    const port = await closedPort();
    await expectIngressError(
      connectThroughIngress({ address: `127.0.0.1:${port}`, authtoken: 'x', url: 'http://a.b:80' }),
      'ERR_793',
    );
  });

  it('ERR_794 when aborted, before or during the attempt', async () => {
    const address = await fake(() => undefined);
    await expectIngressError(
      connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80', signal: AbortSignal.abort() }),
      'ERR_794',
    );
    const ac = new AbortController();
    const p = connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80', signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await expectIngressError(p, 'ERR_794');
  });

  it("ERR_794 when a Cancellation (the forwarder's cheap signal) aborts, before or during the attempt", async () => {
    const address = await fake(() => undefined);
    const done = new Cancellation();
    done.abort();
    await expectIngressError(
      connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80', signal: done }),
      'ERR_794',
    );
    const cancel = new Cancellation();
    const p = connectThroughIngress({ address, authtoken: 'x', url: 'http://a.b:80', signal: cancel });
    setTimeout(() => cancel.abort(), 20);
    await expectIngressError(p, 'ERR_794');
  });
});
