/** The ingress's TLS certificate: the generated development one, or PEM files from the config. */
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { devCertificate } from '../../net/dev-cert.js';
import type { MockConfig } from '../config.js';

/** A bad ingress setting found while starting (unreadable certificate, plain TCP off loopback). */
export class IngressConfigError extends Error {
  override readonly name = 'IngressConfigError';
}

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Only for the development certificate: the PEM clients trust as their CA. */
  caPem?: string;
}

async function readPem(path: string, field: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new IngressConfigError(`ingress.${field} (${flag}): cannot read "${path}" (${why})`);
  }
}

/** Loads the configured certificate; undefined for plain TCP. */
export async function loadTlsMaterial(tls: MockConfig['ingress']['tls']): Promise<TlsMaterial | undefined> {
  if (tls === false) return undefined;
  if (tls === true) {
    const dev = await devCertificate();
    return { key: dev.key, cert: dev.cert, caPem: dev.cert };
  }
  const cert = await readPem(tls.cert_file, 'tls.cert_file', '--ingress-cert');
  const key = await readPem(tls.key_file, 'tls.key_file', '--ingress-key');
  try {
    // Fails here, naming the files, rather than on the first client's handshake.
    createSecureContext({ cert, key });
  } catch (err) {
    throw new IngressConfigError(
      `ingress.tls: the certificate "${tls.cert_file}" and key "${tls.key_file}" are not a usable ` +
        `PEM pair (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return { key, cert };
}
