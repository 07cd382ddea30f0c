import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { documentNesting as nesting } from '../../../src/config/document-nesting.js';
import {
  MAX_DOCUMENT_NESTING,
  documentLimitViolation,
} from '../../../src/mock/validation/document-limits.js';

const documentNesting = (text: string, limit = MAX_DOCUMENT_NESTING): number => nesting(text, limit);
import { findBodyProblem, jsonNesting } from '../../../src/mock/http/json-guards.js';

/** Real nesting depth of a parsed value (containers only). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('documentNesting', () => {
  it.each([
    ['flow', '[[[{a: [1]}]]]'],
    ['block maps', 'a:\n  b:\n    c:\n      d: 1\n'],
    ['block sequences in maps', 'a:\n- b:\n  - c:\n    - d\n'],
    ['compact sequences', '- - - - x\n'],
    ['explicit keys', '? ? ? a\n'],
    ['mixed', 'on_http_request:\n  - actions:\n      - type: deny\n        config: {status: [403]}\n'],
  ])('is never below the real depth (%s)', (_name, text) => {
    expect(documentNesting(text)).toBeGreaterThanOrEqual(depthOf(parse(text)));
  });

  it('is never below the real depth of generated documents, in every layout yaml writes', () => {
    // A fixed pseudo-random sequence (no Math.random), so a failure reproduces.
    let seed = 42;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const gen = (depth: number): unknown => {
      if (depth === 0 || rnd(5) === 0) return rnd(2) ? 'x' : 1;
      const n = 1 + rnd(3);
      if (rnd(2)) return Array.from({ length: n }, () => gen(depth - 1));
      return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, gen(depth - 1)]));
    };
    for (let i = 0; i < 200; i++) {
      const value = gen(1 + rnd(12));
      for (const opts of [{}, { indentSeq: false }, { indent: 1 }, { collectionStyle: 'flow' as const }]) {
        const text = stringify(value, opts);
        expect(documentNesting(text, 1000), text).toBeGreaterThanOrEqual(depthOf(parse(text)));
      }
    }
  });

  it('does not count brackets inside quoted strings, block scalars or comments', () => {
    const text = `a: "${'['.repeat(100)}"\nb: '${'{'.repeat(100)}'\nc: |\n  ${'['.repeat(100)}\n# ${'['.repeat(100)}\n`;
    expect(documentNesting(text)).toBeLessThan(10);
  });

  it('stops early, just past the limit', () => {
    expect(documentNesting('['.repeat(100_000))).toBe(MAX_DOCUMENT_NESTING + 1);
  });

  it('names the size rule before lexing anything large', () => {
    expect(documentLimitViolation('a'.repeat(70_000))).toEqual({ rule: 'size', bytes: 70_000 });
    expect(documentLimitViolation('é'.repeat(40_000))).toEqual({ rule: 'size', bytes: 80_000 });
    expect(documentLimitViolation('a: b')).toBeUndefined();
  });
});

describe('jsonNesting and findBodyProblem', () => {
  it('measures JSON nesting exactly, ignoring brackets in strings and escaped quotes', () => {
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    expect(jsonNesting(bytes('{"a":[{"b":"[[[[\\"[["}]}'))).toBe(3);
    expect(jsonNesting(bytes('[]'.repeat(1000)))).toBe(1);
  });

  it('finds a __proto__ key or a lone surrogate anywhere, with its field path', () => {
    const proto = JSON.parse('{"a":[{"labels":{"__proto__":"x"}}]}') as unknown;
    expect(findBodyProblem(proto)).toEqual({ kind: 'proto-key', field: 'body.a[0].labels["__proto__"]' });
    expect(findBodyProblem({ 'x-y': ['ok', 'a\ud800'] })).toEqual({
      kind: 'lone-surrogate',
      field: 'body["x-y"][1]',
    });
    expect(findBodyProblem({ constructor: 'fine', emoji: '😀' })).toBeUndefined();
  });
});
