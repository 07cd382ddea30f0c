import type { Registry } from 'prom-client';
import type { InstallIdentity } from '../../binding/identity.js';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { ForwarderConfig } from '../config.js';
import type { ForwarderMetrics } from '../metrics.js';

/**
 * What every part of the forwarder is built with, made first by `startForwarder`: the settings,
 * whose install it serves, where it logs and counts, and its time.
 */
export interface ForwarderBase {
  config: ForwarderConfig;
  identity: InstallIdentity;
  /** The forwarder's logger (`component: forwarder`). */
  log: Logger;
  clock: Clock;
  registry: Registry;
  metrics: ForwarderMetrics;
}
