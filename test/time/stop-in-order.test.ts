import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stopInOrder, throwIfStepFailed } from '../../src/time/stop-in-order.js';
import { CONTROLLER_STOP_ORDER } from '../../src/controller/controller.js';
import { FORWARDER_STOP_ORDER } from '../../src/forwarder/forwarder.js';

describe('stopInOrder', () => {
  it('runs the steps in the declared order, each after the previous one settled', async () => {
    const seen: string[] = [];
    const report = await stopInOrder(['a', 'b', 'c'] as const, {
      c: () => seen.push('c'),
      a: async () => {
        await new Promise((r) => setTimeout(r, 5));
        seen.push('a');
      },
      b: () => seen.push('b'),
    });
    expect(seen, 'the order the steps ran in').toEqual(['a', 'b', 'c']);
    expect(report).toEqual({ ran: ['a', 'b', 'c'], errors: [] });
  });

  it('a failing step (thrown or rejected) does not stop the later ones', async () => {
    const seen: string[] = [];
    const report = await stopInOrder(['flush', 'release', 'close'] as const, {
      flush: () => {
        throw new Error('disk full');
      },
      release: () => Promise.reject(new Error('lease gone')),
      close: () => seen.push('close'),
    });
    expect(seen, 'the step after two failures still ran').toEqual(['close']);
    expect(report.ran).toEqual(['flush', 'release', 'close']);
    expect(report.errors.map((e) => [e.step, e.error.message])).toEqual([
      ['flush', 'disk full'],
      ['release', 'lease gone'],
    ]);
  });

  it('throwIfStepFailed names every failed step and why; silent when none failed', async () => {
    const report = await stopInOrder(['x', 'y'] as const, {
      x: () => Promise.reject(new Error('boom')),
      y: () => {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- what a careless step may do
        throw 'not an Error';
      },
    });
    expect(() => throwIfStepFailed(report)).toThrow('stop steps failed: x: boom; y: not an Error');
    expect(() => throwIfStepFailed({ ran: ['x'], errors: [] })).not.toThrow();
  });
});

/** The backticked step names of the numbered list under `heading` in a doc. */
function documentedOrder(doc: string, heading: string): string[] {
  const text = readFileSync(new URL(`../../docs/${doc}`, import.meta.url), 'utf8');
  const start = text.indexOf(`${heading}\n`);
  expect(start, `${doc} has no "${heading}" section`).toBeGreaterThanOrEqual(0);
  const section = text.slice(start).split(/\n#/)[0] ?? '';
  return [...section.matchAll(/^\d+\. `([^`]+)`:/gm)].map((m) => m[1] ?? '');
}

describe('the roots declare the documented stop order', () => {
  it('controller: CONTROLLER_STOP_ORDER equals docs/controller.md "Stop order"', () => {
    expect(documentedOrder('controller.md', '## Stop order')).toEqual([...CONTROLLER_STOP_ORDER]);
  });

  it('forwarder: FORWARDER_STOP_ORDER equals docs/forwarder.md "Stop order"', () => {
    expect(documentedOrder('forwarder.md', '### Stop order')).toEqual([...FORWARDER_STOP_ORDER]);
  });
});
