import { describe, expect, it } from 'vitest';
import { project } from '../../src/binding/project.js';
import { compileSelector, type EndpointSelector } from '../../src/binding/selector.js';
import { SELECTOR_COST_BUDGET } from '../../src/binding/selector-cost.js';
import type { NamespacePhase } from '../../src/binding/types.js';
import { OPNS, config, seeded } from './helpers.js';

function refusal(expression: string): string {
  const r = compileSelector(expression);
  if (r.ok) throw new Error(`expected ${expression} to be refused (cost ${r.selector.estimatedCost})`);
  return r.message;
}

describe('selector: static cost estimate at compile time', () => {
  it.each([
    "endpoint.host.endsWith('.prod') && endpoint.port > 1024",
    "['api', 'web', 'db'].exists(n, endpoint.name == n)",
    "endpoint.metadata.contains('team=payments')",
    "endpoint.metadata.split(',').exists(kv, kv == 'tier=gold')",
    "cel.bind(h, endpoint.host, h.endsWith('.prod') || h.endsWith('.staging'))",
  ])('accepts an ordinary selector: %s', (expression) => {
    const r = compileSelector(expression);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.selector.estimatedCost).toBeLessThanOrEqual(SELECTOR_COST_BUDGET);
  });

  it('refuses the cel.bind doubling bomb, naming the costly part', () => {
    // 130-odd bytes; each bind doubles the string the last step loops over.
    const bomb =
      'cel.bind(a, endpoint.metadata + endpoint.metadata, cel.bind(b, a + a, cel.bind(c, b + b, ' +
      "c.split('').map(x, x + c).size() > 0)))";
    const message = refusal(bomb);
    expect(message).toMatch(
      /^invalid endpoint selector: it could take up to .* steps per endpoint, over the budget of 1000000/,
    );
    expect(message).toContain('the costly part is `map` over up to 32769 elements');
    expect(message).toContain('metadata 4096');
    expect(message).toContain('^'); // the excerpt points at it
  });

  it('refuses a comprehension fed through a receiver over tenant-controlled input', () => {
    const message = refusal("endpoint.metadata.split('').map(x, endpoint.metadata.contains(x)).exists(y, y)");
    expect(message).toContain('the costly part is `map` over up to 4097 elements');
  });

  it('refuses string growth through + even without a loop', () => {
    const m = 'endpoint.metadata';
    const message = refusal(
      `cel.bind(a, ${m} + ${m} + ${m} + ${m}, cel.bind(b, a + a + a + a, cel.bind(c, b + b + b + b, (c + c).size() > 0)))`,
    );
    // The string it builds is 524,288 characters: size() walking it is the first part over budget.
    expect(message).toMatch(/the costly part is (`cel\.bind`|`size`|`\+` building up to \d+ characters)/);
  });

  it('takes a lower budget from options', () => {
    const r = compileSelector("endpoint.metadata.contains('x')", { costBudget: 100 });
    expect(r.ok).toBe(false);
  });
});

describe('selector: runtime budget per evaluation', () => {
  const namespaces = new Map<string, NamespacePhase>([
    [OPNS, 'Active'],
    ['prod', 'Active'],
  ]);
  /** A clock where the second evaluation takes 100 ms and every other one 1 ms. */
  function slowSecond(): () => number {
    const ticks = [0, 1, 1, 101, 101, 102, 102, 103];
    let i = 0;
    return () => ticks[Math.min(i++, ticks.length - 1)]!;
  }

  it('an evaluation over its budget marks only that endpoint error, with the reason; only good results are reused', () => {
    const r = compileSelector('true', { evalBudgetMs: 50, now: slowSecond() });
    if (!r.ok) throw new Error(r.message);
    let calls = 0;
    const selector: EndpointSelector = r.selector;
    const select = (v: Parameters<EndpointSelector['evaluate']>[0]) => {
      calls++;
      return selector.evaluate(v);
    };
    const eps = ['a', 'b', 'c'].map((n, i) => ({
      id: `ep_${n}`,
      url: `http://${n}.prod`,
      created_at: `2026-01-01T00:0${i}:00Z`,
    }));
    const run = () =>
      project({
        endpoints: eps,
        select,
        cluster: { owned: [], namespaces, foreign: new Set() },
        config: config(),
        random: seeded(1),
      });
    const d = run();
    expect(d.statuses.map((s) => s.state)).toEqual(['projected', 'error', 'projected']);
    expect(d.statuses[1]!.reason).toBe(
      'the endpoint selector took 100 ms on this endpoint, over its budget of 50 ms; simplify the selector',
    );
    expect(d.services.has('prod/b')).toBe(false);
    // A second pass reuses the good results and evaluates the slow one again (1 ms this time).
    const again = run();
    expect(again.statuses.map((s) => s.state)).toEqual(['projected', 'projected', 'projected']);
    expect(calls).toBe(6);
  });
});

describe('selector: builtins that walk their receiver are costed at its maximum length (issue #30 item 4)', () => {
  it('refuses size() inside a loop over tenant-controlled input (cel-js counts code points)', () => {
    // Before: size() was one step, so this was estimated at ~20,000 steps and accepted; each
    // evaluation walks 4,096 characters 4,097 times over.
    const bomb = "endpoint.metadata.split('').all(c, endpoint.metadata.size() > 0)";
    expect(refusal(bomb)).toContain('the costly part is `all` over up to 4097 elements');
  });

  it('matches stays refused outright (a RegExp backtracks; no static bound is exact)', () => {
    expect(refusal("endpoint.metadata.matches('(a+)+$')")).toContain('`matches` is not allowed');
  });

  it('costs contains at receiver × argument (a naive search compares at every position)', () => {
    const long = 'x'.repeat(250);
    expect(refusal(`endpoint.metadata.contains('${long}')`)).toContain('the costly part is `contains`');
    expect(compileSelector(`endpoint.description.contains('${long}')`).ok).toBe(true);
  });

  /** `bytes(endpoint.metadata)` encoded `k` times over with `fn` (each result read back as bytes). */
  const encoded = (fn: 'hex' | 'base64', k: number): string => {
    let s = 'bytes(endpoint.metadata)';
    for (let i = 0; i < k; i++) s = `bytes(${s}.${fn}())`;
    return s;
  };

  it('refuses the hex() growth bomb: each hex() doubles what the next builtin walks', () => {
    // Before: hex() was costed as a copy (same length), so this was estimated at 81,934 steps and
    // accepted; over 4,096-byte metadata its size() walks 2 MiB of characters (105 ms per
    // endpoint on this machine, 17 minutes a pass at 10,000 endpoints).
    const bomb = `size(${encoded('hex', 8)}.hex()) > 0`;
    expect(refusal(bomb)).toMatch(/over the budget of 1000000/);
  });

  it.each([1, 2, 3, 4])(
    'the estimate covers the real length an encoding chain reaches (%i levels of hex, base64)',
    (k) => {
      // What size() walks at the API's maximum: 4,096 bytes of metadata, each level growing it.
      const real = { hex: 4096 * 2 ** k, base64: 0 };
      let b64 = 4096;
      for (let i = 0; i < k; i++) b64 = 4 * Math.ceil(b64 / 3);
      real.base64 = b64;
      for (const fn of ['hex', 'base64'] as const) {
        const r = compileSelector(`size(${encoded(fn, k)}) > 0`, { costBudget: Number.MAX_SAFE_INTEGER });
        if (!r.ok) throw new Error(r.message);
        expect(r.selector.estimatedCost, `${fn} × ${k}`).toBeGreaterThanOrEqual(real[fn]);
      }
    },
  );

  it('bytes() of a string is costed at 3 bytes per character (UTF-8), what the next builtin walks', () => {
    const r = compileSelector('size(bytes(endpoint.metadata + endpoint.metadata)) > 0', {
      costBudget: Number.MAX_SAFE_INTEGER,
    });
    if (!r.ok) throw new Error(r.message);
    expect(r.selector.estimatedCost).toBeGreaterThanOrEqual(3 * 8192);
  });

  it('the costed-at-maximum bound holds: an accepted selector over 4,096-byte metadata evaluates quickly', () => {
    const r = compileSelector(
      "endpoint.metadata.contains('team=payments') || endpoint.metadata.size() > 4000",
    );
    if (!r.ok) throw new Error(r.message);
    const out = r.selector.evaluate({
      id: 'ep_a',
      url: 'http://a.prod:80',
      scheme: 'http',
      host: 'a.prod',
      name: 'a',
      namespace: 'prod',
      port: 80n,
      description: '',
      metadata: 'x'.repeat(4096),
    });
    expect(out.selected).toBe(true);
  });
});
