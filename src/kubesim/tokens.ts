import { randomBytes } from 'node:crypto';
import type { Identity } from './auth.js';
import type { KubeObject } from './types.js';

/**
 * ServiceAccount bearer tokens: one per ServiceAccount object (bound to its uid, like a bound
 * token's `kubernetes.io` claims), valid while that very object exists. The identity is the one
 * the ServiceAccount token authenticator produces.
 */
export class ServiceAccountTokens {
  private readonly byToken = new Map<string, { namespace: string; name: string; uid: string }>();
  private readonly byUid = new Map<string, string>();

  constructor(private readonly lookup: (namespace: string, name: string) => KubeObject | undefined) {}

  /** The token of an existing ServiceAccount; throws when there is none. */
  issue(namespace: string, name: string): string {
    const sa = this.lookup(namespace, name);
    const uid = sa?.metadata.uid;
    if (!uid) throw new Error(`serviceaccounts "${name}" not found in namespace "${namespace}"`);
    let token = this.byUid.get(uid);
    if (!token) {
      token = `kubesim-sa-${randomBytes(24).toString('hex')}`;
      this.byUid.set(uid, token);
      this.byToken.set(token, { namespace, name, uid });
    }
    return token;
  }

  authenticate(token: string): Identity | undefined {
    const t = this.byToken.get(token);
    if (!t || this.lookup(t.namespace, t.name)?.metadata.uid !== t.uid) return undefined;
    return {
      user: `system:serviceaccount:${t.namespace}:${t.name}`,
      uid: t.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${t.namespace}`, 'system:authenticated'],
      source: { kind: 'rbac' },
    };
  }
}
