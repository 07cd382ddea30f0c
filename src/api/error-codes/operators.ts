import type { ErrorCatalogue } from './types.js';

/** ERR_6xx: Kubernetes operator registrations and their notification streams. */
export const operatorCodes = {
  ERR_600: { status: 400, title: 'enabled_features may only contain "bindings".' },
  ERR_601: {
    status: 400,
    title:
      'deployment.name and deployment.namespace must be lower-case RFC 1123 labels (at most 63 characters).',
  },
  ERR_602: { status: 400, title: 'deployment.namespace cannot be changed after registration.' },
  ERR_603: {
    status: 400,
    title: 'binding.endpoint_selector is longer than 4096 bytes.',
  },
  ERR_610: {
    status: 429,
    title:
      'The operator already has the maximum number of open event streams; close one or retry after Retry-After seconds.',
  },
} as const satisfies ErrorCatalogue;
