import { inject } from 'vitest';
import { controlPlaneClient, type ControlPlaneClient } from './control-plane.js';

/**
 * The shared control plane of the real-API-server tier (started by test/real/global-setup.ts),
 * or the reason it is not there (tests then skip, printing it).
 */
export function realCluster(): { cluster: ControlPlaneClient } | { skip: string } {
  const info = inject('controlPlane');
  if ('skip' in info) return info;
  return { cluster: controlPlaneClient(info) };
}
