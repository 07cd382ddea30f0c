import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/api/ingress/cancel.js';

describe('Cancellation', () => {
  it('calls each listener added before abort() once, and none that was removed or added after', () => {
    const c = new Cancellation();
    const calls: string[] = [];
    const a = () => calls.push('a');
    const b = () => calls.push('b');
    c.addEventListener('abort', a);
    c.addEventListener('abort', b);
    c.removeEventListener('abort', b);
    expect(c.aborted).toBe(false);
    c.abort();
    c.abort();
    c.addEventListener('abort', () => calls.push('late'));
    expect(c.aborted).toBe(true);
    expect(calls).toEqual(['a']);
  });

  it('toAbortSignal follows it, also when it was aborted already', () => {
    const c = new Cancellation();
    const s = c.toAbortSignal();
    expect(s.aborted).toBe(false);
    c.abort();
    expect(s.aborted).toBe(true);
    expect(c.toAbortSignal().aborted).toBe(true);
  });
});
