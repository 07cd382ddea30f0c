import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ID_PREFIX, hasIdPrefix, type IdPrefix } from '../api/ids.js';
import { ADVERTISE_RULE, parseAdvertise } from './ingress/advertise.js';

function idsOf(prefix: IdPrefix) {
  return z.array(
    z.string().refine((v) => hasIdPrefix(v, prefix), { message: `must be an id starting with "${prefix}"` }),
  );
}

const secret = z
  .string()
  .min(8, 'must be at least 8 characters')
  .regex(/^\S+$/, 'must not contain white space');

export const AccountConfig = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be 1-63 lower-case letters, digits, "-" or "_"'),
  name: z.string().optional(),
  api_keys: z.array(secret).min(1, 'an account needs at least one API key'),
  authtokens: z.array(secret).default([]),
  /**
   * Backends and certificate authorities are resources of the real service that this mock does
   * not serve; routes and edges may only reference the ids an account is given here (or through
   * the admin interface).
   */
  backends: idsOf(ID_PREFIX.backend).default([]),
  certificate_authorities: idsOf(ID_PREFIX.certificateAuthority).default([]),
});
export type AccountConfig = z.infer<typeof AccountConfig>;

const IngressConfig = z
  .strictObject({
    /** Listen address; default 127.0.0.1. */
    host: z.string().min(1).optional(),
    /** Listen port (0: the OS chooses). When set, `mock-api` serves the ingress. */
    port: z.number().int().min(0).max(65535).optional(),
    /** `host[:port]` returned to operators at registration; default: the listen address. */
    advertise: z
      .string()
      .refine((v) => parseAdvertise(v) !== undefined, { message: ADVERTISE_RULE })
      .optional(),
    /**
     * `true`: TLS with a generated development certificate; `{cert_file, key_file}`: PEM files.
     * Plain TCP (`false`) is only allowed on loopback.
     */
    tls: z
      .union([z.boolean(), z.strictObject({ cert_file: z.string().min(1), key_file: z.string().min(1) })])
      .default(false),
    /** Authenticated connections at once. */
    max_connections: z.number().int().min(1).default(1024),
    /**
     * Of those, for one endpoint URL of one account (ERR_744 beyond): one endpoint's clients
     * cannot take every slot. Default half of max_connections.
     */
    max_connections_per_url: z.number().int().min(1).optional(),
    /** Connections in their TLS handshake or before a valid preface, at once. */
    max_handshakes: z.number().int().min(1).default(256),
    /** Of those, from one source address; default 64, or max_handshakes when that is smaller. */
    max_handshakes_per_source: z.number().int().min(1).optional(),
    idle_timeout_ms: z.number().int().min(100).default(300_000),
    /** Serve protocol v2 (HTTP/2: ALPN h2, h2c on plain TCP); false: a v1-only ingress. */
    h2: z.boolean().default(true),
    /** v2 (HTTP/2): streams one session may carry at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
    h2_max_concurrent_streams: z.number().int().min(1).max(1_000_000).default(256),
    /**
     * v2: streams one session serves at once; a stream beyond it is reset with REFUSED_STREAM
     * (RFC 9113 §8.7) even below the announced MAX_CONCURRENT_STREAMS, as a loaded server does.
     * Default: no budget below the announced one.
     */
    h2_session_stream_budget: z.number().int().min(1).max(1_000_000).optional(),
    /**
     * v2, test-only: how long the ingress waits after reaching the upstream before it answers 200
     * (a far ingress: the client's bytes sent meanwhile arrive before the answer). Default 0.
     */
    h2_answer_delay_ms: z.number().int().min(0).max(60_000).default(0),
    /**
     * v2: flow-control window per stream, bytes (the session's is sixteen times it, capped at
     * 2^31-1). Each session is served over KeepReadingSocket, so large windows on both sides do
     * not let two Node sessions stall each other (docs/ingress.md "the v2 stall").
     */
    h2_window_bytes: z
      .number()
      .int()
      .min(65_535)
      .max(2_147_483_647)
      .default(16 * 1024 * 1024),
    preface_timeout_ms: z.number().int().min(10).default(5_000),
    dial_timeout_ms: z.number().int().min(10).default(5_000),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.max_connections_per_url !== undefined && cfg.max_connections_per_url > cfg.max_connections) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_connections_per_url'],
        message: `must not exceed max_connections (${cfg.max_connections})`,
      });
    }
    if (cfg.max_handshakes_per_source !== undefined && cfg.max_handshakes_per_source > cfg.max_handshakes) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_handshakes_per_source'],
        message: `must not exceed max_handshakes (${cfg.max_handshakes})`,
      });
    }
  })
  .transform((cfg) => ({
    ...cfg,
    max_handshakes_per_source: cfg.max_handshakes_per_source ?? Math.min(64, cfg.max_handshakes),
    max_connections_per_url: cfg.max_connections_per_url ?? Math.max(1, Math.floor(cfg.max_connections / 2)),
  }))
  .prefault({});

export const MockConfig = z
  .strictObject({
    accounts: z.array(AccountConfig).default([]),
    /** Largest accepted request body, in bytes. */
    body_limit_bytes: z
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /** How long a request body may take to arrive; then a 408 (ERR_116) and the connection closes. */
    body_timeout_ms: z.number().int().min(10).default(30_000),
    /** Open connections the public API (and, separately, the admin interface) accepts at once. */
    max_connections: z.number().int().min(1).default(1024),
    /** Failed authentications per source address (sliding window); past it, 429 (ERR_161). */
    auth_failure_limit: z
      .strictObject({
        failures: z.number().int().min(1),
        window_seconds: z.number().positive(),
      })
      .default({ failures: 20, window_seconds: 60 }),
    rate_limit: z
      .strictObject({
        requests: z.number().int().min(1),
        window_seconds: z.number().positive(),
      })
      .default({ requests: 600, window_seconds: 60 }),
    /** Base URL put into `uri` fields; when absent it is built from each request's Host header. */
    public_base_url: z.url().optional(),
    region: z.string().default('us'),
    /** Operator notifications (server-sent events). */
    events: z
      .strictObject({
        /** Events kept per account for resuming with Last-Event-ID; older ids get a `resync`. */
        retention: z.number().int().min(1).default(1000),
        heartbeat_ms: z.number().int().min(10).default(15_000),
        max_streams_per_operator: z.number().int().min(1).default(4),
        /** A stream whose unsent bytes exceed this (a client that stopped reading) is dropped. */
        max_buffered_bytes: z
          .number()
          .int()
          .min(1024)
          .default(1024 * 1024),
        /**
         * Id of an account's first event. Default: the server's start time in ms × 1000, so an id
         * from an earlier run of the mock (whose state is gone) is always "too old" and gets a
         * `resync`, never a replay of this run's unrelated events.
         */
        first_id: z
          .number()
          .int()
          .min(1)
          .max(2 ** 52)
          .optional(),
      })
      .prefault({}),
    /** The binding ingress (data plane), served on its own port. See docs/ingress.md. */
    ingress: IngressConfig,
  })
  .superRefine((cfg, ctx) => {
    const seen = new Map<string, string>();
    cfg.accounts.forEach((acct, i) => {
      for (const [field, values] of [
        ['api_keys', acct.api_keys],
        ['authtokens', acct.authtokens],
      ] as const) {
        values.forEach((v, j) => {
          const other = seen.get(v);
          if (other) {
            ctx.addIssue({
              code: 'custom',
              path: ['accounts', i, field, j],
              message: `credential already used by ${other}; every API key and authtoken must be unique`,
            });
          }
          seen.set(v, `account ${acct.id}`);
        });
      }
    });
    const ids = cfg.accounts.map((a) => a.id);
    ids.forEach((id, i) => {
      if (ids.indexOf(id) !== i)
        ctx.addIssue({
          code: 'custom',
          path: ['accounts', i, 'id'],
          message: `duplicate account id "${id}"`,
        });
    });
  });
export type MockConfig = z.infer<typeof MockConfig>;
export type MockConfigInput = z.input<typeof MockConfig>;

/** The account `npm start` and tests get when no accounts are configured. */
export function developmentAccount(): AccountConfig {
  return {
    id: 'dev',
    name: 'development',
    api_keys: [`dev_apikey_${randomBytes(16).toString('hex')}`],
    authtokens: [`dev_authtoken_${randomBytes(16).toString('hex')}`],
    backends: [],
    certificate_authorities: [],
  };
}

/** Parses a config, adding the development account when none is configured. */
export function resolveMockConfig(input: MockConfigInput = {}): MockConfig {
  const cfg = MockConfig.parse(input);
  return cfg.accounts.length > 0 ? cfg : { ...cfg, accounts: [developmentAccount()] };
}
