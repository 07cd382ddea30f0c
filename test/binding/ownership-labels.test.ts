import { describe, expect, it } from 'vitest';
import {
  hasLostLabel,
  isOwnedBy,
  lostLabelSelector,
  ownershipLabels,
  ownershipSelector,
} from '../../src/binding/ownership/index.js';
import { matchesLabels, parseLabelSelector } from '../../src/kubesim/selectors.js';

const id = { release: 'eb', operatorNamespace: 'ops' };
const ours = ownershipLabels(id);
const { ['app.kubernetes.io/managed-by']: _managedBy, ...withoutManagedBy } = ours;
const cases: Record<string, Record<string, string>> = {
  'an alias with every label': { ...ours, 'endpoint-binder.io/role': 'alias' },
  'an alias without managed-by': { ...withoutManagedBy, 'endpoint-binder.io/role': 'alias' },
  'an alias with managed-by changed': {
    ...ours,
    'app.kubernetes.io/managed-by': 'someone-else',
    'endpoint-binder.io/role': 'alias',
  },
  'an internal Service without managed-by': { ...withoutManagedBy, 'endpoint-binder.io/role': 'internal' },
  "another release's alias without managed-by": {
    ...withoutManagedBy,
    'app.kubernetes.io/instance': 'other',
    'endpoint-binder.io/role': 'alias',
  },
  'no labels': {},
};

function selects(selector: string, labels: Record<string, string>): boolean {
  const parsed = parseLabelSelector(selector);
  if (typeof parsed === 'string') throw new Error(`selector ${selector}: ${parsed}`);
  return matchesLabels(parsed, labels);
}

describe('ownership labels (the door): each predicate says what its label selector selects', () => {
  it.each(Object.entries(cases))('%s', (_name, labels) => {
    const obj = { metadata: { labels } };
    expect(hasLostLabel(obj, id), `hasLostLabel vs ${lostLabelSelector(id)}`).toBe(
      selects(lostLabelSelector(id), labels),
    );
    expect(isOwnedBy(obj, id), `isOwnedBy vs ${ownershipSelector(id)}`).toBe(
      selects(ownershipSelector(id), labels),
    );
  });

  it('a lost-label alias is exactly one of ours that lost managed-by', () => {
    const lost = Object.entries(cases)
      .filter(([, labels]) => hasLostLabel({ metadata: { labels } }, id))
      .map(([name]) => name);
    expect(lost).toEqual(['an alias without managed-by', 'an alias with managed-by changed']);
  });
});
