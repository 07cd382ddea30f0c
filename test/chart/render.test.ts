import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { forwarderPodLabels } from '../../src/binding/identity.js';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { REQUIRED, find, helmTool, kinds, render, renderNotes, type K8sObject } from './helm.js';

if ('skip' in helmTool) process.stdout.write(`helm chart tests skipped: ${helmTool.skip}\n`);

/** CEL text with everything a comma-joined flag or a careless template would break. */
const SELECTOR = [
  `endpoint.namespace in ["prod", "stage"] && endpoint.metadata.contains("team: \\"a, b\\"")`,
  `  || endpoint.host.endsWith('.edge') && endpoint.port == 5432 # {not: yaml}, - [x]`,
].join('\n');

const SERVICE_LABELS = { 'team.example.com/owner': 'a-b', tier: '1', flag: 'true' };
const SERVICE_ANNOTATIONS = { note: 'a, b: "c" \'d\'', 'x.example.com/raw': 'true', empty: '' };

function podSpec(deploy: K8sObject): any {
  return deploy['spec'].template.spec;
}

function container(deploy: K8sObject): any {
  return podSpec(deploy).containers[0];
}

/** The controller's config as the controller would read it: the ConfigMap key, parsed and validated. */
function controllerConfig(objs: K8sObject[], configMap: string) {
  const text = String(find(objs, 'ConfigMap', configMap)['data']['controller.yaml']);
  const r = resolveControllerConfig(parseYaml(text), { ENDPOINT_BINDER_API_KEY: 'from-the-secret' });
  if (!r.ok) throw new Error(`the rendered controller.yaml is refused:\n${r.errors.join('\n')}`);
  return r.config;
}

describe.skipIf('skip' in helmTool)('helm template: default values', () => {
  it('renders the expected objects, every one parseable, names prefixed by the release', async () => {
    const objs = await render(REQUIRED);
    expect(kinds(objs)).toEqual(
      [
        'ClusterRole/eb-endpoint-binder-ops-controller',
        'ClusterRole/eb-endpoint-binder-ops-uninstall',
        'ClusterRoleBinding/eb-endpoint-binder-ops-controller',
        'ClusterRoleBinding/eb-endpoint-binder-ops-uninstall',
        'ConfigMap/eb-endpoint-binder-config-check',
        'ConfigMap/eb-endpoint-binder-controller',
        'ConfigMap/eb-endpoint-binder-forwarder',
        'ConfigMap/eb-endpoint-binder-uninstall',
        'Deployment/eb-endpoint-binder-controller',
        'Deployment/eb-endpoint-binder-forwarder',
        'Job/eb-endpoint-binder-config-check',
        'Job/eb-endpoint-binder-uninstall',
        'NetworkPolicy/eb-endpoint-binder-controller',
        'NetworkPolicy/eb-endpoint-binder-forwarder',
        'Role/eb-endpoint-binder-config-check',
        'Role/eb-endpoint-binder-controller-check',
        'Role/eb-endpoint-binder-controller-install-record',
        'Role/eb-endpoint-binder-controller-leader-election',
        'Role/eb-endpoint-binder-forwarder',
        'Role/eb-endpoint-binder-uninstall-lease',
        'RoleBinding/eb-endpoint-binder-config-check',
        'RoleBinding/eb-endpoint-binder-controller-check',
        'RoleBinding/eb-endpoint-binder-controller-install-record',
        'RoleBinding/eb-endpoint-binder-controller-leader-election',
        'RoleBinding/eb-endpoint-binder-forwarder',
        'RoleBinding/eb-endpoint-binder-uninstall-lease',
        'Secret/eb-endpoint-binder-credentials',
        'Secret/eb-endpoint-binder-uninstall',
        'Service/eb-endpoint-binder-controller-metrics',
        'Service/eb-endpoint-binder-forwarder-metrics',
        'ServiceAccount/eb-endpoint-binder-config-check',
        'ServiceAccount/eb-endpoint-binder-controller',
        'ServiceAccount/eb-endpoint-binder-forwarder',
        'ServiceAccount/eb-endpoint-binder-uninstall',
        'ValidatingAdmissionPolicy/eb-endpoint-binder-ops-fence',
        'ValidatingAdmissionPolicyBinding/eb-endpoint-binder-ops-fence',
      ].sort(),
    );
    for (const o of objs) {
      expect(o.metadata.labels?.['app.kubernetes.io/instance'], `${o.kind}/${o.metadata.name}`).toBe('eb');
      expect(o.metadata.labels?.['app.kubernetes.io/managed-by'], `${o.kind}/${o.metadata.name}`).toBe(
        'Helm',
      );
      if (!o.kind.startsWith('Cluster') && !o.kind.startsWith('ValidatingAdmissionPolicy'))
        expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('ops');
    }
  });

  it('gives the controller a config its own schema accepts, with the install identity of the release', async () => {
    const objs = await render(REQUIRED);
    const cfg = controllerConfig(objs, 'eb-endpoint-binder-controller');
    expect(cfg.releaseName).toBe('eb');
    expect(cfg.operatorNamespace).toBe('ops');
    expect(cfg.api.baseUrl).toBe('https://api.example.test');
    expect(cfg.bindings.endpointSelector).toBe('true');
    expect(cfg.bindings.portRange).toEqual({ min: 10000, max: 19999 });
    expect(cfg.leaderElection.enabled).toBe(true);
    expect(cfg.http.listen).toBe('0.0.0.0:8080');
  });

  it('runs two leader-elected controllers with probes on /healthz and /readyz and a config checksum', async () => {
    const objs = await render(REQUIRED);
    const d = find(objs, 'Deployment', 'eb-endpoint-binder-controller');
    expect(d['spec'].replicas).toBe(2);
    expect(d['spec'].selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'endpoint-binder',
      'app.kubernetes.io/instance': 'eb',
      'app.kubernetes.io/component': 'controller',
    });
    expect(d['spec'].template.metadata.labels).toMatchObject(d['spec'].selector.matchLabels);
    expect(d['spec'].template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    const c = container(d);
    expect(c.args).toEqual(['controller', '--config', '/etc/endpoint-binder/controller.yaml']);
    expect(c.image).toBe('ghcr.io/endpoint-binder/endpoint-binder:0.1.0');
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.valueFrom]));
    expect(env['ENDPOINT_BINDER_API_KEY']).toEqual({
      secretKeyRef: { name: 'eb-endpoint-binder-credentials', key: 'API_KEY' },
    });
    expect(env['POD_NAMESPACE']).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(env['POD_NAME']).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(podSpec(d).serviceAccountName).toBe('eb-endpoint-binder-controller');
    expect(podSpec(d).volumes[0]).toEqual({
      name: 'config',
      configMap: { name: 'eb-endpoint-binder-controller' },
    });
  });

  it('labels forwarder pods exactly as the projected internal Services select them', async () => {
    const objs = await render(REQUIRED, { release: 'shop', namespace: 'edge' });
    const d = find(objs, 'Deployment', 'shop-endpoint-binder-forwarder');
    const want = forwarderPodLabels({ release: 'shop', operatorNamespace: 'edge' });
    expect(d['spec'].template.metadata.labels).toMatchObject(want);
    expect(d['spec'].selector.matchLabels).toEqual(want);
  });

  it('gives the forwarder its config, probes, a grace period longer than its drain and a surge-only rollout', async () => {
    const objs = await render(REQUIRED);
    const d = find(objs, 'Deployment', 'eb-endpoint-binder-forwarder');
    const cfg = parseYaml(
      String(find(objs, 'ConfigMap', 'eb-endpoint-binder-forwarder')['data']['forwarder.yaml']),
    );
    expect(cfg).toEqual({
      releaseName: 'eb',
      operatorNamespace: 'ops',
      ingress: { tls: true },
      limits: {},
      portRange: { min: 10000, max: 19999 },
      dialOn: { http: 'data', tcp: 'accept' },
      authtokenFile: '/etc/endpoint-binder-authtoken/AUTHTOKEN',
      drain: { delaySeconds: 5, timeoutSeconds: 25 },
      http: { listen: '0.0.0.0:8081' },
      logLevel: 'info',
    });
    expect(d['spec'].replicas).toBe(2);
    expect(d['spec'].strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    expect(podSpec(d).terminationGracePeriodSeconds).toBeGreaterThan(5 + 25);
    const c = container(d);
    expect(c.args).toEqual(['forwarder', '--config', '/etc/endpoint-binder/forwarder.yaml']);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8081, protocol: 'TCP' }]);
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.valueFrom]));
    // The authtoken is a mounted file, re-read on change (#15 item 7), not an env var.
    expect(env['ENDPOINT_BINDER_AUTHTOKEN']).toBeUndefined();
    expect(env['ENDPOINT_BINDER_API_KEY']).toBeUndefined();
    expect(c.volumeMounts).toContainEqual({
      name: 'authtoken',
      mountPath: '/etc/endpoint-binder-authtoken',
      readOnly: true,
    });
    expect(podSpec(d).volumes).toContainEqual({
      name: 'authtoken',
      secret: {
        secretName: 'eb-endpoint-binder-credentials',
        items: [{ key: 'AUTHTOKEN', path: 'AUTHTOKEN' }],
      },
    });
  });

  it('gives the forwarder a config its own schema accepts (once src/forwarder/config.ts exists)', async (ctx) => {
    // A variable path: the forwarder is built in parallel; until it is merged this check is skipped.
    const path = '../../src/forwarder/config.js';
    const mod = (await import(path).catch(() => undefined)) as
      { ForwarderConfig?: { safeParse(v: unknown): { success: boolean; error?: unknown } } } | undefined;
    if (!mod?.ForwarderConfig) {
      ctx.skip('src/forwarder/config.ts is not in this tree yet');
      return;
    }
    const objs = await render({
      ...REQUIRED,
      bindings: { ingress: { address: 'ingress.example.test:443', caBundle: 'PEM' } },
      forwarder: { limits: { maxConnections: 100, maxConnectionsPerPort: 50 } },
    });
    const text = String(find(objs, 'ConfigMap', 'eb-endpoint-binder-forwarder')['data']['forwarder.yaml']);
    const r = mod.ForwarderConfig.safeParse(parseYaml(text));
    expect(r.error).toBeUndefined();
    expect(r.success).toBe(true);
  });

  it('runs every pod restricted: non-root, read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp', async () => {
    const objs = await render(REQUIRED);
    const pods = objs.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
    expect(pods).toHaveLength(4);
    for (const o of pods) {
      const spec = podSpec(o);
      expect(spec.securityContext, o.metadata.name).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      // Every pod has its account's token (the config check's writes only its ConfigRefused Event).
      expect(spec.automountServiceAccountToken).toBe(true);
      for (const c of spec.containers) {
        expect(c.securityContext, o.metadata.name).toEqual({
          allowPrivilegeEscalation: false,
          privileged: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
        });
        // A writable /tmp despite the read-only root filesystem.
        expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
      }
    }
  });

  it('runs endpoint-binder uninstall with the policy in a pre-delete hook, with its own service account', async () => {
    for (const policy of ['delete', 'retain']) {
      const objs = await render({ ...REQUIRED, uninstall: { policy } });
      const job = find(objs, 'Job', 'eb-endpoint-binder-uninstall');
      expect(job.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'pre-delete',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
      const c = container(job);
      expect(c.args).toEqual([
        'uninstall',
        '--config',
        '/etc/endpoint-binder/controller.yaml',
        '--policy',
        policy,
      ]);
      expect(podSpec(job).restartPolicy).toBe('Never');
      expect(podSpec(job).serviceAccountName).toBe('eb-endpoint-binder-uninstall');
      // Issue #29: every input of the hook is a hook resource of its own (created just before it),
      // so `helm uninstall` of a refused install, whose own objects never existed, runs it too.
      expect(podSpec(job).volumes[0]).toEqual({
        name: 'config',
        configMap: { name: 'eb-endpoint-binder-uninstall' },
      });
      expect(c.env.find((e: any) => e.name === 'ENDPOINT_BINDER_API_KEY').valueFrom.secretKeyRef).toEqual({
        name: 'eb-endpoint-binder-uninstall',
        key: 'API_KEY',
      });
      for (const [kind, name] of [
        ['ConfigMap', 'eb-endpoint-binder-uninstall'],
        ['Secret', 'eb-endpoint-binder-uninstall'],
        ['ServiceAccount', 'eb-endpoint-binder-uninstall'],
      ] as const) {
        const hook = find(objs, kind, name).metadata.annotations?.['helm.sh/hook'] ?? '';
        expect(hook.split(','), `${kind}/${name}`).toContain('pre-delete');
      }
      expect(
        controllerConfig(objs, 'eb-endpoint-binder-uninstall'),
        'the hook config is the controller config',
      ).toEqual(controllerConfig(objs, 'eb-endpoint-binder-controller'));
    }
    const off = await render({ ...REQUIRED, uninstall: { hook: { enabled: false } } });
    expect(kinds(off).filter((k) => k.includes('uninstall'))).toEqual([]);
  });

  it('stores the credentials in its own Secret under the documented keys', async () => {
    const objs = await render(REQUIRED);
    const s = find(objs, 'Secret', 'eb-endpoint-binder-credentials');
    expect(Buffer.from(s['data'].API_KEY, 'base64').toString()).toBe('test-api-key-0001');
    expect(Buffer.from(s['data'].AUTHTOKEN, 'base64').toString()).toBe('test-authtoken-0001');
  });

  it('renders no PodDisruptionBudget or ServiceMonitor unless asked', async () => {
    const objs = await render(REQUIRED);
    expect(objs.filter((o) => ['PodDisruptionBudget', 'ServiceMonitor'].includes(o.kind))).toEqual([]);
  });

  it('fences the http ports by default: only the release controller pods reach /status (#29 item 8)', async () => {
    const objs = await render(REQUIRED);
    const controllerPods = {
      podSelector: {
        matchLabels: find(objs, 'Deployment', 'eb-endpoint-binder-controller')['spec'].selector.matchLabels,
      },
    };
    const cnp = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-controller');
    expect(cnp['spec'].podSelector).toEqual(controllerPods.podSelector);
    expect(cnp['spec'].policyTypes).toEqual(['Ingress', 'Egress']);
    // One rule: the http port, from the controller pods only (no rule without `from`: that would be anyone).
    expect(cnp['spec'].ingress).toEqual([
      { ports: [{ port: 8080, protocol: 'TCP' }], from: [controllerPods] },
    ]);
    const fnp = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-forwarder');
    // The forwarder's ports stay open to every client; its http port is fenced as the controller's.
    expect(fnp['spec'].ingress[0].from).toBeUndefined();
    expect(fnp['spec'].ingress[1]).toEqual({
      ports: [{ port: 8081, protocol: 'TCP' }],
      from: [controllerPods],
    });
    const off = await render({ ...REQUIRED, networkPolicy: { enabled: false } });
    expect(off.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
  });

  it('NOTES names networkPolicy.metricsFrom when a ServiceMonitor is on and no scraper may reach the ports', async () => {
    const scraped = { ...REQUIRED, metrics: { serviceMonitor: { enabled: true } } };
    const notes = await renderNotes(scraped, {
      extraArgs: ['--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor'],
    });
    expect(notes).toContain(
      'Prometheus cannot scrape: set\nnetworkPolicy.metricsFrom to its pods or namespace',
    );
    const allowed = await renderNotes(
      { ...scraped, networkPolicy: { metricsFrom: [{ namespaceSelector: {} }] } },
      { extraArgs: ['--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor'] },
    );
    expect(allowed).not.toContain('Prometheus cannot scrape');
  });
});

describe.skipIf('skip' in helmTool)('helm template: non-default values', () => {
  it('passes the selector, labels and annotations to the controller unchanged', async () => {
    const objs = await render({
      ...REQUIRED,
      description: 'edge cluster, "blue"',
      registrationMetadata: '{"cluster": "blue", "n": 1}',
      bindings: {
        endpointSelector: SELECTOR,
        serviceLabels: SERVICE_LABELS,
        serviceAnnotations: SERVICE_ANNOTATIONS,
        clusterDomain: 'corp.internal',
        portRange: { min: 20000, max: 20099 },
      },
      controller: { logLevel: 'debug', resyncIntervalSeconds: 60, writeConcurrency: 4, port: 9090 },
    });
    const cfg = controllerConfig(objs, 'eb-endpoint-binder-controller');
    expect(cfg.bindings.endpointSelector).toBe(SELECTOR);
    expect(cfg.bindings.serviceLabels).toEqual(SERVICE_LABELS);
    expect(cfg.bindings.serviceAnnotations).toEqual(SERVICE_ANNOTATIONS);
    expect(cfg.bindings.clusterDomain).toBe('corp.internal');
    expect(cfg.bindings.portRange).toEqual({ min: 20000, max: 20099 });
    expect(cfg.registration).toEqual({
      description: 'edge cluster, "blue"',
      metadata: '{"cluster": "blue", "n": 1}',
    });
    expect(cfg.logLevel).toBe('debug');
    expect(cfg.resyncIntervalSeconds).toBe(60);
    expect(cfg.writeConcurrency).toBe(4);
    expect(cfg.http.listen).toBe('0.0.0.0:9090');
    const c = container(find(objs, 'Deployment', 'eb-endpoint-binder-controller'));
    expect(c.ports[0].containerPort).toBe(9090);
  });

  it('changes the controller checksum (and only it) when the selector changes, so an upgrade rolls the controller', async () => {
    const checksums = async (selector: string) => {
      const objs = await render({ ...REQUIRED, bindings: { endpointSelector: selector } });
      const ann = (name: string) =>
        find(objs, 'Deployment', name)['spec'].template.metadata.annotations['checksum/config'] as string;
      return {
        controller: ann('eb-endpoint-binder-controller'),
        forwarder: ann('eb-endpoint-binder-forwarder'),
      };
    };
    const a = await checksums('endpoint.namespace == "prod"');
    const b = await checksums('endpoint.namespace == "stage"');
    expect(a.controller).not.toBe(b.controller);
    expect(a.forwarder).toBe(b.forwarder);
  });

  it('applies names, image, scheduling and pod settings to both components', async () => {
    const scheduling = {
      replicas: 3,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
      },
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
      ],
      priorityClassName: 'system-cluster-critical',
      resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '64Mi' } },
      podLabels: { team: 'net' },
      podAnnotations: { 'example.com/x': 'y' },
      extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' }],
    };
    const objs = await render({
      ...REQUIRED,
      fullnameOverride: 'binder',
      commonLabels: { 'cost-center': 'c42' },
      image: { repository: 'registry.example/eb', digest: `sha256:${'a'.repeat(64)}`, pullPolicy: 'Always' },
      imagePullSecrets: [{ name: 'regcred' }],
      controller: scheduling,
      forwarder: { ...scheduling, drain: { delaySeconds: 10, timeoutSeconds: 50 } },
    });
    for (const name of ['binder-controller', 'binder-forwarder']) {
      const d = find(objs, 'Deployment', name);
      const spec = podSpec(d);
      expect(d['spec'].replicas).toBe(3);
      expect(d.metadata.labels?.['cost-center']).toBe('c42');
      expect(spec.nodeSelector).toEqual(scheduling.nodeSelector);
      expect(spec.tolerations).toEqual(scheduling.tolerations);
      expect(spec.affinity).toEqual(scheduling.affinity);
      expect(spec.topologySpreadConstraints).toEqual(scheduling.topologySpreadConstraints);
      expect(spec.priorityClassName).toBe('system-cluster-critical');
      expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
      expect(d['spec'].template.metadata.labels.team).toBe('net');
      expect(d['spec'].template.metadata.annotations['example.com/x']).toBe('y');
      const c = container(d);
      expect(c.image).toBe(`registry.example/eb@sha256:${'a'.repeat(64)}`);
      expect(c.imagePullPolicy).toBe('Always');
      expect(c.resources).toEqual(scheduling.resources);
      expect(c.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' });
    }
    expect(podSpec(find(objs, 'Deployment', 'binder-forwarder')).terminationGracePeriodSeconds).toBe(65);
  });

  it('uses the tag when given, else the appVersion', async () => {
    const objs = await render({ ...REQUIRED, image: { tag: '9.9.9-rc.1' } });
    expect(container(find(objs, 'Deployment', 'eb-endpoint-binder-controller')).image).toBe(
      'ghcr.io/endpoint-binder/endpoint-binder:9.9.9-rc.1',
    );
  });

  it('passes the binding ingress override and CA bundle to the forwarder', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const objs = await render({
      ...REQUIRED,
      bindings: {
        ingress: { address: 'ingress.example.test:4443', serverName: 'ingress.example.test', caBundle: pem },
      },
      forwarder: { limits: { maxConnections: 500, dialTimeoutMs: 2000 }, port: 9091 },
    });
    const cfg = parseYaml(
      String(find(objs, 'ConfigMap', 'eb-endpoint-binder-forwarder')['data']['forwarder.yaml']),
    );
    expect(cfg.ingress).toEqual({
      address: 'ingress.example.test:4443',
      tls: true,
      serverName: 'ingress.example.test',
      caFile: '/etc/endpoint-binder-ingress-ca/ca.crt',
    });
    expect(cfg.limits).toEqual({ maxConnections: 500, dialTimeoutMs: 2000 });
    expect(cfg.http).toEqual({ listen: '0.0.0.0:9091' });
    expect(find(objs, 'ConfigMap', 'eb-endpoint-binder-ingress-ca')['data']['ca.crt']).toBe(pem);
    const spec = podSpec(find(objs, 'Deployment', 'eb-endpoint-binder-forwarder'));
    expect(spec.volumes).toContainEqual({
      name: 'ingress-ca',
      configMap: { name: 'eb-endpoint-binder-ingress-ca' },
    });
    expect(spec.containers[0].volumeMounts).toContainEqual({
      name: 'ingress-ca',
      mountPath: '/etc/endpoint-binder-ingress-ca',
      readOnly: true,
    });

    const own = await render({
      ...REQUIRED,
      bindings: { ingress: { caConfigMap: { name: 'corp-ca', key: 'bundle.pem' } } },
    });
    const ownCfg = parseYaml(
      String(find(own, 'ConfigMap', 'eb-endpoint-binder-forwarder')['data']['forwarder.yaml']),
    );
    expect(ownCfg.ingress.caFile).toBe('/etc/endpoint-binder-ingress-ca/bundle.pem');
    expect(podSpec(find(own, 'Deployment', 'eb-endpoint-binder-forwarder')).volumes).toContainEqual({
      name: 'ingress-ca',
      configMap: { name: 'corp-ca' },
    });
  });

  it('uses an existing Secret instead of rendering one', async () => {
    const objs = await render({ api: REQUIRED.api, credentials: { existingSecret: 'my-creds' } });
    expect(objs.filter((o) => o.kind === 'Secret')).toEqual([]);
    const c = container(find(objs, 'Deployment', 'eb-endpoint-binder-controller'));
    expect(c.env[0].valueFrom.secretKeyRef.name).toBe('my-creds');
    // The forwarder mounts the authtoken key as a file: a changed Secret reaches it without a restart.
    const fwd = podSpec(find(objs, 'Deployment', 'eb-endpoint-binder-forwarder'));
    expect(fwd.volumes.find((v: any) => v.name === 'authtoken').secret.secretName).toBe('my-creds');
    expect(
      container(find(objs, 'Job', 'eb-endpoint-binder-uninstall')).env[0].valueFrom.secretKeyRef.name,
    ).toBe('my-creds');
  });

  it('runs no forwarder when bindings are disabled (and needs no authtoken)', async () => {
    const objs = await render({
      api: REQUIRED.api,
      credentials: { apiKey: 'k-only' },
      bindings: { enabled: false },
    });
    expect(kinds(objs).filter((k) => k.includes('forwarder'))).toEqual([]);
    const cfg = controllerConfig(objs, 'eb-endpoint-binder-controller');
    expect(cfg.bindings.enabled).toBe(false);
  });

  it('renders no ServiceMonitor where the Prometheus operator is missing, and no fence before 1.30; NOTES says so', async () => {
    // Issue #29 item 8: either would fail the install (no such kind) instead of running without it.
    const values = { ...REQUIRED, metrics: { serviceMonitor: { enabled: true } } };
    const objs = await render(values, { extraArgs: ['--kube-version', '1.29.0'] });
    expect(
      objs.filter((o) => o.kind === 'ServiceMonitor' || o.kind.startsWith('ValidatingAdmissionPolicy')),
    ).toEqual([]);
    const notes = await renderNotes(values, { extraArgs: ['--kube-version', '1.29.0'] });
    expect(notes).toContain('does not serve monitoring.coreos.com/v1\nServiceMonitor');
    expect(notes).toContain(
      'OFF: this cluster (Kubernetes v1.29.0) does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (1.30+)',
    );
    const served = await render(values);
    expect(served.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy')).length).toBe(2);
  });

  it('renders PodDisruptionBudgets, a ServiceMonitor and NetworkPolicies when enabled', async () => {
    const objs = await render(
      {
        ...REQUIRED,
        bindings: { portRange: { min: 30000, max: 30999 } },
        controller: { podDisruptionBudget: { enabled: true } },
        forwarder: { podDisruptionBudget: { enabled: true, minAvailable: null, maxUnavailable: 1 } },
        metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' }, interval: '15s' } },
        networkPolicy: {
          enabled: true,
          metricsFrom: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }],
        },
      },
      { extraArgs: ['--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor'] },
    );
    const cpdb = find(objs, 'PodDisruptionBudget', 'eb-endpoint-binder-controller');
    expect(cpdb['spec']).toEqual({
      minAvailable: 1,
      selector: {
        matchLabels: find(objs, 'Deployment', 'eb-endpoint-binder-controller')['spec'].selector.matchLabels,
      },
    });
    const fpdb = find(objs, 'PodDisruptionBudget', 'eb-endpoint-binder-forwarder');
    expect(fpdb['spec'].maxUnavailable).toBe(1);
    expect(fpdb['spec'].minAvailable).toBeUndefined();

    const sm = find(objs, 'ServiceMonitor', 'eb-endpoint-binder');
    expect(sm.metadata.labels?.['release']).toBe('prom');
    expect(sm['spec'].endpoints).toEqual([
      { port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '10s' },
    ]);
    // The selector matches both metrics Services and nothing the controller projects.
    for (const name of ['eb-endpoint-binder-controller-metrics', 'eb-endpoint-binder-forwarder-metrics']) {
      const svc = find(objs, 'Service', name);
      expect(svc.metadata.labels).toMatchObject(sm['spec'].selector.matchLabels);
      expect(['controller', 'forwarder']).toContain(svc.metadata.labels?.['app.kubernetes.io/component']);
      expect(svc['spec'].ports[0].targetPort).toBe('http');
    }

    const np = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-forwarder');
    expect(np['spec'].ingress[0]).toEqual({ ports: [{ port: 30000, endPort: 30999, protocol: 'TCP' }] });
    const controllerPods = {
      podSelector: {
        matchLabels: find(objs, 'Deployment', 'eb-endpoint-binder-controller')['spec'].selector.matchLabels,
      },
    };
    expect(np['spec'].ingress[1].from).toEqual([
      controllerPods,
      { namespaceSelector: { matchLabels: { name: 'monitoring' } } },
    ]);
    expect(np['spec'].egress).toEqual([{}]);
    const cnp = find(objs, 'NetworkPolicy', 'eb-endpoint-binder-controller');
    expect(cnp['spec'].ingress[0].ports).toEqual([{ port: 8080, protocol: 'TCP' }]);
    expect(cnp['spec'].ingress[0].from).toEqual([
      controllerPods,
      { namespaceSelector: { matchLabels: { name: 'monitoring' } } },
    ]);
  });
});

describe.skipIf('skip' in helmTool)('NOTES.txt', () => {
  it('says how to see projections, read the status and why an endpoint may not be projected', async () => {
    const notes = await renderNotes(REQUIRED, { release: 'shop', namespace: 'edge' });
    expect(notes).toContain(
      'kubectl get svc -A -l app.kubernetes.io/managed-by=endpoint-binder,app.kubernetes.io/instance=shop,endpoint-binder.io/operator-namespace=edge',
    );
    expect(notes).toContain('kubectl -n edge get lease shop-controller');
    expect(notes).toContain('endpoint-binder status');
    // Issue #29 item 5: NOTES names `check`, as docs/install.md does, and asks the leader for status.
    expect(notes).toContain(
      'kubectl -n edge exec deploy/shop-endpoint-binder-controller -- endpoint-binder check --config /etc/endpoint-binder/controller.yaml',
    );
    const install = readFileSync('docs/install.md', 'utf8');
    expect(install).toContain('exec "${LEADER%_*}" -- endpoint-binder status');
    expect(notes).toContain('exec "${LEADER%_*}" -- endpoint-binder status');
    for (const state of [
      'not-selected',
      'namespace-missing',
      'name-conflict',
      'port-conflict',
      'ports-exhausted',
    ]) {
      expect(notes).toContain(state);
    }
    expect(notes).toContain('deletes the projected Services');
    const retain = await renderNotes({ ...REQUIRED, uninstall: { policy: 'retain' } });
    expect(retain).toContain('keeps the projected Services');
  });
});
