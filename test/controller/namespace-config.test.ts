import { describe, expect, it } from 'vitest';
import { loadControllerSettings } from '../../src/cli/controller-command.js';
import { UsageError } from '../../src/cli/command.js';
import { resolveControllerConfig } from '../../src/controller/config.js';

const env = { ENDPOINT_BINDER_API_KEY: 'key-0123456789', POD_NAMESPACE: 'ops' };
const base = { api: { baseUrl: 'https://api.example.com' } };

describe('controller config: namespace policy and foreign-name grace', () => {
  it('defaults: kube-*, openshift, openshift-* denied, tenants opt out, 10 min grace', () => {
    const r = resolveControllerConfig(base, env);
    expect(r.ok && r.config.bindings.namespaces).toEqual({
      deny: ['kube-*', 'openshift', 'openshift-*'],
      allow: [],
      selector: {
        matchExpressions: [{ key: 'endpoint-binder.io/aliases', operator: 'NotIn', values: ['disabled'] }],
      },
    });
    expect(r.ok && r.config.bindings.foreignNameGraceSeconds).toBe(600);
  });

  it.each([
    [{ deny: ['Kube-*'] }, 'bindings.namespaces.deny.0: "Kube-*" must be a namespace name or a prefix'],
    [{ allow: ['*'] }, 'bindings.namespaces.allow.0: must be a namespace name or a prefix followed by "*"'],
    [
      { selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      'bindings.namespaces.selector.matchExpressions.0.values: values must be non-empty for In and NotIn',
    ],
    [
      { selector: { matchExpressions: [{ key: 'a', operator: 'Is', values: ['x'] }] } },
      'bindings.namespaces.selector.matchExpressions.0.operator: must be In, NotIn, Exists or DoesNotExist',
    ],
    [{ selector: { matchLabels: { 'a b': 'x' } } }, 'bindings.namespaces.selector.matchLabels'],
  ])('refuses %j naming the field and the rule', (namespaces, message) => {
    const r = resolveControllerConfig({ ...base, bindings: { namespaces } }, env);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join('\n')).toContain(message);
  });

  it('flags: --namespace-deny/--namespace-allow take comma lists, --foreign-name-grace seconds', async () => {
    const s = await loadControllerSettings(
      [
        '--api-url',
        'https://api.example.com',
        '--namespace-deny',
        'kube-*, infra',
        '--namespace-allow',
        'kube-public',
        '--foreign-name-grace',
        '30',
      ],
      env,
    );
    expect(s.config.bindings.namespaces.deny).toEqual(['kube-*', 'infra']);
    expect(s.config.bindings.namespaces.allow).toEqual(['kube-public']);
    expect(s.config.bindings.foreignNameGraceSeconds).toBe(30);
    try {
      await loadControllerSettings(
        ['--api-url', 'https://api.example.com', '--foreign-name-grace=99999'],
        env,
      );
      throw new Error('expected a usage error');
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toContain('bindings.foreignNameGraceSeconds');
    }
  });
});
