import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectThroughIngress } from '../src/api/ingress/dialer.js';
import { runCli } from '../src/cli/run.js';
import { readAll, startEcho } from './ingress/helpers.js';
import { captured } from './helpers/capture-io.js';
import { devCertificateFiles } from './helpers/cert-files.js';
import { CLI } from './helpers/cli.js';
import { budget } from './helpers/budget.js';

const API_KEY = 'cli-ingress-key-1';
const AUTHTOKEN = 'cli-ingress-token-1';

afterEach(() => {
  vi.restoreAllMocks();
});

/** `endpoint-binder mock-api` as a child process, with its JSON log lines readable by `msg`. */
function startMockApiProcess(args: string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [CLI, 'mock-api', '--port', '0', ...args],
    { stdio: 'pipe' },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const line = (msg: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const find = () =>
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l['msg'] === msg);
      const timer = setTimeout(() => reject(new Error(`no "${msg}" line in: ${out}`)), budget(30_000));
      const check = () => {
        const found = find();
        if (!found) return;
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(found);
      };
      child.stdout.on('data', check);
      check();
    });
  const stop = () =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { child, line, stop, output: () => out };
}

async function api(base: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await request(base + path, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'service-version': '2',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, any> };
}

/** Registers an operator, creates an endpoint to a loopback echo, and carries bytes through the advertised ingress. */
async function roundTripThroughAdvertised(url: string, tls?: { ca: string }) {
  const op = await api(url, 'POST', '/kubernetes_operators', {
    deployment: { name: 'eb', namespace: 'binder' },
  });
  expect(op.status).toBe(201);
  const advertised = String(op.json['binding']['ingress_endpoint']);
  const echo = await startEcho();
  try {
    const ep = await api(url, 'POST', '/endpoints', {
      url: 'tcp://echo.cli:7000',
      bindings: ['kubernetes'],
      upstream_url: echo.upstreamUrl,
    });
    expect(ep.status).toBe(201);
    const sock = await connectThroughIngress({
      address: advertised,
      authtoken: AUTHTOKEN,
      url: 'tcp://echo.cli:7000',
      ...(tls ? { tls } : {}),
      timeoutMs: 20_000,
    });
    const all = readAll(sock, 20_000);
    sock.end('through the mock-api process');
    expect((await all).toString()).toBe('through the mock-api process');
  } finally {
    await echo.close();
  }
  return advertised;
}

describe('endpoint-binder mock-api with its binding ingress', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let cert: string;

  beforeAll(async () => {
    ({ dir, cert, certFile, keyFile } = await devCertificateFiles('eb-cli-ingress-'));
  });

  it(
    'serves the ingress over TLS from --ingress-* flags and advertises --ingress-advertise',
    { timeout: budget(60_000) },
    async () => {
      const p = startMockApiProcess([
        '--api-key',
        API_KEY,
        '--authtoken',
        AUTHTOKEN,
        '--ingress-port',
        '0',
        '--ingress-cert',
        certFile,
        '--ingress-key',
        keyFile,
        '--ingress-advertise',
        'localhost',
      ]);
      try {
        const { url } = (await p.line('mock api listening')) as { url: string };
        const ingress = await p.line('binding ingress listening');
        expect(ingress).toMatchObject({ tls: true, component: 'ingress' });
        const port = String(ingress['address']).split(':').at(-1);
        expect(ingress['advertise']).toBe(`localhost:${port}`);
        expect(await roundTripThroughAdvertised(url, { ca: cert })).toBe(`localhost:${port}`);
      } finally {
        expect(await p.stop()).toBe(0);
      }
      expect(p.output()).not.toContain(AUTHTOKEN);
    },
  );

  it(
    'takes the same settings from the config file (plain TCP on loopback)',
    { timeout: budget(60_000) },
    async () => {
      const config = join(dir, 'mock.yaml');
      writeFileSync(
        config,
        [
          'accounts:',
          `  - { id: acme, api_keys: [${API_KEY}], authtokens: [${AUTHTOKEN}] }`,
          'ingress: { port: 0, host: 127.0.0.1, advertise: localhost, max_handshakes: 32, max_handshakes_per_source: 8 }',
        ].join('\n'),
      );
      const p = startMockApiProcess(['--config', config]);
      try {
        const { url } = (await p.line('mock api listening')) as { url: string };
        const ingress = await p.line('binding ingress listening');
        expect(ingress).toMatchObject({ tls: false });
        const port = String(ingress['address']).split(':').at(-1);
        expect(await roundTripThroughAdvertised(url)).toBe(`localhost:${port}`);
      } finally {
        expect(await p.stop()).toBe(0);
      }
    },
  );

  it('documents every ingress flag in --help', async () => {
    const io = captured();
    expect(await runCli(['mock-api', '--help'])).toBe(0);
    for (const flag of [
      '--ingress-port',
      '--ingress-host',
      '--ingress-tls',
      '--ingress-cert',
      '--ingress-key',
      '--ingress-advertise',
    ]) {
      expect(io.out()).toContain(flag);
    }
  });

  it.each([
    [['--ingress-cert', 'a.crt'], '--ingress-cert needs --ingress-key'],
    [['--ingress-tls'], '--ingress-tls needs --ingress-port'],
    [['--ingress-port', '99999'], '--ingress-port'],
    [['--ingress-port', '0', '--ingress-host', '0.0.0.0'], 'only on a loopback address'],
    [['--ingress-port', '0', '--ingress-advertise', 'not a host'], '--ingress-advertise: must be host:port'],
    [
      [
        '--ingress-port',
        '0',
        '--ingress-cert',
        '/nonexistent/eb.crt',
        '--ingress-key',
        '/nonexistent/eb.key',
      ],
      '/nonexistent/eb.crt',
    ],
  ])('refuses %j with a usage error naming the problem', async (args, message) => {
    const io = captured();
    expect(await runCli(['mock-api', ...args])).toBe(2);
    expect(io.err()).toContain(message);
  });
});
