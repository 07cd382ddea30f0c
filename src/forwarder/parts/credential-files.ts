import { readFile } from 'node:fs/promises';
import { parseAuthtoken, type AuthtokenState } from '../authtoken.js';
import { watchFile, type FileWatch } from '../file-watch.js';
import type { ForwarderBase } from './base.js';
import type { IngressTls } from './ingress-tls.js';

/**
 * The authtoken file and the CA bundle (when configured), re-read on change and every `pollMs`:
 * a valid new content replaces the old one, an invalid one is logged and the old one kept.
 */
export async function watchCredentialFiles(
  base: ForwarderBase,
  parts: { authtoken: AuthtokenState; tls: IngressTls; pollMs: number },
): Promise<FileWatch[]> {
  const { config, log, metrics } = base;
  const { authtoken, tls, pollMs } = parts;
  const watches: FileWatch[] = [];
  if (config.authtokenFile) {
    const file = config.authtokenFile;
    watches.push(
      watchFile(file, {
        initial: await readFile(file, 'utf8').catch(() => ''),
        pollMs,
        onChange: (content) => {
          const parsed = parseAuthtoken(content);
          if (!parsed.ok) {
            metrics.authtokenReloads.inc({ result: 'invalid' });
            log.error(
              { file, problem: parsed.message },
              'forwarder authtoken file invalid, keeping the previous one',
            );
            return;
          }
          metrics.authtokenReloads.inc({ result: 'ok' });
          log.info({ file }, 'forwarder authtoken reloaded');
          authtoken.replace(parsed.token);
        },
        onError: (error) => log.warn({ file, error }, 'forwarder authtoken file unreadable'),
      }),
    );
  }
  if (config.ingress.tls && config.ingress.caFile) {
    const file = config.ingress.caFile;
    watches.push(
      watchFile(file, {
        initial: await readFile(file, 'utf8').catch(() => ''),
        pollMs,
        onChange: (content) => tls.reload(file, content),
        onError: (error) => log.warn({ file, error }, 'forwarder CA bundle unreadable'),
      }),
    );
  }
  return watches;
}
