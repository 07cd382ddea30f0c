/** Kubernetes plumbing shared by the controller and the forwarder. */
export { systemClock, sleep, type Clock } from '../time/clock.js';
export { kubeConfigFrom, type KubeConfigSource } from './config.js';
export {
  KubeApiError,
  classifyError,
  describeError,
  errorFromResponse,
  errorFromStatus,
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  toKubeApiError,
  type ErrorKind,
  type StatusCause,
} from './errors.js';
export { kubeMetrics, type KubeMetrics } from './metrics.js';
export * from './objects.js';
export { collectionPath, defineKind, kinds, objectPath, type ResourceKind } from './resources.js';
export { KubeTransport, type KubeRequest, type KubeResponse, type TransportOptions } from './transport.js';
export { KubeClient, type WriteOptions } from './write.js';
export { retryOnConflict, type ConflictRetryOptions } from './conflict-retry.js';
export {
  createCache,
  defaultCacheTuning,
  type Cache,
  type CacheHandlers,
  type CacheHealth,
  type CacheOptions,
  type CacheState,
  type CacheTuning,
} from './cache/reflector.js';
export type { BackoffOptions } from '../time/backoff.js';
export { listAll, type ListOptions, type ListResult } from './cache/list.js';
export { LeaseLock, recordFromLease, type LockedRecord } from './leader/lease-lock.js';
export { microTime, type LeaderElectionRecord } from './leader/record.js';
export {
  LeaderElector,
  defaultIdentity,
  defaultLeaderElectionTiming,
  type ElectorOutcome,
  type LeaderElectionTiming,
  type LeaderElectorOptions,
} from './leader/elector.js';
export {
  EventRecorder,
  EVENT_COMPONENT,
  objectRef,
  type EventRecorderOptions,
  type InvolvedObject,
} from './events/recorder.js';
export type { EventType } from './events/aggregate.js';
