import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startKubesim } from '../../src/kubesim/index.js';

describe('kubesim over TLS', () => {
  it('serves HTTPS with a certificate the generated kubeconfig trusts, and refuses protobuf bodies with 415', async () => {
    const sim = await startKubesim({ tls: true });
    try {
      expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(sim.caPem).toContain('BEGIN CERTIFICATE');
      const kc = sim.kubeConfig();
      expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(false);
      const core = kc.makeApiClient(CoreV1Api);
      const list = await core.listNamespace();
      expect(list.items.map((n) => n.metadata?.name)).toContain('default');

      const res = await fetch(`${sim.url.replace('https', 'http')}/api`).catch((e: unknown) => e);
      expect(res).toBeInstanceOf(Error); // plain HTTP is not served on the TLS port
    } finally {
      await sim.stop();
    }
  });

  it('answers a protobuf body with 415 UnsupportedMediaType', async () => {
    const sim = await startKubesim();
    try {
      const res = await fetch(`${sim.url}/api/v1/namespaces/default/services`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sim.adminToken}`,
          'content-type': 'application/vnd.kubernetes.protobuf',
        },
        body: 'k8s\0',
      });
      expect(res.status).toBe(415);
      const body = (await res.json()) as { kind: string; reason: string };
      expect(body.kind).toBe('Status');
      expect(body.reason).toBe('UnsupportedMediaType');
    } finally {
      await sim.stop();
    }
  });
});
