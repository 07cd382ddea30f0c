import { describe, expect, it } from 'vitest';
import { api, createNs, svc, useSim, type Loose } from './helpers.js';
import type { Kubesim } from '../../src/kubesim/index.js';

/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding: served with the real field
 * rules, compiled at write time, and evaluated on every create, update and delete they match,
 * with the real refusal (status code, Status body, wording), warnings and audit annotations.
 */

const start = useSim();
const ADM = '/apis/admissionregistration.k8s.io/v1';
const SVC = (ns = 'default') => `/api/v1/namespaces/${ns}/services`;
const SERVICES_RULE = {
  apiGroups: [''],
  apiVersions: ['v1'],
  operations: ['CREATE', 'UPDATE', 'DELETE'],
  resources: ['services'],
};

async function must(r: Promise<{ status: number; body: Loose }>, status: number): Promise<Loose> {
  const res = await r;
  if (res.status !== status)
    throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A policy and a binding of it with these actions; returns a function that removes both. */
async function install(
  sim: Kubesim,
  name: string,
  spec: Record<string, unknown>,
  binding: Record<string, unknown> = {},
): Promise<void> {
  await must(
    api(sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name },
      spec: { matchConstraints: { resourceRules: [SERVICES_RULE] }, ...spec },
    }),
    201,
  );
  await must(
    api(sim, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'], ...binding },
    }),
    201,
  );
}

/** Lets a user do anything with Services (a ClusterRole and its binding), as a test of admission needs. */
async function grantServices(sim: Kubesim, user: string): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await must(
    api(sim, 'PUT', `${rbac}/clusterroles/services-all`, {
      metadata: { name: 'services-all' },
      rules: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
    }),
    201,
  ).catch(() => undefined);
  await must(
    api(sim, 'POST', `${rbac}/clusterrolebindings`, {
      metadata: { generateName: 'services-all-' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'services-all' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    }),
    201,
  );
}

const as = (user: string, groups: string[] = []) => ({
  headers: { 'Impersonate-User': user, ...(groups.length ? { 'Impersonate-Group': groups.join(',') } : {}) },
});

describe('ValidatingAdmissionPolicy: served and validated', () => {
  it('stores a policy with the v1 defaults, generation 1, and lists it in discovery', async () => {
    const sim = await start();
    const created = await must(
      api(sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
        metadata: { name: 'p' },
        spec: {
          matchConstraints: { resourceRules: [SERVICES_RULE] },
          validations: [{ expression: 'true' }],
        },
      }),
      201,
    );
    expect(created.metadata.generation).toBe(1);
    expect(created.spec.failurePolicy).toBe('Fail');
    expect(created.spec.matchConstraints).toEqual({
      resourceRules: [{ ...SERVICES_RULE, scope: '*' }],
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
    const disc = await api(sim, 'GET', ADM);
    expect(disc.body.resources.map((r: Loose) => [r.name, r.namespaced, r.categories])).toEqual([
      ['validatingadmissionpolicies', false, ['api-extensions']],
      ['validatingadmissionpolicies/status', false, undefined],
      ['validatingadmissionpolicybindings', false, ['api-extensions']],
    ]);
    // A spec change bumps the generation; a PUT without resourceVersion is refused (strategy).
    const patched = await must(
      api(
        sim,
        'PATCH',
        `${ADM}/validatingadmissionpolicies/p`,
        { spec: { failurePolicy: 'Ignore' } },
        {
          contentType: 'application/merge-patch+json',
        },
      ),
      200,
    );
    expect(patched.metadata.generation).toBe(2);
    const { resourceVersion: _rv, ...meta } = patched.metadata;
    const put = await api(sim, 'PUT', `${ADM}/validatingadmissionpolicies/p`, { ...patched, metadata: meta });
    expect(put.status).toBe(422);
    expect(put.body.message).toContain(
      'metadata.resourceVersion: Invalid value: 0: must be specified for an update',
    );
  });

  it('refuses a policy whose expressions do not compile, as the real server words it', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'broken' },
      spec: {
        matchConstraints: { resourceRules: [SERVICES_RULE] },
        matchConditions: [{ name: 'uses-variables', expression: 'variables.x' }],
        variables: [{ name: 'labels', expression: 'object.metadata.labels' }],
        validations: [
          { expression: 'object.spec.type ==' },
          { expression: 'object.spec.replicas' },
          { expression: "params.allowed == 'x'" },
          { expression: 'variables.nope == 1' },
          { expression: 'true', messageExpression: '1 + 1' },
          { expression: 'request.bogus == 1' },
        ],
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    const causes = r.body.details.causes.map((c: Loose) => [c.field, c.message]);
    expect(causes).toEqual([
      [
        'spec.matchConditions[0].expression',
        "Invalid value: \"variables.x\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x\n | ^",
      ],
      [
        'spec.validations[0].expression',
        'Invalid value: "object.spec.type ==": compilation failed: ERROR: <input>:1:20: Syntax error: Unexpected token: EOF\n | object.spec.type ==\n | ...................^',
      ],
      [
        'spec.validations[1].expression',
        'Invalid value: "object.spec.replicas": must evaluate to bool but got dyn',
      ],
      [
        'spec.validations[2].expression',
        "Invalid value: \"params.allowed == 'x'\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.allowed == 'x'\n | ^",
      ],
      [
        'spec.validations[3].expression',
        expect.stringContaining("compilation failed: ERROR: <input>:1:11: undefined field 'nope'"),
      ],
      [
        'spec.validations[4].messageExpression',
        'Invalid value: "1 + 1": must evaluate to string but got int',
      ],
      ['spec.validations[5].expression', expect.stringContaining("undefined field 'bogus'")],
    ]);
    expect(r.body.message).toMatch(
      /^ValidatingAdmissionPolicy\.admissionregistration\.k8s\.io "broken" is invalid: \[/,
    );
    expect((await api(sim, 'GET', `${ADM}/validatingadmissionpolicies/broken`)).status).toBe(404);
  });

  it('applies the field rules of policies and bindings', async () => {
    const sim = await start();
    const p = await api(sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'p' },
      spec: {
        failurePolicy: 'Sometimes',
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['*', 'apps'], apiVersions: [], operations: ['MUTATE'], resources: [] },
          ],
        },
        validations: [{ expression: 'true', message: 'two\nlines', reason: 'Conflict' }],
        variables: [{ name: 'in', expression: 'true' }],
      },
    });
    expect(p.status).toBe(422);
    expect(p.body.details.causes.map((c: Loose) => `${c.field}: ${c.message}`)).toEqual([
      'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
      'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "MUTATE": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      `spec.matchConstraints.resourceRules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
      'spec.matchConstraints.resourceRules[0].apiVersions: Required value',
      'spec.matchConstraints.resourceRules[0].resources: Required value',
      'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
      'spec.validations[0].message: Invalid value: "two\\nlines": message must not contain line breaks',
      'spec.validations[0].reason: Unsupported value: "Conflict": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
    ]);
    const none = await api(sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'q' },
      spec: {},
    });
    expect(none.body.details.causes.map((c: Loose) => `${c.field}: ${c.message}`)).toEqual([
      'spec.matchConstraints: Required value',
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
      'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
    ]);
    const b = await api(sim, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
      metadata: { name: 'b' },
      spec: {
        validationActions: ['Deny', 'Warn', 'Deny'],
        matchResources: { namespaceSelector: { matchExpressions: [{ key: 'x', operator: 'In' }] } },
      },
    });
    expect(b.status).toBe(422);
    expect(b.body.details.causes.map((c: Loose) => `${c.field}: ${c.message}`)).toEqual([
      'spec.policyName: Required value',
      // The real server's path, typo included.
      "spec.matchResouces.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'spec.validationActions[2]: Duplicate value: "Deny"',
      'spec.validationActions: Invalid value: ["Deny","Warn","Deny"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    ]);
    const empty = await api(sim, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
      metadata: { name: 'b' },
      spec: { policyName: 'p' },
    });
    expect(empty.body.message).toBe(
      'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b" is invalid: spec.validationActions: Required value: at least one validation action is required',
    );
  });
});

describe('ValidatingAdmissionPolicy: which requests a policy matches', () => {
  type Case = {
    name: string;
    constraints?: Record<string, unknown>;
    bindingMatch?: Record<string, unknown>;
    request: (sim: Kubesim) => Promise<{ status: number; body: Loose }>;
    denied: boolean;
  };
  const labelled = { metadata: { name: 'web', labels: { tier: 'edge' } }, spec: { ports: [{ port: 80 }] } };
  const createWeb = (sim: Kubesim, ns = 'default', body: unknown = svc('web')) =>
    api(sim, 'POST', SVC(ns), body);
  const cases: Case[] = [
    { name: 'CREATE of a matched resource', request: (s) => createWeb(s), denied: true },
    {
      name: 'another operation only',
      constraints: { resourceRules: [{ ...SERVICES_RULE, operations: ['DELETE'] }] },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'another group',
      constraints: { resourceRules: [{ ...SERVICES_RULE, apiGroups: ['apps'] }] },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'wildcards',
      constraints: {
        resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }],
      },
      request: (s) => createWeb(s),
      denied: true,
    },
    {
      name: 'scope Cluster does not match a namespaced request',
      constraints: { resourceRules: [{ ...SERVICES_RULE, scope: 'Cluster' }] },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'scope Namespaced matches it',
      constraints: { resourceRules: [{ ...SERVICES_RULE, scope: 'Namespaced' }] },
      request: (s) => createWeb(s),
      denied: true,
    },
    {
      name: 'resourceNames: another name',
      constraints: { resourceRules: [{ ...SERVICES_RULE, resourceNames: ['api'] }] },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'resourceNames: this name',
      constraints: { resourceRules: [{ ...SERVICES_RULE, resourceNames: ['web'] }] },
      request: (s) => createWeb(s),
      denied: true,
    },
    {
      name: 'excludeResourceRules win',
      constraints: { resourceRules: [SERVICES_RULE], excludeResourceRules: [SERVICES_RULE] },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'objectSelector on the new object: no match',
      constraints: { resourceRules: [SERVICES_RULE], objectSelector: { matchLabels: { tier: 'edge' } } },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'objectSelector on the new object: match',
      constraints: { resourceRules: [SERVICES_RULE], objectSelector: { matchLabels: { tier: 'edge' } } },
      request: (s) => createWeb(s, 'default', labelled),
      denied: true,
    },
    {
      name: 'namespaceSelector: a namespace without the label',
      constraints: {
        resourceRules: [SERVICES_RULE],
        namespaceSelector: { matchExpressions: [{ key: 'fenced', operator: 'Exists' }] },
      },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'namespaceSelector: a namespace with it',
      constraints: {
        resourceRules: [SERVICES_RULE],
        namespaceSelector: { matchExpressions: [{ key: 'fenced', operator: 'Exists' }] },
      },
      request: (s) => createWeb(s, 'fenced'),
      denied: true,
    },
    {
      name: 'the binding narrows: its namespaceSelector',
      bindingMatch: { namespaceSelector: { matchLabels: { fenced: 'yes' } } },
      request: (s) => createWeb(s),
      denied: false,
    },
    {
      name: 'the binding narrows: its resource rules',
      bindingMatch: { resourceRules: [{ ...SERVICES_RULE, operations: ['UPDATE'] }] },
      request: (s) => createWeb(s),
      denied: false,
    },
  ];

  it.each(cases)('$name', async (c) => {
    const sim = await start();
    await must(
      api(sim, 'POST', '/api/v1/namespaces', { metadata: { name: 'fenced', labels: { fenced: 'yes' } } }),
      201,
    );
    await install(
      sim,
      'deny-all',
      {
        ...(c.constraints ? { matchConstraints: c.constraints } : {}),
        validations: [{ expression: 'false', message: 'denied by the table' }],
      },
      c.bindingMatch ? { matchResources: c.bindingMatch } : {},
    );
    const r = await c.request(sim);
    if (c.denied) {
      expect(r.status).toBe(422);
      expect(r.body.message).toContain(
        "ValidatingAdmissionPolicy 'deny-all' with binding 'deny-all-binding' denied request: denied by the table",
      );
    } else {
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    }
  });

  it('a status write matches `deployments/status`, not `deployments`', async () => {
    const sim = await start();
    const dep = {
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    };
    await must(api(sim, 'POST', '/apis/apps/v1/namespaces/default/deployments', dep), 201);
    await install(sim, 'status-only', {
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            operations: ['UPDATE'],
            resources: ['deployments/status'],
          },
        ],
      },
      validations: [{ expression: "request.subResource != 'status'", message: 'no status writes' }],
    });
    const status = await api(sim, 'PUT', '/apis/apps/v1/namespaces/default/deployments/d/status', {
      ...dep,
      status: { replicas: 1 },
    });
    expect(status.status).toBe(422);
    expect(status.body.message).toBe(
      `deployments.apps "d" is forbidden: ValidatingAdmissionPolicy 'status-only' with binding 'status-only-binding' denied request: no status writes`,
    );
    expect(status.body.details).toMatchObject({ name: 'd', group: 'apps', kind: 'deployments' });
    const main = await api(sim, 'PUT', '/apis/apps/v1/namespaces/default/deployments/d', {
      ...dep,
      spec: { ...dep.spec, replicas: 2 },
    });
    expect(main.status).toBe(200);
  });
});

describe('ValidatingAdmissionPolicy: evaluation', () => {
  it('refuses with the real Status: code from reason, message and cause', async () => {
    const sim = await start();
    await install(sim, 'typed', {
      validations: [
        { expression: "object.spec.type == 'ClusterIP'", reason: 'Forbidden', message: ' only ClusterIP ' },
      ],
    });
    const r = await api(sim, 'POST', SVC(), svc('web', { type: 'NodePort' }));
    const message =
      "ValidatingAdmissionPolicy 'typed' with binding 'typed-binding' denied request: only ClusterIP";
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `services "web" is forbidden: ${message}`,
      reason: 'Forbidden',
      details: { name: 'web', kind: 'services', causes: [{ message }] },
      code: 403,
    });
    // Nothing was stored.
    expect((await api(sim, 'GET', `${SVC()}/web`)).status).toBe(404);
  });

  it('sees object and oldObject: null on create and delete, both on update (PUT and PATCH)', async () => {
    const sim = await start();
    await install(sim, 'seen', {
      auditAnnotations: [
        {
          key: 'seen',
          valueExpression:
            "request.operation + ':' + (object == null ? 'null' : string(object.spec.ports[0].port)) + ':' + (oldObject == null ? 'null' : string(oldObject.spec.ports[0].port))",
        },
      ],
      validations: [{ expression: 'true' }],
    });
    const annotations = () =>
      sim
        .audit()
        .filter((r) => r.annotations)
        .map((r) => r.annotations?.['seen/seen']);
    await must(api(sim, 'POST', SVC(), svc('web')), 201);
    await must(api(sim, 'PUT', `${SVC()}/web`, svc('web', { ports: [{ port: 81 }] })), 200);
    await must(
      api(
        sim,
        'PATCH',
        `${SVC()}/web`,
        { spec: { ports: [{ port: 82 }] } },
        { contentType: 'application/merge-patch+json' },
      ),
      200,
    );
    await must(api(sim, 'DELETE', `${SVC()}/web`), 200);
    expect(annotations()).toEqual(['CREATE:80:null', 'UPDATE:81:80', 'UPDATE:82:81', 'DELETE:null:82']);
  });

  it('matchConditions on request.userInfo select the requests a policy applies to', async () => {
    const sim = await start();
    await grantServices(sim, 'system:serviceaccount:ops:bot');
    await install(sim, 'only-bot', {
      matchConditions: [
        { name: 'is-bot', expression: "request.userInfo.username == 'system:serviceaccount:ops:bot'" },
        { name: 'not-dry', expression: '!request.dryRun' },
      ],
      validations: [{ expression: 'false', message: 'bots may not' }],
    });
    await must(api(sim, 'POST', SVC(), svc('by-admin')), 201);
    const bot = await api(sim, 'POST', SVC(), svc('by-bot'), as('system:serviceaccount:ops:bot'));
    expect(bot.status).toBe(422);
    expect(bot.body.message).toContain('denied request: bots may not');
    // The second condition is false for a dry run: the policy does not apply.
    const dry = await api(
      sim,
      'POST',
      `${SVC()}?dryRun=All`,
      svc('by-bot'),
      as('system:serviceaccount:ops:bot'),
    );
    expect(dry.status).toBe(201);
  });

  it('variables are named, lazy and usable as variables.<name>; messageExpression builds the message', async () => {
    const sim = await start();
    await install(sim, 'vars', {
      variables: [
        { name: 'labels', expression: 'has(object.metadata.labels) ? object.metadata.labels : {}' },
        { name: 'team', expression: "'team' in variables.labels ? variables.labels['team'] : ''" },
        // Never read: an error here must not matter.
        { name: 'broken', expression: 'object.spec.nothere' },
      ],
      validations: [
        {
          expression: "variables.team != ''",
          messageExpression: "'service ' + object.metadata.name + ' needs a team label'",
        },
        { expression: "variables.team != 'x' || variables.broken == 1", message: 'never shown' },
      ],
    });
    const r = await api(sim, 'POST', SVC(), svc('web'));
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('denied request: service web needs a team label');
    await must(api(sim, 'POST', SVC(), svc('web', {}, { team: 'a' })), 201);
    // The broken variable is read here: its error is the expression's.
    const x = await api(sim, 'POST', SVC(), svc('x', {}, { team: 'x' }));
    expect(x.body.message).toContain(
      `denied request: expression 'variables.team != 'x' || variables.broken == 1' resulted in error: composited variable "broken" fails to evaluate: no such key: nothere`,
    );
  });

  it('message fallbacks: messageExpression, then message, then the expression', async () => {
    const sim = await start();
    await install(sim, 'msgs', {
      validations: [
        {
          expression: "object.metadata.name != 'a'",
          messageExpression: "object.metadata.name + ' one\\nline two'",
          message: 'static a',
        },
        {
          expression: "object.metadata.name != 'b'",
          messageExpression: "'n' + string(object.spec.nothere)",
          message: 'static b',
        },
        { expression: "object.metadata.name != 'c'" },
      ],
    });
    const msg = async (name: string) => (await api(sim, 'POST', SVC(), svc(name))).body.message as string;
    // A message with a line break is not used; neither is one that fails.
    expect(await msg('a')).toContain('denied request: static a');
    expect(await msg('b')).toContain('denied request: static b');
    expect(await msg('c')).toContain("denied request: failed expression: object.metadata.name != 'c'");
  });

  it('failurePolicy: Fail refuses on an evaluation error, Ignore lets the request through', async () => {
    const sim = await start();
    await install(sim, 'strict', { validations: [{ expression: "object.spec.externalName == 'x'" }] });
    const r = await api(sim, 'POST', SVC(), svc('web'));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      `services "web" is forbidden: ValidatingAdmissionPolicy 'strict' with binding 'strict-binding' denied request: expression 'object.spec.externalName == 'x'' resulted in error: no such key: externalName`,
    );
    await must(
      api(
        sim,
        'PATCH',
        `${ADM}/validatingadmissionpolicies/strict`,
        { spec: { failurePolicy: 'Ignore' } },
        {
          contentType: 'application/merge-patch+json',
        },
      ),
      200,
    );
    await must(api(sim, 'POST', SVC(), svc('web')), 201);
    // A matchCondition error follows the failure policy the same way.
    await install(sim, 'cond', {
      matchConditions: [{ name: 'c', expression: "object.metadata.labels['x'] == 'y'" }],
      validations: [{ expression: 'false' }],
    });
    const c = await api(sim, 'POST', SVC(), svc('web2'));
    expect(c.body.message).toContain(
      `denied request: expression 'object.metadata.labels['x'] == 'y'' resulted in error: no such key: labels`,
    );
  });

  it('validationActions: Warn answers with a Warning header, Audit annotates the audit record', async () => {
    const sim = await start();
    await install(
      sim,
      'soft',
      { validations: [{ expression: 'false', message: 'just so you know' }] },
      { validationActions: ['Warn', 'Audit'] },
    );
    sim.clearAudit();
    const r = await api(sim, 'POST', SVC(), svc('web'));
    expect(r.status).toBe(201);
    expect(r.headers['warning']).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy 'soft' with binding 'soft-binding': just so you know"`,
    );
    const record = sim.audit().find((a) => a.attrs.verb === 'create' && a.attrs.resource === 'services');
    expect(
      JSON.parse(record?.annotations?.['validation.policy.admission.k8s.io/validation_failure'] ?? '[]'),
    ).toEqual([
      {
        message: 'just so you know',
        policy: 'soft',
        binding: 'soft-binding',
        expressionIndex: 0,
        validationActions: ['Warn', 'Audit'],
      },
    ]);
  });

  it('policies do not apply to policies and bindings themselves', async () => {
    const sim = await start();
    await must(
      api(sim, 'POST', `${ADM}/validatingadmissionpolicies`, {
        metadata: { name: 'lockout' },
        spec: {
          matchConstraints: {
            resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }],
          },
          validations: [{ expression: 'false' }],
        },
      }),
      201,
    );
    await must(
      api(sim, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
        metadata: { name: 'lockout' },
        spec: { policyName: 'lockout', validationActions: ['Deny'] },
      }),
      201,
    );
    expect((await api(sim, 'POST', SVC(), svc('web'))).status).toBe(422);
    await must(api(sim, 'DELETE', `${ADM}/validatingadmissionpolicybindings/lockout`), 200);
    await must(api(sim, 'POST', SVC(), svc('web')), 201);
  });

  it('params: a ConfigMap by name, a missing one under Deny and Allow', async () => {
    const sim = await start();
    await must(
      api(sim, 'POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'limits' },
        data: { allowedType: 'ClusterIP' },
      }),
      201,
    );
    await install(
      sim,
      'param',
      {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        validations: [
          {
            expression: 'object.spec.type == params.data.allowedType',
            messageExpression: "'type must be ' + params.data.allowedType",
          },
        ],
      },
      { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } },
    );
    const r = await api(sim, 'POST', SVC(), svc('web', { type: 'NodePort' }));
    expect(r.body.message).toContain('denied request: type must be ClusterIP');
    await must(api(sim, 'POST', SVC(), svc('web')), 201);
    await createNs(sim, 'other');
    const missing = await api(sim, 'POST', SVC('other'), svc('web'));
    expect(missing.body.message).toBe(
      "services \"web\" is forbidden: ValidatingAdmissionPolicy 'param' with binding 'param-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    await must(
      api(
        sim,
        'PATCH',
        `${ADM}/validatingadmissionpolicybindings/param-binding`,
        { spec: { paramRef: { parameterNotFoundAction: 'Allow' } } },
        { contentType: 'application/merge-patch+json' },
      ),
      200,
    );
    await must(api(sim, 'POST', SVC('other'), svc('web')), 201);
  });
});

describe('the fence the chart will ship', () => {
  /**
   * Written here the way the chart will: only the controller's ServiceAccount is fenced, on
   * Services, new and old object alike; ownership labels, ClusterIP/ExternalName only, no
   * externalIPs, no kube-* or deny-listed namespaces, unless the namespace opts out by label.
   */
  const CONTROLLER = 'system:serviceaccount:ops:eb-controller';
  const OWNED =
    "has(%.metadata.labels) && %.metadata.labels['app.kubernetes.io/managed-by'] == 'endpoint-binder' && 'endpoint-binder.io/binding' in %.metadata.labels && 'endpoint-binder.io/release' in %.metadata.labels";
  const owned = (v: string) => OWNED.replaceAll('%', v);
  const fence = {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [SERVICES_RULE] },
    matchConditions: [
      { name: 'controller', expression: `request.userInfo.username == '${CONTROLLER}'` },
      {
        name: 'not-opted-out',
        expression:
          "namespaceObject == null || !has(namespaceObject.metadata.labels) || !('endpoint-binder.io/unfenced' in namespaceObject.metadata.labels)",
      },
    ],
    validations: [
      {
        expression: `object == null || (${owned('object')})`,
        message: 'the new object must carry the ownership labels',
        reason: 'Forbidden',
      },
      {
        expression: `oldObject == null || (${owned('oldObject')})`,
        message: 'the stored object must carry the ownership labels',
        reason: 'Forbidden',
      },
      {
        expression: "object == null || object.spec.type in ['ClusterIP', 'ExternalName']",
        messageExpression: "'type ' + object.spec.type + ' is not allowed'",
        reason: 'Forbidden',
      },
      {
        expression: 'object == null || !has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0',
        message: 'externalIPs are not allowed',
        reason: 'Forbidden',
      },
      {
        expression: "!(request.namespace in ['default', 'ops']) && !request.namespace.startsWith('kube-')",
        messageExpression: "'namespace ' + request.namespace + ' is fenced off'",
        reason: 'Forbidden',
      },
    ],
  };
  const labels = {
    'app.kubernetes.io/managed-by': 'endpoint-binder',
    'endpoint-binder.io/binding': 'b1',
    'endpoint-binder.io/release': 'eb',
  };
  const ctl = as(CONTROLLER);

  it('refuses exactly what it must, for the controller only', async () => {
    const sim = await start();
    for (const ns of ['apps', 'kube-fenced', 'ops']) await createNs(sim, ns);
    await must(
      api(sim, 'POST', '/api/v1/namespaces', {
        metadata: { name: 'free', labels: { 'endpoint-binder.io/unfenced': 'true' } },
      }),
      201,
    );
    await grantServices(sim, CONTROLLER);
    await install(sim, 'fence', fence);
    const msg = (r: { status: number; body: Loose }) =>
      r.status < 300 ? 'allowed' : `${r.status} ${r.body.message}`;
    const denied = (why: string, name = 'web') =>
      `403 services "${name}" is forbidden: ValidatingAdmissionPolicy 'fence' with binding 'fence-binding' denied request: ${why}`;

    expect(msg(await api(sim, 'POST', SVC('apps'), svc('web'), ctl))).toBe(
      denied('the new object must carry the ownership labels'),
    );
    expect(msg(await api(sim, 'POST', SVC('apps'), svc('web', {}, labels), ctl))).toBe('allowed');
    expect(msg(await api(sim, 'POST', SVC('apps'), svc('np', { type: 'NodePort' }, labels), ctl))).toBe(
      denied('type NodePort is not allowed', 'np'),
    );
    expect(
      msg(await api(sim, 'POST', SVC('apps'), svc('ext', { externalIPs: ['192.0.2.1'] }, labels), ctl)),
    ).toBe(denied('externalIPs are not allowed', 'ext'));
    expect(msg(await api(sim, 'POST', SVC('kube-fenced'), svc('web', {}, labels), ctl))).toBe(
      denied('namespace kube-fenced is fenced off'),
    );
    expect(msg(await api(sim, 'POST', SVC('ops'), svc('web', {}, labels), ctl))).toBe(
      denied('namespace ops is fenced off'),
    );
    // The namespace opt-out label lifts the fence; other users are never fenced.
    expect(msg(await api(sim, 'POST', SVC('free'), svc('web'), ctl))).toBe('allowed');
    expect(msg(await api(sim, 'POST', SVC('apps'), svc('theirs')))).toBe('allowed');

    // Update and delete of an object the controller does not own: the old object decides.
    expect(msg(await api(sim, 'PUT', `${SVC('apps')}/theirs`, svc('theirs', {}, labels), ctl))).toBe(
      denied('the stored object must carry the ownership labels', 'theirs'),
    );
    expect(msg(await api(sim, 'DELETE', `${SVC('apps')}/theirs`, undefined, ctl))).toBe(
      denied('the stored object must carry the ownership labels', 'theirs'),
    );
    // Dropping a label from its own object is refused; deleting its own object is fine (object is null).
    expect(
      msg(
        await api(
          sim,
          'PATCH',
          `${SVC('apps')}/web`,
          { metadata: { labels: { 'endpoint-binder.io/binding': null } } },
          { ...ctl, contentType: 'application/merge-patch+json' },
        ),
      ),
    ).toBe(denied('the new object must carry the ownership labels'));
    expect(msg(await api(sim, 'DELETE', `${SVC('apps')}/web`, undefined, ctl))).toBe('allowed');
  });
});
