#!/usr/bin/env node
import { runCli } from './run.js';
import { guardStdout } from './output.js';

guardStdout();
runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Expected failures are handled (one line) by each command; this is a bug: still one line,
    // the stack only on request.
    const debug = Boolean(process.env['ENDPOINT_BINDER_DEBUG']);
    const text = err instanceof Error ? (debug ? (err.stack ?? err.message) : err.message) : String(err);
    process.stderr.write(
      `endpoint-binder: unexpected error: ${text}${debug ? '' : ' (set ENDPOINT_BINDER_DEBUG=1 to see where)'}\n`,
    );
    process.exitCode = 1;
  },
);
