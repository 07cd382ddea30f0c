import { STATE_LABEL } from '../binding/identity.js';
import type { Service } from '../kube/index.js';

function age(created: string | undefined, now: number): string {
  if (!created) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(created)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m}m` : `${Math.floor(m / 60)}h`;
}

/**
 * Services as `kubectl get svc -A -L endpoint-binder.io/state` prints them (same columns and
 * cell formats), so the demo shows what a cluster would. Pure.
 */
export function formatServicesTable(services: readonly Service[], now: number): string {
  const header = ['NAMESPACE', 'NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'STATE'];
  const sorted = [...services].sort(
    (a, b) =>
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  const rows = sorted.map((s) => {
    const type = s.spec?.type ?? 'ClusterIP';
    const ports = (s.spec?.ports ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`).join(',');
    return [
      s.metadata.namespace ?? '',
      s.metadata.name,
      type,
      type === 'ExternalName' ? '<none>' : (s.spec?.clusterIP ?? '<none>'),
      type === 'ExternalName' ? (s.spec?.externalName ?? '<none>') : '<none>',
      ports || '<none>',
      age(s.metadata.creationTimestamp, now),
      s.metadata.labels?.[STATE_LABEL] ?? '',
    ];
  });
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]! + 3))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}
