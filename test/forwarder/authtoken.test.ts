import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../ingress/helpers.js';
import {
  AUTHTOKEN,
  connectMaybeReset,
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  useEnv,
} from './helpers.js';

/**
 * Token rotation (#15 item 7): the authtoken is a mounted Secret file. A token the ingress refuses
 * (ERR_710) fails every connection, so `/readyz` says so with the reason; a new token written to
 * the file is used for new connections without a restart, and readiness comes back.
 */
describe('forwarder authtoken file', () => {
  const setup = useEnv();

  it('a refused authtoken turns /readyz false with the reason; a rotated file is used without a restart', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://rotate.x:9300', env.echo.upstreamUrl);
    const dir = await mkdtemp(join(tmpdir(), 'fwd-authtoken-'));
    const file = join(dir, 'AUTHTOKEN');
    const revoked = 'revoked_authtoken_0123456789';
    await writeFile(file, `${revoked}\n`);
    const fwd = await env.start({ authtokenFile: file });
    const port = await freePort();
    await createService(env.sim, internalService('ep-rotate', { [port]: 'tcp://rotate.x:9300' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);

    // A client meets the refusal: reset, and the forwarder is unready with the reason.
    const c = connectMaybeReset(port);
    c.write('hello');
    await waitFor(() => !fwd.readiness().ready, 10_000);
    c.destroy();
    const res = await request(`http://${fwd.httpAddress.address}/readyz`);
    expect(res.statusCode).toBe(503);
    const body = (await res.body.json()) as { ready: boolean; reasons: string[] };
    expect(body.ready).toBe(false);
    expect(body.reasons.join('\n')).toMatch(/refuses the authtoken \(ERR_710/);
    expect(logLines(env, 'forwarder authtoken refused')).toHaveLength(1);

    // The Secret is rotated the way the kubelet does it: a new file renamed into place.
    const next = join(dir, 'AUTHTOKEN.new');
    await writeFile(next, AUTHTOKEN);
    await rename(next, file);
    await waitFor(() => logLines(env, 'forwarder authtoken reloaded').length === 1, 10_000);
    await waitFor(() => fwd.readiness().ready, 10_000);
    const s = await connectTo(port);
    expect(await roundTrip(s, 'rotated')).toBe('rotated');
    s.destroy();

    // Neither token is ever logged.
    const text = JSON.stringify(env.logs.lines);
    expect(text).not.toContain(revoked);
    expect(text).not.toContain(AUTHTOKEN);
  });
});
