import { describe, expect, it } from 'vitest';
import { CHART, REQUIRED, helm, helmTool, template, valuesFile } from './helm.js';

if ('skip' in helmTool) process.stdout.write(`helm chart schema tests skipped: ${helmTool.skip}\n`);

/** Bad values and the words helm must answer with: the value's path and the rule it broke. */
const BAD: [string, unknown, string[]][] = [
  [
    'a string for replicas',
    { controller: { replicas: 'two' } },
    ['controller.replicas', 'Expected: integer'],
  ],
  [
    'a number for the selector',
    { bindings: { endpointSelector: 1 } },
    ['bindings.endpointSelector', 'Expected: string'],
  ],
  [
    'an empty selector',
    { bindings: { endpointSelector: '' } },
    ['bindings.endpointSelector: must not be empty; write a CEL expression over endpoint.*'],
  ],
  [
    'a blank selector',
    { bindings: { endpointSelector: '  \n' } },
    ['bindings.endpointSelector: must not be empty; write a CEL expression over endpoint.*'],
  ],
  [
    'a range below 1024',
    { bindings: { portRange: { min: 80, max: 19999 } } },
    ['bindings.portRange.min', '1024'],
  ],
  [
    'a range above 65535',
    { bindings: { portRange: { min: 10000, max: 70000 } } },
    ['bindings.portRange.max', '65535'],
  ],
  [
    'an inverted range',
    { bindings: { portRange: { min: 20000, max: 10000 } } },
    ['bindings.portRange: min (20000) must not be greater than max (10000)'],
  ],
  [
    'a range holding the forwarder port',
    { bindings: { portRange: { min: 8000, max: 9000 } } },
    ['forwarder.port: 8081 lies inside bindings.portRange 8000-9000'],
  ],
  [
    'an unknown uninstall policy',
    { uninstall: { policy: 'purge' } },
    ['uninstall.policy', '"delete", "retain"'],
  ],
  [
    'an unknown value',
    { controller: { replica: 2 } },
    ['controller', 'Additional property replica is not allowed'],
  ],
  ['a bad log level', { forwarder: { logLevel: 'loud' } }, ['forwarder.logLevel', 'must be one of']],
  ['a bad API URL', { api: { baseUrl: 'ftp://x' } }, ['api.baseUrl']],
  // Issue #29 item 7: the value and its fix, not JSON-schema words ("Must validate at least one schema").
  [
    'an API URL without its scheme',
    { api: { baseUrl: 'api.example.com' } },
    [
      'api.baseUrl: "api.example.com" is not an http:// or https:// URL; write it with its scheme and host, e.g. https://api.example.com',
    ],
  ],
  [
    'an ingress address without a port',
    { bindings: { ingress: { address: 'ingress.example.com' } } },
    ['bindings.ingress.address: "ingress.example.com" is not host:port; write e.g. ingress.example.com:443'],
  ],
  [
    'an existing service account without its name',
    { controller: { serviceAccount: { create: false } } },
    [
      'controller.serviceAccount.name: required when controller.serviceAccount.create is false; name the existing ServiceAccount',
    ],
  ],
  ['a bad label key', { bindings: { serviceLabels: { 'a b': 'x' } } }, ['bindings.serviceLabels']],
  [
    'a boolean label value',
    { bindings: { serviceLabels: { tier: true } } },
    ['bindings.serviceLabels.tier', 'string'],
  ],
  [
    'a grace period shorter than the drain',
    { forwarder: { terminationGracePeriodSeconds: 20 } },
    [
      'forwarder.terminationGracePeriodSeconds: must be greater than drain.delaySeconds + drain.timeoutSeconds (30)',
    ],
  ],
  [
    'two controllers without leader election',
    { controller: { leaderElection: { enabled: false } } },
    ['controller.replicas: more than 1 replica needs controller.leaderElection.enabled'],
  ],
  [
    'a PDB with both bounds',
    { controller: { podDisruptionBudget: { enabled: true, minAvailable: 1, maxUnavailable: 1 } } },
    ['controller.podDisruptionBudget: set exactly one of minAvailable and maxUnavailable'],
  ],
];

describe.skipIf('skip' in helmTool)('values.schema.json and the chart checks', () => {
  it.each(BAD)('rejects %s with a message naming the value', async (_what, values, words) => {
    const r = await template({ ...REQUIRED, ...(values as object) });
    expect(r.code).not.toBe(0);
    for (const w of words) expect(r.stderr).toContain(w);
    expect(r.stderr).not.toMatch(/Must validate|String length must be/);
  });

  it('lists every missing required value at once', async () => {
    const r = await template({});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('api.baseUrl: is required');
    expect(r.stderr).toContain('credentials.apiKey: is required');
    expect(r.stderr).toContain('credentials.authtoken: is required');
  });

  it('accepts the boundaries of the port range', async () => {
    const low = await template({ ...REQUIRED, bindings: { portRange: { min: 1024, max: 1024 } } });
    expect(low.stderr).toBe('');
    expect(low.code).toBe(0);
    const high = await template({ ...REQUIRED, bindings: { portRange: { min: 65535, max: 65535 } } });
    expect(high.code).toBe(0);
  });

  it('passes helm lint --strict with the CI values, and fails it without them', async () => {
    const ok = await helm(['lint', CHART, '--strict', '-f', `${CHART}/ci/ci-values.yaml`]);
    expect(ok.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(ok.code).toBe(0);
    const bad = await helm(['lint', CHART, '-f', valuesFile({ uninstall: { policy: 'x' } })]);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain('uninstall.policy');
  });
});
