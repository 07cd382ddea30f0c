import type { AccountConfig } from '../config.js';
import { Collection } from './collection.js';

/**
 * The record types of every collection, by list name. Each resource module adds its own entry
 * by declaration merging, so resources stay in their own files:
 *
 *   declare module '../store/account-state.js' { interface CollectionTypes { ip_policies: IPPolicyRecord } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CollectionTypes {}

/** Everything one account owns. Nothing crosses accounts: two accounts never see each other's records. */
export class AccountState {
  private readonly collections = new Map<string, Collection<{ id: string }>>();

  constructor(readonly account: AccountConfig) {}

  get id(): string {
    return this.account.id;
  }

  collection<K extends keyof CollectionTypes>(name: K): Collection<CollectionTypes[K] & { id: string }> {
    let c = this.collections.get(name);
    if (!c) {
      c = new Collection();
      this.collections.set(name, c);
    }
    return c as Collection<CollectionTypes[K] & { id: string }>;
  }
}
