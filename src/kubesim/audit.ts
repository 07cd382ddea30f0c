import type { RequestAttributes } from './auth.js';

/**
 * kubesim's audit log: one record per authorization decision on a resource request (and per
 * `impersonate` check), with the annotations admission adds. Bounded, so a long demo run does
 * not grow without limit.
 */

/** One resource request as the authorizer saw it. */
export interface AuditRecord {
  /** The user the request ran as (the impersonated one, when impersonating). */
  user: string;
  groups: string[];
  /** Who sent an impersonating request (the real audit event's `user`; `user` here is its `impersonatedUser`). */
  impersonator?: string;
  attrs: RequestAttributes;
  allowed: boolean;
  /**
   * Audit annotations: a ValidatingAdmissionPolicy's `Audit` failures under
   * `validation.policy.admission.k8s.io/validation_failure`, its auditAnnotations under
   * `<policy>/<key>`.
   */
  annotations?: Record<string, string>;
}

export class AuditLog {
  private records: AuditRecord[] = [];

  add(record: AuditRecord): void {
    if (this.records.length >= 200_000) this.records = this.records.slice(-100_000);
    this.records.push(record);
  }

  all(): readonly AuditRecord[] {
    return this.records;
  }

  clear(): void {
    this.records = [];
  }
}
