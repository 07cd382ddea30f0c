import { afterEach, describe, expect, it } from 'vitest';
import { SelectorError } from '../../src/controller/controller.js';
import { quietFor, startEnv, type ControllerEnv } from './env.js';

describe('controller: a cost-bomb selector is refused at start', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('stops before registering or writing, naming the costly part', async () => {
    env = await startEnv();
    await env.createEndpoint('http://api.prod');
    const bomb =
      'cel.bind(a, endpoint.metadata + endpoint.metadata, cel.bind(b, a + a, cel.bind(c, b + b, ' +
      "c.split('').map(x, x + c).size() > 0)))";
    const err = await env.startController({ bindings: { endpointSelector: bomb } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SelectorError);
    expect((err as Error).message).toMatch(
      /^bindings\.endpointSelector: invalid endpoint selector: it could take up to/,
    );
    expect((err as Error).message).toContain('the costly part is `map` over up to 32769 elements');
    expect(await quietFor(env.writes, 300)).toBe(0);
    const ops = [];
    for await (const op of env.mock.client.kubernetesOperators.list()) ops.push(op.id);
    expect(ops).toEqual([]);
  });
});
