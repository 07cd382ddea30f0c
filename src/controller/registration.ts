import type { ManagementClient } from '../api/client/index.js';
import { ApiError } from '../api/client/index.js';
import type { KubernetesOperator } from '../api/schemas/operator.js';
import type { Logger } from '../log/logger.js';
import { Backoff } from '../time/backoff.js';
import { REGISTRATION_CURVE } from '../time/curves.js';
import { systemClock, type Clock } from '../time/clock.js';

/** What the controller asks the API to hold for it. */
export interface RegistrationSpec {
  /** Deployment identity: the release name and the operator namespace. */
  name: string;
  namespace: string;
  version: string;
  description: string;
  metadata: string;
  bindingsEnabled: boolean;
  endpointSelector: string;
}

/** A refusal that retrying will not fix: startup stops with the API's message. */
export class RegistrationRefused extends Error {
  override name = 'RegistrationRefused';
}

/** The PATCH that brings an existing record to the spec, or undefined when it already matches. Pure. */
export function registrationDrift(
  op: KubernetesOperator,
  spec: RegistrationSpec,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  if ((op.description ?? '') !== spec.description) patch['description'] = spec.description;
  if ((op.metadata ?? '') !== spec.metadata) patch['metadata'] = spec.metadata;
  const features = spec.bindingsEnabled ? ['bindings'] : [];
  const have = [...op.enabled_features].map((f) => f.toLowerCase()).sort();
  if (have.join(',') !== features.join(',')) patch['enabled_features'] = features;
  if (op.binding.endpoint_selector !== spec.endpointSelector) {
    patch['binding'] = { endpoint_selector: spec.endpointSelector };
  }
  if (op.deployment.version !== spec.version) patch['deployment'] = { version: spec.version };
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** The record's fields a drift PATCH puts back, as the API names them. Pure. */
export function driftFieldNames(patch: Record<string, unknown>): string[] {
  const names: Record<string, string> = {
    binding: 'binding.endpoint_selector',
    enabled_features: 'enabled_features',
    description: 'description',
    metadata: 'metadata',
    deployment: 'deployment.version',
  };
  return Object.keys(patch).map((k) => names[k] ?? k);
}

function isPermanent(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 429 &&
    err.status !== 408
  );
}

/** This install's operator records, oldest first (by creation time, then id). */
async function mine(
  client: ManagementClient,
  spec: RegistrationSpec,
  o: { signal?: AbortSignal },
): Promise<KubernetesOperator[]> {
  const found: KubernetesOperator[] = [];
  for await (const op of client.kubernetesOperators.list(o)) {
    if (op.deployment.name === spec.name && op.deployment.namespace === spec.namespace) found.push(op);
  }
  return found.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
}

async function adopt(
  client: ManagementClient,
  op: KubernetesOperator,
  spec: RegistrationSpec,
  log: Logger,
  o: { signal?: AbortSignal },
): Promise<{ operator: KubernetesOperator; action: 'adopted' | 'updated' }> {
  const patch = registrationDrift(op, spec);
  if (!patch) return { operator: op, action: 'adopted' };
  log.info({ operatorId: op.id, fields: Object.keys(patch) }, 'operator registration updated');
  return { operator: await client.kubernetesOperators.update(op.id, patch, o), action: 'updated' };
}

/**
 * Registers once: adopts the account's record of the same deployment name and namespace (the
 * oldest if there are several), brings it to the spec, or creates it. Throws
 * RegistrationRefused for 4xx answers; other errors propagate for the caller to retry.
 */
export async function registerOnce(
  client: ManagementClient,
  spec: RegistrationSpec,
  log: Logger,
  signal?: AbortSignal,
): Promise<{ operator: KubernetesOperator; action: 'created' | 'adopted' | 'updated' }> {
  const o = signal ? { signal } : {};
  try {
    const existing = await mine(client, spec, o);
    if (existing.length > 1) {
      log.warn(
        { operatorIds: existing.map((op) => op.id) },
        'several operator records for this install; adopting the oldest',
      );
    }
    const oldest = existing[0];
    if (oldest) return await adopt(client, oldest, spec, log, o);
    const created = await client.kubernetesOperators.create(
      {
        description: spec.description,
        metadata: spec.metadata,
        enabled_features: spec.bindingsEnabled ? ['bindings'] : [],
        deployment: { name: spec.name, namespace: spec.namespace, version: spec.version },
        binding: { endpoint_selector: spec.endpointSelector },
      },
      o,
    );
    // Two replicas starting together can both find nothing and both create: the oldest record
    // wins everywhere, and a replica whose record lost deletes it and adopts the winner.
    const after = await mine(client, spec, o);
    const winner = after[0];
    if (winner && winner.id !== created.id) {
      log.info(
        { created: created.id, winner: winner.id },
        'another replica registered first; adopting its record',
      );
      await client.kubernetesOperators.delete(created.id, o).catch(() => undefined);
      return await adopt(client, winner, spec, log, o);
    }
    return { operator: created, action: 'created' };
  } catch (err) {
    if (isPermanent(err)) {
      const e = err as ApiError;
      throw new RegistrationRefused(
        `the management API refused the operator registration: ${e.status} ${e.errorCode ?? ''} ${e.msg}`.replace(
          /\s+/g,
          ' ',
        ),
      );
    }
    throw err;
  }
}

/**
 * Registers, retrying outages and 5xx with backoff for as long as it takes (the process stays
 * unready meanwhile); a refusal is thrown at once.
 */
export async function register(
  client: ManagementClient,
  spec: RegistrationSpec,
  log: Logger,
  signal: AbortSignal,
  onRetry?: (error: string) => void,
  clock: Clock = systemClock,
): Promise<KubernetesOperator> {
  const backoff = new Backoff(REGISTRATION_CURVE);
  for (let attempt = 1; ; attempt++) {
    try {
      const { operator, action } = await registerOnce(client, spec, log, signal);
      log.info(
        { operatorId: operator.id, action, ingress: operator.binding.ingress_endpoint },
        'operator registered',
      );
      return operator;
    } catch (err) {
      if (err instanceof RegistrationRefused || signal.aborted) throw err;
      const delayMs = backoff.next(clock.now(), clock.random());
      const error = err instanceof Error ? err.message : String(err);
      log.warn({ attempt, delayMs, error }, 'operator registration failed; retrying');
      onRetry?.(error);
      await clock.sleep(delayMs, signal);
      if (signal.aborted) throw err;
    }
  }
}

/** What the endpoint feed needs of the registration: the id to ask with, and a way to report it gone. */
export interface RegistrationHandle {
  /** The operator id of the current registration (the feed starts after the first one). */
  operatorId(): string;
  /** A listing or the notification stream answered 404: the record is gone. */
  lost(): Promise<void>;
  /** Registrations so far: 1 after the first, one more for each re-registration. */
  readonly generation: number;
}

export interface RegistrationOptions {
  client: ManagementClient;
  spec: RegistrationSpec;
  log: Logger;
  /** Only the leader registers again when the record is gone. */
  isLeader: () => boolean;
  signal: AbortSignal;
  clock?: Clock;
  /** After every successful registration, the first and any later one. */
  onRegistered?: (operator: KubernetesOperator) => void;
  /** After every failed attempt that will be retried. */
  onRetry?: (error: string) => void;
}

/**
 * This install's operator registration, held in one place: `register()` at start, and again
 * (leader only) when the feed reports it `lost()`. The feed reads the id through this handle.
 */
export class Registration implements RegistrationHandle {
  private current: KubernetesOperator | undefined;
  private lastError: string | undefined;
  private again: Promise<void> | undefined;
  private count = 0;

  constructor(private readonly o: RegistrationOptions) {}

  /** The record, once registered. */
  get operator(): KubernetesOperator | undefined {
    return this.current;
  }

  /** Why the last attempt failed, while not registered. */
  get error(): string | undefined {
    return this.current ? undefined : this.lastError;
  }

  get generation(): number {
    return this.count;
  }

  operatorId(): string {
    if (!this.current) throw new Error('not registered yet');
    return this.current.id;
  }

  /** Registers, retrying outages; a refusal (4xx) is thrown with the API's message. */
  async register(): Promise<KubernetesOperator> {
    try {
      const operator = await register(
        this.o.client,
        this.o.spec,
        this.o.log,
        this.o.signal,
        (e) => {
          this.lastError = e;
          this.o.onRetry?.(e);
        },
        this.o.clock,
      );
      this.current = operator;
      this.lastError = undefined;
      this.count++;
      this.o.onRegistered?.(operator);
      return operator;
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  /**
   * Puts the API's record back to the install's config when someone changed it there (selector,
   * description, metadata, features): a warning names each field. Leader only; errors are left
   * for the next resync. Returns the fields put back.
   */
  async repairDrift(): Promise<string[]> {
    const current = this.current;
    if (!current || !this.o.isLeader()) return [];
    let op: KubernetesOperator;
    try {
      op = await this.o.client.kubernetesOperators.get(current.id, { signal: this.o.signal });
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) await this.lost();
      return [];
    }
    const patch = registrationDrift(op, this.o.spec);
    if (!patch) {
      this.current = op;
      return [];
    }
    const fields = driftFieldNames(patch);
    for (const field of fields) {
      this.o.log.warn(
        { operatorId: op.id, field },
        'operator record changed on the API; putting it back to the install config',
      );
    }
    try {
      this.current = await this.o.client.kubernetesOperators.update(op.id, patch, { signal: this.o.signal });
    } catch (err) {
      this.o.log.warn(
        { operatorId: op.id, error: err instanceof Error ? err.message : String(err) },
        'operator record repair failed; retried on the next resync',
      );
    }
    return fields;
  }

  lost(): Promise<void> {
    this.again ??= this.registerAgain().finally(() => {
      this.again = undefined;
    });
    return this.again;
  }

  /** Read-only: adopts this install's oldest record as it is, when it is not the one held. */
  private async follow(operatorId: string | undefined): Promise<void> {
    let found: KubernetesOperator | undefined;
    try {
      found = (await mine(this.o.client, this.o.spec, { signal: this.o.signal }))[0];
    } catch (err) {
      if (!this.o.signal.aborted) {
        this.o.log.warn(
          { operatorId, error: err instanceof Error ? err.message : String(err) },
          'operator registration gone; reading the records failed, trying again at the next refusal',
        );
      }
      return;
    }
    if (!found || found.id === operatorId) {
      this.o.log.warn({ operatorId }, 'operator registration gone; the leader registers again');
      return;
    }
    this.current = found;
    this.count++;
    this.o.log.info(
      { previous: operatorId, operatorId: found.id },
      'operator registration followed (read-only)',
    );
    this.o.onRegistered?.(found);
  }

  private async registerAgain(): Promise<void> {
    const operatorId = this.current?.id;
    // A stood-down replica (an uninstall holds the lease) must not undo a deregistration while
    // Helm removes it: only the leader registers again. A follower follows: it reads the records
    // (never writes them) and takes up the one the leader holds now, so what it knows of the
    // endpoints is read under the registration in force when it takes over.
    if (!this.o.isLeader()) {
      await this.follow(operatorId);
      return;
    }
    this.o.log.warn({ operatorId }, 'operator registration gone; registering again');
    await this.register().catch((err: unknown) => {
      if (!this.o.signal.aborted) {
        this.o.log.error(
          { error: err instanceof Error ? err.message : String(err) },
          'operator registration refused',
        );
      }
    });
  }
}
