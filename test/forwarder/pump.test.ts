import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Pump } from '../../src/forwarder/pump.js';

/** A destination that holds every write until `release()` (so its buffer fills up). */
function slowSink(highWaterMark: number) {
  const got: Buffer[] = [];
  const held: (() => void)[] = [];
  const sink = new Writable({
    highWaterMark,
    write(chunk: Buffer, _enc, cb) {
      got.push(chunk);
      held.push(cb);
    },
  });
  const release = () => {
    for (const cb of held.splice(0)) cb();
  };
  return { sink, got, release };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Pump (one direction of a forwarded connection, in place of pipe())', () => {
  it('moves every byte in order, pauses the source while the destination is full and resumes it on drain', async () => {
    const from = new PassThrough();
    const { sink, got, release } = slowSink(4);
    new Pump(from, sink);
    from.write(Buffer.from('abcdef'));
    await tick();
    expect(from.isPaused(), 'paused while the destination is over its high-water mark').toBe(true);
    from.write(Buffer.from('gh'));
    release();
    await tick();
    release();
    await tick();
    expect(from.isPaused(), 'resumed after drain').toBe(false);
    expect(Buffer.concat(got).toString()).toBe('abcdefgh');
  });

  it('waits for drain when the destination is already full at the start, as pipe() does', async () => {
    const from = new PassThrough();
    const { sink, release } = slowSink(2);
    sink.write(Buffer.from('early bytes over the mark'));
    expect(sink.writableNeedDrain).toBe(true);
    new Pump(from, sink);
    expect(from.isPaused(), 'paused until the early bytes drain').toBe(true);
    release();
    await tick();
    expect(from.isPaused(), 'resumed on drain').toBe(false);
  });

  it('moves nothing after stop(): what comes later stays in the source', async () => {
    const from = new PassThrough();
    const to = new PassThrough();
    const pump = new Pump(from, to);
    from.write('one');
    await tick();
    pump.stop();
    from.pause();
    from.write('two');
    await tick();
    expect(String(to.read())).toBe('one');
    expect(String(from.read())).toBe('two');
  });

  it('writes nothing to a destroyed destination and stops', async () => {
    const from = new PassThrough();
    const to = new PassThrough();
    const errors: Error[] = [];
    to.on('error', (e) => errors.push(e));
    new Pump(from, to);
    to.destroy();
    from.write('late');
    await tick();
    expect(errors, `errors on the destination: ${errors.map(String).join(', ')}`).toEqual([]);
    expect(from.listenerCount('data'), 'its data listener is gone').toBe(0);
  });
});
