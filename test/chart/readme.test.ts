import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';

/**
 * The chart README's parameter table is generated from the `## @param` comments of values.yaml
 * by readme-generator-for-helm (`npm run chart:readme`). Run on a copy, it must change nothing;
 * it also fails when a value has no metadata or metadata names a value that does not exist.
 */

const run = promisify(execFile);
const CHART = resolve('charts/endpoint-binder');
const GENERATOR = resolve('node_modules/.bin/readme-generator');

describe('charts/endpoint-binder/README.md', () => {
  it('is what `npm run chart:readme` generates from values.yaml now', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eb-chart-readme-'));
    try {
      const copy = join(dir, 'README.md');
      copyFileSync(join(CHART, 'README.md'), copy);
      const { stdout } = await run(GENERATOR, ['-v', join(CHART, 'values.yaml'), '-r', copy], {
        timeout: budget(60_000),
      });
      expect(stdout).toContain('Metadata is correct!');
      expect(readFileSync(copy, 'utf8'), 'README.md is stale: run npm run chart:readme').toBe(
        readFileSync(join(CHART, 'README.md'), 'utf8'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents the values this issue added', () => {
    const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
    for (const key of [
      'api.caBundle',
      'api.caSecret.name',
      'bindings.ingress.caSecret.name',
      'controller.extraArgs',
      'forwarder.extraVolumes',
      'extraObjects',
      'uninstall.hook.annotations',
      'configCheck.enabled',
    ])
      expect(readme).toContain(`| \`${key}\``);
  });
});
