import { errorCatalogue } from './index.js';

const AREAS: [number, string][] = [
  [100, 'Request plumbing (every route; IP policies and tunnels need no codes beyond these)'],
  [300, 'HTTPS edges, routes and modules'],
  [500, 'Cluster-bound endpoints'],
  [600, 'Kubernetes operators and notifications'],
  [700, 'Binding ingress (data plane)'],
];

function areaOf(n: number): string {
  let name = AREAS[0]![1];
  for (const [start, label] of AREAS) if (n >= start) name = label;
  return name;
}

/** docs/errors.md, rendered from the catalogue so the documentation cannot drift from the code. */
export function renderErrorCatalogueMarkdown(): string {
  const entries = Object.entries(errorCatalogue)
    .map(([code, info]) => ({ code, n: Number(code.slice(4)), ...info }))
    .sort((a, b) => a.n - b.n);
  const out = [
    '# Error codes',
    '',
    'Every failed management API request answers with a JSON body',
    '`{"error_code", "status_code", "msg", "details"}`; `details.operation_id` repeats the',
    '`operation-id` response header. `error_code` values are stable: clients may branch on them.',
    'The binding ingress answers its own failures with the same codes in its reply line.',
    '',
    'This file is generated from `src/api/error-codes/` by `npm run docs:errors`; a test keeps it current.',
  ];
  let area = '';
  for (const e of entries) {
    const a = areaOf(e.n);
    if (a !== area) {
      area = a;
      out.push('', `## ${a}`, '', '| code | HTTP status | meaning |', '| --- | --- | --- |');
    }
    out.push(`| ${e.code} | ${e.status} | ${e.title.replace(/\|/g, '\\|')} |`);
  }
  return out.join('\n') + '\n';
}
