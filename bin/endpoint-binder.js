#!/usr/bin/env node
// `npx endpoint-binder` / `npm exec endpoint-binder` from a clone after `npm ci` (no build): the
// TypeScript sources run through tsx (a dev dependency). A built install without sources runs dist/.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);

let tsx;
if (existsSync(fileURLToPath(source))) {
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    tsx = undefined;
  }
}
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  process.stderr.write(
    'endpoint-binder: neither the sources with tsx (run `npm ci`) nor dist/ (run `npm run build`) found\n',
  );
  process.exitCode = 1;
}
