import type { KubeConfig } from '@kubernetes/client-node';
import { request } from 'undici';
import { z } from 'zod';
import { StatusDocumentSchema } from '../controller/decide/status.js';
import { controllerStatusCheck, readControllerStatus, type ControllerAnswer } from './controller-status.js';
import { ApiError, ManagementClient } from '../api/client/index.js';
import type { KubernetesOperator } from '../api/schemas/operator.js';
import { VERSION } from '../controller/controller.js';
import type { ControllerConfig } from '../controller/config.js';
import type { RegistrationSpec } from '../controller/registration.js';
import { KubeApiError, KubeTransport, kinds, objectPath } from '../kube/index.js';
import { ConfigMapSchema, LeaseSchema } from '../kube/objects.js';
import { ingressChecks, type IngressCheckSettings, type RecordRead } from './ingress-probe.js';
import {
  apiChecks,
  classifyThrown,
  clusterCheck,
  controllerPermissions,
  type Permission,
  excessRightsCheck,
  forbiddenRights,
  type HeldRight,
  forwardersCheck,
  leaseCheck,
  namespaceCheck,
  permissionCheck,
  type HttpOutcome,
  type PodView,
} from './decisions.js';
import { fail, pass, skipped, type CheckResult } from './result.js';

/**
 * The probes of `endpoint-binder check`: thin I/O, each turned into an observation that the
 * pure functions of decisions.ts judge. Nothing here writes anything anywhere.
 */

export interface CheckOptions {
  config: ControllerConfig;
  /** undefined: the kubeconfig could not be loaded (`kubeconfigProblem` says why). */
  kubeConfig: KubeConfig | undefined;
  kubeconfigProblem?: string;
  /** Forwarder HTTP servers to ask directly (`/readyz`) instead of listing Pods. */
  forwarderUrls?: string[];
  /** Label selector of the forwarder Pods. */
  forwarderSelector: string;
  /** Controller HTTP servers to read `/status` from instead of finding the controller Pods. */
  controllerUrls?: string[];
  /** The controller's service account (`--service-account`); found by the chart's labels otherwise. */
  controllerServiceAccount?: string;
  /** The binding ingress lines (and `--endpoint`); without it they are not run. */
  ingress?: IngressCheckSettings;
  now?: () => number;
  timeoutMs?: number;
}

export async function apiProbe(
  config: ControllerConfig,
  timeoutMs: number,
): Promise<HttpOutcome<KubernetesOperator[]>> {
  const client = new ManagementClient({
    baseUrl: config.api.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: Math.min(config.api.timeoutMs, timeoutMs),
    retry: { retries: 0 },
  });
  try {
    const ops: KubernetesOperator[] = [];
    for await (const op of client.kubernetesOperators.list({})) ops.push(op);
    return { kind: 'ok', value: ops };
  } catch (err) {
    if (err instanceof ApiError) return { kind: 'status', status: err.status, message: err.msg };
    return classifyThrown(err);
  } finally {
    await client.close().catch(() => undefined);
  }
}

const StatusBody = z.object({ message: z.string().optional() }).loose();

export async function kubeGet(
  t: KubeTransport,
  path: string,
  timeoutMs: number,
): Promise<HttpOutcome<{ status: number; body: string }>> {
  try {
    const res = await t.request({ path, timeoutMs });
    if (res.status >= 200 && res.status < 300) return { kind: 'ok', value: res };
    let message = `HTTP ${res.status}`;
    try {
      message = StatusBody.parse(JSON.parse(res.body)).message ?? message;
    } catch {
      // not a Status body; the code says enough
    }
    return { kind: 'status', status: res.status, message };
  } catch (err) {
    return classifyThrown(err);
  }
}

const AccessReviewAnswer = z.object({ status: z.object({ allowed: z.boolean() }).loose() }).loose();
const SelfReviewAnswer = z
  .object({ status: z.object({ userInfo: z.object({ username: z.string().optional() }).loose() }).loose() })
  .loose();

async function mayI(
  t: KubeTransport,
  attrs: Record<string, string>,
  timeoutMs: number,
  headers?: Record<string, string>,
): Promise<boolean> {
  const res = await t.json(
    {
      method: 'POST',
      ...(headers ? { headers } : {}),
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: attrs },
      },
      timeoutMs,
    },
    AccessReviewAnswer,
  );
  return res.status.allowed;
}

async function whoAmI(t: KubeTransport, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await t.json(
      {
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        timeoutMs,
      },
      SelfReviewAnswer,
    );
    return res.status.userInfo.username;
  } catch {
    return undefined;
  }
}

const NamespaceAnswer = z
  .object({ status: z.object({ phase: z.string().optional() }).loose().optional() })
  .loose();
const PodList = z.object({
  items: z.array(
    z
      .object({
        metadata: z.object({ name: z.string() }).loose(),
        status: z
          .object({
            conditions: z
              .array(
                z.object({ type: z.string(), status: z.string(), message: z.string().optional() }).loose(),
              )
              .optional(),
          })
          .loose()
          .optional(),
      })
      .loose(),
  ),
});
const ReadyzBody = z.object({ ready: z.boolean(), reasons: z.array(z.string()).default([]) }).loose();

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const ServiceAccountList = z.object({
  items: z.array(z.object({ metadata: z.object({ name: z.string() }) })),
});

/**
 * The controller's service account as the chart names it (`<fullname>-controller`, or
 * `controller.serviceAccount.name`): the one ServiceAccount with the chart's instance and
 * component labels in the operator namespace.
 */
async function controllerAccount(
  t: KubeTransport,
  config: ControllerConfig,
  timeoutMs: number,
): Promise<string | { skip: string }> {
  const ns = config.operatorNamespace;
  const selector = `app.kubernetes.io/instance=${config.releaseName},app.kubernetes.io/component=controller`;
  try {
    const res = await t.json(
      { path: `/api/v1/namespaces/${ns}/serviceaccounts`, query: { labelSelector: selector }, timeoutMs },
      ServiceAccountList,
    );
    const names = res.items.map((i) => i.metadata.name);
    if (names.length === 1) return names[0]!;
    return {
      skip: `${names.length === 0 ? 'no' : `${names.length}`} ServiceAccounts in ${ns} match ${selector}; name the controller's with --service-account`,
    };
  } catch (err) {
    return {
      skip: `cannot list ServiceAccounts in ${ns} (${errorText(err)}); name the controller's with --service-account`,
    };
  }
}

async function forwarderPods(
  t: KubeTransport,
  ns: string,
  selector: string,
  timeoutMs: number,
): Promise<{ pods: PodView[] } | { error: string }> {
  try {
    const res = await t.json(
      { path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: selector }, timeoutMs },
      PodList,
    );
    return {
      pods: res.items.map((p) => {
        const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
        return {
          name: p.metadata.name,
          ready: ready?.status === 'True',
          ...(ready?.message ? { why: ready.message } : {}),
        };
      }),
    };
  } catch (err) {
    return { error: errorText(err) };
  }
}

async function forwarderReadyz(urls: string[], timeoutMs: number): Promise<{ pods: PodView[] }> {
  const pods = await Promise.all(
    urls.map(async (u): Promise<PodView> => {
      const url = `${u.replace(/\/$/, '')}/readyz`;
      try {
        const res = await request(url, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
        const body = ReadyzBody.safeParse(JSON.parse(await res.body.text()));
        if (!body.success)
          return { name: u, ready: false, why: `${url} did not answer a readiness document` };
        return {
          name: u,
          ready: body.data.ready,
          ...(body.data.reasons.length ? { why: body.data.reasons.join('; ') } : {}),
        };
      } catch (err) {
        return { name: u, ready: false, why: `${url}: ${errorText(err)}` };
      }
    }),
  );
  return { pods };
}

async function readInstallRecord(
  t: KubeTransport,
  ns: string,
  name: string,
  timeoutMs: number,
): Promise<RecordRead> {
  const answer = await kubeGet(t, `/api/v1/namespaces/${ns}/configmaps/${name}`, timeoutMs);
  if (answer.kind === 'ok') {
    const cm = ConfigMapSchema.safeParse(JSON.parse(answer.value.body));
    return cm.success ? { record: cm.data } : { error: 'the answer is not a ConfigMap' };
  }
  if (answer.kind === 'status' && answer.status === 404) return { record: undefined };
  return { error: answer.message };
}

/** An endpoint id's URL from the management API, or one line saying why there is none. */
async function endpointUrl(
  config: ControllerConfig,
  id: string,
  timeoutMs: number,
): Promise<{ url: string } | { problem: string }> {
  const client = new ManagementClient({
    baseUrl: config.api.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: Math.min(config.api.timeoutMs, timeoutMs),
    retry: { retries: 0 },
  });
  try {
    const ep = await client.endpoints.get(id);
    return { url: ep.url };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      return {
        problem: `no endpoint ${id} in the account of ENDPOINT_BINDER_API_KEY; \`endpoint-binder status\` lists the endpoints, or pass the endpoint URL`,
      };
    if (err instanceof ApiError)
      return { problem: `cannot look up endpoint ${id}: the API answered ${err.status} (${err.msg})` };
    return { problem: `cannot look up endpoint ${id}: ${classifyThrown(err).message}` };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * Whose rights the rights lines review: the controller's service account. Run in one of this
 * install's pods (a service account of the operator namespace) check asks about itself; from
 * elsewhere (a laptop's kubeconfig) it asks as the chart's controller account by impersonation
 * (`--service-account`, or the one ServiceAccount with the chart's labels). Never the caller's own
 * rights: an admin may do everything the controller may not.
 */
type Subject = { who: string; headers?: Record<string, string> } | { skip: string };

async function controllerSubject(
  t: KubeTransport,
  config: ControllerConfig,
  identity: string | undefined,
  timeoutMs: number,
  named: string | undefined,
): Promise<Subject> {
  const ns = config.operatorNamespace;
  if (identity?.startsWith(`system:serviceaccount:${ns}:`)) return { who: identity };
  const account = named ?? (await controllerAccount(t, config, timeoutMs));
  if (typeof account !== 'string') return account;
  const who = `system:serviceaccount:${ns}:${account}`;
  return { who, headers: { 'Impersonate-User': who } };
}

/** The skip reason when the caller may not impersonate the controller's account. */
function cannotImpersonate(who: string): string {
  return `this identity may not impersonate ${who} (impersonate on serviceaccounts); run check in the controller's pod: kubectl -n <ns> exec deploy/<release>-controller -- endpoint-binder check`;
}

/** The rights lines: each permission the controller needs, reviewed for its service account. */
async function permissionLines(
  t: KubeTransport,
  perms: readonly Permission[],
  subject: Subject,
  timeoutMs: number,
): Promise<CheckResult[]> {
  if ('skip' in subject)
    return perms.map((p) => {
      const line = permissionCheck(p, { denied: [] }, "the controller's service account");
      return skipped(line.id, line.title, subject.skip);
    });
  const out: CheckResult[] = [];
  for (const p of perms) {
    try {
      const denied: string[] = [];
      for (const verb of p.verbs) {
        const attrs: Record<string, string> = { verb, group: p.group, resource: p.resource };
        if (p.namespace) attrs['namespace'] = p.namespace;
        if (p.name) attrs['name'] = p.name;
        if (!(await mayI(t, attrs, timeoutMs, subject.headers))) denied.push(verb);
      }
      out.push(permissionCheck(p, { denied }, subject.who));
    } catch (err) {
      const line = permissionCheck(p, { error: errorText(err) }, subject.who);
      out.push(
        subject.headers && err instanceof KubeApiError && err.code === 403
          ? skipped(line.id, line.title, cannotImpersonate(subject.who))
          : line,
      );
    }
  }
  return out;
}

/** The forbidden rights the controller's service account holds (asked as `subject`). */
async function excessRights(
  t: KubeTransport,
  config: ControllerConfig,
  subject: Subject,
  timeoutMs: number,
): Promise<CheckResult> {
  const ns = config.operatorNamespace;
  if ('skip' in subject)
    return excessRightsCheck(`the controller's service account in ${ns}`, { skip: subject.skip });
  const { who, headers } = subject;
  const asks: HeldRight[] = forbiddenRights(config.bindings.enabled).flatMap((right) =>
    right.verbs.flatMap((verb) => [
      { verb, right },
      ...(right.namespaced ? [{ verb, right, namespace: ns }] : []),
    ]),
  );
  try {
    const allowed = await Promise.all(
      asks.map((a) =>
        mayI(
          t,
          {
            verb: a.verb,
            group: a.right.group,
            resource: a.right.resource,
            ...(a.right.subresource ? { subresource: a.right.subresource } : {}),
            ...(a.namespace ? { namespace: a.namespace } : {}),
          },
          timeoutMs,
          headers,
        ),
      ),
    );
    const held = asks.filter((_, i) => allowed[i]);
    // A right held in every namespace is named once, not again for the operator namespace.
    const everywhere = new Set(held.filter((h) => !h.namespace).map((h) => `${h.verb} ${h.right.resource}`));
    return excessRightsCheck(who, {
      held: held.filter((h) => !h.namespace || !everywhere.has(`${h.verb} ${h.right.resource}`)),
    });
  } catch (err) {
    if (headers && err instanceof KubeApiError && err.code === 403)
      return excessRightsCheck(who, { skip: cannotImpersonate(who) });
    return excessRightsCheck(who, { error: errorText(err) });
  }
}

/** Runs every check in order; a check whose prerequisite failed is listed as not run. */
export async function runChecks(opts: CheckOptions): Promise<CheckResult[]> {
  const { config } = opts;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const now = opts.now ?? Date.now;
  const ns = config.operatorNamespace;
  const leaseName = `${config.releaseName}-controller`;
  const spec: RegistrationSpec = {
    name: config.releaseName,
    namespace: ns,
    version: VERSION,
    description: config.registration.description,
    metadata: config.registration.metadata,
    bindingsEnabled: config.bindings.enabled,
    endpointSelector: config.bindings.endpointSelector,
  };
  const results: CheckResult[] = [];
  const ingressLines = async (readRecord: (name: string) => Promise<RecordRead>): Promise<CheckResult[]> => {
    if (!opts.ingress) return [];
    if (!config.bindings.enabled)
      return [pass('ingress', 'binding ingress not used (bindings.enabled: false)')];
    return ingressChecks(opts.ingress, {
      readRecord,
      endpointUrl: (id) => endpointUrl(config, id, timeoutMs),
      timeoutMs,
    });
  };
  const recordSkipped = (because: string) => () => Promise.resolve<RecordRead>({ skip: because });
  results.push(...apiChecks(config.api.baseUrl, await apiProbe(config, timeoutMs), spec));

  const perms = controllerPermissions(ns, leaseName);
  const clusterDependent = async (because: string): Promise<CheckResult[]> => [
    ...perms
      .map((p) => permissionCheck(p, { error: because }, "the controller's service account"))
      .map((r) => skipped(r.id, r.title, because)),
    excessRightsCheck(`the controller's service account in ${ns}`, { skip: because }),
    skipped('cluster.namespace', `operator namespace "${ns}" exists`, because),
    skipped('cluster.lease', `Lease ${ns}/${leaseName} held and renewed recently`, because),
    ...(opts.forwarderUrls?.length
      ? [forwardersCheck(ns, opts.forwarderSelector, await forwarderReadyz(opts.forwarderUrls, timeoutMs))]
      : [skipped('forwarders.ready', 'forwarder pods ready with every port bound', because)]),
    controllerStatusCheck(
      opts.controllerUrls?.length
        ? await Promise.all(opts.controllerUrls.map((u) => readControllerStatus(u, timeoutMs)))
        : [],
    ),
  ];

  const kc = opts.kubeConfig;
  if (!kc) {
    results.push(
      fail('cluster.reachable', 'Kubernetes API reachable', opts.kubeconfigProblem ?? 'no kubeconfig'),
      ...(await clusterDependent('no Kubernetes configuration')),
    );
    results.push(
      ...(await ingressLines(recordSkipped('no Kubernetes configuration to read the install record'))),
    );
    return results;
  }
  const t = new KubeTransport(kc, { timeoutMs });
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  const version = await kubeGet(t, '/version', timeoutMs);
  const reach = clusterCheck(server, version);
  results.push(reach);
  if (reach.status !== 'ok') {
    results.push(...(await clusterDependent('the Kubernetes API is not reachable')));
    results.push(...(await ingressLines(recordSkipped('the Kubernetes API is not reachable'))));
    return results;
  }

  const identity = await whoAmI(t, timeoutMs);
  const subject = await controllerSubject(t, config, identity, timeoutMs, opts.controllerServiceAccount);
  results.push(...(await permissionLines(t, perms, subject, timeoutMs)));
  results.push(await excessRights(t, config, subject, timeoutMs));

  const nsAnswer = await kubeGet(t, `/api/v1/namespaces/${ns}`, timeoutMs);
  if (nsAnswer.kind === 'ok') {
    const phase = NamespaceAnswer.safeParse(JSON.parse(nsAnswer.value.body));
    results.push(
      namespaceCheck(ns, {
        phase: phase.success && phase.data.status?.phase === 'Terminating' ? 'Terminating' : 'Active',
      }),
    );
  } else if (nsAnswer.kind === 'status' && nsAnswer.status === 404) {
    results.push(namespaceCheck(ns, { phase: 'absent' }));
  } else {
    results.push(namespaceCheck(ns, { error: 'message' in nsAnswer ? nsAnswer.message : 'unknown' }));
  }

  const nsLine = results[results.length - 1]!;
  if (nsLine.status !== 'ok') {
    // Nothing can live in a namespace that is not there: one failure, not three.
    const because = `operator namespace "${ns}" is missing`;
    results.push(skipped('cluster.lease', `Lease ${ns}/${leaseName} held and renewed recently`, because));
    results.push(
      opts.forwarderUrls?.length
        ? forwardersCheck(ns, opts.forwarderSelector, await forwarderReadyz(opts.forwarderUrls, timeoutMs))
        : skipped('forwarders.ready', 'forwarder pods ready with every port bound', because),
    );
    results.push(...(await ingressLines(recordSkipped(because))));
    return results;
  }
  if (!config.leaderElection.enabled) {
    results.push(pass('cluster.lease', 'leader election disabled (leaderElection.enabled: false)'));
  } else {
    const leaseAnswer = await kubeGet(t, objectPath(kinds.lease, ns, leaseName), timeoutMs);
    if (leaseAnswer.kind === 'ok') {
      const lease = LeaseSchema.safeParse(JSON.parse(leaseAnswer.value.body));
      const s = lease.success ? (lease.data.spec ?? {}) : {};
      results.push(
        leaseCheck(
          ns,
          leaseName,
          {
            lease: {
              holder: s.holderIdentity ?? '',
              renewTime: s.renewTime ?? undefined,
              leaseDurationSeconds: s.leaseDurationSeconds ?? config.leaderElection.leaseDurationSeconds,
            },
          },
          now(),
        ),
      );
    } else if (leaseAnswer.kind === 'status' && leaseAnswer.status === 404) {
      results.push(leaseCheck(ns, leaseName, { lease: undefined }, now()));
    } else {
      results.push(
        leaseCheck(ns, leaseName, { error: 'message' in leaseAnswer ? leaseAnswer.message : '' }, now()),
      );
    }
  }

  results.push(
    forwardersCheck(
      ns,
      opts.forwarderSelector,
      opts.forwarderUrls?.length
        ? await forwarderReadyz(opts.forwarderUrls, timeoutMs)
        : await forwarderPods(t, ns, opts.forwarderSelector, timeoutMs),
    ),
  );
  results.push(
    controllerStatusCheck(
      opts.controllerUrls?.length
        ? await Promise.all(opts.controllerUrls.map((u) => readControllerStatus(u, timeoutMs)))
        : await controllerPodStatuses(t, config, timeoutMs),
    ),
  );
  results.push(...(await ingressLines((name) => readInstallRecord(t, ns, name, timeoutMs))));
  return results;
}

const ControllerPods = z.object({
  items: z.array(
    z
      .object({
        metadata: z.object({ name: z.string() }).loose(),
        spec: z
          .object({
            containers: z.array(
              z
                .object({
                  ports: z
                    .array(z.object({ name: z.string().optional(), containerPort: z.number() }).loose())
                    .optional(),
                })
                .loose(),
            ),
          })
          .loose(),
        status: z.object({ podIP: z.string().optional() }).loose().optional(),
      })
      .loose(),
  ),
});

/**
 * Each controller Pod's /status: straight to its pod IP (in the cluster, or kubesim --workloads
 * on this host), else through the API server's pod proxy (from a laptop).
 */
async function controllerPodStatuses(
  t: KubeTransport,
  config: ControllerConfig,
  timeoutMs: number,
): Promise<ControllerAnswer[]> {
  const ns = config.operatorNamespace;
  const selector = `app.kubernetes.io/instance=${config.releaseName},app.kubernetes.io/component=controller`;
  let pods: z.infer<typeof ControllerPods>['items'];
  try {
    pods = (
      await t.json(
        { path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: selector }, timeoutMs },
        ControllerPods,
      )
    ).items;
  } catch (err) {
    return [{ from: `pods ${selector} in ${ns}`, error: `cannot list them: ${errorText(err)}` }];
  }
  return Promise.all(
    pods.map(async (pod): Promise<ControllerAnswer> => {
      const ports = pod.spec.containers[0]?.ports ?? [];
      const port = (ports.find((p) => p.name === 'http') ?? ports[0])?.containerPort;
      const name = pod.metadata.name;
      if (!port) return { from: name, error: 'its container declares no http port' };
      const ip = pod.status?.podIP;
      const direct = ip
        ? await readControllerStatus(
            `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`,
            Math.min(timeoutMs, 3000),
          )
        : undefined;
      if (direct?.doc) return { ...direct, from: name };
      const proxied = await kubeGet(
        t,
        `/api/v1/namespaces/${ns}/pods/${name}:${port}/proxy/status`,
        timeoutMs,
      );
      if (proxied.kind === 'ok') {
        const doc = StatusDocumentSchema.safeParse(JSON.parse(proxied.value.body));
        if (doc.success) return { from: `${name} (via the API server's pod proxy)`, doc: doc.data };
      }
      const why =
        proxied.kind === 'status' ? `HTTP ${proxied.status}` : 'message' in proxied ? proxied.message : '';
      return {
        from: name,
        error: `not readable directly (${direct?.error ?? 'no pod IP'}) nor through the pod proxy (${why})`,
      };
    }),
  );
}
