import type { Registry, ResourceDef } from './resources/registry.js';

/**
 * The legacy (unaggregated) discovery documents: /api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v}
 * and /version. KubernetesObjectApi resolves plurals through these, so they must list exactly
 * what kubesim serves.
 */

function apiResource(def: ResourceDef) {
  return {
    name: def.plural,
    singularName: def.singular,
    namespaced: def.namespaced,
    ...(def.group ? { group: def.group, version: def.version } : {}),
    kind: def.kind,
    verbs: def.verbs,
    ...(def.shortNames ? { shortNames: def.shortNames } : {}),
    ...(def.categories ? { categories: def.categories } : {}),
  };
}

/** A `<plural>/status` entry, as the real lists carry one after the resource. */
function statusResource(def: ResourceDef) {
  return {
    name: `${def.plural}/status`,
    singularName: '',
    namespaced: def.namespaced,
    ...(def.group ? { group: def.group, version: def.version } : {}),
    kind: def.kind,
    verbs: ['get', 'patch', 'update'],
  };
}

export function coreVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** Undefined when the group/version is not served. */
export function resourceList(registry: Registry, group: string, version: string) {
  const defs = registry.all().filter((d) => d.group === group && d.version === version);
  if (defs.length === 0) return undefined;
  const groupVersion = group ? `${group}/${version}` : version;
  // The core list comes without apiVersion on a real server; group lists carry "v1".
  const resources = defs.flatMap((d) =>
    d.statusSubresource ? [apiResource(d), statusResource(d)] : [apiResource(d)],
  );
  return group
    ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources }
    : { kind: 'APIResourceList', groupVersion, resources };
}

function apiGroup(registry: Registry, name: string) {
  const versions = registry
    .groupVersions()
    .filter((gv) => gv.group === name)
    .map((gv) => ({ groupVersion: `${gv.group}/${gv.version}`, version: gv.version }));
  const preferred = versions[0];
  return preferred ? { name, versions, preferredVersion: preferred } : undefined;
}

export function groupList(registry: Registry) {
  const names = [...new Set(registry.groupVersions().map((gv) => gv.group))].filter((g) => g !== '');
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: names.map((n) => apiGroup(registry, n)).filter((g) => g !== undefined),
  };
}

export function group(registry: Registry, name: string) {
  const g = apiGroup(registry, name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...g } : undefined;
}

export function versionInfo() {
  return {
    major: '1',
    minor: '34',
    gitVersion: 'v1.34.0-kubesim',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-08-27T00:00:00Z',
    goVersion: 'n/a (kubesim)',
    compiler: 'n/a',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
