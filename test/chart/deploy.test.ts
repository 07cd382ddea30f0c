import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { NAMESPACE, RELEASE, renderDeploy } from '../../scripts/render-deploy.js';
import { find, helmTool, parseManifests } from './helm.js';

if ('skip' in helmTool) process.stdout.write(`deploy/ currency test skipped: ${helmTool.skip}\n`);

describe.skipIf('skip' in helmTool)('deploy/', () => {
  it('is what scripts/render-deploy.ts renders from the chart now (run npm run deploy:render when not)', async () => {
    const files = await renderDeploy();
    expect(files.size).toBe(2);
    for (const [file, text] of files) {
      expect(readFileSync(file, 'utf8'), `${file} is stale: run npm run deploy:render`).toBe(text);
    }
  });

  it('holds a complete default install without the uninstall hook, and the hook Job apart', () => {
    const objs = parseManifests(readFileSync('deploy/endpoint-binder.yaml', 'utf8'));
    expect(objs[0]).toMatchObject({ kind: 'Namespace', metadata: { name: NAMESPACE } });
    expect(objs.filter((o) => o.kind === 'Job')).toEqual([]);
    expect(objs.filter((o) => o.kind === 'Secret')).toEqual([]); // the user creates it; no secret in git
    for (const o of objs.slice(1)) {
      if (!o.kind.startsWith('Cluster') && !o.kind.startsWith('ValidatingAdmissionPolicy'))
        expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(NAMESPACE);
    }
    const cm = find(objs, 'ConfigMap', `${RELEASE}-controller`);
    const cfg = resolveControllerConfig(parseYaml(String(cm['data']['controller.yaml'])), {
      ENDPOINT_BINDER_API_KEY: 'k',
    });
    expect(cfg.ok && cfg.config.releaseName).toBe(RELEASE);
    const jobs = parseManifests(readFileSync('deploy/uninstall-job.yaml', 'utf8'));
    // The uninstall hook's rights travel with its Job (issue #18: they exist only for the hook).
    expect(jobs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      [
        `ClusterRole/${RELEASE}-${NAMESPACE}-uninstall`,
        `ClusterRoleBinding/${RELEASE}-${NAMESPACE}-uninstall`,
        // Issue #29: the hook's config and ServiceAccount are its own, so it runs after a refused install.
        `ConfigMap/${RELEASE}-uninstall`,
        `Job/${RELEASE}-uninstall`,
        `ServiceAccount/${RELEASE}-uninstall`,
        `Role/${RELEASE}-uninstall-lease`,
        `RoleBinding/${RELEASE}-uninstall-lease`,
      ].sort(),
    );
    expect(objs.some((o) => o.metadata.name.includes('uninstall') && /Role/.test(o.kind))).toBe(false);
    expect(objs.some((o) => o.kind === 'ValidatingAdmissionPolicy')).toBe(true);
  });
});
