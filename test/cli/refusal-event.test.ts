import { describe, expect, it } from 'vitest';
import { parseRefusalTarget, refusalEvent, refusalMessage } from '../../src/cli/refusal-event.js';

/** The config-check hook's ConfigRefused Event (#29 item 2): the setting and the fix, one line. */
describe('the ConfigRefused Event', () => {
  const target = { namespace: 'edge', job: 'eb-endpoint-binder-config-check' };

  it('names each refused setting (first line of each problem) and the fix, in one line', () => {
    const msg = refusalMessage(target, [
      'bindings.endpointSelector: invalid endpoint selector: Syntax error\n  endpoint.namespace ==\n  ^',
      'api.baseUrl: must start with http:// or https://',
    ]);
    expect(msg).toBe(
      'The config check refused these values: bindings.endpointSelector: invalid endpoint selector: Syntax error; api.baseUrl: must start with http:// or https://. Fix: correct that value and run helm upgrade --install with the same release name and flags (or helm uninstall, then helm install); kubectl -n edge logs job/eb-endpoint-binder-config-check shows where.',
    );
    expect(msg).not.toContain('\n');
  });

  it('is a Warning on the hook Job in the release namespace, at most 1024 characters', () => {
    const ev = refusalEvent(target, ['x'.repeat(2000)], new Date('2026-11-27T10:00:00.123Z'), 'abc', 'pod-1');
    expect(ev).toMatchObject({
      metadata: { name: 'eb-endpoint-binder-config-check.abc', namespace: 'edge' },
      involvedObject: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'edge', name: target.job },
      reason: 'ConfigRefused',
      type: 'Warning',
      firstTimestamp: '2026-11-27T10:00:00Z',
      reportingComponent: 'endpoint-binder-config-check',
      reportingInstance: 'pod-1',
    });
    expect(String(ev['message']).length).toBe(1024);
  });

  it('parses <namespace>/<job> and refuses anything else in one line', () => {
    expect(parseRefusalTarget('edge/eb-config-check')).toEqual({ namespace: 'edge', job: 'eb-config-check' });
    expect(parseRefusalTarget('edge')).toEqual({
      problem: '--refusal-event: must be <namespace>/<job name>, got "edge"',
    });
    expect(parseRefusalTarget('a/b/c')).toHaveProperty('problem');
  });
});
