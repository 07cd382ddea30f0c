import { LeaseSchema, type Lease } from '../objects.js';
import { isNotFound } from '../errors.js';
import { kinds, objectPath, collectionPath } from '../resources.js';
import type { KubeTransport } from '../transport.js';
import type { LeaderElectionRecord } from './record.js';

export interface LockedRecord {
  record: LeaderElectionRecord;
  /** Opaque; sent back as the optimistic-concurrency precondition. */
  resourceVersion: string;
  lease: Lease;
}

export function recordFromLease(lease: Lease): LeaderElectionRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: s.holderIdentity ?? '',
    leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
    acquireTime: s.acquireTime ?? undefined,
    renewTime: s.renewTime ?? undefined,
    leaseTransitions: s.leaseTransitions ?? 0,
  };
}

function specFromRecord(r: LeaderElectionRecord): Record<string, unknown> {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime ?? null,
    renewTime: r.renewTime ?? null,
    leaseTransitions: r.leaseTransitions,
  };
}

/** A `coordination.k8s.io/v1` Lease used as a lock: get, create, and RV-guarded update. */
export class LeaseLock {
  constructor(
    private readonly transport: KubeTransport,
    readonly namespace: string,
    readonly name: string,
  ) {}

  get describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The current record, or undefined when the Lease does not exist. */
  async get(signal?: AbortSignal): Promise<LockedRecord | undefined> {
    try {
      const lease = await this.transport.json(
        { path: objectPath(kinds.lease, this.namespace, this.name), ...(signal ? { signal } : {}) },
        LeaseSchema,
      );
      return { record: recordFromLease(lease), resourceVersion: lease.metadata.resourceVersion ?? '', lease };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Creates the Lease; a 409 (someone else created it first) is thrown as KubeApiError. */
  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockedRecord> {
    const lease = await this.transport.json(
      {
        method: 'POST',
        path: collectionPath(kinds.lease, this.namespace),
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.name, namespace: this.namespace },
          spec: specFromRecord(record),
        },
        ...(signal ? { signal } : {}),
      },
      LeaseSchema,
    );
    return { record: recordFromLease(lease), resourceVersion: lease.metadata.resourceVersion ?? '', lease };
  }

  /** Replaces the spec, guarded by `current.resourceVersion`; a 409 means we lost a race. */
  async update(
    current: LockedRecord,
    record: LeaderElectionRecord,
    signal?: AbortSignal,
  ): Promise<LockedRecord> {
    const body: Lease = {
      ...current.lease,
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...current.lease.metadata, resourceVersion: current.resourceVersion },
      spec: { ...(current.lease.spec ?? {}), ...specFromRecord(record) },
    };
    const lease = await this.transport.json(
      {
        method: 'PUT',
        path: objectPath(kinds.lease, this.namespace, this.name),
        body,
        ...(signal ? { signal } : {}),
      },
      LeaseSchema,
    );
    return { record: recordFromLease(lease), resourceVersion: lease.metadata.resourceVersion ?? '', lease };
  }
}
