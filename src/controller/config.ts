import { z } from 'zod';
import { isDnsLabel } from '../binding/endpoint-url.js';
import { DEFAULT_DENY, namespaceEntryProblem, OPT_OUT_SELECTOR } from '../binding/namespace-policy.js';
import { hostPortProblem } from '../net/host-port.js';

/**
 * The controller's configuration: a YAML/JSON file (a ConfigMap in a real install), flags over
 * it, and the API key from the environment only. Field names are the ones users write in the
 * file; every error names the field (`bindings.endpointSelector: ...`).
 */

const dnsLabel = z
  .string()
  .refine(isDnsLabel, 'must be a lower-case RFC 1123 label of at most 63 characters');

/** A label or annotation key: optional DNS-subdomain prefix and a name part (Kubernetes' rule). */
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const metadataKey = z
  .string()
  .refine(
    (k) => QUALIFIED_NAME.test(k) && (k.split('/')[0] ?? '').length <= 253,
    'must be a Kubernetes qualified name ([prefix/]name, name at most 63 characters)',
  );
const labelValue = z
  .string()
  .regex(
    /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/,
    'must be a valid label value (at most 63 characters: alphanumerics, "-", "_", "." inside)',
  );

const hostPort = z.string().superRefine((s, ctx) => {
  const problem = hostPortProblem(s, { allowZero: true, allowEmptyHost: true });
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const namespaceEntry = z.string().superRefine((s, ctx) => {
  const problem = namespaceEntryProblem(s);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** Kubernetes' LabelSelector, as `namespaces.selector`. */
const labelSelector = z.strictObject({
  matchLabels: z.record(metadataKey, labelValue).optional(),
  matchExpressions: z
    .array(
      z
        .strictObject({
          key: metadataKey,
          operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist'], {
            error: 'must be In, NotIn, Exists or DoesNotExist',
          }),
          values: z.array(labelValue).optional(),
        })
        .refine(
          (r) =>
            r.operator === 'In' || r.operator === 'NotIn'
              ? (r.values ?? []).length > 0
              : (r.values ?? []).length === 0,
          {
            message: 'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
            path: ['values'],
          },
        ),
    )
    .optional(),
});

const namespacesSchema = z
  .strictObject({
    deny: z.array(namespaceEntry).default([...DEFAULT_DENY]),
    allow: z.array(namespaceEntry).default([]),
    selector: labelSelector.default(OPT_OUT_SELECTOR),
  })
  .prefault({});

const forwarderPort = z.number().int().min(1024, 'must be at least 1024').max(65535, 'must be at most 65535');

export const ControllerConfigSchema = z
  .strictObject({
    api: z
      .strictObject({
        baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
        timeoutMs: z.number().int().min(100).max(300_000).default(10_000),
      })
      // Absent: reported as `api.baseUrl: must be ...`, the field the user has to add.
      .prefault(() => ({}) as { baseUrl: string }),
    registration: z
      .strictObject({
        description: z.string().max(255).default('endpoint-binder'),
        metadata: z.string().default(''),
      })
      .prefault({}),
    bindings: z
      .strictObject({
        enabled: z.boolean().default(true),
        endpointSelector: z
          .string()
          .trim()
          .min(1, 'must not be empty (use "true" to select every endpoint)')
          .default('true'),
        clusterDomain: z
          .string()
          .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS domain')
          .default('cluster.local'),
        portRange: z
          .strictObject({ min: forwarderPort.default(10000), max: forwarderPort.default(19999) })
          .prefault({})
          .refine((r) => r.min <= r.max, { message: 'min must not be greater than max', path: ['min'] }),
        serviceLabels: z.record(metadataKey, labelValue).default({}),
        serviceAnnotations: z.record(metadataKey, z.string()).default({}),
        /** Where alias Services may be written (docs/projection.md "Namespace policy"). */
        namespaces: namespacesSchema,
        /** How long an alias name a foreign Service held must stay free before an alias takes it. */
        foreignNameGraceSeconds: z.number().int().min(0).max(86_400).default(600),
        /** How long a URL whose projection was removed keeps its forwarder port (0: not at all). */
        portReservationSeconds: z.number().int().min(0).max(86_400).default(600),
        /** Caps per hostname group; members beyond them are `group-too-large` (docs/projection.md). */
        limits: z
          .strictObject({
            endpointsPerHostname: z.number().int().min(1).max(100_000).default(1000),
            portsPerHostname: z.number().int().min(1).max(10_000).default(1000),
          })
          .prefault({}),
        /**
         * The deletion settings (docs/controller.md "Deletion"). Deletes are proven per endpoint;
         * the mass-delete and notification-grace keys are still accepted (existing values files
         * parse) but no longer used.
         */
        deletes: z
          .strictObject({
            knowledgeMaxAgeSeconds: z.number().min(1).max(86_400).default(180),
            massDeleteShare: z.number().min(0).max(1).default(0.2),
            massDeleteMin: z.number().int().min(1).max(1_000_000).default(10),
            massDeleteConfirmDelaySeconds: z.number().min(0).max(600).default(5),
            deletedNotificationGraceSeconds: z.number().min(0).max(3_600).default(30),
          })
          .prefault({}),
      })
      .prefault({}),
    operatorNamespace: dnsLabel.optional(),
    releaseName: dnsLabel.default('endpoint-binder'),
    resyncIntervalSeconds: z.number().int().min(10).max(86_400).default(300),
    writeConcurrency: z.number().int().min(1).max(256).default(16),
    http: z.strictObject({ listen: hostPort.default('0.0.0.0:8080') }).prefault({}),
    leaderElection: z
      .strictObject({
        enabled: z.boolean().default(true),
        leaseDurationSeconds: z.number().min(1).default(15),
        renewDeadlineSeconds: z.number().min(0.5).default(10),
        retryPeriodSeconds: z.number().min(0.1).default(2),
      })
      .prefault({})
      .refine((l) => l.leaseDurationSeconds > l.renewDeadlineSeconds, {
        message: 'leaseDurationSeconds must be greater than renewDeadlineSeconds',
        path: ['leaseDurationSeconds'],
      })
      .refine((l) => l.renewDeadlineSeconds > l.retryPeriodSeconds, {
        message: 'renewDeadlineSeconds must be greater than retryPeriodSeconds',
        path: ['renewDeadlineSeconds'],
      }),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  })
  .prefault({});

export type ControllerConfigInput = z.input<typeof ControllerConfigSchema>;
export type ParsedControllerConfig = z.infer<typeof ControllerConfigSchema>;

/** The resolved configuration the controller runs with. */
export interface ControllerConfig extends Omit<ParsedControllerConfig, 'operatorNamespace'> {
  operatorNamespace: string;
  apiKey: string;
}

/** Settings a flag may override, by flag name, as `[path in the file, parser]`. */
export const CONTROLLER_FLAG_PATHS = {
  'api-url': ['api', 'baseUrl'],
  'endpoint-selector': ['bindings', 'endpointSelector'],
  'operator-namespace': ['operatorNamespace'],
  'release-name': ['releaseName'],
  'cluster-domain': ['bindings', 'clusterDomain'],
  'port-range-min': ['bindings', 'portRange', 'min'],
  'port-range-max': ['bindings', 'portRange', 'max'],
  'namespace-deny': ['bindings', 'namespaces', 'deny'],
  'namespace-allow': ['bindings', 'namespaces', 'allow'],
  'foreign-name-grace': ['bindings', 'foreignNameGraceSeconds'],
  'resync-interval': ['resyncIntervalSeconds'],
  'write-concurrency': ['writeConcurrency'],
  listen: ['http', 'listen'],
  'log-level': ['logLevel'],
} as const satisfies Record<string, readonly string[]>;

export type ControllerFlag = keyof typeof CONTROLLER_FLAG_PATHS;

const NUMERIC_FLAGS: ReadonlySet<ControllerFlag> = new Set([
  'port-range-min',
  'port-range-max',
  'resync-interval',
  'write-concurrency',
  'foreign-name-grace',
]);

/** Comma-separated lists (`--namespace-deny kube-*,openshift`); an empty value is an empty list. */
const LIST_FLAGS: ReadonlySet<ControllerFlag> = new Set(['namespace-deny', 'namespace-allow']);

/** Writes flag values into the raw file object at their paths (numbers parsed), before validation. */
export function applyFlagOverrides(
  raw: Record<string, unknown>,
  flags: Partial<Record<ControllerFlag, string>>,
): Record<string, unknown> {
  const out = structuredClone(raw);
  for (const [flag, value] of Object.entries(flags) as [ControllerFlag, string | undefined][]) {
    if (value === undefined) continue;
    const path = CONTROLLER_FLAG_PATHS[flag];
    let node: Record<string, unknown> = out;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    const numeric = NUMERIC_FLAGS.has(flag) && /^-?[0-9]+$/.test(value.trim());
    node[path[path.length - 1]!] = LIST_FLAGS.has(flag)
      ? value
          .split(',')
          .map((e) => e.trim())
          .filter((e) => e.length > 0)
      : numeric
        ? Number(value)
        : value;
  }
  return out;
}

export type ConfigResult = { ok: true; config: ControllerConfig } | { ok: false; errors: string[] };

/**
 * Validates the merged raw config and resolves what comes from the environment: the API key
 * (`ENDPOINT_BINDER_API_KEY`, required) and the operator namespace (`POD_NAMESPACE` when the
 * file and flags leave it out). Pure: the environment is passed in.
 */
export function resolveControllerConfig(raw: unknown, env: Record<string, string | undefined>): ConfigResult {
  const errors: string[] = [];
  const parsed = ControllerConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    for (const i of parsed.error.issues)
      errors.push(`${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
  }
  const apiKey = env['ENDPOINT_BINDER_API_KEY'];
  if (!apiKey) errors.push('ENDPOINT_BINDER_API_KEY: the API key must be set in the environment');
  const ns = parsed.success ? (parsed.data.operatorNamespace ?? env['POD_NAMESPACE']) : undefined;
  if (parsed.success && !ns) {
    errors.push('operatorNamespace: must be set (in the file, with --operator-namespace, or POD_NAMESPACE)');
  } else if (parsed.success && ns && !isDnsLabel(ns)) {
    errors.push('operatorNamespace: POD_NAMESPACE must be a lower-case RFC 1123 label');
  }
  if (!parsed.success || errors.length > 0 || !apiKey || !ns) return { ok: false, errors };
  return { ok: true, config: { ...parsed.data, operatorNamespace: ns, apiKey } };
}
