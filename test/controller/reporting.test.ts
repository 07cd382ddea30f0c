import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import type { Controller } from '../../src/controller/controller.js';
import { collectionPath, kinds, listAll, KubeTransport } from '../../src/kube/index.js';
import { EventSchema } from '../../src/kube/objects.js';
import { captureLogs } from '../helpers/logs.js';
import { ACME_KEY } from '../helpers/mock-api.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';
import { captured } from '../helpers/capture-io.js';

describe('controller: status, metrics, events, logs, selector test', () => {
  let env: ControllerEnv;
  let ctl: Controller;
  const logs = captureLogs('debug');
  let ids: { good: string; bad: string; excluded: string; foreign: string };

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    await env.kube.create(kinds.service, {
      metadata: { name: 'held', namespace: 'prod' },
      spec: { type: 'ClusterIP', ports: [{ port: 1, protocol: 'TCP' }] },
    });
    ctl = await env.startController({
      logger: logs.logger,
      pod: { name: 'controller-0', namespace: OPERATOR_NS },
      bindings: { endpointSelector: "endpoint.description != 'exclude'" },
    });
    const good = await env.createEndpoint('http://api.prod');
    const bad = await env.createEndpoint('http://1.prod');
    const excluded = await env.createEndpoint('http://hidden.prod', { description: 'exclude' });
    const foreign = await env.createEndpoint('http://held.prod');
    ids = { good: good.id, bad: bad.id, excluded: excluded.id, foreign: foreign.id };
    await eventually(
      () => ctl.status().endpoints.length === 4 && ctl.status().counts['projected'] === 1,
      'statuses',
    );
    await eventually(() => ctl.status().counts['name-conflict'] === 1, 'conflict seen');
    // Followers know name conflicts too now (names are read before planning): wait for the
    // leader's writes explicitly.
    await eventually(() => ctl.isLeader(), 'leading');
    await eventually(() => env.service('prod', 'api'), 'projected in the cluster');
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await env?.close();
  });

  it('serves /status with every endpoint, its state and reason', async () => {
    const doc = (await (await fetch(`${ctl.url}/status`)).json()) as {
      endpoints: { id: string; state: string; reason: string }[];
    };
    const byId = new Map(doc.endpoints.map((e) => [e.id, e]));
    expect(byId.get(ids.good)?.state).toBe('projected');
    expect(byId.get(ids.bad)?.state).toBe('invalid-url');
    expect(byId.get(ids.excluded)?.state).toBe('not-selected');
    expect(byId.get(ids.foreign)?.state).toBe('name-conflict');
    for (const id of [ids.bad, ids.excluded, ids.foreign])
      expect(byId.get(id)?.reason.length).toBeGreaterThan(10);
  });

  it('prints the status as a table and as JSON', async () => {
    let io = captured();
    expect(await runCli(['status', '--url', ctl.url])).toBe(0);
    const table = io.out();
    vi.restoreAllMocks();
    expect(table).toMatch(/ENDPOINT\s+URL\s+STATE/);
    expect(table).toMatch(new RegExp(`${ids.good}\\s+http://api\\.prod:80\\s+projected\\s+api\\.prod`));
    expect(table).toMatch(/4 endpoints: 1 projected/);
    io = captured();
    expect(await runCli(['status', '--url', ctl.url, '-o', 'json'])).toBe(0);
    const json = JSON.parse(io.out()) as { endpoints: unknown[] };
    vi.restoreAllMocks();
    expect(json.endpoints).toHaveLength(4);
  });

  it('exports endpoint_binder_* metrics', async () => {
    const text = await (await fetch(`${ctl.url}/metrics`)).text();
    expect(text).toMatch(/endpoint_binder_endpoints\{state="projected"\} 1/);
    expect(text).toMatch(/endpoint_binder_endpoints\{state="invalid-url"\} 1/);
    expect(text).toMatch(/endpoint_binder_services_desired\{role="internal"\} 2/);
    expect(text).toMatch(/endpoint_binder_kube_writes_total\{op="create",result="ok"\} \d+/);
    expect(text).toMatch(/endpoint_binder_last_full_sync_timestamp_seconds \d+/);
    expect(text).toMatch(/endpoint_binder_leader_election_master_status\{[^}]*\} 1/);
    expect(text).toMatch(/endpoint_binder_plan_duration_seconds_count \d+/);
  });

  it('names the process metrics once and says which build runs', async () => {
    const text = await (await fetch(`${ctl.url}/metrics`)).text();
    expect(text).toMatch(/^endpoint_binder_process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^endpoint_binder_nodejs_eventloop_lag_seconds /m);
    expect(text, 'a doubled prefix').not.toContain('endpoint_binder_process_process_');
    expect(text).toMatch(/^endpoint_binder_build_info\{version="\d+\.\d+\.\d+[^"]*",node="v\d+[^"]*"\} 1$/m);
  });

  it('records Kubernetes Events on the Services and on its Pod', async () => {
    const transport = new KubeTransport(env.sim.kubeConfig());
    const events = await eventually(async () => {
      const all = (await listAll({ transport, path: collectionPath(kinds.event), schema: EventSchema }))
        .items;
      const reasons = new Set(all.map((e) => `${e.involvedObject.kind}:${e.reason}`));
      return reasons.has('Service:Created') &&
        reasons.has('Pod:InvalidURL') &&
        reasons.has('Service:NameConflict')
        ? all
        : undefined;
    }, 'events');
    const invalid = events.find((e) => e.reason === 'InvalidURL');
    expect(invalid?.involvedObject).toMatchObject({
      kind: 'Pod',
      name: 'controller-0',
      namespace: OPERATOR_NS,
    });
    expect(invalid?.message).toContain(ids.bad);
    expect(invalid?.type).toBe('Warning');
  });

  it('logs one line per decision and never the API key', () => {
    expect(logs.count('endpoint state')).toBeGreaterThanOrEqual(4);
    expect(logs.count('service created')).toBeGreaterThanOrEqual(2);
    expect(logs.raw.join('\n')).not.toContain(ACME_KEY);
  });

  it('selector test shows which endpoints a selector would pick, and why not the others', async () => {
    process.env['ENDPOINT_BINDER_API_KEY'] = ACME_KEY;
    try {
      const io = captured();
      const code = await runCli(['selector', 'test', "endpoint.name == 'api'", '--api-url', env.mock.url]);
      const out = io.out();
      vi.restoreAllMocks();
      expect(code).toBe(0);
      expect(out).toMatch(new RegExp(`${ids.good}\\s+http://api\\.prod:80\\s+yes`));
      expect(out).toMatch(new RegExp(`${ids.bad}\\s+http://1\\.prod:80\\s+no\\s+invalid URL`));
      expect(out).toMatch(/1 of 4 endpoints selected/);
      const io2 = captured();
      expect(await runCli(['selector', 'test', 'endpoint.hots == 1'])).toBe(2);
      const err = io2.err();
      vi.restoreAllMocks();
      expect(err).toMatch(/hots/);
    } finally {
      delete process.env['ENDPOINT_BINDER_API_KEY'];
    }
  });
});
