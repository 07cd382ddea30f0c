#!/usr/bin/env node
// `npx endpoint-binder` / `npm exec endpoint-binder` from a clone after `npm ci`: the `prepare`
// script has compiled src/ to dist/, which runs with plain node (no compile per call). When a
// source file is newer than dist/ (an edit or a pull since the last build) the sources run through
// tsx (a dev dependency) instead, so a stale build never answers; `npm run build` makes it fast
// again. A built install without sources (the image) runs dist/.
import { existsSync, readdirSync, statSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = fileURLToPath(new URL('../src', import.meta.url));
const source = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);

/** The newest modification time (ms) of the TypeScript sources and the build's settings. */
function newestSourceMs() {
  let newest = 0;
  for (const name of readdirSync(sourceDir, { recursive: true })) {
    if (typeof name !== 'string' || !name.endsWith('.ts')) continue;
    newest = Math.max(newest, statSync(`${sourceDir}/${name}`).mtimeMs);
  }
  for (const file of ['tsconfig.json', 'tsconfig.build.json'])
    if (existsSync(`${root}/${file}`)) newest = Math.max(newest, statSync(`${root}/${file}`).mtimeMs);
  return newest;
}

const haveSources = existsSync(fileURLToPath(source));
const haveBuild = existsSync(fileURLToPath(built));
const buildIsFresh =
  haveBuild && (!haveSources || statSync(fileURLToPath(built)).mtimeMs >= newestSourceMs());

let tsx;
if (haveSources && !buildIsFresh) {
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    tsx = undefined;
  }
}
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (haveBuild) {
  await import(built.href);
} else {
  process.stderr.write(
    'endpoint-binder: neither dist/ (run `npm run build`) nor the sources with tsx (run `npm ci`) found\n',
  );
  process.exitCode = 1;
}
