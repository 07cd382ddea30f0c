import { internalService } from '../../src/binding/services.js';
import type { InstallIdentity } from '../../src/binding/identity.js';
import type { GroupPort } from '../../src/binding/services.js';
import type { Kubesim } from '../../src/kubesim/index.js';

/**
 * Writes a projected internal Service into kubesim as the controller would, so a forwarder
 * benchmark needs no controller: the forwarder listens on `groupPorts`.
 */
export async function createInternalService(
  sim: Pick<Kubesim, 'url' | 'adminToken'>,
  opts: { identity: InstallIdentity; name: string; endpointId: string; groupPorts: GroupPort[] },
): Promise<void> {
  const first = opts.groupPorts[0];
  if (!first) throw new Error(`${opts.name}: no ports`);
  const svc = internalService({
    name: opts.name,
    endpointId: opts.endpointId,
    url: first.url,
    state: 'projected',
    reason: '',
    groupPorts: opts.groupPorts,
    config: {
      identity: opts.identity,
      clusterDomain: 'cluster.local',
      portRange: { min: 1024, max: 65535 },
      serviceLabels: {},
      serviceAnnotations: {},
    },
  });
  const made = await fetch(`${sim.url}/api/v1/namespaces/${opts.identity.operatorNamespace}/services`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sim.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(svc),
  });
  if (made.status !== 201)
    throw new Error(`create Service ${opts.name}: ${made.status} ${await made.text()}`);
}
