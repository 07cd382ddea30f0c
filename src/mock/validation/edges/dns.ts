const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens, 1–63 bytes each, ≤253 in all. */
export function isDnsHost(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split('.');
  if (!labels.every((l) => LABEL.test(l))) return false;
  // An all-numeric last label would make it an IP address, not a name.
  return !/^\d+$/.test(labels[labels.length - 1]!);
}
