/**
 * What a client of the binding ingress needs besides its address: the TLS options (CA file, server
 * name) and the agent authtoken, read from the forwarder's config exactly once per caller. The
 * forwarder and `endpoint-binder check` both use these, so `check` dials the ingress the way the
 * forwarder does.
 */
import { readFile } from 'node:fs/promises';
import type { IngressTlsOptions } from '../api/ingress/dialer.js';
import { reusableTls } from '../api/ingress/tls-client.js';
import { parseAuthtoken } from './authtoken.js';
import type { ForwarderConfig } from './config.js';

/** A configuration problem found while starting (unreadable CA or authtoken file): names the field. */
export class ForwarderConfigError extends Error {
  override readonly name = 'ForwarderConfigError';
}

/**
 * A URL the ingress cannot serve (port 0 breaks the URL rules): any answer but ERR_710 means the
 * token was accepted.
 */
export const TOKEN_CHECK_URL = 'tcp://authtoken-check.endpoint-binder:0';

/** The PEM of `ingress.caFile`, or undefined without one. */
export async function readIngressCa(config: Pick<ForwarderConfig, 'ingress'>): Promise<string | undefined> {
  const { caFile } = config.ingress;
  if (!caFile) return undefined;
  let ca: string;
  try {
    ca = await readFile(caFile, 'utf8');
  } catch (err) {
    throw new ForwarderConfigError(
      `ingress.caFile: cannot read ${caFile}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ForwarderConfigError(`ingress.caFile: ${caFile} holds no PEM certificate`);
  }
  return ca;
}

/** The dialer's TLS options for `ingress.*`; undefined for plain TCP (`ingress.tls: false`). */
export function ingressTlsFor(
  config: Pick<ForwarderConfig, 'ingress'>,
  ca: string | undefined,
): IngressTlsOptions | undefined {
  if (!config.ingress.tls) return undefined;
  return reusableTls({
    ...(ca ? { ca } : {}),
    ...(config.ingress.serverName ? { servername: config.ingress.serverName } : {}),
  });
}

/** The authtoken from `authtokenFile`, else the one the environment gave (`fromEnv`). */
export async function readAuthtoken(
  config: Pick<ForwarderConfig, 'authtokenFile'>,
  fromEnv: string | undefined,
): Promise<string> {
  if (!config.authtokenFile) {
    if (fromEnv === undefined)
      throw new ForwarderConfigError('authtokenFile: not set, and no authtoken in ENDPOINT_BINDER_AUTHTOKEN');
    return fromEnv;
  }
  let raw: string;
  try {
    raw = await readFile(config.authtokenFile, 'utf8');
  } catch (err) {
    throw new ForwarderConfigError(
      `authtokenFile: cannot read ${config.authtokenFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  const parsed = parseAuthtoken(raw);
  if (!parsed.ok) throw new ForwarderConfigError(`authtokenFile: ${config.authtokenFile} ${parsed.message}`);
  return parsed.token;
}
