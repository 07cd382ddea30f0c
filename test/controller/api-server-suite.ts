import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_ALIAS, ROLE_LABEL, ownershipSelector } from '../../src/binding/ownership/index.js';
import { EXTRA_KEYS_ANNOTATION } from '../../src/binding/services.js';
import { resolveControllerConfig, type ControllerConfigInput } from '../../src/controller/config.js';
import { startController, type Controller } from '../../src/controller/controller.js';
import { collect } from '../../src/api/client/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { ACME_KEY, startTestMock, type TestMock } from '../helpers/mock-api.js';
import { fastTuning, waitFor } from '../kube/helpers.js';
import { budget } from '../helpers/budget.js';

/**
 * The controller against one API server, written once and run against two: kubesim inside
 * `npm test` (api-servers.test.ts) and a real k3s where Docker exists (test/e2e/k3s-controller.e2e.ts,
 * the e2e workflow's second job). Where they disagree, kubesim has a gap. Names are random per
 * run, so a reused cluster holds nothing of an earlier run.
 */
export interface ApiServer {
  kubeConfig: KubeConfig;
  close(): Promise<void>;
}

export function defineControllerSuite(title: string, startServer: () => Promise<ApiServer>): void {
  describe.sequential(title, () => {
    const run = randomBytes(3).toString('hex');
    const operatorNs = `eb-op-${run}`;
    const appNs = `eb-app-${run}`;
    const release = `eb-${run}`;
    let server: ApiServer;
    let core: CoreV1Api;
    let mock: TestMock;
    let controller: Controller | undefined;

    // Listed straight from the API server, not through the controller's caches.
    const owned = async (): Promise<V1Service[]> =>
      (
        await core.listServiceForAllNamespaces({
          labelSelector: ownershipSelector({ release, operatorNamespace: operatorNs }),
        })
      ).items;
    const start = async (cfg: ControllerConfigInput): Promise<Controller> => {
      await controller?.stop();
      const r = resolveControllerConfig(
        {
          api: { baseUrl: mock.url },
          releaseName: release,
          operatorNamespace: operatorNs,
          http: { listen: '127.0.0.1:0' },
          resyncIntervalSeconds: 60,
          leaderElection: { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 },
          ...cfg,
        },
        { ENDPOINT_BINDER_API_KEY: ACME_KEY },
      );
      if (!r.ok) throw new Error(r.errors.join('\n'));
      controller = await startController({
        config: r.config,
        kubeConfig: server.kubeConfig,
        logger: silentLogger(),
        cacheTuning: { ...fastTuning, pageSize: 500 },
        poll: { initialMs: 100, maxMs: 500 },
        identity: `suite_${run}`,
      });
      return controller;
    };
    const eventually = (what: string, check: () => Promise<boolean>) =>
      waitFor(check, what, { timeoutMs: 60_000, intervalMs: 200 });

    beforeAll(async () => {
      server = await startServer();
      core = server.kubeConfig.makeApiClient(CoreV1Api);
      for (const name of [operatorNs, appNs]) await core.createNamespace({ body: { metadata: { name } } });
      mock = await startTestMock({ ingress: { host: '127.0.0.1' } });
    }, budget(600_000));
    afterAll(async () => {
      await controller?.stop();
      for (const name of [operatorNs, appNs]) await core?.deleteNamespace({ name }).catch(() => undefined);
      await mock?.close();
      await server?.close();
    }, budget(120_000));

    it(
      'projects an endpoint: alias and internal Service, with the extra keys and their record',
      async () => {
        await start({
          bindings: { serviceLabels: { team: 'web', tier: 'front' }, serviceAnnotations: { note: 'a' } },
        });
        await mock.client.endpoints.create({ url: `tcp://db.${appNs}:5432`, bindings: ['kubernetes'] });
        await eventually('alias and internal', async () => (await owned()).length === 2);
        const alias = await core.readNamespacedService({ namespace: appNs, name: 'db' });
        expect(alias.metadata?.labels?.[ROLE_LABEL]).toBe(ROLE_ALIAS);
        expect(alias.spec?.type).toBe('ExternalName');
        for (const s of await owned()) {
          expect(s.metadata?.labels).toMatchObject({ team: 'web', tier: 'front' });
          expect(JSON.parse(s.metadata?.annotations?.[EXTRA_KEYS_ANNOTATION] ?? '{}')).toEqual({
            labels: ['team', 'tier'],
            annotations: ['note'],
          });
        }
      },
      budget(120_000),
    );

    it(
      'removes extra keys dropped from the config once restarted with it',
      async () => {
        await start({ bindings: { serviceLabels: { team: 'web' } } });
        await eventually('tier and note gone', async () =>
          (await owned()).every((s) => !s.metadata?.labels?.['tier'] && !s.metadata?.annotations?.['note']),
        );
        for (const s of await owned()) expect(s.metadata?.labels?.['team']).toBe('web');
      },
      budget(120_000),
    );

    it(
      'deletes both Services when the endpoint is deleted',
      async () => {
        const [ep] = await collect(mock.client.endpoints.list());
        expect(ep).toBeDefined();
        await mock.client.endpoints.delete(ep!.id);
        await eventually('no Services', async () => (await owned()).length === 0);
      },
      budget(120_000),
    );
  });
}
