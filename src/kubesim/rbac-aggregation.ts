import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { Logger } from '../log/logger.js';
import type { ResourceHandlers } from './handlers.js';
import { resourceKey, type ResourceDef } from './resources/registry.js';
import { matchesLabelSelector } from './selectors.js';
import { ApiError } from './status.js';
import type { Store } from './store.js';
import type { KubeObject } from './types.js';

/**
 * The clusterrole-aggregation controller of kube-controller-manager, the one controller RBAC
 * depends on: a ClusterRole with an `aggregationRule` gets, as its `rules`, the rules of every
 * other ClusterRole its selectors match (per selector in name order, duplicates dropped), rewritten
 * whenever a ClusterRole changes. The pure part is `aggregatedRules`.
 */

const selectorSchema = z.object({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() }))
    .optional(),
});
const roleView = z.looseObject({
  aggregationRule: z
    .object({ clusterRoleSelectors: z.array(selectorSchema).optional() })
    .optional()
    .catch(undefined),
  rules: z.array(z.unknown()).optional().catch(undefined),
});

/** The rules an aggregated ClusterRole should hold, or undefined when it aggregates nothing. */
export function aggregatedRules(role: KubeObject, all: readonly KubeObject[]): unknown[] | undefined {
  const selectors = roleView.parse(role).aggregationRule?.clusterRoleSelectors;
  if (!selectors) return undefined;
  const byName = [...all].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const rules: unknown[] = [];
  for (const selector of selectors) {
    for (const other of byName) {
      if (other.metadata.name === role.metadata.name) continue;
      if (!matchesLabelSelector(selector, other.metadata.labels)) continue;
      for (const rule of roleView.parse(other).rules ?? [])
        if (!rules.some((r) => isDeepStrictEqual(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

export class ClusterRoleAggregation {
  private unsubscribe: (() => void) | undefined;
  private pending = false;
  private readonly key: string;

  constructor(
    private readonly store: Store,
    private readonly handlers: ResourceHandlers,
    private readonly clusterRoles: ResourceDef,
    private readonly log: Logger,
  ) {
    this.key = resourceKey(clusterRoles);
  }

  start(): void {
    this.unsubscribe = this.store.subscribe((ev) => {
      if (ev.resource === this.key) this.schedule();
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      if (this.unsubscribe) this.sync();
    });
  }

  private sync(): void {
    const all = this.store.list(this.key);
    for (const role of all) {
      const rules = aggregatedRules(role, all);
      if (!rules || isDeepStrictEqual(rules, roleView.parse(role).rules ?? [])) continue;
      const { resourceVersion: _rv, ...metadata } = role.metadata;
      try {
        this.handlers.update(
          this.clusterRoles,
          undefined,
          role.metadata.name,
          {
            value: { ...role, metadata, rules },
            duplicates: [],
          },
          {},
        );
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        this.log.warn(
          { clusterRole: role.metadata.name, err: err.message },
          'kubesim: aggregating a ClusterRole failed',
        );
      }
    }
  }
}
