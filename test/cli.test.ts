import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';

describe('endpoint-binder CLI', () => {
  it('rejects an unknown command with exit code 2', async () => {
    expect(await runCli(['no-such-command'])).toBe(2);
  });
});
