/**
 * The front door of ownership (docs/controller.md "Ownership and deletion"): is this object ours,
 * and how do we know. The controller, the forwarder, uninstall and `check` ask here and only here
 * (the files behind this door are private to it: eslint.config.js says so), so a change to the
 * rules, such as the crash-consistency work, is made in this folder and nowhere else. Pure.
 *
 * How we know:
 *  0. labels (labels.ts): all of this install's ownership labels. Necessary, never enough: anyone
 *     who may patch a Service can add them.
 *  1. the install record lists it (install-record.ts; the ConfigMap `<release>-install` only the
 *     controller's service account writes): an internal Service's uid is in `internal-services`;
 *     an alias's uid is recorded on an internal Service proven by 1 (`endpoint-binder.io/alias`);
 *  2. a write-ahead entry: its `namespace/name` is in the record's `intents`, written before the
 *     create, so a leader killed between a create and recording the uid leaves a Service its
 *     successor still proves;
 *  3. this process created or updated that very object (same uid).
 * (A record without a uid list yet, as right after an upgrade, lets every labelled internal
 * Service count once: anchors.ts.) A labelled Service with none of 1-3 is `unproven` (proofs.ts):
 * left alone, its forwarder ports stay held. An alias that lost `managed-by` or that no proof
 * backs is left behind (left-behind.ts): listed, never deleted; a Service at one of our names
 * that lost `managed-by` says so in its endpoint's `name-conflict` (foreign-holder.ts).
 *
 * The record's rules live here too: how it is read (install-record.ts), what the leader changes
 * in it after a pass (after-pass.ts, recorded-internal.ts) and what one write makes of the record
 * read fresh (record-writes.ts); the controller's writer only does the I/O.
 */

// The identity and the label keys that carry it (the projection format shares identity.ts).
export type { InstallIdentity } from '../identity.js';
export {
  ALIAS_ANNOTATION,
  INSTANCE_LABEL,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OPERATOR_NAMESPACE_LABEL,
  ORPHANED_ANNOTATION,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
} from '../identity.js';

// 0. Labels: select this install's objects; prove nothing alone.
export { hasLostLabel, isOwnedBy, lostLabelSelector, ownershipLabels, ownershipSelector } from './labels.js';

// 1-3. The proofs.
export { anchorOwned, namedAliases, withCreatedAliases } from './anchors.js';
export type { Anchored, RecordedInternal } from './anchors.js';
export {
  beyondRecordCapacity,
  INTENT_ABSENT_GRACE_MS,
  proveOwnership,
  recordedOwnershipOf,
  resolvedIntents,
  unprovenReason,
} from './proofs.js';
export type { IntentResolutionInput, OwnershipRecord } from './proofs.js';

// Why a Service at one of our names is not ours (it lost `managed-by`).
export { lostLabelDetail } from './foreign-holder.js';

// What proves nothing: left behind, listed, never deleted.
export {
  LEFT_BEHIND_STATE,
  leftBehindAliases,
  lostLabelReason,
  relabelledLeftBehind,
} from './left-behind.js';
export type { LeftBehind, LeftBehindAlias, LeftBehindInput } from './left-behind.js';

// The install record: its format and reading rules.
export {
  formatInternalServices,
  INGRESS_ADDRESS_KEY,
  INSTALL_RECORD_ROLE,
  installRecordConfigMap,
  installRecordName,
  INTENTS_KEY,
  INTERNAL_SERVICES_KEY,
  isInstallRecordOf,
  MAX_RECORDED_INTERNAL_SERVICES,
  OPERATOR_ID_KEY,
  parseInstallRecord,
  parseRecordedIntents,
  parseRecordedInternalServices,
  recordedInternalOf,
} from './install-record.js';
export type { InstallRecord } from './install-record.js';

// The install record: its writing rules (the controller's InstallRecordWriter does the I/O).
export { ownershipAfterPass } from './after-pass.js';
export type { AfterPass, AfterPassInput, PassWrite } from './after-pass.js';
export {
  applyRecordedChange,
  RECORDED_ABSENT_GRACE_MS,
  recordedInternalChange,
} from './recorded-internal.js';
export type { RecordedInternalChange, RecordedInternalInput } from './recorded-internal.js';
export { mergePending, nextInstallRecord, pendingOfChange } from './record-writes.js';
export type { InternalServicesChange, PendingRecordWrite, RecordWrite, SetChange } from './record-writes.js';
