/** The `--ingress-*` flags of `endpoint-binder mock-api`: the binding ingress as a real service. */
import { z } from 'zod';
import type { MockConfigInput } from '../mock/config.js';
import { ADVERTISE_RULE, parseAdvertise } from '../mock/ingress/advertise.js';
import { isLoopbackHost } from '../net/host-port.js';
import { IngressConfigError, loadTlsMaterial } from '../mock/ingress/tls-material.js';
import { UsageError } from './command.js';
import { portFlag, type FlagSpec } from './flags.js';

export const ingressFlagSpec = {
  'ingress-port': { type: 'string' },
  'ingress-host': { type: 'string' },
  'ingress-tls': { type: 'boolean' },
  'ingress-cert': { type: 'string' },
  'ingress-key': { type: 'string' },
  'ingress-advertise': { type: 'string' },
} as const satisfies FlagSpec;

export const ingressFlagSchema = {
  'ingress-port': portFlag.optional(),
  'ingress-host': z.string().min(1, 'must not be empty').optional(),
  'ingress-tls': z.boolean().optional(),
  'ingress-cert': z.string().min(1, 'must not be empty').optional(),
  'ingress-key': z.string().min(1, 'must not be empty').optional(),
  'ingress-advertise': z
    .string()
    .refine((v) => parseAdvertise(v) !== undefined, { message: ADVERTISE_RULE })
    .optional(),
};

export type IngressFlags = z.infer<z.ZodObject<typeof ingressFlagSchema>>;

export const INGRESS_USAGE = `  --ingress-port <n>    Serve the binding ingress on this port; 0 lets the OS choose (off unless
                        given here or as ingress.port in the config)
  --ingress-host <addr> Address the ingress listens on (default 127.0.0.1; plain TCP only on loopback)
  --ingress-tls         TLS with a generated development certificate (names localhost, 127.0.0.1, ::1;
                        its PEM is logged as ca_pem in "binding ingress listening")
  --ingress-cert <file> TLS with this PEM certificate (chain), together with --ingress-key
  --ingress-key <file>  The PEM private key of --ingress-cert
  --ingress-advertise <host[:port]>
                        Address returned to operators at registration (binding.ingress_endpoint),
                        e.g. a Service name in a cluster; without a port, the listen port`;

const OTHER_FLAGS = [
  'ingress-host',
  'ingress-tls',
  'ingress-cert',
  'ingress-key',
  'ingress-advertise',
] as const;

/**
 * Lays the `--ingress-*` flags over the config's `ingress` block (flags win) and checks, before
 * anything listens, what would otherwise only fail at startup: plain TCP off loopback and
 * certificate files that cannot be read or do not match.
 */
export async function withIngressFlags(
  config: MockConfigInput,
  flags: IngressFlags,
): Promise<MockConfigInput> {
  const cert = flags['ingress-cert'];
  const key = flags['ingress-key'];
  if ((cert === undefined) !== (key === undefined)) {
    throw new UsageError(
      `${cert === undefined ? '--ingress-key' : '--ingress-cert'} needs ${cert === undefined ? '--ingress-cert' : '--ingress-key'}`,
    );
  }
  const base = config.ingress ?? {};
  const port = flags['ingress-port'] ?? base.port;
  const unused = OTHER_FLAGS.find((f) => flags[f] !== undefined);
  if (port === undefined && unused) {
    throw new UsageError(
      `--${unused} needs --ingress-port (or ingress.port in the config file): the ingress is off without it`,
    );
  }
  let tls = base.tls;
  if (cert !== undefined && key !== undefined) tls = { cert_file: cert, key_file: key };
  else if (flags['ingress-tls'] && (tls === undefined || tls === false)) tls = true;
  const ingress = {
    ...base,
    ...(port !== undefined ? { port } : {}),
    ...(flags['ingress-host'] !== undefined ? { host: flags['ingress-host'] } : {}),
    ...(flags['ingress-advertise'] !== undefined ? { advertise: flags['ingress-advertise'] } : {}),
    ...(tls !== undefined ? { tls } : {}),
  };
  if (port !== undefined) {
    const host = ingress.host ?? '127.0.0.1';
    if ((ingress.tls ?? false) === false && !isLoopbackHost(host)) {
      throw new UsageError(
        `--ingress-host ${host}: without TLS the ingress listens only on a loopback address; ` +
          'add --ingress-tls or --ingress-cert/--ingress-key',
      );
    }
    try {
      await loadTlsMaterial(ingress.tls ?? false);
    } catch (err) {
      if (err instanceof IngressConfigError) throw new UsageError(err.message);
      throw err;
    }
  }
  return { ...config, ingress };
}
