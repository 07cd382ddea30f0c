/**
 * The named test users the real-API-server tier's control plane knows (static tokens), with
 * their groups. kubesim gets the same names through its own tokens (test/helpers/api-server.ts).
 */
export const REAL_CLUSTER_USERS: Record<string, string[]> = {
  alice: ['system:authenticated', 'team-a'],
  bob: ['system:authenticated', 'team-b'],
  tenant: ['system:authenticated'],
};
