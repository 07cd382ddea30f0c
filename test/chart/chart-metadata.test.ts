import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';

/** Chart.yaml's metadata: what Artifact Hub and `helm show chart` tell a platform engineer. */
const Chart = z.looseObject({
  version: z.string(),
  appVersion: z.string(),
  home: z.url(),
  sources: z.array(z.url()).min(1),
  annotations: z.record(z.string(), z.string()),
});
const chart = Chart.parse(parse(readFileSync('charts/endpoint-binder/Chart.yaml', 'utf8')));
const values = parse(readFileSync('charts/endpoint-binder/values.yaml', 'utf8')) as {
  image: { repository: string };
};

describe('Chart.yaml metadata', () => {
  it('carries the Artifact Hub annotations, each well formed', () => {
    const a = chart.annotations;
    expect(a['artifacthub.io/license']).toBe('Apache-2.0');
    expect(a['artifacthub.io/operator']).toBe('true');
    const links = z
      .array(z.object({ name: z.string(), url: z.url() }))
      .parse(parse(a['artifacthub.io/links']!));
    expect(links.map((l) => l.name)).toContain('Install guide');
  });

  it('lists the image the chart deploys by default, at the appVersion', () => {
    const images = z
      .array(z.object({ name: z.string(), image: z.string() }))
      .parse(parse(chart.annotations['artifacthub.io/images']!));
    expect(images).toEqual([
      { name: 'endpoint-binder', image: `${values.image.repository}:${chart.appVersion}` },
    ]);
  });
});
