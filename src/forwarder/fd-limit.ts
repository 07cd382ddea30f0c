/**
 * Keeping the forwarder inside its file descriptor limit. Each client costs two descriptors (its
 * socket and the ingress's) and each allocated port one; when the limit is reached libuv closes
 * the connections it cannot accept without telling anyone, dials fail with EMFILE, and the probe
 * server cannot accept `/readyz` either. So the connection cap is lowered to what the limit can
 * hold with a headroom kept free for the probe server, the Kubernetes watch and the log: clients
 * beyond it are turned away by the forwarder itself, counted and logged.
 */
import { readFile } from 'node:fs/promises';

/** Descriptors kept free of client connections: stdio, the probe server and its clients, the API server, files. */
export const DESCRIPTOR_HEADROOM = 64;

/** The soft "Max open files" of a `/proc/<pid>/limits` text, or undefined (unlimited, unknown). */
export function parseOpenFilesLimit(limits: string): number | undefined {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
  if (!m || m[1] === 'unlimited') return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The soft limit of this process (Linux), or undefined elsewhere. */
export async function openFilesLimit(): Promise<number | undefined> {
  try {
    return parseOpenFilesLimit(await readFile('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}

/** How many client connections fit in `limit` descriptors next to `listeners` listening sockets. */
export function connectionsForDescriptors(limit: number, listeners: number): number {
  return Math.max(1, Math.floor((limit - DESCRIPTOR_HEADROOM - listeners) / 2));
}
