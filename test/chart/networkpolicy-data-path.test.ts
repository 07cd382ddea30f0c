import { describe, expect, it } from 'vitest';
import { REQUIRED, find, helmTool, render } from './helm.js';

/**
 * #27 item 5: the controller reads each forwarder pod's /status on its http port for `status`'s
 * DATA PATH column. With the NetworkPolicies on, that path stays open whatever `metricsFrom` and
 * `egress` allow, and nothing else is opened by it.
 */

const controllerPods = {
  podSelector: {
    matchLabels: {
      'app.kubernetes.io/name': 'endpoint-binder',
      'app.kubernetes.io/instance': 'eb',
      'app.kubernetes.io/component': 'controller',
    },
  },
};
const forwarderPods = {
  podSelector: {
    matchLabels: {
      'app.kubernetes.io/name': 'endpoint-binder',
      'app.kubernetes.io/instance': 'eb',
      'app.kubernetes.io/component': 'forwarder',
    },
  },
};
const monitoring = [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }];

describe.skipIf('skip' in helmTool)('NetworkPolicies and the data-path reads', () => {
  it('the forwarder admits the controllers on its http port even when metricsFrom names only monitoring', async () => {
    const objs = await render({ ...REQUIRED, networkPolicy: { enabled: true, metricsFrom: monitoring } });
    const np = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-forwarder');
    const ingress = np['spec'].ingress as { ports: { port: number }[]; from?: unknown[] }[];
    const http = ingress.filter((r) => r.ports.some((p) => p.port === 8081));
    // One rule: the release's controller pods, then the metricsFrom peers (#29: /status fenced by default).
    expect(http.map((r) => r.from)).toEqual([[controllerPods, ...monitoring]]);
  });

  it('the controller may reach the forwarders http port beside the configured egress, also when that is none', async () => {
    for (const [egress, want] of [
      [[{}], [{}]],
      [[], []],
      [[{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }] }], [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }] }]],
    ] as const) {
      const objs = await render({ ...REQUIRED, networkPolicy: { enabled: true, egress } });
      const cnp = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-controller');
      expect(cnp['spec'].egress, JSON.stringify(egress)).toEqual([
        ...want,
        { to: [forwarderPods], ports: [{ port: 8081, protocol: 'TCP' }] },
      ]);
    }
  });

  it('with bindings disabled there is no forwarder: the controller egress is the configured one alone', async () => {
    const objs = await render({
      ...REQUIRED,
      bindings: { enabled: false },
      networkPolicy: { enabled: true, egress: [] },
    });
    const cnp = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-controller');
    expect(cnp['spec'].egress).toEqual([]);
  });
});
