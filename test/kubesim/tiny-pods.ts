import { spawn, type ChildProcess } from 'node:child_process';
import type { PodRunner } from '../../src/kubesim/index.js';

/**
 * A tiny process per pod for kubesim's process-backed workloads: an HTTP server on the pod IP
 * (answers /readyz, and its own pod name on /). Environment switches in the pod template make a
 * pod never ready (NEVER_READY), ignore SIGTERM (IGNORE_TERM) or exit some time after it
 * (TERM_DELAY_MS).
 */

const POD_SERVER = `
const http = require('node:http');
let ready = process.env.NEVER_READY !== '1';
http.createServer((req, res) => {
  if (req.url === '/readyz') res.statusCode = ready ? 200 : 503;
  res.end(process.env.POD_NAME || '');
}).listen(Number(process.env.PORT), process.env.POD_IP);
process.on('SIGTERM', () => {
  if (process.env.IGNORE_TERM === '1') return;
  ready = false;
  setTimeout(() => process.exit(0), Number(process.env.TERM_DELAY_MS || 0));
});
`;
export const PORT = 18080;

export interface Started {
  pod: string;
  ip: string;
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function tinyRunner(): { runner: PodRunner; started: Started[] } {
  const started: Started[] = [];
  const runner: PodRunner = (ctx) => {
    const child = spawn(process.execPath, ['-e', POD_SERVER], {
      env: {
        ...ctx.container.env,
        POD_IP: ctx.podIP,
        PORT: String(ctx.container.ports[0]?.containerPort ?? PORT),
      },
      stdio: 'ignore',
    });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.once('exit', (code, signal) => r({ code, signal })),
    );
    started.push({ pod: ctx.name, ip: ctx.podIP, child, exit });
    return child;
  };
  return { runner, started };
}

export function deployment(
  name: string,
  over: {
    replicas?: number;
    env?: Record<string, string>;
    grace?: number;
    minReady?: number;
    strategy?: unknown;
  } = {},
) {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: over.replicas ?? 2,
      minReadySeconds: over.minReady ?? 0,
      selector: { matchLabels: labels },
      strategy: over.strategy ?? { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: over.grace ?? 5,
          containers: [
            {
              name: 'web',
              image: 'tiny',
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                ...Object.entries(over.env ?? {}).map(([k, v]) => ({ name: k, value: v })),
              ],
              ports: [{ name: 'http', containerPort: PORT }],
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' },
                periodSeconds: 1,
                failureThreshold: 1,
              },
            },
          ],
        },
      },
    },
  };
}
