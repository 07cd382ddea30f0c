import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { aliasExternalName, internalServiceName, isDns1035Label } from '../../src/binding/naming.js';

const hash8 = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 8);

describe('isDns1035Label', () => {
  it.each([
    ['a', true],
    ['ep-01jabc', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['9svc', false],
    ['0x1', false],
    ['1', false],
    ['-a', false],
    ['a-', false],
    ['A', false],
    ['a_b', false],
    ['a.b', false],
    ['', false],
  ])('%j → %s', (s, ok) => {
    expect(isDns1035Label(s)).toBe(ok);
  });
});

describe('internalServiceName', () => {
  it.each([
    ['ep_01jabcdefghjkmnpqrstvwxyz0', 'ep-01jabcdefghjkmnpqrstvwxyz0'],
    ['ep_abc', 'ep-abc'],
    ['ep-abc', 'ep-abc'],
    ['ep_a_b', 'ep-a-b'],
  ])('plain id %s → %s', (id, name) => {
    expect(internalServiceName(id)).toBe(name);
  });

  it.each([
    ['ep_01JABCdef', `ep-01jabcdef-${hash8('ep_01JABCdef')}`],
    ['ep_a.b/c', `ep-a-b-c-${hash8('ep_a.b/c')}`],
    ['ep_abc_', `ep-abc-${hash8('ep_abc_')}`],
    ['01abc', `abc-${hash8('01abc')}`],
    ['_9_', `ep-${hash8('_9_')}`],
    ['', `ep-${hash8('')}`],
    ['ÉP_ü', `p-${hash8('ÉP_ü')}`],
    [`ep_${'x'.repeat(70)}`, `ep-${'x'.repeat(51)}-${hash8(`ep_${'x'.repeat(70)}`)}`],
    [
      `ep_${'x'.repeat(50)}____${'y'.repeat(10)}`,
      `ep-${'x'.repeat(50)}-${hash8(`ep_${'x'.repeat(50)}____${'y'.repeat(10)}`)}`,
    ],
  ])('odd id %j → %s', (id, name) => {
    const n = internalServiceName(id);
    expect(n).toBe(name);
    expect(isDns1035Label(n)).toBe(true);
  });

  it('ids differing only in case or in replaced characters never share a name', () => {
    // Every case variant of a 12-letter base plus separator variants: 4096 + ids, one name each.
    const base = 'ep_01jabcdefgh';
    const letters = [...base].map((ch, i) => ({ ch, i })).filter(({ ch }) => /[a-z]/.test(ch));
    const ids = new Set<string>();
    for (let mask = 0; mask < 1 << letters.length; mask++) {
      const chars = [...base];
      letters.forEach(({ ch, i }, bit) => {
        if (mask & (1 << bit)) chars[i] = ch.toUpperCase();
      });
      ids.add(chars.join(''));
    }
    for (const sep of ['.', '/', ':', ' ', '~', '+']) ids.add(base.replace('_', sep));
    const names = new Map<string, string>();
    for (const id of ids) {
      const n = internalServiceName(id);
      expect(isDns1035Label(n), id).toBe(true);
      expect(names.get(n), `${id} and ${names.get(n)} share ${n}`).toBeUndefined();
      names.set(n, id);
    }
    expect(names.size).toBe(ids.size);
  });

  it('API-shaped ids (prefix + 26 mixed-case characters) always give a distinct valid name', () => {
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz';
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const names = new Set<string>();
    const ids = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      let id = 'ep_';
      for (let j = 0; j < 26; j++) id += alphabet[Math.floor(next() * alphabet.length)];
      if (ids.has(id)) continue;
      ids.add(id);
      const n = internalServiceName(id);
      expect(isDns1035Label(n)).toBe(true);
      expect(n.length).toBeLessThanOrEqual(63);
      names.add(n);
    }
    expect(names.size).toBe(ids.size);
  });
});

describe('aliasExternalName', () => {
  it('is the internal Service’s cluster-local DNS name', () => {
    expect(aliasExternalName('ep-abc', 'endpoint-binder', 'cluster.local')).toBe(
      'ep-abc.endpoint-binder.svc.cluster.local',
    );
    expect(aliasExternalName('ep-abc', 'ops', 'example.internal')).toBe('ep-abc.ops.svc.example.internal');
  });
});
