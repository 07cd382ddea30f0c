import type { PolicyRule } from '../../src/kubesim/auth.js';
import { find, render } from '../chart/helm.js';
import { kubesimRulesFor } from '../chart/rbac.js';
import type { ChartValues } from './target.js';

/** What a local-process target needs from the chart for one set of values. */
export interface ChartRendering {
  /** The controller's config file, exactly as the chart's ConfigMap holds it. */
  controllerYaml: string;
  /** The forwarder's config file; undefined when bindings are disabled. */
  forwarderYaml: string | undefined;
  /** The rights the chart grants each component, as kubesim tokens take them. */
  rules: { controller: PolicyRule[]; forwarder: PolicyRule[]; uninstall: PolicyRule[] };
}

/**
 * Renders the chart with helm and extracts the config files and RBAC, so a kubesim target runs
 * the controller, forwarder and uninstall command with exactly what a real install would give
 * them (`--config <file>`, tokens with these rules).
 */
export async function renderForTarget(
  values: ChartValues,
  identity: { release: string; namespace: string },
): Promise<ChartRendering> {
  const objs = await render(values, { release: identity.release, namespace: identity.namespace });
  const prefix = objs.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-controller'));
  if (!prefix) throw new Error('the chart rendered no controller Deployment');
  const fullname = prefix.metadata.name.slice(0, -'-controller'.length);
  const sa = (component: string) => {
    const deploy = objs.find(
      (o) => o.metadata.name === `${fullname}-${component}` && (o.kind === 'Deployment' || o.kind === 'Job'),
    );
    const spec = deploy?.['spec']?.template?.spec as { serviceAccountName?: string } | undefined;
    return { name: spec?.serviceAccountName ?? `${fullname}-${component}`, namespace: identity.namespace };
  };
  const forwarder = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === `${fullname}-forwarder`);
  return {
    controllerYaml: String(find(objs, 'ConfigMap', `${fullname}-controller`)['data']['controller.yaml']),
    forwarderYaml: forwarder ? String(forwarder['data']['forwarder.yaml']) : undefined,
    rules: {
      controller: kubesimRulesFor(objs, sa('controller')),
      forwarder: kubesimRulesFor(objs, sa('forwarder')),
      uninstall: kubesimRulesFor(objs, sa('uninstall')),
    },
  };
}
