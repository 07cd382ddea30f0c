/**
 * kubesim with process-backed pods in a process of its own, for bench/rolling-restart.ts: the
 * kubelet's probes and the Deployment controller then run on their own event loop, as they do
 * on a real node and control plane, not on the benchmark's (which is busy with its clients).
 *
 * Reads a JSON file named by BENCH_PODS_CONFIG ({ objects, dir, namespaces }), writes
 * `<dir>/kubeconfig`, prints `{"kubesim": url, "token": ...}` once listening, then one line
 * `{"exit": pod, "code", "signal", "at"}` per pod process exit. SIGTERM or SIGINT stops kubesim,
 * which ends every pod process before this one exits.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { startKubesim } from '../../src/kubesim/index.js';
import { renderedObjectSchema } from './chart-render.js';
import { forwarderPodRunner } from './forwarder-pod-runner.js';

const configSchema = z.object({
  objects: z.array(renderedObjectSchema),
  dir: z.string(),
  namespaces: z.array(z.string()),
});

async function main(): Promise<void> {
  const path = process.env['BENCH_PODS_CONFIG'];
  if (!path) throw new Error('BENCH_PODS_CONFIG is not set');
  const cfg = configSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  const kubeconfig = join(cfg.dir, 'kubeconfig');
  const sim = await startKubesim({
    initialNamespaces: cfg.namespaces,
    podStopGraceMs: 2000,
    podRunner: forwarderPodRunner({
      objects: cfg.objects,
      dir: cfg.dir,
      kubeconfig,
      onExit: (pod, code, signal) =>
        process.stdout.write(JSON.stringify({ exit: pod, code, signal, at: Date.now() }) + '\n'),
    }),
  });
  await sim.writeKubeconfig(kubeconfig);
  process.stdout.write(JSON.stringify({ kubesim: sim.url, token: sim.adminToken, kubeconfig }) + '\n');
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void sim.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`kubesim-pods failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
