import { afterEach, describe, expect, it } from 'vitest';
import { captureLogs } from '../helpers/logs.js';
import { eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

const msgIndex = (lines: Record<string, unknown>[], match: (l: Record<string, unknown>) => boolean): number =>
  lines.findIndex(match);

describe("controller: a new leader's own listing", () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('a start over a changed account lists for its deletes after the first sync, then deletes what is gone', async () => {
    env = await startEnv();
    const first = await env.startController();
    await env.createEndpoint('http://a.prod');
    const gone = await env.createEndpoint('http://b.prod');
    await eventually(() => env!.service('prod', 'b'), 'b projected');
    await eventually(() => first.isReady(), 'first ready');
    const goneInternal = await eventually(() => env!.internalOf(gone.id), 'b internal');
    await first.stop();

    // While no controller runs, b is deleted and c created.
    await env.mock.client.endpoints.delete(gone.id);
    await env.createEndpoint('http://c.prod');
    const logs = captureLogs('info');
    await env.startController({ logger: logs.logger });
    await eventually(() => env!.service('prod', 'c'), 'c projected');
    await eventually(
      async () =>
        !(await env!.service('prod', 'b')) &&
        !(await env!.service(goneInternal.metadata.namespace!, goneInternal.metadata.name)),
      'b removed',
    );

    const firstSync = msgIndex(logs.lines, (l) => l['msg'] === 'first complete sync applied');
    const leading = msgIndex(
      logs.lines,
      (l) => l['msg'] === 'endpoint listing complete' && l['reason'] === 'leading',
    );
    const firstDelete = msgIndex(logs.lines, (l) => l['msg'] === 'service deleted');
    expect(firstSync).toBeGreaterThanOrEqual(0);
    expect(leading).toBeGreaterThan(firstSync);
    expect(firstDelete).toBeGreaterThan(leading);
  });

  it('a resync of unchanged endpoints runs no pass and writes nothing', async () => {
    env = await startEnv();
    const ctl = await env.startController();
    for (const url of ['http://a.prod', 'http://b.prod', 'tcp://c.prod:5432']) await env.createEndpoint(url);
    await eventually(() => ctl.isReady() && ctl.status().counts['projected'] === 3, 'projected');
    // The new leader's own listing and the pass after the writes have run.
    expect(await quietFor(env.writes, 500)).toBe(0);
    const passes = ctl.passCount();
    env.writes.reset();
    expect(await ctl.resyncNow()).toBe(true);
    expect(await quietFor(env.writes, 300)).toBe(0);
    expect(ctl.passCount()).toBe(passes);
  });
});
