import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { PodRunner } from '../../src/kubesim/index.js';
import type { RenderedObject } from './chart-render.js';

/**
 * A kubesim PodRunner for the chart's forwarder pods: runs the real `endpoint-binder forwarder`
 * CLI with the container's args and env. What a container runtime and the pod network give a
 * real pod is emulated per pod: each volumeMount becomes a directory of its own holding the
 * ConfigMap's or Secret's keys (emptyDir: empty), paths in the args and in the forwarder config
 * are rewritten to those directories, and the config listens on the pod's own loopback IP
 * (listenHost, http.listen) instead of 0.0.0.0. API access (in-cluster in a real pod) is the
 * kubeconfig given here.
 */

const mountSchema = z.object({ name: z.string(), mountPath: z.string() });
const volumeSchema = z.looseObject({
  name: z.string(),
  configMap: z.looseObject({ name: z.string() }).optional(),
  secret: z
    .looseObject({
      secretName: z.string(),
      items: z.array(z.object({ key: z.string(), path: z.string() })).optional(),
    })
    .optional(),
  emptyDir: z.looseObject({}).optional(),
});
const podSchema = z.looseObject({
  spec: z.looseObject({
    volumes: z.array(volumeSchema).default([]),
    containers: z.array(z.looseObject({ volumeMounts: z.array(mountSchema).default([]) })).min(1),
  }),
});
const dataSchema = z.looseObject({ data: z.record(z.string(), z.string()).default({}) });
const forwarderConfigSchema = z.looseObject({
  http: z.looseObject({ listen: z.string() }).optional(),
  authtokenFile: z.string().optional(),
});

export interface ForwarderPodRunnerOptions {
  /** The rendered ConfigMaps and Secrets the pods mount. */
  objects: readonly RenderedObject[];
  /** Where each pod's volumes are written. */
  dir: string;
  kubeconfig: string;
  /** Called with every started process's exit (code or signal). */
  onExit?: (pod: string, code: number | null, signal: NodeJS.Signals | null) => void;
}

export function forwarderPodRunner(opts: ForwarderPodRunnerOptions): PodRunner {
  const lookup = (kind: string, name: string) => {
    const o = opts.objects.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`pod volume: the rendered chart has no ${kind} ${name}`);
    return dataSchema.parse(o).data;
  };
  return (ctx) => {
    const pod = podSchema.parse(ctx.pod);
    const root = join(opts.dir, ctx.name);
    const mounts = pod.spec.containers[0]?.volumeMounts ?? [];
    const mapPath = (p: string): string => {
      for (const m of mounts) {
        if (p === m.mountPath || p.startsWith(`${m.mountPath}/`))
          return join(root, m.name, p.slice(m.mountPath.length));
      }
      return p;
    };
    for (const m of mounts) {
      const dir = join(root, m.name);
      mkdirSync(dir, { recursive: true });
      const v = pod.spec.volumes.find((x) => x.name === m.name);
      if (v?.configMap) {
        for (const [k, val] of Object.entries(lookup('ConfigMap', v.configMap.name)))
          writeFileSync(join(dir, k), val);
      } else if (v?.secret) {
        const data = lookup('Secret', v.secret.secretName);
        const items = v.secret.items ?? Object.keys(data).map((key) => ({ key, path: key }));
        for (const it of items) writeFileSync(join(dir, it.path), Buffer.from(data[it.key] ?? '', 'base64'));
      }
    }
    const args = (ctx.container.args ?? []).map(mapPath);
    const configAt = args.indexOf('--config');
    const configPath = configAt >= 0 ? args[configAt + 1] : undefined;
    if (configPath) {
      // The pod network: the pod's own IP instead of every address of a shared host.
      const raw = forwarderConfigSchema.parse(parseYaml(readFileSync(configPath, 'utf8')));
      const port = raw.http?.listen.split(':').pop() ?? '8081';
      const cfg = {
        ...raw,
        listenHost: ctx.podIP,
        http: { ...raw.http, listen: `${ctx.podIP}:${port}` },
        ...(raw.authtokenFile ? { authtokenFile: mapPath(raw.authtokenFile) } : {}),
      };
      writeFileSync(configPath, JSON.stringify(cfg));
    }
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args, '--kubeconfig', opts.kubeconfig],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...ctx.container.env },
      },
    );
    child.once('exit', (code, signal) => opts.onExit?.(ctx.name, code, signal));
    return child;
  };
}
