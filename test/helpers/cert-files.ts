import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devCertificate } from '../../src/net/dev-cert.js';

/** The development certificate written as PEM files in a new temporary folder (for `*_file` settings). */
export async function devCertificateFiles(
  prefix: string,
): Promise<{ dir: string; cert: string; certFile: string; keyFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dev = await devCertificate();
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, dev.cert);
  writeFileSync(keyFile, dev.key);
  return { dir, cert: dev.cert, certFile, keyFile };
}
