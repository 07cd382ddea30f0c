import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { REQUIRED, find, helmTool, render, template, type K8sObject } from './helm.js';

/**
 * Issue #20, item 1: what real installs tripped over. Long release names, replaced probes,
 * selector-key labels, private CAs and the usual extension points (extraArgs, extraEnv,
 * extraVolumes, extraObjects, hook annotations).
 */

if ('skip' in helmTool) process.stdout.write(`helm chart tests skipped: ${helmTool.skip}\n`);

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Every optional object switched on, so every name the chart can render is rendered. */
const EVERYTHING = {
  ...REQUIRED,
  api: { ...REQUIRED.api, caBundle: PEM },
  bindings: { ingress: { caBundle: PEM } },
  controller: { podDisruptionBudget: { enabled: true } },
  forwarder: { podDisruptionBudget: { enabled: true } },
  metrics: { serviceMonitor: { enabled: true } },
  networkPolicy: { enabled: true },
};

function deployment(objs: K8sObject[], component: string): K8sObject {
  const d = objs.find(
    (o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === component,
  );
  if (!d) throw new Error(`no ${component} Deployment`);
  return d;
}

const podSpec = (d: K8sObject): any => d['spec'].template.spec;
const container = (d: K8sObject): any => podSpec(d).containers[0];

describe.skipIf('skip' in helmTool)('resource names fit for any release name helm accepts', () => {
  // Helm's own limit on release names is 53 characters.
  const long = 'a-very-long-release-name-for-endpoint-binder-tests-01';
  const twin = 'a-very-long-release-name-for-endpoint-binder-tests-02';
  const longNamespace = `ns-${'x'.repeat(60)}`;

  it('keeps every name within 63 characters and every Service name a DNS-1035 label (53-character release)', async () => {
    expect(long).toHaveLength(53);
    for (const namespace of ['ops', longNamespace]) {
      const objs = await render(EVERYTHING, { release: long, namespace });
      expect(objs.length).toBeGreaterThan(20);
      for (const o of objs) {
        const what = `${o.kind}/${o.metadata.name}`;
        expect(o.metadata.name.length, what).toBeLessThanOrEqual(63);
        expect(o.metadata.name, what).toMatch(DNS_1123_LABEL);
        if (o.kind === 'Service') expect(o.metadata.name, what).toMatch(DNS_1035);
        // Label values have the same 63-character limit.
        for (const [k, v] of Object.entries(o.metadata.labels ?? {}))
          expect(v.length, `${what} label ${k}`).toBeLessThanOrEqual(63);
      }
      // Names stay distinct per kind (a cut never makes two objects one).
      const keys = objs.map((o) => `${o.kind}/${o.metadata.name}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  it('gives two long releases sharing their first 50 characters different names', async () => {
    const a = await render(REQUIRED, { release: long });
    const b = await render(REQUIRED, { release: twin });
    const names = (objs: K8sObject[]) => new Set(objs.map((o) => `${o.kind}/${o.metadata.name}`));
    const nb = names(b);
    expect([...names(a)].filter((n) => nb.has(n))).toEqual([]);
  });

  it('makes DNS-1035 Service names from a release name with dots or a leading digit', async () => {
    const objs = await render(EVERYTHING, { release: '1st.release' });
    const services = objs.filter((o) => o.kind === 'Service');
    expect(services.length).toBe(2);
    for (const s of services) expect(s.metadata.name).toMatch(DNS_1035);
  });

  it('leaves short names as they were', async () => {
    const objs = await render(REQUIRED);
    expect(deployment(objs, 'controller').metadata.name).toBe('eb-endpoint-binder-controller');
    expect(objs.some((o) => o.metadata.name === 'eb-endpoint-binder-ops-controller')).toBe(true);
  });
});

describe.skipIf('skip' in helmTool)('probes are replaceable', () => {
  it('drops the default httpGet when a probe names another handler, keeping the other fields', async () => {
    const exec = { exec: { command: ['endpoint-binder', 'status'] } };
    const objs = await render({
      ...REQUIRED,
      controller: { livenessProbe: exec, readinessProbe: { tcpSocket: { port: 'http' } } },
      forwarder: { livenessProbe: { grpc: { port: 9000 } } },
    });
    const c = container(deployment(objs, 'controller'));
    expect(c.livenessProbe).toEqual({ ...exec, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 });
    expect(c.readinessProbe).toEqual({
      tcpSocket: { port: 'http' },
      periodSeconds: 5,
      timeoutSeconds: 3,
      failureThreshold: 3,
    });
    expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const f = container(deployment(objs, 'forwarder'));
    expect(f.livenessProbe).toEqual({
      grpc: { port: 9000 },
      periodSeconds: 10,
      timeoutSeconds: 3,
      failureThreshold: 3,
    });
    expect(f.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
  });

  it('changes a field of the default probe without touching its handler, and removes a probe set to null', async () => {
    const objs = await render({
      ...REQUIRED,
      controller: { livenessProbe: { periodSeconds: 30 }, startupProbe: null },
    });
    const c = container(deployment(objs, 'controller'));
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.livenessProbe.periodSeconds).toBe(30);
    expect(c).not.toHaveProperty('startupProbe');
  });
});

describe.skipIf('skip' in helmTool)('labels that would break the Deployment selectors', () => {
  const keys = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/component'];
  it.each(keys)('refuses %s in commonLabels and in either podLabels, naming the value', async (key) => {
    for (const [where, values] of [
      ['commonLabels', { commonLabels: { [key]: 'x' } }],
      ['controller.podLabels', { controller: { podLabels: { [key]: 'x' } } }],
      ['forwarder.podLabels', { forwarder: { podLabels: { [key]: 'x' } } }],
    ] as const) {
      const r = await template({ ...REQUIRED, ...values });
      expect(r.code, where).not.toBe(0);
      expect(r.stderr, where).toContain(where.replace('.', '/').split('/').pop()!);
      expect(r.stderr, where).toContain(key);
    }
  });

  it('still takes other labels everywhere', async () => {
    const objs = await render({
      ...REQUIRED,
      commonLabels: { team: 'platform' },
      controller: { podLabels: { 'example.com/tier': 'a' } },
    });
    const d = deployment(objs, 'controller');
    expect(d.metadata.labels?.['team']).toBe('platform');
    expect(d['spec'].template.metadata.labels['example.com/tier']).toBe('a');
  });
});

describe.skipIf('skip' in helmTool)('private CAs for the management API and the binding ingress', () => {
  const apiCa = (objs: K8sObject[], component: string, path: string) => {
    const d = objs.find(
      (o) =>
        (o.kind === 'Deployment' || o.kind === 'Job') &&
        o.metadata.labels?.['app.kubernetes.io/component'] === component,
    )!;
    const c = container(d);
    expect(c.env, component).toContainEqual({ name: 'NODE_EXTRA_CA_CERTS', value: path });
    expect(c.volumeMounts, component).toContainEqual({
      name: 'api-ca',
      mountPath: '/etc/endpoint-binder-api-ca',
      readOnly: true,
    });
    return podSpec(d).volumes.find((v: { name: string }) => v.name === 'api-ca');
  };

  it('renders api.caBundle into a ConfigMap trusted by the controller and the uninstall hook', async () => {
    const objs = await render({ ...REQUIRED, api: { ...REQUIRED.api, caBundle: PEM } });
    expect(find(objs, 'ConfigMap', 'eb-endpoint-binder-api-ca')['data']['ca.crt']).toBe(PEM);
    for (const c of ['controller', 'uninstall'])
      expect(apiCa(objs, c, '/etc/endpoint-binder-api-ca/ca.crt')).toEqual({
        name: 'api-ca',
        configMap: { name: 'eb-endpoint-binder-api-ca' },
      });
    // The forwarder never calls the management API.
    expect(JSON.stringify(deployment(objs, 'forwarder'))).not.toContain('api-ca');
  });

  it('takes the API CA from an existing ConfigMap or Secret', async () => {
    const fromCm = await render({
      ...REQUIRED,
      api: { ...REQUIRED.api, caConfigMap: { name: 'corp-ca', key: 'bundle.pem' } },
    });
    expect(fromCm.some((o) => o.metadata.name === 'eb-endpoint-binder-api-ca')).toBe(false);
    expect(apiCa(fromCm, 'controller', '/etc/endpoint-binder-api-ca/bundle.pem')).toEqual({
      name: 'api-ca',
      configMap: { name: 'corp-ca' },
    });
    const fromSecret = await render({
      ...REQUIRED,
      api: { ...REQUIRED.api, caSecret: { name: 'corp-tls', key: 'ca.pem' } },
    });
    expect(apiCa(fromSecret, 'uninstall', '/etc/endpoint-binder-api-ca/ca.pem')).toEqual({
      name: 'api-ca',
      secret: { secretName: 'corp-tls' },
    });
  });

  it('takes the ingress CA from an existing Secret', async () => {
    const objs = await render({
      ...REQUIRED,
      bindings: { ingress: { caSecret: { name: 'ingress-tls', key: 'ca.crt' } } },
    });
    const cfg = parseYaml(
      String(find(objs, 'ConfigMap', 'eb-endpoint-binder-forwarder')['data']['forwarder.yaml']),
    );
    expect(cfg.ingress.caFile).toBe('/etc/endpoint-binder-ingress-ca/ca.crt');
    const f = deployment(objs, 'forwarder');
    expect(podSpec(f).volumes).toContainEqual({ name: 'ingress-ca', secret: { secretName: 'ingress-tls' } });
    expect(container(f).volumeMounts).toContainEqual({
      name: 'ingress-ca',
      mountPath: '/etc/endpoint-binder-ingress-ca',
      readOnly: true,
    });
  });

  it('refuses two sources for one CA, naming the value', async () => {
    const r = await template({
      ...REQUIRED,
      api: { ...REQUIRED.api, caBundle: PEM, caSecret: { name: 's' } },
      bindings: { ingress: { caConfigMap: { name: 'a' }, caSecret: { name: 'b' } } },
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('api: set at most one of caBundle, caConfigMap.name and caSecret.name');
    expect(r.stderr).toContain('bindings.ingress: set at most one of caBundle');
  });
});

describe.skipIf('skip' in helmTool)('extension points', () => {
  it('adds extraArgs, extraEnv, extraVolumes and extraVolumeMounts to both components (and the controller’s to the hook)', async () => {
    const vol = { name: 'proxy-ca', secret: { secretName: 'proxy' } };
    const mount = { name: 'proxy-ca', mountPath: '/etc/proxy', readOnly: true };
    const env = { name: 'HTTPS_PROXY', value: 'http://proxy.example.test:3128' };
    const extras = {
      extraArgs: ['--log-level', 'debug'],
      extraEnv: [env],
      extraVolumes: [vol],
      extraVolumeMounts: [mount],
    };
    const objs = await render({ ...REQUIRED, controller: extras, forwarder: extras });
    for (const component of ['controller', 'forwarder']) {
      const d = deployment(objs, component);
      const c = container(d);
      expect(c.args.slice(0, 3), component).toEqual([
        component,
        '--config',
        `/etc/endpoint-binder/${component}.yaml`,
      ]);
      expect(c.args.slice(3), component).toEqual(['--log-level', 'debug']);
      expect(c.env, component).toContainEqual(env);
      expect(c.volumeMounts, component).toContainEqual(mount);
      expect(podSpec(d).volumes, component).toContainEqual(vol);
    }
    const hook = container(find(objs, 'Job', 'eb-endpoint-binder-uninstall'));
    expect(hook.env).toContainEqual(env);
    expect(hook.volumeMounts).toContainEqual(mount);
    // The hook runs `uninstall`: the controller's flags are not its flags.
    expect(hook.args).not.toContain('--log-level');
  });

  it('renders extraObjects, maps and strings, through tpl', async () => {
    const objs = await render({
      ...REQUIRED,
      extraObjects: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'extra-{{ .Release.Name }}' },
          data: { a: 'b' },
        },
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: extra-secret\n  namespace: {{ .Release.Namespace }}\n',
      ],
    });
    expect(find(objs, 'ConfigMap', 'extra-eb')['data']).toEqual({ a: 'b' });
    expect(find(objs, 'Secret', 'extra-secret').metadata.namespace).toBe('ops');
  });

  it('puts hook annotations on the uninstall Job and its pod; the hook stays pre-delete', async () => {
    const objs = await render({
      ...REQUIRED,
      uninstall: {
        hook: {
          annotations: {
            'helm.sh/hook': 'post-install',
            'helm.sh/hook-delete-policy': 'before-hook-creation',
            team: 'a',
          },
          podAnnotations: { 'sidecar.istio.io/inject': 'false' },
        },
      },
    });
    const job = find(objs, 'Job', 'eb-endpoint-binder-uninstall');
    expect(job.metadata.annotations).toEqual({
      'helm.sh/hook': 'pre-delete',
      'helm.sh/hook-weight': '0',
      'helm.sh/hook-delete-policy': 'before-hook-creation',
      team: 'a',
    });
    expect(job['spec'].template.metadata.annotations).toEqual({ 'sidecar.istio.io/inject': 'false' });
  });
});

describe.skipIf('skip' in helmTool)('the config check before install and upgrade', () => {
  it('runs `check --config-only` on the new controller config in a pre-install/pre-upgrade hook, whose account may only write its ConfigRefused Event', async () => {
    const selector = 'endpoint.namespace in ["a", "b"] &&\n  bad(';
    const objs = await render({ ...REQUIRED, bindings: { endpointSelector: selector } });
    const cm = find(objs, 'ConfigMap', 'eb-endpoint-binder-config-check');
    const job = find(objs, 'Job', 'eb-endpoint-binder-config-check');
    for (const o of [cm, job]) {
      expect(o.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(o.metadata.annotations?.['helm.sh/hook-delete-policy']).toBe(
        'before-hook-creation,hook-succeeded',
      );
    }
    // The ConfigMap exists before the Job.
    expect(Number(cm.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    );
    // The config checked is the one the controller will get, selector and all.
    expect(cm['data']['controller.yaml']).toBe(
      find(objs, 'ConfigMap', 'eb-endpoint-binder-controller')['data']['controller.yaml'],
    );
    expect(parseYaml(String(cm['data']['controller.yaml'])).bindings.endpointSelector).toBe(selector);
    const spec = podSpec(job);
    expect(job['spec'].backoffLimit).toBe(0);
    // Its own hook account, whose one right is the ConfigRefused Event in this namespace (#29 item 2).
    expect(spec.automountServiceAccountToken).toBe(true);
    expect(spec.serviceAccountName).toBe('eb-endpoint-binder-config-check');
    const role = find(objs, 'Role', 'eb-endpoint-binder-config-check');
    expect(role['rules']).toEqual([{ apiGroups: [''], resources: ['events'], verbs: ['create'] }]);
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) {
      const o = find(objs, kind, 'eb-endpoint-binder-config-check');
      expect(o.metadata.annotations?.['helm.sh/hook'], kind).toBe('pre-install,pre-upgrade');
      // Before the ConfigMap and the Job; gone once the hooks succeeded.
      expect(Number(o.metadata.annotations?.['helm.sh/hook-weight']), kind).toBeLessThan(
        Number(cm.metadata.annotations?.['helm.sh/hook-weight']),
      );
      expect(o.metadata.annotations?.['helm.sh/hook-delete-policy'], kind).toBe(
        'before-hook-creation,hook-succeeded',
      );
    }
    expect(find(objs, 'RoleBinding', 'eb-endpoint-binder-config-check')['subjects']).toEqual([
      { kind: 'ServiceAccount', name: 'eb-endpoint-binder-config-check', namespace: 'ops' },
    ]);
    const c = spec.containers[0];
    expect(c.args).toEqual([
      'check',
      '--config-only',
      '--config',
      '/etc/endpoint-binder/controller.yaml',
      '--refusal-event',
      'ops/eb-endpoint-binder-config-check',
    ]);
    expect(c.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    // The chart's own Secret does not exist before install; its key is required by the chart.
    expect(c.env).toEqual([{ name: 'ENDPOINT_BINDER_API_KEY', value: 'checked-by-the-chart' }]);
    const own = await render({ api: REQUIRED.api, credentials: { existingSecret: 'mine' } });
    expect(container(find(own, 'Job', 'eb-endpoint-binder-config-check')).env).toEqual([
      { name: 'ENDPOINT_BINDER_API_KEY', valueFrom: { secretKeyRef: { name: 'mine', key: 'API_KEY' } } },
    ]);
    expect(spec.volumes).toContainEqual({
      name: 'config',
      configMap: { name: 'eb-endpoint-binder-config-check' },
    });
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
  });

  it('takes annotations, and renders nothing when disabled', async () => {
    const objs = await render({ ...REQUIRED, configCheck: { annotations: { team: 'a' } } });
    expect(find(objs, 'Job', 'eb-endpoint-binder-config-check').metadata.annotations?.['team']).toBe('a');
    const off = await render({ ...REQUIRED, configCheck: { enabled: false } });
    expect(off.filter((o) => o.metadata.name.endsWith('-config-check'))).toEqual([]);
  });
});
