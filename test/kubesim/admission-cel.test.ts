import { describe, expect, it } from 'vitest';
import type { AdmissionAttributes } from '../../src/kubesim/admission/attributes.js';
import { activation, compileExpression } from '../../src/kubesim/admission/cel.js';
import { matchesResources } from '../../src/kubesim/admission/match.js';
import type { MatchResources } from '../../src/kubesim/resources/admission-schema.js';
import type { ResourceDef } from '../../src/kubesim/resources/registry.js';
import type { KubeObject } from '../../src/kubesim/types.js';

/**
 * The pure core of kubesim's ValidatingAdmissionPolicy support: which CEL constructs compile and
 * evaluate (the list docs/kubesim.md gives chart authors), which are refused when the policy is
 * written, and how match rules select requests.
 */

const service: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web',
    namespace: 'apps',
    labels: { 'app.kubernetes.io/managed-by': 'endpoint-binder', tier: 'edge' },
    creationTimestamp: '2024-01-01T00:00:00Z',
  },
  spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, targetPort: 8080 }], externalIPs: [] },
};
const request = {
  kind: { group: '', version: 'v1', kind: 'Service' },
  resource: { group: '', version: 'v1', resource: 'services' },
  requestKind: { group: '', version: 'v1', kind: 'Service' },
  requestResource: { group: '', version: 'v1', resource: 'services' },
  name: 'web',
  namespace: 'kube-system',
  operation: 'DELETE',
  userInfo: {
    username: 'system:serviceaccount:ops:eb',
    groups: ['system:serviceaccounts', 'system:authenticated'],
  },
  dryRun: false,
  options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' },
};
const namespace = { metadata: { name: 'kube-system', labels: { 'endpoint-binder.io/unfenced': 'true' } } };

function evaluate(expression: string, inputs: { object?: unknown; oldObject?: unknown } = {}): unknown {
  const compiled = compileExpression(expression, { role: 'validation', hasParams: false, variables: [] });
  if (!compiled.ok) throw new Error(compiled.detail);
  return compiled.run(
    activation({
      object: 'object' in inputs ? inputs.object : service,
      oldObject: 'oldObject' in inputs ? inputs.oldObject : null,
      request,
      namespaceObject: namespace,
      params: null,
      variables: {},
    }),
  );
}

describe('CEL constructs kubesim runs as a real server does', () => {
  it.each([
    // null handling: object is null on DELETE, oldObject on CREATE
    ['object == null || has(object.metadata.labels)', true],
    ['oldObject == null', true],
    // presence and maps
    ['has(object.metadata.labels)', true],
    ['has(object.spec.externalName)', false],
    ["'tier' in object.metadata.labels", true],
    [
      "has(object.metadata.labels) && object.metadata.labels['app.kubernetes.io/managed-by'] == 'endpoint-binder'",
      true,
    ],
    ["object.metadata.labels.exists(k, k.startsWith('app.kubernetes.io/'))", true],
    ['object.metadata.labels.all(k, k.size() < 64)', true],
    ["object.metadata.?labels['tier'].orValue('') == 'edge'", true],
    ["object.spec.?externalName.orValue('none') == 'none'", true],
    // lists and comprehensions
    ["object.spec.type in ['ClusterIP', 'ExternalName']", true],
    ['!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0', true],
    ['object.spec.externalIPs.size() == 0', true],
    ['object.spec.ports.all(p, p.port > 0 && p.port < 65536)', true],
    ["object.spec.ports.exists(p, p.name == 'http')", true],
    ['object.spec.ports.exists_one(p, p.port == 80)', true],
    ['object.spec.ports.map(p, p.port) == [80]', true],
    ['object.spec.ports.filter(p, p.port > 100).size() == 0', true],
    ["['kube-', 'openshift-'].exists(p, request.namespace.startsWith(p))", true],
    // strings
    ["request.namespace.startsWith('kube-')", true],
    ["request.namespace.endsWith('-system')", true],
    ["request.namespace.contains('system')", true],
    ["request.namespace.matches('^kube-')", true],
    ["request.userInfo.username.split(':')[2] == 'ops'", true],
    ["object.metadata.name.substring(1) == 'eb'", true],
    ["object.metadata.name.indexOf('e') == 1", true],
    ["object.metadata.name.upperAscii() == 'WEB'", true],
    ["' x '.trim() == 'x'", true],
    ["['a', 'b'].join('-') == 'a-b'", true],
    ["'ns ' + request.namespace == 'ns kube-system'", true],
    // numbers: JSON integers are CEL ints
    ['object.spec.ports[0].port == 80', true],
    ["string(object.spec.ports[0].port) == '80'", true],
    ['object.spec.ports[0].targetPort + 1 == 8081', true],
    // request and namespaceObject
    ["request.operation == 'DELETE' && !request.dryRun", true],
    ["'system:authenticated' in request.userInfo.groups", true],
    ["namespaceObject.metadata.labels['endpoint-binder.io/unfenced'] == 'true'", true],
    // bindings, time
    ["cel.bind(n, object.metadata.name, n + n == 'webweb')", true],
    ["timestamp(object.metadata.creationTimestamp) < timestamp('2025-01-01T00:00:00Z')", true],
    ["duration('1h') > duration('30m')", true],
    ["request.operation == 'CREATE' ? object.metadata.name == 'x' : true", true],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toBe(expected);
  });

  it('a missing key is an evaluation error, as in cel-go: guard with has() or in', () => {
    expect(() => evaluate("object.metadata.labels['missing'] == 'x'")).toThrow('No such key: missing');
    expect(() => evaluate('object.spec.externalName == ""')).toThrow('No such key: externalName');
    expect(() => evaluate('object.metadata.name == ""', { object: null })).toThrow();
  });

  it.each([
    [
      "object.metadata.name.replace('w', 'v') == 'veb'",
      "found no matching overload for 'dyn.replace(string, string)'",
    ],
    ["object.metadata.name.charAt(0) == 'w'", "found no matching overload for 'dyn.charAt(int)'"],
    ["'%s'.format(['a']) == 'a'", "found no matching overload for 'string.format(list<string>)'"],
    ["sets.contains(['a'], ['a'])", "undeclared reference to 'sets'"],
    ['[1, 2].sum() == 3', "found no matching overload for 'list.sum()'"],
    ["'a1'.findAll('[0-9]') == ['1']", "found no matching overload for 'string.findAll(string)'"],
    ["isURL('https://x')", "found no matching overload for 'isURL(string)'"],
    ["quantity('1Gi').isGreaterThan(quantity('1Mi'))", "found no matching overload for 'quantity(string)'"],
    ["ip('10.0.0.1').family() == 4", "found no matching overload for 'ip(string)'"],
    ["object.metadata.labels.exists(k, v, v == 'x')", "undeclared reference to 'k'"],
    [
      "authorizer.group('').resource('services').check('create').allowed()",
      "undeclared reference to 'authorizer'",
    ],
    ['1 == 1.0', 'no such overload: int == double'],
  ])('refused when the policy is written: %s', (expression, why) => {
    const compiled = compileExpression(expression, { role: 'validation', hasParams: false, variables: [] });
    expect(compiled.ok).toBe(false);
    if (!compiled.ok) {
      expect(compiled.detail).toMatch(/^compilation failed: ERROR: <input>:1:\d+: /);
      expect(compiled.detail).toContain(why);
    }
  });

  it('result types: validations and matchConditions bool, messageExpression string', () => {
    const compile = (expression: string, role: 'validation' | 'messageExpression' | 'auditAnnotation') =>
      compileExpression(expression, { role, hasParams: false, variables: [] });
    expect(compile('object.spec.type', 'validation')).toEqual({
      ok: false,
      detail: 'must evaluate to bool but got dyn',
    });
    expect(compile("object.spec.type == 'x'", 'validation').ok).toBe(true);
    expect(compile('size(object.spec.ports)', 'messageExpression')).toEqual({
      ok: false,
      detail: 'must evaluate to string but got int',
    });
    expect(compile('null', 'auditAnnotation').ok).toBe(true);
    expect(compile("'x'", 'auditAnnotation').ok).toBe(true);
    expect(compile('1', 'auditAnnotation')).toEqual({
      ok: false,
      detail: 'must evaluate to one of [string null_type] but got int',
    });
  });
});

describe('match rules', () => {
  const def = (plural: string, group = '', namespaced = true): ResourceDef =>
    ({ group, version: 'v1', plural, kind: plural, namespaced }) as unknown as ResourceDef;
  const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
    def: def('services'),
    operation: 'CREATE',
    namespace: 'apps',
    name: 'web',
    subresource: '',
    object: service,
    oldObject: null,
    user: { user: 'u', groups: [], source: { kind: 'rbac' } },
    dryRun: false,
    options: {},
    ...over,
  });
  const rule = { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['services'] };
  const labels = (ns: string): Record<string, string> => (ns === 'fenced' ? { fenced: 'yes' } : {});

  it.each<[string, MatchResources, Partial<AdmissionAttributes>, boolean]>([
    ['exact rule', { resourceRules: [rule] }, {}, true],
    ['operation', { resourceRules: [{ ...rule, operations: ['UPDATE'] }] }, {}, false],
    ['operation *', { resourceRules: [{ ...rule, operations: ['*'] }] }, { operation: 'DELETE' }, true],
    ['resource */*', { resourceRules: [{ ...rule, resources: ['*/*'] }] }, { subresource: 'status' }, true],
    [
      'resource * is no subresource',
      { resourceRules: [{ ...rule, resources: ['*'] }] },
      { subresource: 'status' },
      false,
    ],
    [
      'services/status',
      { resourceRules: [{ ...rule, resources: ['services/status'] }] },
      { subresource: 'status' },
      true,
    ],
    [
      'scope Cluster on a Namespace',
      { resourceRules: [{ ...rule, resources: ['namespaces'], scope: 'Cluster' }] },
      { def: def('namespaces', '', false), namespace: '' },
      true,
    ],
    [
      'scope Namespaced on a Namespace',
      { resourceRules: [{ ...rule, resources: ['namespaces'], scope: 'Namespaced' }] },
      { def: def('namespaces', '', false), namespace: '' },
      false,
    ],
    [
      'resourceNames and an empty name (generateName)',
      { resourceRules: [{ ...rule, resourceNames: ['web'] }] },
      { name: '' },
      false,
    ],
    ['excluded', { resourceRules: [rule], excludeResourceRules: [rule] }, {}, false],
    [
      'objectSelector on the old object',
      { resourceRules: [rule], objectSelector: { matchLabels: { tier: 'edge' } } },
      { object: null, oldObject: service, operation: 'CREATE' },
      true,
    ],
    [
      'objectSelector DoesNotExist',
      {
        resourceRules: [rule],
        objectSelector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      },
      {},
      false,
    ],
    [
      'namespaceSelector',
      { resourceRules: [rule], namespaceSelector: { matchLabels: { fenced: 'yes' } } },
      { namespace: 'fenced' },
      true,
    ],
    [
      'namespaceSelector: another namespace',
      { resourceRules: [rule], namespaceSelector: { matchLabels: { fenced: 'yes' } } },
      {},
      false,
    ],
    [
      'namespaceSelector never exempts a cluster-scoped request',
      {
        resourceRules: [{ ...rule, resources: ['*'] }],
        namespaceSelector: { matchLabels: { fenced: 'yes' } },
      },
      { def: def('clusterroles', '', false), namespace: '' },
      true,
    ],
    ['no resourceRules (a binding): everything', {}, {}, true],
  ])('%s', (_name, mr, over, expected) => {
    expect(matchesResources(mr, attrs(over), labels)).toBe(expected);
  });
});
