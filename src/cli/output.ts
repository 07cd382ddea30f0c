/**
 * Machine and report output goes to stdout; logs go to stderr. A reader that goes away early
 * (`endpoint-binder status | head -1`) closes the pipe: that is a normal end, not an error, so
 * EPIPE is swallowed here and in `main.ts` instead of surfacing as a stack trace.
 */

let stdoutClosed = false;

/** True once stdout's reader has gone away; later output is dropped. */
export function stdoutIsClosed(): boolean {
  return stdoutClosed;
}

export function isBrokenPipe(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED')
  );
}

/** Installs the EPIPE handler on stdout once (the CLI's entry point calls it). */
export function guardStdout(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err) => {
    if (isBrokenPipe(err)) {
      stdoutClosed = true;
      return;
    }
    throw err;
  });
}

/** Writes to stdout and waits for the pipe to take it (back-pressure), tolerating a closed reader. */
export async function writeOut(text: string): Promise<void> {
  if (stdoutClosed) return;
  const out = process.stdout;
  let ok: boolean;
  try {
    ok = out.write(text);
  } catch (err) {
    if (isBrokenPipe(err)) {
      stdoutClosed = true;
      return;
    }
    throw err;
  }
  if (ok) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('error', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('error', done);
    out.on('close', done);
  });
}
