import type { AccountState } from '../store/account-state.js';

/**
 * Resources of the real service that this mock references but does not serve (HTTPS edges'
 * backends and mutual-TLS certificate authorities). An account knows them by id, from its
 * config or the admin interface, so references to them can be checked like real ones.
 */
export interface ExternalRefRecord {
  id: string;
}

export const EXTERNAL_REF_KINDS = ['backends', 'certificate_authorities'] as const;
export type ExternalRefKind = (typeof EXTERNAL_REF_KINDS)[number];

declare module '../store/account-state.js' {
  interface CollectionTypes {
    backends: ExternalRefRecord;
    certificate_authorities: ExternalRefRecord;
  }
}

export function seedExternalRefs(state: AccountState): void {
  for (const id of state.account.backends) state.collection('backends').put({ id });
  for (const id of state.account.certificate_authorities)
    state.collection('certificate_authorities').put({ id });
}
