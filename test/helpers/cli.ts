import { fileURLToPath } from 'node:url';

/**
 * How tests start the endpoint-binder CLI as a child process: `node <CLI> <args>`, the launcher
 * `npx endpoint-binder` runs (bin/endpoint-binder.js). It runs the compiled dist/ when that is at
 * least as new as every source (`npm ci` builds it), so a child starts in well under a second
 * instead of compiling the sources first; after an edit it runs the sources through tsx, so a
 * stale build never answers a test. Waits on the child still go through ./budget.ts.
 */
export const CLI = fileURLToPath(new URL('../../bin/endpoint-binder.js', import.meta.url));
