import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readBenchArgs } from '../../bench/support/args.js';
import { budget } from '../helpers/budget.js';

/** A bad benchmark flag is one human line naming the flag and its rule, exit 2 (issue #20). */

const Args = z.object({
  runs: z.coerce.number().int().min(1).max(50).default(5),
  sizes: z
    .string()
    .default('1,2')
    .transform((s) => s.split(',').map((x) => Number(x)))
    .pipe(z.array(z.number().int().min(1))),
});

describe('bench flags', () => {
  it('parses good flags and applies defaults', () => {
    expect(readBenchArgs(Args, [])).toEqual({ ok: true, value: { runs: 5, sizes: [1, 2] } });
    expect(readBenchArgs(Args, ['--runs', '7', '--sizes=3,4'])).toEqual({
      ok: true,
      value: { runs: 7, sizes: [3, 4] },
    });
  });

  it.each([
    [['--runs', 'x'], '--runs "x": must be a number'],
    [['--runs', '0'], '--runs "0": must be at least 1'],
    [['--runs', '51'], '--runs "51": must be at most 50'],
    [['--runs', '1.5'], '--runs "1.5": must be a whole number'],
    [['--sizes', '1,x'], '--sizes "1,x": must be a number'],
    [['--runs'], '--runs: needs a value'],
    [['--rnus', '3'], 'unknown flag --rnus; the flags are --runs, --sizes'],
    [['3'], 'unexpected argument 3; every value follows its flag (--runs, --sizes)'],
  ])('%j: %s', (argv, line) => {
    expect(readBenchArgs(Args, argv)).toEqual({ ok: false, error: line });
  });

  it(
    'a benchmark run with a bad flag prints one line naming it and exits 2, without a stack',
    { timeout: budget(60_000) },
    async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', resolve('bench/groups.ts'), '--runs', 'x'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err).toBe('bench/groups.ts: --runs "x": must be a number\n');
    },
  );
});
