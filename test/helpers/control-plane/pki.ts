import { generateKeyPairSync } from 'node:crypto';

/**
 * The control plane's key material, made fresh per run: a CA, the API server's serving
 * certificate for 127.0.0.1 and localhost signed by it, and the ServiceAccount token signing key
 * pair (what `kube-apiserver --service-account-signing-key-file` and `--service-account-key-file`
 * take).
 */
export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

export async function makePki(): Promise<ControlPlanePki> {
  const selfsigned = (await import('selfsigned')).default;
  const days = (n: number) => new Date(Date.now() + n * 24 * 3600 * 1000);
  const ca = await selfsigned.generate([{ name: 'commonName', value: 'endpoint-binder-test-ca' }], {
    notAfterDate: days(7),
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const serving = await selfsigned.generate([{ name: 'commonName', value: 'kube-apiserver' }], {
    notAfterDate: days(7),
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: 'kubernetes' },
          { type: 2, value: 'kubernetes.default' },
          { type: 2, value: 'kubernetes.default.svc' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    caCert: ca.cert,
    caKey: ca.private,
    servingCert: serving.cert,
    servingKey: serving.private,
    serviceAccountKey: sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    serviceAccountPub: sa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
