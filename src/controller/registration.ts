import type { ManagementClient } from '../api/client/index.js';
import { ApiError } from '../api/client/index.js';
import type { KubernetesOperator } from '../api/schemas/operator.js';
import type { Logger } from '../log/logger.js';
import { reconnectDelayMs } from '../api/client/sse/watch.js';
import { sleep } from '../kube/clock.js';

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

/**
 * Registers once: adopts the account's record of the same deployment name and namespace (the
 * newest if an earlier bug left several), brings it to the spec, or creates it. Throws
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
    let existing: KubernetesOperator | undefined;
    for await (const op of client.kubernetesOperators.list(o)) {
      if (op.deployment.name === spec.name && op.deployment.namespace === spec.namespace) {
        existing = op;
        break; // newest first
      }
    }
    if (existing) {
      const patch = registrationDrift(existing, spec);
      if (!patch) return { operator: existing, action: 'adopted' };
      log.info({ operatorId: existing.id, fields: Object.keys(patch) }, 'operator registration updated');
      return { operator: await client.kubernetesOperators.update(existing.id, patch, o), action: 'updated' };
    }
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
