import { z } from 'zod';
import { createLogger } from '../log/logger.js';
import { MockConfig, type MockConfigInput } from '../mock/config.js';
import { startMockApi } from '../mock/server.js';
import { UsageError, untilSignal, type Command } from './command.js';
import { readConfigFile } from './config-file.js';
import { parseFlags, portFlag } from './flags.js';
import { ingressFlagSchema, ingressFlagSpec, INGRESS_USAGE, withIngressFlags } from './mock-ingress-flags.js';

/** Addresses that mean "every interface"; never printed as a URL to use. */
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/**
 * What `mock-api` prints on stdout once it listens, in every mode: where the API (and the admin
 * interface and the ingress, when served) can be reached; with a generated development account
 * also its key, authtoken and a first request. Pure.
 */
export function mockApiBanner(info: {
  url: string;
  allInterfaces: boolean;
  host: string;
  adminUrl?: string;
  adminAllInterfaces?: boolean;
  adminHost: string;
  ingressAddress?: string;
  dev?: { apiKey: string; authtoken: string | undefined };
}): string {
  const lines = [
    '',
    `  Mock management API: ${info.url}${info.allInterfaces ? ` (listening on all interfaces, --host ${info.host})` : ''}`,
    ...(info.adminUrl
      ? [
          `  Admin interface:     ${info.adminUrl}${info.adminAllInterfaces ? ` (listening on all interfaces, --admin-host ${info.adminHost}; it has no authentication)` : ''}`,
        ]
      : []),
    ...(info.ingressAddress ? [`  Binding ingress:     ${info.ingressAddress}`] : []),
  ];
  if (info.dev) {
    lines.push(
      `  Development API key: ${info.dev.apiKey}`,
      `  Agent authtoken:     ${info.dev.authtoken ?? '(none)'}`,
      '',
      `  curl -H "Authorization: Bearer ${info.dev.apiKey}" -H "Service-Version: 2" ${info.url}/ip_policies`,
    );
  }
  lines.push('');
  return lines.join('\n') + '\n';
}

const Flags = z.strictObject({
  host: z.string().default('127.0.0.1'),
  port: portFlag.default(8080),
  config: z.string().optional(),
  'admin-port': portFlag.optional(),
  'admin-host': z.string().min(1).default('127.0.0.1'),
  'api-key': z.array(z.string()).optional(),
  authtoken: z.array(z.string()).optional(),
  'log-level': z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ...ingressFlagSchema,
});

async function configFrom(flags: z.infer<typeof Flags>): Promise<MockConfigInput> {
  const keys = flags['api-key'];
  if (flags.config && (keys || flags.authtoken))
    throw new UsageError('--api-key and --authtoken cannot be combined with --config');
  if (flags.authtoken && !keys) throw new UsageError('--authtoken needs --api-key (they define one account)');
  if (flags.config) return readConfigFile(flags.config, MockConfig);
  if (!keys) return {};
  const parsed = MockConfig.safeParse({
    accounts: [{ id: 'default', api_keys: keys, authtokens: flags.authtoken ?? [] }],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = issue?.path.includes('authtokens') ? '--authtoken' : '--api-key';
    throw new UsageError(`${flag}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

export const mockApiCommand: Command = {
  name: 'mock-api',
  summary: 'Run the mock management API (and optionally its admin interface)',
  usage: `Usage: endpoint-binder mock-api [options]

Runs a faithful mock of the management API on HTTP until SIGINT/SIGTERM.

Options:
  --host <addr>         Address to listen on (default 127.0.0.1)
  --port <n>            Port of the public API; 0 lets the OS choose (default 8080)
  --config <file>       YAML or JSON file with accounts, limits and rate limit (see README)
  --admin-port <n>      Also serve the admin interface on this port (off unless given)
  --admin-host <addr>   Address of the admin interface (default 127.0.0.1, whatever --host is:
                        the admin interface has no authentication)
  --api-key <key>       An API key of a single account "default" (repeatable; not with --config)
  --authtoken <token>   An agent authtoken of that account (repeatable; not with --config)
  --log-level <level>   fatal|error|warn|info|debug|trace|silent (default info)
${INGRESS_USAGE}
  -h, --help            Show this help

Without --config or --api-key, a development account is generated and its API key and
authtoken printed.`,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        host: { type: 'string' },
        port: { type: 'string' },
        config: { type: 'string' },
        'admin-port': { type: 'string' },
        'admin-host': { type: 'string' },
        'api-key': { type: 'string', multiple: true },
        authtoken: { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        ...ingressFlagSpec,
      },
      Flags,
    );
    const config = await withIngressFlags(await configFrom(flags), flags);
    const logger = createLogger({ level: flags['log-level'], name: 'mock-api' });
    const api = await startMockApi({
      config,
      host: flags.host,
      port: flags.port,
      logger,
      ...(flags['admin-port'] !== undefined
        ? { admin: { host: flags['admin-host'], port: flags['admin-port'] } }
        : {}),
    });
    logger.info(
      {
        url: api.url,
        host: flags.host,
        all_interfaces: api.allInterfaces,
        admin_url: api.adminUrl ?? null,
        accounts: api.accounts.map((a) => a.id),
      },
      'mock api listening',
    );
    const dev = !flags.config && !flags['api-key'] ? api.accounts[0] : undefined;
    process.stdout.write(
      mockApiBanner({
        url: api.url,
        allInterfaces: api.allInterfaces,
        host: flags.host,
        ...(api.adminUrl
          ? { adminUrl: api.adminUrl, adminAllInterfaces: WILDCARD.has(flags['admin-host']) }
          : {}),
        adminHost: flags['admin-host'],
        ...(api.ingressAddress ? { ingressAddress: api.ingressAddress } : {}),
        ...(dev ? { dev: { apiKey: dev.api_keys[0] ?? '', authtoken: dev.authtokens[0] } } : {}),
      }),
    );
    const signal = await untilSignal();
    logger.info({ signal }, 'mock api shutting down');
    await api.stop();
    return 0;
  },
};
