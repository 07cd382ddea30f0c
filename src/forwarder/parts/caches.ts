import type { KubeConfig } from '@kubernetes/client-node';
import { installRecordName, ownershipSelector, ROLE_INTERNAL } from '../../binding/ownership/index.js';
import {
  collectionPath,
  ConfigMapSchema,
  createCache,
  kinds,
  ServiceSchema,
  type Cache,
  type CacheTuning,
  type ConfigMap,
  type Service,
} from '../../kube/index.js';
import type { ForwarderBase } from './base.js';

/**
 * What the forwarder reads from the cluster: this install's internal Services (the ports) and
 * its install record (the ingress address and the internal Services the controller created).
 */
export class ForwarderCaches {
  readonly services: Cache<Service>;
  readonly records: Cache<ConfigMap>;
  private readonly recordName: string;

  constructor(
    private readonly base: ForwarderBase,
    settings: { kubeConfig: KubeConfig; cacheTuning?: Partial<CacheTuning> },
  ) {
    const { config, identity, log, registry } = base;
    const common = {
      kubeConfig: settings.kubeConfig,
      logger: log,
      metrics: registry,
      ...(settings.cacheTuning ? { options: settings.cacheTuning } : {}),
    };
    this.services = createCache<Service>({
      ...common,
      path: collectionPath(kinds.service, config.operatorNamespace),
      name: 'forwarder-internal-services',
      labelSelector: ownershipSelector(identity, ROLE_INTERNAL),
      schema: ServiceSchema,
    });
    this.recordName = installRecordName(identity);
    this.records = createCache<ConfigMap>({
      ...common,
      path: collectionPath(kinds.configMap, config.operatorNamespace),
      name: 'forwarder-install-record',
      fieldSelector: `metadata.name=${this.recordName}`,
      schema: ConfigMapSchema,
    });
  }

  /** Both have been listed once. */
  get synced(): boolean {
    return this.services.synced && this.records.synced;
  }

  /** The install record as the cache shows it now; undefined when there is none. */
  record(): ConfigMap | undefined {
    return this.records.get(this.base.config.operatorNamespace, this.recordName);
  }

  /** `handler` runs on every add, update and delete of either cache. */
  onChange(handler: () => void): void {
    for (const cache of [this.services, this.records] as const) {
      cache.on('add', handler);
      cache.on('update', handler);
      cache.on('delete', handler);
    }
  }

  /** Starts both; `onSynced` runs once both have been listed (never when they stop first). */
  start(onSynced: () => void): void {
    this.services.start();
    this.records.start();
    void Promise.all([this.services.waitForSync(), this.records.waitForSync()]).then(
      onSynced,
      () => undefined,
    );
  }

  stop(): Promise<unknown> {
    return Promise.all([this.services.stop(), this.records.stop()]);
  }
}
