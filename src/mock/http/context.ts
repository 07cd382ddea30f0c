import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log/logger.js';
import type { AccountState } from '../store/account-state.js';
import type { MockServices } from '../services.js';

/** What a route handler gets: the parsed request, the caller's account and the server's services. */
export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  /** Validated query parameters (each appears at most once). */
  query: ReadonlyMap<string, string>;
  /** Parsed JSON body (an object), or undefined for body-less methods. */
  body: unknown;
  account: AccountState;
  /** Scheme and authority resources' `uri` fields are built from, without a trailing slash. */
  baseUrl: string;
  operationId: string;
  log: Logger;
  services: MockServices;
  req: IncomingMessage;
  res: ServerResponse;
}
