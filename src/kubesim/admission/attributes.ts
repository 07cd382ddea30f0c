import type { Identity } from '../auth.js';
import type { ResourceDef } from '../resources/registry.js';
import type { KubeObject } from '../types.js';

/**
 * A write as validating admission sees it (admission.Attributes): after authentication,
 * authorization and the registry's own defaulting and validation, before storage.
 */

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  def: ResourceDef;
  operation: AdmissionOperation;
  /** '' for cluster-scoped resources. */
  namespace: string;
  /** The object's name ('' on a create by generateName, as the real request carries it). */
  name: string;
  subresource: string;
  /** The new object; null on DELETE. */
  object: KubeObject | null;
  /** The stored object; null on CREATE. */
  oldObject: KubeObject | null;
  user: Identity;
  dryRun: boolean;
  /** CreateOptions / UpdateOptions / DeleteOptions of the request, as `request.options` shows them. */
  options: Record<string, unknown>;
}

/** Who sees the request on its way through a write: the identity, and where audit annotations go. */
export interface WriteContext {
  user: Identity;
  /** Adds an annotation to the request's audit record (admission's validation failures). */
  annotate(key: string, value: string): void;
}

/** The validating admission stage: throws the refusal (an ApiError), or returns warnings to send. */
export interface ValidatingAdmission {
  validate(attrs: AdmissionAttributes, annotate: (key: string, value: string) => void): string[];
}
