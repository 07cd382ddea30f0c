import type { ManagementClient } from '../api/client/index.js';
import { ApiError } from '../api/client/index.js';
import type { KubernetesOperator } from '../api/schemas/operator.js';
import type { Logger } from '../log/logger.js';
import { reconnectDelayMs } from '../api/client/sse/watch.js';
import { sleep } from '../time/clock.js';

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
): Promise<KubernetesOperator> {
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
      const delayMs = reconnectDelayMs({ baseDelayMs: 500, maxDelayMs: 30_000 }, attempt);
      const error = err instanceof Error ? err.message : String(err);
      log.warn({ attempt, delayMs, error }, 'operator registration failed; retrying');
      onRetry?.(error);
      await sleep(delayMs, signal);
      if (signal.aborted) throw err;
    }
  }
}
