import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { KubeConfig } from '@kubernetes/client-node';
import { CLI } from '../helpers/cli.js';

/**
 * Plays the kubelet for kubesim, which has no controllers: a pod template from a stored
 * Deployment or Job becomes a local `endpoint-binder` process with what the pod would get —
 * the container's args, its env (values, Secret keys, the downward API's namespace and name),
 * its ConfigMap volumes written to a directory (args pointing into the mount are rewritten), and
 * a kubeconfig with its ServiceAccount's token. `loopbackArgs` adds the flags that keep listeners
 * on 127.0.0.1 with OS-chosen ports (a pod has its own network namespace; processes here do not).
 */

const envVarSchema = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .object({
      fieldRef: z.object({ fieldPath: z.string() }).optional(),
      secretKeyRef: z.object({ name: z.string(), key: z.string() }).optional(),
      configMapKeyRef: z.object({ name: z.string(), key: z.string() }).optional(),
    })
    .optional(),
});
const containerSchema = z.object({
  name: z.string(),
  args: z.array(z.string()).default([]),
  env: z.array(envVarSchema).default([]),
  volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string() })).default([]),
});
export const podTemplateSchema = z.object({
  metadata: z.object({ labels: z.record(z.string(), z.string()).default({}) }).default({ labels: {} }),
  spec: z.object({
    serviceAccountName: z.string().default('default'),
    automountServiceAccountToken: z.boolean().default(true),
    containers: z.array(containerSchema).min(1),
    volumes: z
      .array(
        z.object({
          name: z.string(),
          configMap: z.object({ name: z.string() }).optional(),
          secret: z
            .object({
              secretName: z.string(),
              items: z.array(z.object({ key: z.string(), path: z.string() })).optional(),
            })
            .optional(),
        }),
      )
      .default([]),
  }),
});
export type PodTemplate = z.infer<typeof podTemplateSchema>;

const secretSchema = z.object({ data: z.record(z.string(), z.string()).default({}) });
const configMapSchema = z.object({ data: z.record(z.string(), z.string()).default({}) });

/** Where a pod listens: its pod IP (each pod its own loopback address) and its container ports by name. */
export interface PodPlace {
  ip: string;
  ports: ReadonlyMap<string, number>;
}

export interface PodProcess {
  name: string;
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit (SIGKILL after 20 s). */
  stop(): Promise<void>;
}

/**
 * What running a pod needs from its API server: kubesim and the real control plane
 * (test/helpers/control-plane) both have it.
 */
export interface PodAccess {
  kubeConfig(): KubeConfig;
  writeKubeconfig(path: string, token?: string): Promise<void> | void;
  serviceAccountToken(namespace: string, name: string): string | Promise<string>;
}

export function templateHash(template: unknown): string {
  return createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 10);
}

export async function runPod(
  sim: PodAccess,
  opts: {
    namespace: string;
    name: string;
    template: PodTemplate;
    workDir: string;
    loopbackArgs: (component: string, place?: PodPlace) => string[];
    /** The pod's own address and its named container ports (pods a node agent runs). */
    place?: PodPlace;
  },
): Promise<PodProcess> {
  const { namespace, name, template } = opts;
  const container = template.spec.containers[0]!;
  const dir = join(opts.workDir, name);
  mkdirSync(dir, { recursive: true });
  const core = sim.kubeConfig().makeApiClient((await import('@kubernetes/client-node')).CoreV1Api);

  // ConfigMap and Secret volumes are written to directories; every path into a mount, in the
  // args and in the files written from ConfigMaps (config files name the Secret files), is
  // rewritten to point there.
  const mounts: { mountPath: string; target: string }[] = [];
  const configFiles: string[] = [];
  for (const mount of container.volumeMounts) {
    const volume = template.spec.volumes.find((v) => v.name === mount.name);
    const target = join(dir, 'volumes', mount.name);
    if (volume?.configMap) {
      const cm = configMapSchema.parse(
        await core.readNamespacedConfigMap({ namespace, name: volume.configMap.name }),
      );
      mkdirSync(target, { recursive: true });
      for (const [k, v] of Object.entries(cm.data)) {
        writeFileSync(join(target, k), v);
        configFiles.push(join(target, k));
      }
    } else if (volume?.secret) {
      const secret = secretSchema.parse(
        await core.readNamespacedSecret({ namespace, name: volume.secret.secretName }),
      );
      mkdirSync(target, { recursive: true });
      const items = volume.secret.items ?? Object.keys(secret.data).map((key) => ({ key, path: key }));
      for (const item of items) {
        const b64 = secret.data[item.key];
        if (b64 === undefined)
          throw new Error(`${name}: secret ${volume.secret.secretName} has no key ${item.key}`);
        writeFileSync(join(target, item.path), Buffer.from(b64, 'base64'));
      }
    } else continue;
    mounts.push({ mountPath: mount.mountPath, target });
  }
  const rewrite = (text: string): string =>
    mounts.reduce((t, m) => t.split(`${m.mountPath}/`).join(`${m.target}/`), text);
  const args = container.args.map(rewrite);
  for (const file of configFiles) writeFileSync(file, rewrite(readFileSync(file, 'utf8')));

  const env: Record<string, string> = {};
  for (const e of container.env) {
    if (e.value !== undefined) env[e.name] = e.value;
    const from = e.valueFrom;
    if (from?.fieldRef) {
      const path = from.fieldRef.fieldPath;
      if (path === 'metadata.namespace') env[e.name] = namespace;
      else if (path === 'metadata.name') env[e.name] = name;
      else throw new Error(`${name}: env ${e.name}: fieldRef ${path} is not played here`);
    } else if (from?.secretKeyRef) {
      const ref = from.secretKeyRef;
      const secret = secretSchema.parse(await core.readNamespacedSecret({ namespace, name: ref.name }));
      const b64 = secret.data[ref.key];
      if (b64 === undefined) throw new Error(`${name}: secret ${ref.name} has no key ${ref.key}`);
      env[e.name] = Buffer.from(b64, 'base64').toString('utf8');
    } else if (from?.configMapKeyRef) {
      const ref = from.configMapKeyRef;
      const cm = configMapSchema.parse(await core.readNamespacedConfigMap({ namespace, name: ref.name }));
      env[e.name] = cm.data[ref.key] ?? '';
    }
  }

  // A pod without a token (automountServiceAccountToken: false) gets no kubeconfig either.
  const kubeconfigArgs: string[] = [];
  if (template.spec.automountServiceAccountToken) {
    const kubeconfig = join(dir, 'kubeconfig');
    await sim.writeKubeconfig(
      kubeconfig,
      await sim.serviceAccountToken(namespace, template.spec.serviceAccountName),
    );
    kubeconfigArgs.push('--kubeconfig', kubeconfig);
  }
  const component = args[0] ?? '';
  const child = spawn(
    process.execPath,
    [CLI, ...args, ...kubeconfigArgs, ...opts.loopbackArgs(component, opts.place)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Nothing of the test's environment leaks in that the pod would not have.
      env: { PATH: process.env['PATH'] ?? '', HOME: dir, ...env },
    },
  );
  let out = '';
  const keep = (c: Buffer): void => {
    out += c.toString();
    if (out.length > 4_000_000) out = out.slice(-2_000_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code, signal) => r(code ?? (signal ? 128 : null))),
  );
  return {
    name,
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function podName(owner: string, hash: string): string {
  return `${owner}-${hash.slice(0, 9)}-${randomBytes(3).toString('hex').slice(0, 5)}`;
}
