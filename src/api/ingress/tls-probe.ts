/**
 * Does the server at `address` speak TLS? One handshake, no certificate check and nothing sent
 * after it (no preface, no authtoken): used to name the cause when a plain client is closed
 * without a reply by every connection (a TLS server does that to a non-TLS first byte).
 */
import { connect } from 'node:tls';
import { parseHostPort } from '../../net/host-port.js';

export function speaksTls(address: string, timeoutMs = 3_000): Promise<boolean> {
  const { host, port } = parseHostPort(address);
  return new Promise((resolve) => {
    // Only the handshake is wanted: the peer is not trusted, and nothing is sent to it.
    const s = connect({ host, port, rejectUnauthorized: false });
    const done = (answer: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('secureConnect', () => done(true));
    s.once('error', () => done(false));
    s.once('close', () => done(false));
  });
}
