import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { servedKinds } from '../../src/kubesim/index.js';
import { CLI } from '../helpers/cli.js';
import { budget } from '../helpers/budget.js';

describe('endpoint-binder kubesim', () => {
  it('prints help and rejects bad flags with exit code 2', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await runCli(['kubesim', '--help'])).toBe(0);
      const help = String(out.mock.calls[0]?.[0]);
      expect(help).toContain('--kubeconfig <path>');
      // Every kind the registry serves is listed, generated from it.
      const kinds = servedKinds();
      expect(kinds.map((k) => k.kind)).toEqual(
        expect.arrayContaining([
          'Service',
          'ValidatingAdmissionPolicy',
          'SelfSubjectAccessReview',
          'Deployment',
        ]),
      );
      for (const k of kinds)
        expect(help).toMatch(
          new RegExp(`^  ${k.resource.replace(/[()+]/g, '\\$&')}\\s+${k.apiVersion}\\s+${k.kind}\\s`, 'm'),
        );
      expect(await runCli(['kubesim', '--port', 'http'])).toBe(2);
      expect(await runCli(['kubesim', '--nope'])).toBe(2);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  });

  it(
    'serves until SIGTERM and writes a kubeconfig client-node can use',
    { timeout: budget(90_000) },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'kubesim-cli-'));
      const path = join(dir, 'kubeconfig');
      const child = spawn(process.execPath, [CLI, 'kubesim', '--kubeconfig', path, '--token', 'cli-token'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        const line = await new Promise<string>((resolve, reject) => {
          let buf = '';
          // tsx compiles the whole CLI first: slow on a loaded 2-core machine.
          const timer = setTimeout(() => reject(new Error(`no log line: ${buf}`)), budget(60_000));
          child.stdout.setEncoding('utf8');
          child.stdout.on('data', (c: string) => {
            buf += c;
            const nl = buf.indexOf('\n');
            if (nl >= 0) {
              clearTimeout(timer);
              resolve(buf.slice(0, nl));
            }
          });
          child.on('exit', (code) => reject(new Error(`exited early with ${code}`)));
        });
        const log = JSON.parse(line);
        expect(log.msg).toBe('kubesim listening');
        expect(log.kubeconfig).toBe(path);
        expect(log.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(await readFile(path, 'utf8')).toContain('insecure-skip-tls-verify: true');
        const kc = new KubeConfig();
        kc.loadFromFile(path);
        const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
        expect(ns.items.map((n) => n.metadata?.name)).toEqual(['default', 'kube-system']);
        const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
