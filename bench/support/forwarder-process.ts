import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { parseEndpointUrl } from '../../src/binding/endpoint-url.js';
import type { Kubesim } from '../../src/kubesim/index.js';
import { createInternalService } from './internal-service.js';
import { freePorts } from './load.js';
import { spawnJson } from './spawn-json.js';

export interface ForwarderIngress {
  address: string;
  tls: boolean;
  caFile?: string;
  protocol?: 'auto' | 'v1' | 'v2';
  /** v2: the stream window, bytes (default the forwarder's own). */
  streamWindowBytes?: number;
}

/**
 * The real `endpoint-binder forwarder` CLI as its own process, for a release of its own: its
 * internal Service (forwarder port → endpoint URL, for each of `routes`) is written into kubesim
 * as the controller would, then the process is started and awaited until every port is bound.
 * `nodeFlags` go before the script (e.g. `--cpu-prof`).
 */
export async function startForwarderProcess(opts: {
  sim: Pick<Kubesim, 'url' | 'adminToken'>;
  kubeconfig: string;
  dir: string;
  release: string;
  namespace: string;
  authtoken: string;
  ingress: ForwarderIngress;
  routes: ReadonlyArray<readonly [forwarderPort: number, url: string]>;
  nodeFlags?: string[];
  /** More top-level forwarder config (e.g. `dialOn`). */
  config?: Record<string, unknown>;
  /** Runs the CLI of another checkout (a before/after run in one bench). */
  cwd?: string;
  /**
   * The CLI's entry: the sources through tsx (default), or a compiled build such as `dist/cli/main.js`
   * as the image runs it (tsx wraps every named function in `__name`, which costs memory per closure).
   */
  entry?: string;
}): Promise<ChildProcess> {
  const identity = { release: opts.release, operatorNamespace: opts.namespace };
  const groupPorts = opts.routes.map(([forwarderPort, url]) => {
    const parsed = parseEndpointUrl(url);
    if (!parsed.ok) throw new Error(parsed.message);
    return { url: parsed.value, forwarderPort };
  });
  await createInternalService(opts.sim, {
    identity,
    name: `ep-${opts.release}`,
    endpointId: `ep_${opts.release.replaceAll('-', '_')}`,
    groupPorts,
  });
  const config = join(opts.dir, `forwarder-${opts.release}.yaml`);
  // Not port 0: the OS may hand out a route's port, just probed free and closed (load.ts freePorts).
  const [httpPort] = await freePorts(
    1,
    opts.routes.map(([port]) => port),
  );
  await writeFile(
    config,
    JSON.stringify({
      releaseName: opts.release,
      operatorNamespace: opts.namespace,
      listenHost: '127.0.0.1',
      ingress: opts.ingress,
      http: { listen: `127.0.0.1:${httpPort}` },
      // Every idle connection of the bench goes through (the per-port and per-source shares default to 512).
      limits: {
        maxConnections: 20_000,
        maxConnectionsPerPort: 20_000,
        maxIngressConnectionsPerPort: 20_000,
        maxIngressConnectionsPerSource: 20_000,
      },
      drain: { delaySeconds: 0, timeoutSeconds: 1 },
      logLevel: 'info',
      ...opts.config,
    }),
  );
  let bound = 0;
  const fwd = await spawnJson(
    [
      ...(opts.nodeFlags ?? []),
      opts.entry ?? 'src/cli/main.ts',
      'forwarder',
      '--config',
      config,
      '--kubeconfig',
      opts.kubeconfig,
    ],
    { ENDPOINT_BINDER_AUTHTOKEN: opts.authtoken },
    (o) => (o['msg'] === 'forwarder listener bound' && ++bound === opts.routes.length ? true : undefined),
    opts.cwd ? { cwd: opts.cwd } : {},
  );
  return fwd.child;
}
