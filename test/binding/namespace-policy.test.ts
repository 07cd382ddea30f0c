import { describe, expect, it } from 'vitest';
import {
  DEFAULT_NAMESPACE_POLICY,
  OPT_IN_SELECTOR,
  formatLabelSelector,
  namespaceEntryProblem,
  namespaceNameVerdict,
  namespaceVerdict,
  type NamespacePolicy,
} from '../../src/binding/namespace-policy.js';
import { project } from '../../src/binding/project.js';
import type { ClusterView, EndpointRecord, NamespacePhase } from '../../src/binding/types.js';
import { OPNS, config, seeded } from './helpers.js';

const OPT_OUT = { 'endpoint-binder.io/aliases': 'disabled' };
const OPT_IN = { 'endpoint-binder.io/aliases': 'enabled' };
const optIn: NamespacePolicy = { ...DEFAULT_NAMESPACE_POLICY, selector: OPT_IN_SELECTOR };
const allowStorage: NamespacePolicy = {
  ...DEFAULT_NAMESPACE_POLICY,
  allow: ['openshift-storage', 'kube-pub*'],
};

describe('namespace policy: verdict table', () => {
  it.each([
    // policy, namespace, labels, open, rule fragment
    ['default', DEFAULT_NAMESPACE_POLICY, 'prod', {}, true, ''],
    ['default', DEFAULT_NAMESPACE_POLICY, 'kube-system', {}, false, 'matches the deny entry "kube-*"'],
    ['default', DEFAULT_NAMESPACE_POLICY, 'kube-public', {}, false, 'deny entry "kube-*"'],
    ['default: a prefix is a prefix, not a substring', DEFAULT_NAMESPACE_POLICY, 'my-kube-x', {}, true, ''],
    ['default', DEFAULT_NAMESPACE_POLICY, 'openshift', {}, false, 'deny entry "openshift"'],
    ['default', DEFAULT_NAMESPACE_POLICY, 'openshift-storage', {}, false, 'deny entry "openshift-*"'],
    ['default: "openshift" is a name, not a prefix', DEFAULT_NAMESPACE_POLICY, 'openshiftx', {}, true, ''],
    ['default', DEFAULT_NAMESPACE_POLICY, OPNS, {}, false, 'is the operator namespace'],
    [
      'default: tenant opted out',
      DEFAULT_NAMESPACE_POLICY,
      'prod',
      OPT_OUT,
      false,
      'fail "endpoint-binder.io/aliases notin (disabled)"',
    ],
    ['default: another value is not an opt-out', DEFAULT_NAMESPACE_POLICY, 'prod', OPT_IN, true, ''],
    ['allow overrides deny by name', allowStorage, 'openshift-storage', {}, true, ''],
    ['allow overrides deny by prefix', allowStorage, 'kube-public', {}, true, ''],
    [
      'allow does not open what it does not name',
      allowStorage,
      'kube-system',
      {},
      false,
      'deny entry "kube-*"',
    ],
    [
      'allow does not override an opt-out',
      allowStorage,
      'openshift-storage',
      OPT_OUT,
      false,
      'namespaces.selector',
    ],
    [
      'allow never opens the operator namespace',
      { ...allowStorage, allow: [OPNS] },
      OPNS,
      {},
      false,
      'operator namespace',
    ],
    ['opt-in: unlabelled', optIn, 'prod', {}, false, 'fail "endpoint-binder.io/aliases=enabled"'],
    ['opt-in: labelled', optIn, 'prod', OPT_IN, true, ''],
    ['opt-in: deny still applies', optIn, 'kube-system', OPT_IN, false, 'deny entry "kube-*"'],
  ] as const)('%s: %s %j', (_what, policy, ns, labels, open, rule) => {
    const v = namespaceVerdict(policy, OPNS, ns, labels);
    expect(v.open).toBe(open);
    if (!v.open) expect(v.rule).toContain(rule);
  });

  it.each([
    ['Exists', { matchExpressions: [{ key: 'team', operator: 'Exists' as const }] }, { team: 'a' }, true],
    ['Exists, missing', { matchExpressions: [{ key: 'team', operator: 'Exists' as const }] }, {}, false],
    [
      'DoesNotExist',
      { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' as const }] },
      { legacy: '' },
      false,
    ],
    [
      'In',
      { matchExpressions: [{ key: 'env', operator: 'In' as const, values: ['a', 'b'] }] },
      { env: 'b' },
      true,
    ],
    [
      'In, missing key',
      { matchExpressions: [{ key: 'env', operator: 'In' as const, values: ['a'] }] },
      {},
      false,
    ],
    [
      'NotIn, missing key matches',
      { matchExpressions: [{ key: 'env', operator: 'NotIn' as const, values: ['a'] }] },
      {},
      true,
    ],
    [
      'matchLabels and expressions together',
      { matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'Exists' as const }] },
      { a: '1' },
      false,
    ],
  ])('selector %s', (_what, selector, labels, open) => {
    const v = namespaceVerdict({ deny: [], allow: [], selector }, OPNS, 'prod', labels);
    expect(v.open).toBe(open);
  });

  it('by name alone (a namespace that does not exist yet): deny rules, not the selector', () => {
    expect(namespaceNameVerdict(optIn, OPNS, 'prod')).toEqual({ open: true });
    expect(namespaceNameVerdict(optIn, OPNS, 'kube-system')).toMatchObject({ open: false });
  });

  it('formats selectors as kubectl -l would', () => {
    expect(formatLabelSelector(DEFAULT_NAMESPACE_POLICY.selector)).toBe(
      'endpoint-binder.io/aliases notin (disabled)',
    );
    expect(formatLabelSelector(OPT_IN_SELECTOR)).toBe('endpoint-binder.io/aliases=enabled');
    expect(formatLabelSelector({})).toBe('<everything>');
  });

  it.each([
    ['kube-*', undefined],
    ['prod', undefined],
    ['*', 'must be a namespace name or a prefix'],
    ['Kube-*', 'must be a namespace name'],
    ['prod-', 'must be a namespace name'],
  ])('entry %s', (entry, problem) => {
    const p = namespaceEntryProblem(entry);
    if (problem === undefined) expect(p).toBeUndefined();
    else expect(p).toContain(problem);
  });
});

describe('project with the namespace policy', () => {
  const ep = (id: string, url: string): EndpointRecord => ({ id, url, created_at: '2026-01-01T00:00:00Z' });
  const cluster = (
    labels: Record<string, Record<string, string>> = {},
    asked?: Set<string>,
  ): ClusterView => ({
    owned: [],
    namespaces: new Map<string, NamespacePhase>([
      [OPNS, 'Active'],
      ['prod', 'Active'],
      ['kube-system', 'Active'],
    ]),
    namespaceLabels: new Map(Object.entries(labels)),
    foreign: {
      has: (k: string) => {
        asked?.add(k);
        return false;
      },
    } as unknown as ReadonlySet<string>,
  });
  const run = (endpoints: EndpointRecord[], view: ClusterView) =>
    project({
      endpoints,
      select: () => ({ selected: true }),
      cluster: view,
      config: config({ namespacePolicy: DEFAULT_NAMESPACE_POLICY }),
      random: seeded(1),
    });

  it('http://x.kube-system is namespace-denied with the rule; no internal Service, no port, no alias, no name read', () => {
    const asked = new Set<string>();
    const d = run([ep('ep_a', 'http://x.kube-system')], cluster({}, asked));
    const s = d.statuses[0]!;
    expect(s.state).toBe('namespace-denied');
    expect(s.reason).toBe(
      'namespace "kube-system" matches the deny entry "kube-*" (namespaces.deny); no alias Service kube-system/x is written',
    );
    expect(d.services.has('kube-system/x')).toBe(false);
    // Issue #30 item 5: no alias can ever use them, so no internal Service and no forwarder port.
    expect(d.services.has(`${OPNS}/ep-a`)).toBe(false);
    expect(s.targetPort).toBeUndefined();
    expect(d.ports.size).toBe(0);
    expect(asked.has('kube-system/x')).toBe(false);
  });

  it('an opted-out namespace: denied naming the selector; the same endpoint projects when the label goes', () => {
    const out = run([ep('ep_a', 'http://web.prod')], cluster({ prod: OPT_OUT }));
    expect(out.statuses[0]).toMatchObject({ state: 'namespace-denied' });
    expect(out.statuses[0]!.reason).toContain(
      'its labels fail "endpoint-binder.io/aliases notin (disabled)"',
    );
    expect(out.services.has('prod/web')).toBe(false);
    const back = run([ep('ep_a', 'http://web.prod')], cluster({ prod: {} }));
    expect(back.statuses[0]!.state).toBe('projected');
    expect(back.services.has('prod/web')).toBe(true);
  });

  it('an alias in the operator namespace is denied', () => {
    const d = run([ep('ep_a', `http://web.${OPNS}`)], cluster());
    expect(d.statuses[0]!.state).toBe('namespace-denied');
    expect(d.services.has(`${OPNS}/web`)).toBe(false);
  });

  it('a missing namespace: denied by name when a deny entry covers it, else namespace-missing', () => {
    expect(run([ep('ep_a', 'http://x.kube-later')], cluster()).statuses[0]!.state).toBe('namespace-denied');
    expect(run([ep('ep_a', 'http://x.later')], cluster()).statuses[0]!.state).toBe('namespace-missing');
  });
});
