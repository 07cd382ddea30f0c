import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { DEMO_NAMESPACE, startDemo, type Demo } from '../../src/demo/demo.js';
import { connectTo, roundTrip } from '../forwarder/helpers.js';
import { eventually } from '../controller/env.js';
import { captured } from '../helpers/capture-io.js';
import { budget } from '../helpers/budget.js';

/**
 * `npm start`'s path (#27 item 5, #29 item 4): `status --url <the demo's controller>`, with no
 * other flag, shows the DATA PATH column with what the demo's forwarder observed. Before, the
 * column appeared only with --forwarder-url, which the demo's printed line had to carry.
 */

let demo: Demo;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eb-status-dp-'));
  demo = await startDemo({ kubeconfigPath: join(dir, 'kubeconfig.yaml') });
}, budget(60_000));
afterAll(async () => {
  vi.restoreAllMocks();
  await demo?.stop();
}, budget(30_000));

describe('status against npm start shows the data path without flags', () => {
  it(
    'a TCP exchange through the forwarder appears as ok in the DATA PATH column',
    { timeout: budget(90_000) },
    async () => {
      const ep = await demo.client.endpoints.create({
        url: `tcp://dp.${DEMO_NAMESPACE}:7100`,
        bindings: ['kubernetes'],
        upstream_url: demo.upstreams.tcp,
      });
      const port = await eventually(
        () =>
          demo.controller.status().endpoints.find((e) => e.id === ep.id && e.state === 'projected')
            ?.targetPort,
        'projected',
        30_000,
      );
      await eventually(() => demo.forwarder.boundPorts().includes(port), 'forwarder listens', 30_000);
      const s = await connectTo(port);
      expect(await roundTrip(s, 'hello')).toBe('hello');
      s.destroy();

      let out = '';
      await eventually(
        async () => {
          const io = captured();
          const code = await runCli(['status', '--url', demo.controller.url]);
          vi.restoreAllMocks();
          expect(code, io.err()).toBe(0);
          out = io.out();
          return new RegExp(`${ep.id}\\s.*ok \\d+s ago`).test(out) ? true : undefined;
        },
        'an ok DATA PATH cell',
        20_000,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; last status output:\n${out}`);
      });
      expect(out).toMatch(/REASON\s+DATA PATH/);
      // The one forwarder was read: no "unknown", no "N of M".
      expect(out).toMatch(new RegExp(`${ep.id}\\s.*ok \\d+s ago$`, 'm'));
      expect(out).not.toMatch(/data path: .*unknown/);
    },
  );
});
