/**
 * Pure-core benchmark of the endpoint selector's cost (#16 item 6). For N endpoint views with
 * every field at its documented maximum size (ENDPOINT_FIELD_MAX: the worst case an account
 * member can hand us), in the same run:
 *
 *  - an ordinary selector against a plain JavaScript predicate doing the same test (the floor);
 *  - the costliest kind of selector the static estimate still accepts (a comprehension over the
 *    metadata, near the budget), per evaluation, against the 1 s runtime budget;
 *  - how long compiling (and refusing) the cost-bomb expressions takes, and their messages' first
 *    line: refused at start, never evaluated.
 *
 * Each selector is compiled anew per run, so its per-endpoint result cache starts empty.
 *
 *   npm run bench:selector -- [--endpoints 10000 --runs 5]
 */
import { z } from 'zod';
import { parseEndpointUrl } from '../src/binding/endpoint-url.js';
import { compileSelector, endpointView, type EndpointView } from '../src/binding/selector.js';
import { ENDPOINT_FIELD_MAX, SELECTOR_COST_BUDGET } from '../src/binding/selector-cost.js';
import { parseBenchArgs } from './support/args.js';

const Args = z.object({
  endpoints: z.coerce.number().int().min(10).max(100_000).default(10_000),
  runs: z.coerce.number().int().min(1).max(50).default(5),
});
const args = parseBenchArgs('bench/selector.ts', Args);

function views(): EndpointView[] {
  const description = 'd'.repeat(ENDPOINT_FIELD_MAX['description']!);
  return Array.from({ length: args.endpoints }, (_, i) => {
    const url = parseEndpointUrl(`tcp://svc-${i}.ns-${i % 100}:${1024 + (i % 5000)}`);
    if (!url.ok) throw new Error(url.message);
    // Every endpoint's metadata differs, at the maximum size, and splits into the most parts.
    const metadata = `${i}:`.padEnd(ENDPOINT_FIELD_MAX['metadata']!, ',');
    return endpointView(
      { id: `ep_${i}`, url: url.value.url, created_at: '', description, metadata },
      url.value,
    );
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timeRuns(fn: () => number): { ms: number; matched: number } {
  const times: number[] = [];
  let matched = 0;
  for (let r = 0; r < args.runs; r++) {
    const t0 = performance.now();
    matched = fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), matched };
}

function evaluateAll(expression: string, vs: EndpointView[]): { ms: number; matched: number; cost: number } {
  let cost = 0;
  const r = timeRuns(() => {
    const c = compileSelector(expression);
    if (!c.ok) throw new Error(c.message);
    cost = c.selector.estimatedCost;
    let n = 0;
    for (const v of vs) {
      const out = c.selector.evaluate(v);
      if (out.error) throw new Error(out.error);
      if (out.selected) n++;
    }
    return n;
  });
  return { ...r, cost };
}

const vs = views();
const out = (line: string) => process.stdout.write(line + '\n');
out(
  `selector bench: node ${process.version}, ${args.endpoints} endpoints at maximum field sizes, median of ${args.runs}`,
);

const ordinary = "endpoint.namespace == 'ns-7' && endpoint.port > 2000";
const sel = evaluateAll(ordinary, vs);
const floor = timeRuns(() => vs.filter((v) => v.namespace === 'ns-7' && v.port > 2000n).length);
if (floor.matched !== sel.matched)
  throw new Error(`the selector matched ${sel.matched}, the predicate ${floor.matched}`);
out(
  `ordinary selector:   ${sel.ms.toFixed(1)} ms for ${args.endpoints} (${((sel.ms / args.endpoints) * 1000).toFixed(2)} us each), estimated cost ${sel.cost}; plain JS ${floor.ms.toFixed(2)} ms; ${sel.matched} matched`,
);

const heavy = "endpoint.metadata.split(',').exists(x, x.startsWith('team=') && x.endsWith('a'))";
const h = evaluateAll(heavy, vs);
out(
  `costliest accepted:  ${h.ms.toFixed(1)} ms for ${args.endpoints} (${((h.ms / args.endpoints) * 1000).toFixed(2)} us each, runtime budget 1,000,000 us), estimated cost ${h.cost} of ${SELECTOR_COST_BUDGET}`,
);

const bombs = [
  "cel.bind(a, endpoint.metadata + endpoint.metadata, cel.bind(b, a + a, cel.bind(c, b + b, c.split('').map(x, x + c).size() > 0)))",
  "endpoint.metadata.split('').map(x, endpoint.metadata.contains(x)).exists(y, y)",
];
for (const bomb of bombs) {
  const t0 = performance.now();
  const r = compileSelector(bomb);
  const ms = performance.now() - t0;
  out(
    `cost bomb refused:   ${r.ok ? 'NO (accepted)' : 'yes'} in ${ms.toFixed(2)} ms: ${r.ok ? '' : r.message.split('\n')[0]!.slice(0, 160)}`,
  );
  if (r.ok) process.exitCode = 2;
}
