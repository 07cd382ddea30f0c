import { Environment, ParseError, TypeError as CelTypeError } from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';
import type { EndpointUrl } from './endpoint-url.js';
import { celChildren } from './cel-ast.js';
import { ENDPOINT_FIELD_MAX, SELECTOR_COST_BUDGET, estimateSelectorCost } from './selector-cost.js';
import type { EndpointRecord, SelectorOutcome } from './types.js';

/**
 * The endpoint selector: a CEL expression over one variable, `endpoint`, compiled and type-checked
 * once (at startup) and evaluated per endpoint. Pure: no I/O; an expression that fails on one
 * endpoint means "not selected" for that endpoint only.
 *
 * Library: @marcbachmann/cel-js 8.0.0 (research/cel-libraries.md §6). It has no runtime cost
 * limit, so the guards below bound what an expression can do before it ever runs.
 */

/** What a selector sees of an endpoint. `port` is a CEL int, so a BigInt. */
export interface EndpointView {
  readonly id: string;
  readonly url: string;
  readonly scheme: string;
  /** `name.namespace` */
  readonly host: string;
  readonly name: string;
  readonly namespace: string;
  readonly port: bigint;
  readonly description: string;
  readonly metadata: string;
}

export interface EndpointSelector {
  readonly expression: string;
  /** The static worst-case cost per endpoint (abstract steps; the budget is SELECTOR_COST_BUDGET). */
  readonly estimatedCost: number;
  evaluate(view: EndpointView): SelectorOutcome;
}

export interface SelectorOptions {
  /** Static cost budget per evaluation (default SELECTOR_COST_BUDGET). */
  costBudget?: number;
  /**
   * Runtime budget per evaluation: a result that took longer is not used, and that endpoint is
   * `error` with the reason (default 1000 ms: far above what the static bound allows, so only a
   * pathological case trips it). `now` measures it (performance.now by default).
   */
  evalBudgetMs?: number;
  now?: () => number;
}

/** Results kept per endpoint view, so an unchanged endpoint is not evaluated again every pass. */
const RESULT_CACHE_SIZE = 50_000;

export type CompiledSelector = { ok: true; selector: EndpointSelector } | { ok: false; message: string };

/** At most this many bytes (UTF-8) of expression. */
export const MAX_SELECTOR_BYTES = 4096;

/**
 * Structural limits, enforced by the parser. 200 nodes is far more than any sensible selector
 * needs (`endpoint.host.endsWith('.prod') && endpoint.port > 1024` has 9) and keeps a single
 * comprehension over a literal cheap.
 */
const LIMITS = {
  maxAstNodes: 200,
  maxDepth: 12,
  maxListElements: 64,
  maxMapEntries: 64,
  maxCallArguments: 8,
};

/** Every view field must be present on evaluation: a missing one is a "No such key" error. */
const ENDPOINT_SCHEMA = {
  id: 'string',
  url: 'string',
  scheme: 'string',
  host: 'string',
  name: 'string',
  namespace: 'string',
  port: 'int',
  description: 'string',
  metadata: 'string',
} as const;

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

function createEnvironment(): Environment {
  return new Environment({ limits: LIMITS }).registerVariable({
    name: 'endpoint',
    schema: { ...ENDPOINT_SCHEMA },
  });
}

let sharedEnvironment: Environment | undefined;
/** One environment serves every compile; registering the variable is the costly part. */
function environment(): Environment {
  sharedEnvironment ??= createEnvironment();
  return sharedEnvironment;
}

/** The view of one endpoint: every field present (description and metadata default to ''). */
export function endpointView(ep: EndpointRecord, url: EndpointUrl): EndpointView {
  return {
    id: ep.id,
    url: url.url,
    scheme: url.scheme,
    host: url.host,
    name: url.name,
    namespace: url.namespace,
    port: BigInt(url.port),
    description: ep.description ?? '',
    metadata: ep.metadata ?? '',
  };
}

function isComprehension(node: ASTNode): boolean {
  return node.op === 'rcall' && COMPREHENSIONS.has(node.args[0]);
}

/** Source excerpt for a refused node, in the library's caret style. */
function excerpt(expression: string, node: ASTNode): string {
  const line = expression.replace(/\s/g, ' ');
  const start = Math.max(0, Math.min(node.start, line.length));
  const width = Math.max(1, Math.min(node.end, line.length) - start);
  return `\n\n>    1 | ${line}\n         ${' '.repeat(start)}${'^'.repeat(width)}`;
}

/**
 * Refuses what can hang or exhaust the process, which the library cannot bound at run time:
 * `matches` (JS RegExp backtracking, and the built-in cannot be replaced) and a comprehension
 * inside the body of another (n^k iterations from a short expression). A comprehension in the
 * receiver of another runs once, before the outer loop, so it is allowed.
 */
function refuse(expression: string, root: ASTNode): string | undefined {
  const stack: { node: ASTNode; inBody: boolean }[] = [{ node: root, inBody: false }];
  while (stack.length > 0) {
    const { node, inBody } = stack.pop()!;
    const fn = node.op === 'call' || node.op === 'rcall' ? node.args[0] : undefined;
    if (fn === 'matches') {
      return (
        '`matches` is not allowed: regular expressions can run for minutes on some inputs; ' +
        'use startsWith, endsWith or contains instead' +
        excerpt(expression, node)
      );
    }
    if (node.op === 'rcall' && isComprehension(node)) {
      if (inBody) {
        return (
          `\`${node.args[0]}\` is not allowed inside another comprehension (all, exists, exists_one, map, filter): ` +
          'nested loops multiply their cost' +
          excerpt(expression, node)
        );
      }
      stack.push({ node: node.args[1], inBody });
      for (const arg of node.args[2]) stack.push({ node: arg, inBody: true });
      continue;
    }
    for (const child of celChildren(node)) stack.push({ node: child, inBody });
  }
  return undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Compiles a selector once: size, parse (with limits), guards, type check against the typed
 * `endpoint`, result type `bool`. Every failure is a message starting with a short sentence,
 * followed by the library's positioned text where there is one.
 */
export function compileSelector(expression: string, opts: SelectorOptions = {}): CompiledSelector {
  const fail = (message: string): CompiledSelector => ({ ok: false, message });
  if (expression.trim().length === 0) {
    return fail('invalid endpoint selector: the expression is empty (use "true" to select every endpoint)');
  }
  const bytes = Buffer.byteLength(expression, 'utf8');
  if (bytes > MAX_SELECTOR_BYTES) {
    return fail(
      `invalid endpoint selector: the expression is ${bytes} bytes, at most ${MAX_SELECTOR_BYTES} are allowed`,
    );
  }
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = environment().parse(expression);
  } catch (err) {
    if (err instanceof ParseError && err.code === 'limit_exceeded') {
      return fail(`invalid endpoint selector: the expression is too complex: ${err.message}`);
    }
    if (err instanceof ParseError) return fail(`invalid endpoint selector: syntax error: ${err.message}`);
    return fail(`invalid endpoint selector: ${errorText(err)}`);
  }
  const refused = refuse(expression, parsed.ast);
  if (refused !== undefined) return fail(`invalid endpoint selector: ${refused}`);
  const budget = opts.costBudget ?? SELECTOR_COST_BUDGET;
  const estimate = estimateSelectorCost(parsed.ast, budget);
  if (estimate.costly) {
    const sizes = Object.entries(ENDPOINT_FIELD_MAX)
      .filter(([, n]) => n > 1)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    return fail(
      `invalid endpoint selector: it could take up to ${Math.round(estimate.cost).toExponential(1)} steps per endpoint, ` +
        `over the budget of ${budget} (with the largest field values: ${sizes} characters); ` +
        `the costly part is ${estimate.costlyPart}` +
        excerpt(expression, estimate.costly),
    );
  }

  const checked = parsed.check();
  if (!checked.valid) {
    const err = checked.error;
    const kind = err instanceof CelTypeError ? 'type error' : 'error';
    return fail(`invalid endpoint selector: ${kind}: ${err ? err.message : 'type check failed'}`);
  }
  if (checked.type !== 'bool') {
    return fail(
      `invalid endpoint selector: the expression must return bool, it returns ${checked.type ?? 'an unknown type'}`,
    );
  }

  const run = parsed;
  const evalBudgetMs = opts.evalBudgetMs ?? 1000;
  const now = opts.now ?? (() => performance.now());
  const evaluateOnce = (view: EndpointView): SelectorOutcome => {
    let result: unknown;
    const t0 = now();
    try {
      result = run({ endpoint: { ...view } });
    } catch (err) {
      // Data-dependent (a missing key, division by zero, a stack limit): this endpoint only.
      return { selected: false, error: errorText(err) };
    }
    const ms = now() - t0;
    if (ms > evalBudgetMs) {
      return {
        selected: false,
        error: `the endpoint selector took ${Math.round(ms)} ms on this endpoint, over its budget of ${evalBudgetMs} ms; simplify the selector`,
        overBudget: true,
      };
    }
    if (typeof result !== 'boolean') {
      return { selected: false, error: `the selector returned ${typeof result}, not bool` };
    }
    return { selected: result };
  };
  // The static bound keeps one evaluation short; the cache keeps an unchanged endpoint from
  // being evaluated again on every pass (a selector is a function of the view alone).
  const cache = new Map<string, SelectorOutcome>();
  return {
    ok: true,
    selector: {
      expression,
      estimatedCost: estimate.cost,
      evaluate(view: EndpointView): SelectorOutcome {
        const key = JSON.stringify([view.id, view.url, view.description, view.metadata]);
        const hit = cache.get(key);
        if (hit) return hit;
        const out = evaluateOnce(view);
        // An over-budget result is not kept: a pause of the process (GC, a loaded node) must not
        // mark an endpoint for good; the next pass evaluates it again.
        if (out.overBudget) return out;
        if (cache.size >= RESULT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(key, out);
        return out;
      },
    },
  };
}
