import type { Registry } from 'prom-client';
import type { DeleteSafety } from '../../binding/delete-guard.js';
import type { InstallIdentity } from '../../binding/identity.js';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { ControllerConfig } from '../config.js';
import type { ControllerMetrics } from '../metrics.js';
import type { ControllerQueue } from '../queue.js';

/**
 * What every part of the controller is built with, made first by `startController`: the
 * settings, whose install it is, where it logs and counts, its time, the signal `stop()` aborts
 * and the one work queue the parts add to.
 */
export interface ControllerBase {
  config: ControllerConfig;
  identity: InstallIdentity;
  log: Logger;
  clock: Clock;
  registry: Registry;
  metrics: ControllerMetrics;
  /** Aborted by `stop()`: every loop and retry ends with it. */
  signal: AbortSignal;
  queue: ControllerQueue;
}

/** The delete rules' settings (docs/controller.md "Deletion"). */
export function deleteSafetyOf(config: ControllerConfig): DeleteSafety {
  return { knowledgeMaxAgeMs: config.bindings.deletes.knowledgeMaxAgeSeconds * 1000 };
}
