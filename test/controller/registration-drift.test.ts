import { budget } from '../helpers/budget.js';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogs } from '../helpers/logs.js';
import { eventually, startEnv, type ControllerEnv } from './env.js';

describe('operator record drift', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it(
    'puts a selector, description and features changed on the API back on the next resync, naming each field',
    async () => {
      env = await startEnv();
      const logs = captureLogs('info');
      const ctl = await env.startController({
        logger: logs.logger,
        bindings: { endpointSelector: "endpoint.namespace == 'prod'" },
      });
      await eventually(() => ctl.isLeader(), 'leading');
      const id = await eventually(() => ctl.status().operator?.id, 'registered');
      // Someone edits the record on the API (answered 200).
      await env.mock.client.kubernetesOperators.update(id, {
        binding: { endpoint_selector: 'true' },
        description: 'edited by hand',
        enabled_features: [],
      });
      expect(await ctl.resyncNow()).toBe(true);
      const op = await env.mock.client.kubernetesOperators.get(id);
      expect(op.binding.endpoint_selector).toBe("endpoint.namespace == 'prod'");
      expect(op.description).toBe('endpoint-binder');
      expect(op.enabled_features.map((f) => f.toLowerCase())).toEqual(['bindings']);
      const warned = logs.lines
        .filter(
          (l) => l['msg'] === 'operator record changed on the API; putting it back to the install config',
        )
        .map((l) => l['field']);
      expect(warned.sort()).toEqual(['binding.endpoint_selector', 'description', 'enabled_features']);
    },
    budget(60_000),
  );
});
