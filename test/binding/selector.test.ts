import { describe, expect, it } from 'vitest';
import { parseEndpointUrl } from '../../src/binding/endpoint-url.js';
import { compileSelector, endpointView, MAX_SELECTOR_BYTES } from '../../src/binding/selector.js';
import type { EndpointSelector, EndpointView } from '../../src/binding/selector.js';
import type { EndpointRecord } from '../../src/binding/types.js';

function view(url: string, extra: Partial<EndpointRecord> = {}): EndpointView {
  const parsed = parseEndpointUrl(url);
  if (!parsed.ok) throw new Error(parsed.message);
  return endpointView({ id: 'ep_1', url, created_at: '2026-01-01T00:00:00Z', ...extra }, parsed.value);
}

function compile(expression: string): EndpointSelector {
  const r = compileSelector(expression);
  if (!r.ok) throw new Error(r.message);
  return r.selector;
}

function rejection(expression: string): string {
  const r = compileSelector(expression);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.message;
}

describe('endpointView', () => {
  it('exposes every field, port as a BigInt, description and metadata defaulting to ""', () => {
    expect(view('http://api.prod')).toEqual({
      id: 'ep_1',
      url: 'http://api.prod:80',
      scheme: 'http',
      host: 'api.prod',
      name: 'api',
      namespace: 'prod',
      port: 80n,
      description: '',
      metadata: '',
    });
    const v = view('tcp://db.staging:5432', { description: 'the db', metadata: '{"team":"a"}' });
    expect(v.description).toBe('the db');
    expect(v.metadata).toBe('{"team":"a"}');
  });
});

describe('compileSelector: accepted selectors', () => {
  // The research doc's example selectors, with `metadata` a string as the API has it.
  it.each([
    ["endpoint.host.endsWith('.prod')", 'http://api.prod', true],
    ["endpoint.host.endsWith('.prod')", 'http://api.staging', false],
    ["endpoint.port > 1024 && endpoint.namespace in ['a', 'b']", 'tcp://db.a:5432', true],
    ["endpoint.port > 1024 && endpoint.namespace in ['a', 'b']", 'tcp://db.c:5432', false],
    ["endpoint.port > 1024 && endpoint.namespace in ['a', 'b']", 'http://web.a', false],
    ["endpoint.metadata.contains('team=a') && endpoint.url.startsWith('tcp://')", 'tcp://db.prod:5432', true],
    [
      "endpoint.metadata.contains('team=a') && endpoint.url.startsWith('tcp://')",
      'http://db.prod:5432',
      false,
    ],
    ["endpoint.namespace == 'prod' && endpoint.scheme == 'http'", 'http://api.prod:8080', true],
    ["endpoint.namespace == 'prod' && endpoint.scheme == 'http'", 'tcp://api.prod:8080', false],
    ['true', 'http://a.b', true],
    ['endpoint.port == 80', 'http://a.b', true],
    ['endpoint.port == 80', 'http://a.b:8080', false],
    ['endpoint.port > 1024', 'http://a.b:1025', true],
    ['endpoint.port > 1024', 'http://a.b:1024', false],
    ['endpoint.port in [80, 8080]', 'http://a.b:8080', true],
    ['endpoint.port + 1 == 81', 'http://a.b', true],
    ["endpoint.id.startsWith('ep_') && endpoint.name == 'a' && endpoint.host == 'a.b'", 'http://a.b', true],
    ["['x', 'y'].exists(s, endpoint.name == s)", 'http://y.b', true],
    ["['x', 'y'].map(s, s + '.b').exists(h, h == endpoint.host)", 'http://x.b', true],
  ])('%s on %s → %s', (expression, url, expected) => {
    const s = compile(expression);
    expect(s.expression).toBe(expression);
    expect(s.evaluate(view(url, { metadata: 'team=a' }))).toEqual({ selected: expected });
  });
});

describe('compileSelector: rejections carry a short sentence and the library text', () => {
  it.each([
    ['', /^invalid endpoint selector: the expression is empty/],
    ['   \n', /^invalid endpoint selector: the expression is empty/],
    [
      "endpoint.host.endsWith('.prod'",
      /^invalid endpoint selector: syntax error: Expected RPAREN, got EOF\n\n> +1 \| /,
    ],
    ['endpoint.port >', /syntax error: Unexpected token: EOF/],
    ["endpoint.host == 'a", /syntax error: Unterminated string/],
    [
      "endpoint.hots == 'a'",
      /^invalid endpoint selector: type error: No such key: hots\n\n> +1 \| endpoint\.hots/,
    ],
    ["endpoint.host.endWith('a')", /type error: found no matching overload for 'string\.endWith\(string\)'/],
    ["nope.x == 'a'", /type error: Unknown variable: nope/],
    ["endpoint.port == 'a'", /type error: no such overload: int == string/],
    ['endpoint.port', /must return bool, it returns int/],
    ['endpoint.host', /must return bool, it returns string/],
    ['dyn(true)', /must return bool, it returns dyn/],
    [
      '!'.repeat(300) + 'true',
      /^invalid endpoint selector: the expression is too complex: Exceeded maxAstNodes \(200\)/,
    ],
    ['('.repeat(40) + 'true' + ')'.repeat(40), /too complex: Exceeded maxDepth \(12\)\n\n> +1 \| \(/],
    [
      `[${Array.from({ length: 65 }, (_, i) => i).join(',')}].size() > 0`,
      /too complex: Exceeded maxListElements \(64\)/,
    ],
    [
      `{${Array.from({ length: 65 }, (_, i) => `${i}: 1`).join(',')}}.size() > 0`,
      /too complex: Exceeded maxMapEntries \(64\)/,
    ],
  ])('%j', (expression, pattern) => {
    expect(rejection(expression)).toMatch(pattern);
  });

  it(`refuses expressions over ${MAX_SELECTOR_BYTES} bytes`, () => {
    const long = `endpoint.description == '${'é'.repeat(2100)}'`;
    expect(rejection(long)).toMatch(/the expression is \d+ bytes, at most 4096 are allowed/);
  });

  it.each([
    "endpoint.host.matches('^a+$')",
    "endpoint.host.startsWith('a') || endpoint.name.matches('(a+)+$')",
    "['a'].exists(x, x.matches('a'))",
    "matches(endpoint.host, 'a')",
  ])('refuses `matches` in %s, suggesting safe functions', (expression) => {
    const message = rejection(expression);
    expect(message).toMatch(/^invalid endpoint selector: `matches` is not allowed/);
    expect(message).toContain('use startsWith, endsWith or contains instead');
    expect(message).toMatch(/\n\n> +1 \| .*\n +\^+/);
  });

  it.each([
    ['[1, 2].all(x, [3].exists(y, y == x))', 'exists'],
    ["['a'].exists(x, ['b'].map(y, y + x).size() > 0)", 'map'],
    ["['a'].filter(x, ['b'].exists_one(y, y == x)).size() == 0", 'exists_one'],
    ['[1].exists(x, [2].exists(y, [3].all(z, z > x + y)))', 'exists'],
    ["['a'].map(x, x, ['b'].filter(y, y == x).size()).size() > 0", 'filter'],
  ])('refuses a comprehension nested in another: %s', (expression, inner) => {
    const message = rejection(expression);
    expect(message).toContain(`\`${inner}\` is not allowed inside another comprehension`);
  });

  it('allows a comprehension on the result of another (they run one after the other)', () => {
    const s = compile("['a', 'b'].map(x, x + '.prod').all(h, h.endsWith('.prod'))");
    expect(s.evaluate(view('http://a.b'))).toEqual({ selected: true });
  });
});

describe('EndpointSelector.evaluate: errors mean "not selected" for that endpoint only', () => {
  it('returns the evaluation error text and keeps working for the next endpoint', () => {
    const s = compile("{'api': 'x'}[endpoint.name] == 'x'");
    const bad = s.evaluate(view('http://web.prod'));
    expect(bad.selected).toBe(false);
    expect(bad.error).toMatch(/No such key: web/);
    expect(s.evaluate(view('http://api.prod'))).toEqual({ selected: true });
  });

  it('division by zero on one endpoint is not selected with the message', () => {
    const s = compile('100 / (endpoint.port - 80) > 1');
    expect(s.evaluate(view('http://a.b:80'))).toEqual({
      selected: false,
      error: expect.stringMatching(/division by zero/),
    });
    expect(s.evaluate(view('http://a.b:81'))).toEqual({ selected: true });
  });

  it('an absorbed error does not count: `||` with a true side selects', () => {
    const s = compile("{'api': true}[endpoint.name] || endpoint.port == 80");
    expect(s.evaluate(view('http://web.prod'))).toEqual({ selected: true });
  });
});
