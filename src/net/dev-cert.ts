/** The development TLS certificate of our loopback servers (binding ingress, kubesim): self-signed, generated once per process. */

export interface DevCertificate {
  /** PEM certificate; being self-signed, it is also the CA clients trust. */
  cert: string;
  key: string;
}

let cached: Promise<DevCertificate> | undefined;

async function generate(): Promise<DevCertificate> {
  const selfsigned = (await import('selfsigned')).default;
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'endpoint-binder-dev' }], {
    notAfterDate: new Date(Date.now() + 30 * 24 * 3600 * 1000),
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** The development certificate for `localhost`, `127.0.0.1` and `::1`, valid 30 days. */
export function devCertificate(): Promise<DevCertificate> {
  cached ??= generate().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
