/**
 * TLS connection rate of the forwarder before #15 against the forwarder now, in one run: both
 * real `endpoint-binder forwarder` processes (the old one spawned from an older checkout of this
 * repository) dial the SAME TLS mock ingress for the same echo upstream, and the same client load
 * (`--concurrency` at a time, connect + 1-byte echo + close) is put on each in alternating pairs,
 * so a load swing on a shared machine hits both alike. Prints each side's connections/s and CPU
 * per connection, the medians, every pair's ratio and the load average with every figure.
 *
 *   git worktree add /tmp/before 53265ec   # the forwarder before #15 (node_modules: a symlink)
 *   npx tsx bench/datapath-tls-before.ts --before /tmp/before [--conns 2000 --concurrency 32 --pairs 3 --ingress tls|plain]
 *
 * The minimal relay (`bench/datapath-roles.ts relay`, the ceiling for a Node process doing the
 * same hop; over TLS with a cached context and resumption) takes its turn in every round too.
 * `--ingress plain` runs the same over plain TCP: any two versions of the forwarder, e.g. a
 * change to its per-connection path against the commit before it.
 *
 * The old forwarder took the ingress address from an annotation on the internal Service, or from
 * `ingress.address` in its config (used here); its config shape is otherwise the same as now for
 * the fields set here. Loopback only; bounded in counts and time.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseEndpointUrl } from '../src/binding/endpoint-url.js';
import { startKubesim } from '../src/kubesim/index.js';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { createInternalService } from './support/internal-service.js';
import { bounded, connectionRate, cpuSeconds, freePort, loadAverage, median } from './support/load.js';
import { children, spawnJson } from './support/spawn-json.js';

const Args = z.object({
  before: z.string().min(1),
  conns: z.coerce.number().int().min(100).max(100_000).default(2000),
  concurrency: z.coerce.number().int().min(1).max(256).default(32),
  pairs: z.coerce.number().int().min(1).max(20).default(3),
  ingress: z.enum(['tls', 'plain']).default('tls'),
});
const args = parseBenchArgs('bench/datapath-tls-before.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const NS = 'endpoint-binder';
const ECHO_URL = 'tcp://echo.bench:7000';

function log(line: string): void {
  process.stdout.write(line + '\n');
}
const fmt = (n: number, digits = 0): string => n.toFixed(digits);

type Side = 'relay' | 'before' | 'after';
const SIDES: readonly Side[] = ['relay', 'before', 'after'];

async function main(): Promise<void> {
  const beforeCli = join(args.before, 'src/cli/main.ts');
  if (!existsSync(beforeCli)) {
    process.stderr.write(
      `bench/datapath-tls-before.ts: --before ${args.before}: no src/cli/main.ts there; give the path of a checkout of the forwarder before #15 (e.g. git worktree add /tmp/before 53265ec)\n`,
    );
    process.exitCode = 2;
    return;
  }
  const tls = args.ingress === 'tls';
  log(
    `datapath ${tls ? 'TLS' : 'plain TCP'} before/after: node ${process.version}, ${args.conns} connections x${args.concurrency} per side per pair, ${args.pairs} pairs; before = ${args.before}; load average ${await loadAverage()}`,
  );
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? { echo: o['echo'] } : undefined,
  );
  const ing = await spawnJson(
    ['bench/datapath-roles.ts', tls ? 'ingress-tls' : 'ingress'],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string'
        ? { api: o['api'] as string, ingress: o['ingress'], ca: typeof o['ca'] === 'string' ? o['ca'] : '' }
        : undefined,
  );
  await createTcpEndpoint(ing.value.api, API_KEY, ECHO_URL, up.value.echo);

  const dir = await mkdtemp(join(tmpdir(), 'datapath-tls-before-'));
  const caFile = join(dir, 'ingress-ca.pem');
  await writeFile(caFile, ing.value.ca);
  const sim = await startKubesim({ initialNamespaces: ['default', NS] });
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  const echoUrl = parseEndpointUrl(ECHO_URL);
  if (!echoUrl.ok) throw new Error(echoUrl.message);

  // One install per side (its own release name, internal Service and port), one ingress for both.
  const sides = {} as Record<Side, { port: number; pid: number; exited: () => boolean }>;
  for (const side of ['before', 'after'] as const) {
    const identity = { release: `bench-${side}`, operatorNamespace: NS };
    const port = await freePort();
    await createInternalService(sim, {
      identity,
      name: `ep-${side}`,
      endpointId: `ep_${side}`,
      groupPorts: [{ url: echoUrl.value, forwarderPort: port }],
    });
    const config = join(dir, `forwarder-${side}.yaml`);
    await writeFile(
      config,
      JSON.stringify({
        releaseName: identity.release,
        operatorNamespace: NS,
        listenHost: '127.0.0.1',
        ingress: tls
          ? { tls: true, address: ing.value.ingress, caFile }
          : { tls: false, address: ing.value.ingress },
        http: { listen: '127.0.0.1:0' },
        limits: { maxConnections: 20_000, maxConnectionsPerPort: 20_000 },
        drain: { delaySeconds: 0, timeoutSeconds: 1 },
        logLevel: 'info',
      }),
    );
    const cli = side === 'before' ? beforeCli : 'src/cli/main.ts';
    const fwd = await spawnJson(
      [cli, 'forwarder', '--config', config, '--kubeconfig', kubeconfig],
      { ENDPOINT_BINDER_AUTHTOKEN: AUTHTOKEN },
      (o) => (o['msg'] === 'forwarder listener bound' ? true : undefined),
      side === 'before' ? { cwd: args.before } : {},
    );
    let exited = false;
    fwd.child.once('exit', () => (exited = true));
    sides[side] = { port, pid: fwd.child.pid!, exited: () => exited };
  }

  const relay = await spawnJson(
    ['bench/datapath-roles.ts', 'relay', ing.value.ingress, ECHO_URL, tls ? 'tls-cached' : 'plain', caFile],
    {},
    (o) => (typeof o['relay'] === 'number' ? o['relay'] : undefined),
  );
  sides.relay = { port: relay.value, pid: relay.child.pid!, exited: () => false };
  for (const side of SIDES)
    await bounded(`warm-up ${side}`, connectionRate(sides[side].port, 200, args.concurrency));

  const rates: Record<Side, number[]> = { relay: [], before: [], after: [] };
  const cpu: Record<Side, number> = { relay: 0, before: 0, after: 0 };
  for (let i = 0; i < args.pairs; i++) {
    // The order rotates too, so no side always runs right after another.
    const order = [...SIDES.slice(i % 3), ...SIDES.slice(0, i % 3)];
    for (const side of order) {
      const s = sides[side];
      const c0 = await cpuSeconds(s.pid);
      let rate: number;
      try {
        rate = await bounded(`${args.ingress} ${side}`, connectionRate(s.port, args.conns, args.concurrency));
      } catch (err) {
        const why = s.exited() ? 'the forwarder process exited' : String(err);
        throw new Error(`pair ${i + 1}, forwarder ${side}: ${why}`, { cause: err });
      }
      const spent = (await cpuSeconds(s.pid)) - c0;
      cpu[side] += spent;
      rates[side].push(rate);
      log(
        `  pair ${i + 1} ${side.padEnd(6)} ${fmt(rate)}/s  CPU ${fmt((spent / args.conns) * 1e6)} us per connection  (load average ${await loadAverage()})`,
      );
    }
  }
  const m = { before: median(rates.before), after: median(rates.after) };
  const perConn = (side: Side) => (cpu[side] / (args.conns * args.pairs)) * 1e6;
  const name = tls ? 'TLS connections' : 'plain connections';
  const relayRate = median(rates.relay);
  const pairRatios = rates.after.map((a, i) => fmt(a / rates.before[i]!, 2)).join(' ');
  log(
    `${name} forwarder before: ${fmt(m.before)}/s; now ${fmt(m.after)}/s  ratio ${fmt(m.after / m.before, 2)}x (${tls ? 'target >= 2x against the forwarder before #15; ' : ''}medians of ${args.pairs} alternating pairs of ${args.conns}, pair ratios ${pairRatios}; load average ${await loadAverage()})`,
  );
  log(
    `  forwarder CPU per connection: before ${fmt(perConn('before'))} us; now ${fmt(perConn('after'))} us  ratio ${fmt(perConn('before') / perConn('after'), 2)}x (before / now)`,
  );
  log(
    `  relay ${fmt(relayRate)}/s, CPU ${fmt(perConn('relay'))} us per connection: forwarder now ${fmt(m.after / relayRate, 2)}x the relay's rate (target >= 0.9x), before ${fmt(m.before / relayRate, 2)}x; CPU relay / forwarder now ${fmt(perConn('relay') / perConn('after'), 2)}, before ${fmt(perConn('relay') / perConn('before'), 2)}`,
  );
  await sim.stop();
}

main()
  .catch((err: unknown) => {
    process.stderr.write(
      `datapath TLS before/after bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGKILL');
  });
