import { defineAdmission } from './admission.js';
import { defineCrud } from './crud.js';
import { defineKubectl } from './kubectl.js';
import { defineLists } from './lists.js';
import { defineNamespaces } from './namespaces.js';
import { defineRbac } from './rbac.js';
import type { FidelityServer } from './server.js';
import { defineStrategies } from './strategies.js';
import { defineTables } from './tables.js';
import { defineValidation } from './validation.js';
import { defineWatches } from './watches.js';

/**
 * The fidelity suite: every body written once, run against kubesim (test/kubesim/fidelity.test.ts,
 * in `npm test`) and the real kube-apiserver (test/real/fidelity.real.ts, in `npm run test:real`).
 */
export function defineFidelitySuite(server: FidelityServer): void {
  defineCrud(server);
  defineLists(server);
  defineWatches(server);
  defineValidation(server);
  defineStrategies(server);
  defineRbac(server);
  defineAdmission(server);
  defineNamespaces(server);
  defineTables(server);
  defineKubectl(server);
}
