import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveForwarderConfig } from '../../src/cli/forwarder-command.js';
import { runCli } from '../../src/cli/run.js';
import { waitFor } from '../ingress/helpers.js';
import {
  AUTHTOKEN,
  NS,
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  roundTrip,
  useEnv,
} from './helpers.js';
import { CLI } from '../helpers/cli.js';
import { budget } from '../helpers/budget.js';

async function tempFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fwd-cli-'));
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** Runs the CLI in-process, capturing what it prints. */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((err += String(c)), true));
  try {
    return { code: await runCli(argv), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('endpoint-binder forwarder: configuration', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('documents every config field in --help', async () => {
    const r = await cli(['forwarder', '--help']);
    expect(r.code).toBe(0);
    for (const field of [
      'releaseName',
      'operatorNamespace',
      'listenHost',
      'ingress.address',
      'ingress.tls',
      'ingress.caFile',
      'ingress.serverName',
      'limits.maxConnections',
      'limits.maxConnectionsPerPort',
      'limits.dialTimeoutMs',
      'limits.idleTimeoutMs',
      'limits.prefaceTimeoutMs',
      'drain.delaySeconds',
      'drain.timeoutSeconds',
      'http.listen',
      'logLevel',
      'ENDPOINT_BINDER_AUTHTOKEN',
    ]) {
      expect(r.out).toContain(field);
    }
  });

  it('exits 2 naming every bad field of the config file', async () => {
    const path = await tempFile(
      'bad.yaml',
      'releaseName: eb\noperatorNamespace: Not_A_Namespace\nlimits:\n  maxConnections: 0\ndrain:\n  delaySecs: 3\nauthtoken: sneaky\n',
    );
    const r = await cli(['forwarder', '--config', path]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('operatorNamespace: ');
    expect(r.err).toContain('--operator-namespace');
    expect(r.err).toContain('limits.maxConnections: ');
    expect(r.err).toContain('drain: ');
    expect(r.err).toContain('delaySecs');
    expect(r.err).toContain('authtoken');
    expect(r.err).not.toContain('sneaky');
  });

  it('exits 2 on a bad flag value, a missing authtoken, and an unreadable CA file', async () => {
    vi.stubEnv('ENDPOINT_BINDER_AUTHTOKEN', '');
    const flagErr = await cli([
      'forwarder',
      '--release-name',
      'eb',
      '--operator-namespace',
      'x',
      '--ingress-tls',
      'maybe',
    ]);
    expect(flagErr.code).toBe(2);
    expect(flagErr.err).toContain('--ingress-tls: must be true or false');
    const noToken = await cli(['forwarder', '--release-name', 'eb', '--operator-namespace', 'x']);
    expect(noToken.code).toBe(2);
    expect(noToken.err).toContain('ENDPOINT_BINDER_AUTHTOKEN: must be set');
    expect(await cli(['forwarder', '--authtoken', 'x'])).toMatchObject({ code: 2 });
  });

  it('layers file, flags (which win) and the POD_NAMESPACE default', async () => {
    const path = await tempFile(
      'ok.yaml',
      'releaseName: from-file\ningress:\n  tls: true\n  serverName: ingress.example\n',
    );
    const c = await resolveForwarderConfig(
      { config: path, 'release-name': 'from-flag', 'ingress-address': '127.0.0.1:9', 'ingress-tls': false },
      { POD_NAMESPACE: 'ops' },
    );
    expect(c.releaseName).toBe('from-flag');
    expect(c.operatorNamespace).toBe('ops');
    expect(c.ingress).toMatchObject({ address: '127.0.0.1:9', tls: false, serverName: 'ingress.example' });
    await expect(resolveForwarderConfig({ 'release-name': 'eb' }, {})).rejects.toThrow(
      /operatorNamespace: .*--operator-namespace/,
    );
  });
});

describe('endpoint-binder forwarder: the process', () => {
  const setup = useEnv();

  it(
    'forwards, and on SIGTERM drains and exits 0 without ever printing the authtoken',
    { timeout: budget(150_000) },
    async () => {
      const env = await setup();
      await endpoint(env, 'tcp://cli.x:9100', env.echo.upstreamUrl);
      const port = await freePort();
      await createService(env.sim, internalService('ep-cli', { [port]: 'tcp://cli.x:9100' }));
      const kubeconfig = await tempFile('kubeconfig', '');
      await env.sim.writeKubeconfig(kubeconfig);
      const config = await tempFile(
        'forwarder.yaml',
        [
          'releaseName: eb',
          `operatorNamespace: ${NS}`,
          'listenHost: 127.0.0.1',
          'ingress:',
          '  tls: false',
          'http:',
          '  listen: 127.0.0.1:0',
          'drain:',
          '  delaySeconds: 0.5',
          '  timeoutSeconds: 5',
          'logLevel: debug',
        ].join('\n'),
      );
      const child = spawn(
        process.execPath,
        [CLI, 'forwarder', '--config', config, '--kubeconfig', kubeconfig],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ENDPOINT_BINDER_AUTHTOKEN: AUTHTOKEN } },
      );
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        // Generous: tsx compiles the sources at start-up, which takes long on a loaded machine.
        await waitFor(() => out.includes('"forwarder listener bound"'), 90_000);
        const started = out
          .split('\n')
          .filter((l) => l.includes('"forwarder started"'))
          .map((l) => JSON.parse(l) as { http: string })[0]!;
        const ready = await request(`http://${started.http}/readyz`);
        expect(ready.statusCode).toBe(200);
        await ready.body.text();
        const s = await connectTo(port);
        expect(await roundTrip(s, 'through the cli')).toBe('through the cli');
        s.end();
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        child.kill('SIGKILL');
      }
      const msgs = out
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(msgs).toEqual(
        expect.arrayContaining(['forwarder received signal', 'forwarder shutting down', 'forwarder stopped']),
      );
      expect(msgs.indexOf('forwarder stopped')).toBeGreaterThan(msgs.indexOf('forwarder shutting down'));
      expect(out + err).not.toContain(AUTHTOKEN);
    },
  );
});
