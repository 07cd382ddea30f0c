import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PodRunContext, PodRunner } from './runner.js';

/**
 * The PodRunner behind `endpoint-binder kubesim --workloads`: a pod whose container runs the
 * endpoint-binder image becomes a local `endpoint-binder <args>` process. What the container
 * runtime and the pod network would give it is emulated per pod, under `<dir>/<namespace>/<pod>/`:
 * each volume is a directory holding its files (paths into a mount are rewritten in the args and
 * in the files written from ConfigMaps), the ServiceAccount token is a kubeconfig (KUBECONFIG)
 * for the simulator, and listeners move from every address (0.0.0.0) to the pod's own loopback
 * IP. Each pod's output is kept in `<dir>/<namespace>/<pod>/log`.
 */

export interface CliPodRunnerOptions {
  /** The command that runs the endpoint-binder CLI, e.g. [node, bin/endpoint-binder.js]. */
  cli: readonly string[];
  dir: string;
  /** The simulator's URL and CA (known once it listens, hence functions). */
  server: () => { url: string; caPem?: string };
}

/** The CLI's commands: a container whose first argument is none of them is not ours to run. */
const COMMANDS = new Set(['controller', 'forwarder', 'check', 'status', 'uninstall', 'selector']);

/** A kubeconfig for one ServiceAccount token (what in-cluster config gives a real pod). */
export function podKubeconfig(server: { url: string; caPem?: string }, token: string): string {
  const cluster = server.caPem
    ? { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') }
    : { server: server.url };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kubesim', cluster }],
    users: [{ name: 'pod', user: { token } }],
    contexts: [{ name: 'pod', context: { cluster: 'kubesim', user: 'pod' } }],
    'current-context': 'pod',
  });
}

/**
 * Rewrites every path into a mount to the directory that holds it here (one pass, longest mount
 * first, so a rewritten path is never rewritten again), and 0.0.0.0 to the pod IP. Pure.
 */
export function podText(
  text: string,
  mounts: readonly { mountPath: string; target: string }[],
  podIP: string,
): string {
  const sorted = [...mounts].sort((a, b) => b.mountPath.length - a.mountPath.length);
  const escape = (p: string) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const moved = sorted.length
    ? text.replace(
        new RegExp(
          `(?<![\\w./-])(${sorted.map((m) => escape(m.mountPath.replace(/\/$/, ''))).join('|')})(?=/|$|\\s|["'])`,
          'gm',
        ),
        (path) => sorted.find((m) => m.mountPath.replace(/\/$/, '') === path)?.target ?? path,
      )
    : text;
  return moved.split('0.0.0.0:').join(`${podIP}:`);
}

export function cliPodRunner(opts: CliPodRunnerOptions): PodRunner {
  return (ctx: PodRunContext) => {
    const args = ctx.container.args ?? [];
    if (ctx.container.command?.length || !COMMANDS.has(args[0] ?? ''))
      throw new Error(
        `kubesim --workloads runs only endpoint-binder containers (args starting with a command such as controller); this one has ${JSON.stringify(ctx.container.command ?? args)}`,
      );
    const dir = join(opts.dir, ctx.namespace, ctx.name);
    mkdirSync(dir, { recursive: true });
    const mounts = ctx.volumes.map((v) => ({ mountPath: v.mountPath, target: join(dir, 'volumes', v.name) }));
    ctx.volumes.forEach((v, i) => {
      const target = mounts[i]!.target;
      mkdirSync(target, { recursive: true });
      for (const [name, bytes] of Object.entries(v.files)) {
        const looksLikeText = !bytes.includes(0);
        writeFileSync(
          join(target, name),
          looksLikeText ? podText(bytes.toString('utf8'), mounts, ctx.podIP) : bytes,
        );
      }
    });
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', HOME: dir, ...ctx.container.env };
    if (ctx.serviceAccountToken !== undefined) {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, podKubeconfig(opts.server(), ctx.serviceAccountToken), { mode: 0o600 });
      env['KUBECONFIG'] = kubeconfig;
    }
    const podArgs = args.map((a) => podText(a, mounts, ctx.podIP));
    if (podArgs[0] === 'forwarder') podArgs.push('--listen-host', ctx.podIP);
    const [cmd, ...prefix] = opts.cli;
    const child = spawn(cmd!, [...prefix, ...podArgs], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(join(dir, 'log'), { flags: 'a' });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once('exit', () => setImmediate(() => log.end()));
    return child;
  };
}
