import { coreCodes } from './core.js';
import { endpointCodes } from './endpoints.js';
import { operatorCodes } from './operators.js';
import { edgeCodes } from './edges.js';
import { ingressCodes } from './ingress.js';

export type { ErrorCodeInfo, ErrorCatalogue } from './types.js';

/**
 * The whole error catalogue. Each area keeps its codes in its own file and range:
 * ERR_1xx core (IP policies and tunnels need nothing beyond it), ERR_3xx HTTPS edges, routes and
 * modules, ERR_5xx endpoints, ERR_6xx Kubernetes operators and notifications, ERR_7xx binding
 * ingress.
 */
export const errorCatalogue = {
  ...coreCodes,
  ...endpointCodes,
  ...operatorCodes,
  ...edgeCodes,
  ...ingressCodes,
} as const;

export type ErrorCode = keyof typeof errorCatalogue;
