/**
 * The forwarder's configuration: the YAML file (camelCase), overlaid with flags and environment
 * defaults by the CLI, then validated here as a whole so every bad field is reported at once.
 */
import { z } from 'zod';
import { DEFAULT_SHARED_WINDOW, DEFAULT_STREAM_WINDOW } from '../api/ingress/v2-protocol.js';
import { hostPortProblem, isLoopbackHost, parseHostPort, tryParseHostPort } from '../net/host-port.js';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `host:port` where the port may be 0 (the OS chooses; for tests). */
const listenAddress = z.string().superRefine((s, ctx) => {
  const problem = hostPortProblem(s, { allowZero: true, allowEmptyHost: true });
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const ingressAddress = z
  .string()
  .refine((s) => tryParseHostPort(s) !== undefined, 'must be host:port (IPv6 in brackets), port 1–65535');

const positiveMs = z.number().int().min(1).max(86_400_000);
const port = z.number().int().min(1).max(65535);

/**
 * When to open the ingress connection for a client that has sent nothing yet: `data` waits for
 * its first byte (client-speaks-first protocols: no ingress slot is held for a silent client);
 * `accept` dials at once (server-speaks-first protocols such as SMTP, MySQL, SSH), within
 * `limits.maxSilentDialsPerPort`.
 */
export const DialTrigger = z.enum(['data', 'accept']);
export type DialTrigger = z.infer<typeof DialTrigger>;

/**
 * Binding ingress protocol: `auto` speaks v2 (HTTP/2 streams on a few shared sessions) when the
 * ingress offers it and v1 (one connection per client) when it does not; `v1` and `v2` force one.
 */
export const IngressProtocolSetting = z.enum(['auto', 'v1', 'v2']);
export type IngressProtocolSetting = z.infer<typeof IngressProtocolSetting>;

export const ForwarderConfig = z
  .strictObject({
    /** The Helm release name: half of the install identity. */
    releaseName: z
      .string()
      .max(53)
      .regex(dnsLabel, 'must be a DNS-1123 label (lower case letters, digits, "-"), at most 53 characters'),
    /** The operator namespace (the forwarder's own): the other half. */
    operatorNamespace: z
      .string()
      .max(63)
      .regex(dnsLabel, 'must be a DNS-1123 label (lower case letters, digits, "-"), at most 63 characters'),
    /** Address the allocated ports listen on. */
    listenHost: z.string().min(1).default('0.0.0.0'),
    /**
     * The agent authtoken as a file (a mounted Secret key), re-read when it changes. Without it the
     * authtoken comes from the environment variable ENDPOINT_BINDER_AUTHTOKEN, read once.
     */
    authtokenFile: z.string().min(1).optional(),
    /** The allocated ports (the chart's `bindings.portRange`): a port outside it is never bound. */
    portRange: z
      .strictObject({ min: port.default(1024), max: port.default(65535) })
      .prefault({})
      .refine((r) => r.min <= r.max, { message: 'min must not be larger than max' }),
    /** Per URL scheme: dial the ingress on the client's first byte (`data`) or at accept (`accept`). */
    dialOn: z
      .strictObject({ http: DialTrigger.default('data'), tcp: DialTrigger.default('accept') })
      .prefault({}),
    ingress: z
      .strictObject({
        /**
         * The binding ingress `host:port`. Without it, the address comes from the install record
         * (the ConfigMap `<release>-install` that only the controller writes).
         */
        address: ingressAddress.optional(),
        tls: z.boolean().default(true),
        /** PEM bundle of the CAs to trust instead of the system's. */
        caFile: z.string().min(1).optional(),
        /** SNI and the name the certificate must carry; default the address's host. */
        serverName: z.string().min(1).max(253).optional(),
        /** v2 when the ingress offers it (`auto`), or forced (`v1`, `v2`); see docs/ingress.md. */
        protocol: IngressProtocolSetting.default('auto'),
        /** v2: HTTP/2 sessions kept to the ingress; streams spread over them (more open when all are full). */
        sessions: z.number().int().min(1).max(64).default(2),
        /**
         * v2: download flow-control window per stream, bytes, at least: what each stream of a
         * session carrying many may have in flight (so at most this per round trip), and what a
         * client that stops reading can then leave buffered here.
         */
        streamWindowBytes: z
          .number()
          .int()
          .min(65_535)
          .max(2 ** 31 - 1)
          .default(DEFAULT_STREAM_WINDOW),
        /**
         * v2: download window a session's streams share above streamWindowBytes (window-share.ts):
         * one stream alone gets all of it, n streams 1/n each (in powers of two), never below
         * streamWindowBytes; at or below streamWindowBytes, no sharing. Streams that all stopped
         * reading pin at most pinnedAtMost() per session (56 MiB for 32 at the defaults).
         */
        sharedWindowBytes: z
          .number()
          .int()
          .min(0)
          .max(2 ** 30)
          .default(DEFAULT_SHARED_WINDOW),
      })
      .prefault({}),
    limits: z
      .strictObject({
        maxConnections: z.number().int().min(1).max(1_000_000).default(10_000),
        maxConnectionsPerPort: z.number().int().min(1).max(1_000_000).default(2_000),
        /**
         * Per port: clients of a `dialOn: accept` scheme that hold an ingress connection without
         * having sent a byte. Beyond it a new client waits for its first byte, so silent clients
         * of one port cannot take the ingress's slots from every other port.
         */
        maxSilentDialsPerPort: z.number().int().min(0).max(1_000_000).default(32),
        /**
         * Ingress handshakes (TCP, TLS, preface) running at once, all ports, at most; the rest
         * wait their turn, round-robin over the ports. A turn ends once the preface is sent, not
         * when the ingress has reached the upstream. The window starts at 64 and follows the
         * round trip up to this (dial-window.ts), halving (down to 1) when the ingress has too many
         * from us: it learns the ingress's per-source handshake budget.
         */
        maxConcurrentDials: z.number().int().min(1).max(100_000).default(1024),
        /**
         * Ingress connections one port (endpoint URL) holds at once, from its turn to its end;
         * its further clients wait (within prefaceTimeoutMs). Keep it below the ingress's own
         * connection budget divided by the forwarder replicas, so one endpoint cannot take all.
         */
        maxIngressConnectionsPerPort: z.number().int().min(1).max(1_000_000).default(512),
        /** Ingress connections the clients of one source address hold at once, all ports together. */
        maxIngressConnectionsPerSource: z.number().int().min(1).max(1_000_000).default(512),
        /** Ingress attempts per client connection, the first included. */
        maxDialAttempts: z.number().int().min(1).max(100).default(6),
        /** Kernel accept queue of each allocated port (capped by net.core.somaxconn). */
        acceptBacklog: z.number().int().min(1).max(65535).default(4096),
        /**
         * One ingress attempt: connect + TLS handshake + the ingress's reply to the preface. Above
         * the ingress's own budget for reaching the upstream (5 s: docs/ingress.md
         * `dial_timeout_ms`), so an upstream that never accepts is told as the ingress's verdict
         * (ERR_731) rather than as our own "no reply" (ERR_791).
         */
        dialTimeoutMs: positiveMs.default(8_000),
        /** No byte in either direction for this long closes both sides (a silent client, too). */
        idleTimeoutMs: positiveMs.default(300_000),
        /** From the start of the dial until the ingress said `ok`, retries included; then the client is reset. */
        prefaceTimeoutMs: positiveMs.default(10_000),
      })
      .prefault({}),
    drain: z
      .strictObject({
        /** After SIGTERM: unready at once, but keep accepting this long. */
        delaySeconds: z.number().min(0).max(3600).default(5),
        /** Then stop accepting and give open connections this long before closing them. */
        timeoutSeconds: z.number().min(0).max(3600).default(25),
      })
      .prefault({}),
    http: z.strictObject({ listen: listenAddress.default('0.0.0.0:8081') }).prefault({}),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((cfg, ctx) => {
    const addr = cfg.ingress.address ? tryParseHostPort(cfg.ingress.address) : undefined;
    if (addr && !cfg.ingress.tls && !isLoopbackHost(addr.host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ingress', 'tls'],
        message: `may be false only for a loopback ingress address, not "${cfg.ingress.address}"`,
      });
    }
    if (cfg.limits.maxConnectionsPerPort > cfg.limits.maxConnections) {
      ctx.addIssue({
        code: 'custom',
        path: ['limits', 'maxConnectionsPerPort'],
        message: 'must not be larger than limits.maxConnections',
      });
    }
  });

export type ForwarderConfig = z.infer<typeof ForwarderConfig>;
export type ForwarderConfigInput = z.input<typeof ForwarderConfig>;

/** Splits a listen address `host:port` (validated by the schema). */
export function splitListen(address: string): { host: string; port: number } {
  const hp = parseHostPort(address, { allowZero: true, allowEmptyHost: true });
  return { host: hp.host || '0.0.0.0', port: hp.port };
}
