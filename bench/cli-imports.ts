/**
 * Where `endpoint-binder status` spends its start-up beyond `--version` (issue #29 item 6): each
 * module `status` loads, imported in order in one plain-node child process (no tsx hooks), with
 * the milliseconds each took (a module an earlier one already loaded costs ~0), over N runs; the
 * minimum per module is printed. Needs a current dist/ (`npm run build`).
 *
 *   npx tsx bench/cli-imports.ts [--rounds 5]
 */
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { loadAverage } from './support/load.js';

const args = parseBenchArgs(
  'bench:cli-imports',
  z.object({ rounds: z.coerce.number().int().min(1).max(50).default(5) }),
);

const MODULES = [
  'zod',
  'undici',
  'dist/controller/decide/status.js',
  'dist/cli/status-view.js',
  'dist/cli/status-data-path.js',
  'dist/cli/status-command.js',
];

const CHILD = `
const out = {};
for (const [name, spec] of JSON.parse(process.argv[1])) {
  const t = performance.now();
  await import(spec);
  out[name] = performance.now() - t;
}
process.stdout.write(JSON.stringify(out));
`;

const specs = MODULES.map((m) => [m, m.startsWith('dist/') ? pathToFileURL(m).href : m]);
const best = new Map<string, number>();
const before = await loadAverage();
for (let i = 0; i < args.rounds; i++) {
  const raw = execFileSync(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify(specs)], {
    encoding: 'utf8',
  });
  const times = z.record(z.string(), z.number()).parse(JSON.parse(raw));
  for (const [name, ms] of Object.entries(times)) best.set(name, Math.min(best.get(name) ?? Infinity, ms));
}
for (const m of MODULES) console.log(`${m.padEnd(30)} min ${Math.round(best.get(m) ?? NaN)} ms`);
console.log(
  `rounds ${args.rounds}, node ${process.versions.node}, load average before ${before}, after ${await loadAverage()}`,
);
