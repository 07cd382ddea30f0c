import { readFileSync } from 'node:fs';

/**
 * The build's version: package.json's, read at start (two levels up from src/cli/ and from
 * dist/cli/, and /app/package.json in the image). Not imported from the controller: that module
 * pulls in the Kubernetes client, and `--version` must answer at once. A test keeps it equal to
 * the version the controller registers with.
 */
function packageVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const version =
      typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const VERSION = packageVersion();
