import { EventEmitter } from 'node:events';
import type { Logger } from '../log/logger.js';
import { AccountDirectory } from './accounts.js';
import type { MockConfig } from './config.js';
import { FaultInjector } from './faults.js';
import { IdMinter } from './ids.js';
import { RateLimiter } from './rate-limit.js';
import { seedExternalRefs } from './resources/external-refs.js';
import { AccountState } from './store/account-state.js';

/** Server-wide state and helpers shared by every route, the admin interface and the binding ingress. */
export class MockServices {
  readonly directory: AccountDirectory;
  readonly ids: IdMinter;
  readonly faults = new FaultInjector();
  readonly rateLimiter: RateLimiter;
  /** Failed authentications per source address, so API keys cannot be guessed at speed. */
  readonly authFailures: RateLimiter;
  /** Cross-resource notifications inside the mock (endpoint changes, tunnels going offline, ...). */
  readonly bus = new EventEmitter();
  private readonly states = new Map<string, AccountState>();
  /** When this server started (ms); event ids of this run start above every earlier run's. */
  readonly startedAt: number;
  /** `host:port` of the binding ingress, once it listens; returned to operators at registration. */
  ingressAddress: string | undefined;
  private readonly shutdownHooks: (() => Promise<void>)[] = [];

  constructor(
    readonly config: MockConfig,
    readonly log: Logger,
    readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.directory = new AccountDirectory(config.accounts);
    this.ids = new IdMinter(now);
    this.rateLimiter = new RateLimiter(
      config.rate_limit.requests,
      config.rate_limit.window_seconds * 1000,
      now,
    );
    this.authFailures = new RateLimiter(
      config.auth_failure_limit.failures,
      config.auth_failure_limit.window_seconds * 1000,
      now,
    );
    for (const acct of config.accounts) {
      const state = new AccountState(acct);
      seedExternalRefs(state);
      this.states.set(acct.id, state);
    }
    this.bus.setMaxListeners(0);
  }

  state(accountId: string): AccountState {
    const s = this.states.get(accountId);
    if (!s) throw new Error(`unknown account ${accountId}`);
    return s;
  }

  allStates(): AccountState[] {
    return [...this.states.values()];
  }

  /** Registers work to do when the server stops (closing streams, extra listeners). */
  onShutdown(hook: () => Promise<void>): void {
    this.shutdownHooks.push(hook);
  }

  async runShutdownHooks(): Promise<void> {
    await Promise.allSettled(this.shutdownHooks.map((h) => h()));
  }

  timestamp(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}
