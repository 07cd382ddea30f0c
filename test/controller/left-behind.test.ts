import { afterEach, describe, expect, it } from 'vitest';
import {
  INSTANCE_LABEL,
  MANAGED_BY_LABEL,
  OPERATOR_NAMESPACE_LABEL,
  REASON_ANNOTATION,
  ROLE_LABEL,
  STATE_LABEL,
} from '../../src/binding/identity.js';
import { LEFT_BEHIND_STATE } from '../../src/binding/ownership/index.js';
import { StatusDocumentSchema } from '../../src/controller/decide/status.js';
import { kinds, type Service } from '../../src/kube/index.js';
import { api } from '../kubesim/helpers.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

/**
 * Issue #30 item 5, last part: an alias left behind (it lost our `managed-by` label, or no
 * internal Service of ours names it) is listed in `/status`, and loses `state=projected` when it
 * provably was ours, with one write and nothing else; writes counted by kubesim's audit log.
 */

let env: ControllerEnv | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

/** Requests of `verb` on the Service `namespace/name`, as kubesim's audit log recorded them. */
function requests(e: ControllerEnv, verb: string, namespace: string, name: string): number {
  return e.sim
    .audit()
    .filter(
      (r) =>
        r.attrs.resource === 'services' &&
        r.attrs.verb === verb &&
        r.attrs.namespace === namespace &&
        r.attrs.name === name,
    ).length;
}

const without = (labels: Record<string, string> | undefined, key: string): Record<string, string> =>
  Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => k !== key));

async function statusOf(url: string) {
  const res = await fetch(`${url}/status`);
  return StatusDocumentSchema.parse(await res.json());
}

describe('controller: aliases left behind', () => {
  it('an alias of ours that lost managed-by is listed and relabelled once; after its endpoint is gone it stays listed and untouched', async () => {
    env = await startEnv();
    const e = env;
    const ctl = await e.startController({ identity: 'a' });
    const ep = await e.createEndpoint('http://web.prod');
    await eventually(() => ctl.status().counts['projected'] === 1, 'projected');
    const alias = (await e.service('prod', 'web'))!;
    expect(alias.metadata.labels?.[STATE_LABEL]).toBe('projected');

    // A tenant takes the alias out of our hands: the label goes, the object stays.
    await e.kube.replace(kinds.service, {
      ...alias,
      metadata: { ...alias.metadata, labels: without(alias.metadata.labels, MANAGED_BY_LABEL) },
    });
    e.sim.clearAudit();

    const relabelled = await eventually(async () => {
      const live = await e.service('prod', 'web');
      return live?.metadata.labels?.[STATE_LABEL] === LEFT_BEHIND_STATE ? live : undefined;
    }, 'alias relabelled left-behind');
    expect(relabelled.metadata.uid, 'the same object, not a new one').toBe(alias.metadata.uid);
    expect(relabelled.metadata.labels?.[MANAGED_BY_LABEL], 'the tenant’s removal stands').toBeUndefined();
    expect(relabelled.metadata.annotations?.[REASON_ANNOTATION]).toMatch(
      /lost the label app\.kubernetes\.io\/managed-by/,
    );
    const listed = await eventually(
      () => ctl.status().leftBehind?.aliases.find((a) => a.name === 'web'),
      'listed',
    );
    expect(listed).toMatchObject({ namespace: 'prod', name: 'web' });
    expect(listed.reason).toMatch(/this install created this alias .*lost the label/);
    // The document as served over HTTP parses with the schema and carries the count.
    const served = await statusOf(ctl.url);
    expect(served.leftBehind?.count).toBe(1);
    expect(served.leftBehind?.aliases.map((a) => `${a.namespace}/${a.name}`)).toEqual(['prod/web']);

    // Its endpoint deleted: the internal Service goes, the alias (not ours any more) stays,
    // listed, and is written no more.
    await e.mock.client.endpoints.delete(ep.id);
    await eventually(
      async () => (await e.internalOf(ep.id)) === undefined || undefined,
      'internal Service gone',
    );
    await eventually(() => ctl.status().endpoints.length === 0 || undefined, 'endpoint gone from status');
    await new Promise((r) => setTimeout(r, 500));
    const left = (await e.service('prod', 'web'))!;
    expect(left.metadata.uid).toBe(alias.metadata.uid);
    expect(left.metadata.labels?.[STATE_LABEL]).toBe(LEFT_BEHIND_STATE);
    expect(ctl.status().leftBehind?.aliases.map((a) => a.name)).toEqual(['web']);
    const writes = {
      update: requests(e, 'update', 'prod', 'web'),
      patch: requests(e, 'patch', 'prod', 'web'),
      delete: requests(e, 'delete', 'prod', 'web'),
    };
    // The test's own replace came before clearAudit: every write counted here is the controller's.
    expect(writes, 'one relabel, no delete').toEqual({ update: 1, patch: 0, delete: 0 });

    // A restart: no proof remains (the internal Service that recorded its uid is gone), so it is
    // listed as not provably ours and written by nobody.
    await ctl.stop();
    e.sim.clearAudit();
    const next = await e.startController({ identity: 'b' });
    await eventually(() => (next.isLeader() && next.isReady()) || undefined, 'new leader ready');
    const relisted = await eventually(
      () => next.status().leftBehind?.aliases.find((a) => a.name === 'web'),
      'listed after the restart',
    );
    expect(relisted.reason).toMatch(/no internal Service of this install records it/);
    await new Promise((r) => setTimeout(r, 500));
    expect(requests(e, 'update', 'prod', 'web') + requests(e, 'delete', 'prod', 'web')).toBe(0);
  });

  it("a tenant's Service made to look like our alias is listed, never written", async () => {
    env = await startEnv();
    const e = env;
    const ctl = await e.startController({ identity: 'a' });
    const fake: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'fake',
        namespace: 'prod',
        labels: {
          [INSTANCE_LABEL]: ctl.status().install.release,
          [OPERATOR_NAMESPACE_LABEL]: OPERATOR_NS,
          [ROLE_LABEL]: 'alias',
          [STATE_LABEL]: 'projected',
        },
      },
      spec: { type: 'ExternalName', externalName: `web.${OPERATOR_NS}.svc.cluster.local` },
    };
    // And one with every label of ours (managed-by too) that no internal Service names.
    const labelled: Service = {
      ...fake,
      metadata: {
        ...fake.metadata,
        name: 'labelled',
        labels: { ...fake.metadata.labels, [MANAGED_BY_LABEL]: 'endpoint-binder' },
      },
    };
    await e.kube.create(kinds.service, fake);
    await e.kube.create(kinds.service, labelled);
    e.sim.clearAudit();
    // A pass after both are seen: an endpoint projected.
    await e.createEndpoint('http://other.prod');
    await eventually(() => ctl.status().counts['projected'] === 1, 'projected');
    const names = await eventually(() => {
      const list = ctl.status().leftBehind?.aliases.map((a) => a.name) ?? [];
      return list.length === 2 ? list : undefined;
    }, 'both listed');
    expect(names).toEqual(['fake', 'labelled']);
    expect(ctl.status().leftBehind?.count).toBe(2);
    await new Promise((r) => setTimeout(r, 500));
    for (const name of ['fake', 'labelled'])
      expect(
        requests(e, 'update', 'prod', name) +
          requests(e, 'patch', 'prod', name) +
          requests(e, 'delete', 'prod', name),
        `${name} written`,
      ).toBe(0);
    expect((await e.service('prod', 'fake'))?.metadata.labels?.[STATE_LABEL]).toBe('projected');
  });

  it('under a fence that forbids writing a Service without our managed-by label, the relabel is refused once, not retried, and /status says so', async () => {
    env = await startEnv();
    const e = env;
    const ctl = await e.startController({ identity: 'a' });
    await e.createEndpoint('http://web.prod');
    await eventually(() => ctl.status().counts['projected'] === 1, 'projected');
    // The chart's fence, reduced to its rule that matters here: an update of a Service whose old
    // object lacks managed-by=endpoint-binder is refused (for everyone in this test).
    const ADM = '/apis/admissionregistration.k8s.io/v1';
    const rule = { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['services'] };
    const policy = await api(e.sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'fence' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [rule] },
        validations: [
          {
            expression: `has(oldObject.metadata.labels) && '${MANAGED_BY_LABEL}' in oldObject.metadata.labels`,
            reason: 'Forbidden',
            message: 'fence: this Service does not carry the ownership labels',
          },
        ],
      },
    });
    expect(policy.status).toBe(201);
    const binding = await api(e.sim, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
      metadata: { name: 'fence-binding' },
      spec: { policyName: 'fence', validationActions: ['Deny'] },
    });
    expect(binding.status).toBe(201);

    const alias = (await e.service('prod', 'web'))!;
    await e.kube.replace(kinds.service, {
      ...alias,
      metadata: { ...alias.metadata, labels: without(alias.metadata.labels, MANAGED_BY_LABEL) },
    });
    e.sim.clearAudit();
    const listed = await eventually(
      () =>
        ctl
          .status()
          .leftBehind?.aliases.find((a) => a.name === 'web' && /could not be changed/.test(a.reason)),
      'listed with the refusal',
    );
    expect(listed.reason).toMatch(/fence: this Service does not carry the ownership labels/);
    // Passes go on (other endpoints come); the refused write is not sent again.
    for (let i = 0; i < 3; i++) {
      await e.createEndpoint(`http://other-${i}.prod`);
      await eventually(() => ctl.status().counts['projected'] === i + 1, `other-${i} projected`);
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(requests(e, 'update', 'prod', 'web'), 'one refused attempt').toBe(1);
    expect((await e.service('prod', 'web'))?.metadata.labels?.[STATE_LABEL]).toBe('projected');
  });
});
