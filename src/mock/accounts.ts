import { createHash, timingSafeEqual } from 'node:crypto';
import type { AccountConfig } from './config.js';

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

interface Credential {
  digest: Buffer;
  accountId: string;
}

/**
 * Looks up accounts by API key or agent authtoken. Every lookup compares against every credential
 * with timingSafeEqual over fixed-length digests, so the time taken says nothing about the key.
 */
export class AccountDirectory {
  private readonly apiKeys: Credential[];
  private readonly authtokens: Credential[];
  readonly accounts: ReadonlyMap<string, AccountConfig>;

  constructor(accounts: AccountConfig[]) {
    this.accounts = new Map(accounts.map((a) => [a.id, a]));
    this.apiKeys = accounts.flatMap((a) => a.api_keys.map((k) => ({ digest: digest(k), accountId: a.id })));
    this.authtokens = accounts.flatMap((a) =>
      a.authtokens.map((k) => ({ digest: digest(k), accountId: a.id })),
    );
  }

  private static find(list: Credential[], secret: string): string | undefined {
    const d = digest(secret);
    let found: string | undefined;
    for (const c of list) {
      if (timingSafeEqual(c.digest, d) && found === undefined) found = c.accountId;
    }
    return found;
  }

  accountForApiKey(key: string): string | undefined {
    return AccountDirectory.find(this.apiKeys, key);
  }

  accountForAuthtoken(token: string): string | undefined {
    return AccountDirectory.find(this.authtokens, token);
  }
}
