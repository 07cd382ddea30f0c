import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/controller.js';
import { captureLogs } from '../helpers/logs.js';
import { eventually, startEnv, type ControllerEnv } from './env.js';

const DISTRUST =
  "internal Service carries this install's labels but the install record does not list it; claims no port, left alone";

/**
 * Issue #30 item 5: the install record lists a bounded number of internal Services. Beyond it an
 * endpoint is `record-full` (no Service is created that the record could not prove after a
 * restart), and it is projected once room is made; a restart distrusts nothing.
 */
describe('controller: a full install record creates nothing it cannot list', () => {
  let env: ControllerEnv;
  let ctl: Controller;
  const ids: string[] = [];
  const stateOf = (c: Controller, id: string) => c.status().endpoints.find((e) => e.id === id)?.state;

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    ctl = await env.startController({ identity: 'a', recordCapacity: 3 });
    for (let i = 0; i < 5; i++) {
      ids.push((await env.createEndpoint(`http://svc-${i}.prod`)).id);
      // One at a time: the oldest three take the room.
      await eventually(
        () => stateOf(ctl, ids[i]!) !== undefined && stateOf(ctl, ids[i]!) !== 'pending',
        `svc-${i} decided`,
      );
    }
  });
  afterAll(async () => {
    await env?.close();
  });

  it('the endpoints beyond the record are record-full with the reason, and have no Service', async () => {
    await eventually(
      () => (ctl.status().counts['projected'] === 3 && ctl.status().counts['record-full'] === 2) || undefined,
      '3 projected, 2 record-full',
    );
    const full = ctl.status().endpoints.filter((e) => e.state === 'record-full');
    expect(full[0]?.reason).toMatch(/the install record lists at most 3 internal Services and is full/);
    for (const e of full) {
      expect(await env.internalOf(e.id)).toBeUndefined();
      expect(await env.service('prod', e.url.slice('http://'.length).split('.')[0]!)).toBeUndefined();
    }
  });

  it('room made by a deleted endpoint goes to a waiting one; a restart distrusts nothing', async () => {
    const projected = ctl.status().endpoints.filter((e) => e.state === 'projected');
    await env.mock.client.endpoints.delete(projected[0]!.id);
    await eventually(
      () => (ctl.status().counts['projected'] === 3 && ctl.status().counts['record-full'] === 1) || undefined,
      'a waiting endpoint projected',
    );
    await ctl.stop();
    const logs = captureLogs('info');
    const next = await env.startController({ identity: 'b', recordCapacity: 3, logger: logs.logger });
    await eventually(() => (next.isLeader() && next.isReady()) || undefined, 'restarted');
    await eventually(
      () =>
        (next.status().counts['projected'] === 3 && next.status().counts['record-full'] === 1) || undefined,
      'the same states after the restart',
    );
    expect(logs.lines.filter((l) => l['msg'] === DISTRUST).map((l) => l['service'])).toEqual([]);
    expect(next.status().counts['unproven'] ?? 0).toBe(0);
  });
});
