import { vi } from 'vitest';

/** Captures what a CLI command writes to stdout and stderr (restore with `vi.restoreAllMocks()`). */
export function captured(): { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation(
    (c: string | Uint8Array) => (out.push(String(c)), true),
  );
  vi.spyOn(process.stderr, 'write').mockImplementation(
    (c: string | Uint8Array) => (err.push(String(c)), true),
  );
  return { out: () => out.join(''), err: () => err.join('') };
}
