import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { devCertificate } from '../../src/net/dev-cert.js';
import { waitFor } from '../ingress/helpers.js';
import { metricValue } from '../kube/helpers.js';
import { api } from '../kubesim/helpers.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  NS,
  PROTOCOLS,
  roundTrip,
  useEnv,
  writeInstallRecord,
  type Env,
} from './helpers.js';

/** A server of someone who rewrote the install record: counts connections and the bytes they sent. */
interface Thief {
  address: string;
  connections: number;
  received: string;
  close(): Promise<void>;
}

async function listenThief(server: Server, thief: Omit<Thief, 'address' | 'close'>): Promise<Thief> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(thief, {
    address: `127.0.0.2:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

async function plainThief(): Promise<Thief> {
  const t = { connections: 0, received: '' };
  const server = createTcpServer((s) => {
    t.connections++;
    s.on('data', (c: Buffer) => (t.received += c.toString()));
    s.on('error', () => undefined);
  });
  return listenThief(server, t);
}

/** A TLS server whose certificate (for 127.0.0.2) the forwarder trusts, as a public CA would be. */
async function tlsThief(): Promise<Thief & { certPem: string }> {
  const selfsigned = (await import('selfsigned')).default;
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'thief' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.2' }] }],
  });
  const t = { connections: 0, received: '' };
  const server = createTlsServer({ key: pems.private, cert: pems.cert }, (s) => {
    t.connections++;
    s.on('data', (c: Buffer) => (t.received += c.toString()));
    s.on('error', () => undefined);
  });
  server.on('tlsClientError', () => undefined);
  return Object.assign(await listenThief(server, t), { certPem: pems.cert });
}

/** A CA file trusting the mock's development certificate and `other` (as a public CA would be). */
async function trusting(other: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fwd-pin-'));
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, `${(await devCertificate()).cert}\n${other}`);
  return caFile;
}

async function servedPort(env: Env): Promise<number> {
  await endpoint(env, 'tcp://pin.x:7600', env.echo.upstreamUrl);
  const port = await freePort();
  await createService(env.sim, internalService('ep-pin', { [port]: 'tcp://pin.x:7600' }));
  return port;
}

async function refusedEvents(env: Env): Promise<string[]> {
  const r = await api(env.sim, 'GET', `/api/v1/namespaces/${NS}/events`);
  const items = (r.body as { items?: { reason?: string; message?: string }[] }).items ?? [];
  return items.filter((e) => e.reason === 'IngressRecordRefused').map((e) => e.message ?? '');
}

/**
 * The install record decides nothing about where the authtoken goes (#27 item 3). Whoever may
 * update ConfigMaps in the operator namespace rewrites `<release>-install`'s ingress-address to a
 * server of their own; the forwarder refuses the record (a warning, a gauge, an Event on the
 * ConfigMap) and keeps serving clients through the ingress it was pinned to. Before, the next
 * preface, authtoken included, went to the new address.
 */
describe.each(PROTOCOLS)('forwarder ingress identity (%s)', (protocol) => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanup.splice(0).map((f) => f()));
  });

  async function rewriteAndServe(env: Env, port: number, thief: Thief, fwdRegistry: () => Promise<number>) {
    await writeInstallRecord(env.sim, { ingressAddress: thief.address, operatorId: 'k8sop_test' });
    await waitFor(() => logLines(env, 'forwarder install record names another ingress').length > 0, 10_000);
    const client = await connectTo(port);
    expect(await roundTrip(client, 'still ours')).toBe('still ours');
    client.destroy();
    expect({ connections: thief.connections, received: thief.received }).toEqual({
      connections: 0,
      received: '',
    });
    expect(await fwdRegistry()).toBe(1);
    await waitFor(async () => (await refusedEvents(env)).length > 0, 10_000);
    expect((await refusedEvents(env))[0]).toContain(thief.address);
  }

  describe('plain TCP, pinned by the first record', () => {
    const setup = useEnv({ protocol });
    it('refuses a record naming another host and keeps serving through the first', async () => {
      const env = await setup();
      const thief = await plainThief();
      cleanup.push(() => thief.close());
      const port = await servedPort(env);
      const fwd = await env.start();
      await waitFor(() => fwd.boundPorts().includes(port) && fwd.ingress().address === env.ingress, 10_000);
      await rewriteAndServe(env, port, thief, () =>
        metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_record_refused'),
      );
      expect(fwd.ingress().address).toBe(env.ingress);
    });
  });

  describe('plain TCP, pinned by ingress.address', () => {
    const setup = useEnv({ protocol });
    it('refuses a record naming another address', async () => {
      const env = await setup();
      const thief = await plainThief();
      cleanup.push(() => thief.close());
      const port = await servedPort(env);
      const fwd = await env.start({ ingress: { address: env.ingress, tls: false } });
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      await rewriteAndServe(env, port, thief, () =>
        metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_record_refused'),
      );
    });
  });

  describe('TLS, pinned by the first record', () => {
    const setup = useEnv({ ingressTls: true, protocol });
    it('refuses a record naming another host, even one whose certificate is trusted', async () => {
      const env = await setup();
      const thief = await tlsThief();
      cleanup.push(() => thief.close());
      const caFile = await trusting(thief.certPem);
      const port = await servedPort(env);
      const fwd = await env.start({ ingress: { tls: true, caFile } });
      await waitFor(() => fwd.boundPorts().includes(port) && fwd.ingress().address === env.ingress, 10_000);
      const first = await connectTo(port);
      expect(await roundTrip(first, 'before')).toBe('before');
      first.destroy();
      await rewriteAndServe(env, port, thief, () =>
        metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_record_refused'),
      );
    });
  });

  describe('TLS, pinned by ingress.serverName', () => {
    const setup = useEnv({ ingressTls: true, protocol });
    it('follows a moved record only to a server that proves the pinned name: the thief gets no byte', async () => {
      const env = await setup();
      const thief = await tlsThief();
      cleanup.push(() => thief.close());
      const caFile = await trusting(thief.certPem);
      const port = await servedPort(env);
      const fwd = await env.start({ ingress: { tls: true, caFile, serverName: 'localhost' } });
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      await writeInstallRecord(env.sim, { ingressAddress: thief.address, operatorId: 'k8sop_test' });
      await waitFor(() => fwd.ingress().address === thief.address, 10_000);
      const client = await connectTo(port);
      client.write('secret?');
      await waitFor(
        async () =>
          (await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_refusals_total', {
            code: 'ERR_795',
          })) > 0,
        10_000,
      );
      client.destroy();
      expect(thief.received).toBe('');
    });
  });
});
