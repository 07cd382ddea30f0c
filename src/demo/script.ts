import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import type { Endpoint } from '../api/schemas/endpoint.js';
import { MANAGED_BY_LABEL } from '../binding/identity.js';
import { statusText } from '../cli/status-view.js';
import { collectionPath, kinds, listAll, KubeClient, KubeTransport, type Service } from '../kube/index.js';
import { DEMO_NAMESPACE, DEMO_SELECTOR, OPTED_OUT_NAMESPACE, type Demo } from './demo.js';
import { formatServicesTable } from './services-table.js';

export const SAMPLE_ENDPOINTS = {
  web: `http://web.${DEMO_NAMESPACE}`,
  echo: `tcp://echo.${DEMO_NAMESPACE}:7000`,
  later: 'http://api.later',
  excluded: 'http://secret.private',
  system: 'http://metrics.kube-system',
  optedOut: `http://app.${OPTED_OUT_NAMESPACE}`,
} as const;

class StepFailed extends Error {}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new StepFailed(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function exchange(port: number, host: string, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s: Socket = connect({ host, port });
    let got = '';
    const timer = setTimeout(() => {
      s.destroy();
      reject(new StepFailed(`no echo within 10 s (got ${JSON.stringify(got)})`));
    }, 10_000);
    s.on('data', (c: Buffer) => {
      got += c.toString();
      if (got.length >= payload.length) {
        clearTimeout(timer);
        s.destroy();
        resolve(got);
      }
    });
    s.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.write(payload);
  });
}

/**
 * The demo's script: create sample endpoints, show what the controller made of them (the
 * Services as kubectl shows them), send traffic through the forwarder, show the status table
 * (with the data path the controller read from the forwarder), create the missing namespace and
 * show its alias appear. Resolves true when every step worked.
 */
export async function runDemoScript(
  demo: Demo,
  out: (text: string) => void,
  host = '127.0.0.1',
): Promise<boolean> {
  const kube = new KubeClient(demo.kubesim.kubeConfig());
  const transport = new KubeTransport(demo.kubesim.kubeConfig());
  const step = async (title: string, fn: () => Promise<string | undefined>): Promise<boolean> => {
    out(`\n▶ ${title}\n`);
    try {
      const detail = await fn();
      if (detail) out(`${detail.replace(/^/gm, '  ')}\n`);
      out('  ✓ ok\n');
      return true;
    } catch (err) {
      out(`  ✗ ${err instanceof Error ? err.message : String(err)}\n`);
      return false;
    }
  };
  const created: Record<keyof typeof SAMPLE_ENDPOINTS, Endpoint | undefined> = {
    web: undefined,
    echo: undefined,
    later: undefined,
    excluded: undefined,
    system: undefined,
    optedOut: undefined,
  };
  const internalOf = async (id: string): Promise<Service | undefined> => {
    const st = demo.controller.status().endpoints.find((e) => e.id === id);
    if (!st?.internalService) return undefined;
    return kube.get(kinds.service, st.internalService.namespace, st.internalService.name);
  };
  const ownedServices = async (): Promise<Service[]> =>
    (
      await listAll({
        transport,
        path: collectionPath(kinds.service),
        labelSelector: `${MANAGED_BY_LABEL}=endpoint-binder`,
        schema: kinds.service.schema,
      })
    ).items;

  let ok = await step('Create sample cluster-bound endpoints through the management API', async () => {
    const lines: string[] = [];
    const upstream = {
      web: demo.upstreams.http,
      echo: demo.upstreams.tcp,
      later: demo.upstreams.http,
      excluded: demo.upstreams.http,
      system: demo.upstreams.http,
      optedOut: demo.upstreams.http,
    };
    for (const key of Object.keys(SAMPLE_ENDPOINTS) as (keyof typeof SAMPLE_ENDPOINTS)[]) {
      const ep = await demo.client.endpoints.create({
        url: SAMPLE_ENDPOINTS[key],
        bindings: ['kubernetes'],
        description: `demo: ${key}`,
        upstream_url: upstream[key],
      });
      created[key] = ep;
      lines.push(`${ep.id}  ${ep.url}  -> ${upstream[key]}`);
    }
    lines.push(`(selector: ${DEMO_SELECTOR}; namespace "later" does not exist yet)`);
    lines.push(
      `(namespace policy: kube-* denied; namespace "${OPTED_OUT_NAMESPACE}" is labelled endpoint-binder.io/aliases=disabled)`,
    );
    return lines.join('\n');
  });

  ok =
    (await step('Wait for the controller to project them', async () => {
      await until('web and echo projected', () => {
        const st = demo.controller.status();
        const state = (id: string | undefined) => st.endpoints.find((e) => e.id === id)?.state;
        return state(created.web?.id) === 'projected' &&
          state(created.echo?.id) === 'projected' &&
          state(created.later?.id) === 'namespace-missing' &&
          state(created.excluded?.id) === 'not-selected' &&
          state(created.system?.id) === 'namespace-denied' &&
          state(created.optedOut?.id) === 'namespace-denied'
          ? true
          : undefined;
      });
      const services = await until('the Services in the cluster', async () => {
        const list = await ownedServices();
        // web and echo: internal + alias; later: internal (its alias waits for the namespace);
        // the two namespace-denied endpoints: none (no alias could use them).
        return list.length === 5 ? list : undefined;
      });
      const ports = services.flatMap((svc) =>
        svc.spec?.type === 'ClusterIP' ? (svc.spec.ports ?? []).map((p) => Number(p.targetPort)) : [],
      );
      await until('the forwarder to listen on every allocated port', () =>
        ports.every((p) => demo.forwarder.boundPorts().includes(p)) && demo.forwarder.readiness().ready
          ? true
          : undefined,
      );
      return `Services (kubectl get svc -A -l app.kubernetes.io/managed-by=endpoint-binder -L endpoint-binder.io/state):\n\n${formatServicesTable(services, Date.now())}`;
    })) && ok;

  ok =
    (await step(`HTTP through the forwarder: GET ${SAMPLE_ENDPOINTS.web}/hello`, async () => {
      const svc = await until('web internal Service', () => internalOf(created.web!.id));
      const port = Number(svc.spec?.ports?.[0]?.targetPort);
      const res = await request(`http://${host}:${port}/hello`, {
        headers: { host: `web.${DEMO_NAMESPACE}` },
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      const body = await res.body.text();
      if (res.statusCode !== 200) throw new StepFailed(`HTTP ${res.statusCode}: ${body}`);
      return `pod → web.${DEMO_NAMESPACE}:80 → ${svc.metadata.name}:80 → forwarder :${port} → ingress → upstream\nanswer: ${body.trim()}`;
    })) && ok;

  ok =
    (await step(`TCP through the forwarder: ${SAMPLE_ENDPOINTS.echo}`, async () => {
      const svc = await until('echo internal Service', () => internalOf(created.echo!.id));
      const port = Number(svc.spec?.ports?.[0]?.targetPort);
      const sent = 'hello, echo upstream';
      const got = await exchange(port, host, sent);
      if (got !== sent) throw new StepFailed(`echo answered ${JSON.stringify(got)}`);
      return `sent ${JSON.stringify(sent)}, echoed ${JSON.stringify(got)} (forwarder port ${port})`;
    })) && ok;

  ok =
    (await step('Status (endpoint-binder status)', async () => {
      // The controller reads the forwarder on a timer: once it has seen the two connections
      // above, the DATA PATH column shows them.
      await until('the controller to read the forwarder after the traffic', () => {
        const eps = demo.controller.status().endpoints;
        const cell = (id: string | undefined) => eps.find((e) => e.id === id)?.dataPath ?? '';
        return cell(created.web?.id).startsWith('ok') && cell(created.echo?.id).startsWith('ok')
          ? true
          : undefined;
      });
      return statusText(demo.controller.status(), undefined).trimEnd();
    })) && ok;

  ok =
    (await step('Create the missing namespace "later" and watch its alias appear', async () => {
      await kube.create(kinds.namespace, { metadata: { name: 'later' } });
      const alias = await until('alias api.later', () => kube.get(kinds.service, 'later', 'api'));
      await until('state projected', () =>
        demo.controller.status().endpoints.find((e) => e.id === created.later?.id)?.state === 'projected'
          ? true
          : undefined,
      );
      return `alias later/api → ${alias.spec?.externalName ?? ''}`;
    })) && ok;

  return ok;
}
