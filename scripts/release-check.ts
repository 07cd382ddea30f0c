import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';

/**
 * Before a release publishes anything: the tag (`v1.2.3`), package.json's version and the chart's
 * version and appVersion must all name the same version.
 *   tsx scripts/release-check.ts v1.2.3
 */

const Chart = z.looseObject({ version: z.string(), appVersion: z.string() });
const Pkg = z.looseObject({ version: z.string() });

/** Every disagreement, one line each; empty when the release may go ahead. */
export function releaseProblems(tag: string, pkgText: string, chartText: string): string[] {
  const m = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag);
  if (!m) return [`the tag must be v<semver> (v1.2.3), got "${tag}"`];
  const version = m[1]!;
  const pkg = Pkg.parse(JSON.parse(pkgText));
  const chart = Chart.parse(parse(chartText));
  const problems: string[] = [];
  const want = (what: string, got: string) => {
    if (got !== version) problems.push(`${what} is ${got}, the tag says ${version}: set it to ${version}`);
  };
  want('package.json version', pkg.version);
  want('charts/endpoint-binder/Chart.yaml version', chart.version);
  want('charts/endpoint-binder/Chart.yaml appVersion', chart.appVersion);
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const tag = process.argv[2] ?? '';
  const problems = releaseProblems(
    tag,
    readFileSync('package.json', 'utf8'),
    readFileSync('charts/endpoint-binder/Chart.yaml', 'utf8'),
  );
  for (const p of problems) process.stderr.write(`release check: ${p}\n`);
  process.exit(problems.length === 0 ? 0 : 1);
}
