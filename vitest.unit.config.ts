import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the fast inner loop, the pure core's tables only (no server, no child
 * process, no wall-clock wait): the binding rules, the controller's pure decisions
 * (test/controller/decide/ and the tables of src/controller/decide/), the queue and work queue,
 * the forwarder's pure parts, the schemas and parsers, and the tests' own wait helper.
 * `npm test` runs these too, with everything else.
 */
export default defineConfig({
  test: {
    include: [
      'test/binding/**/*.test.ts',
      'test/kube/pure.test.ts',
      'test/kube/workqueue.test.ts',
      'test/kube/token-bucket.test.ts',
      'test/kube/leader-term.test.ts',
      'test/forwarder/pure.test.ts',
      'test/forwarder/url-health.test.ts',
      'test/forwarder/dial-gate.test.ts',
      'test/check/ingress-decisions.test.ts',
      'test/api/sse-parser.test.ts',
      'test/controller/queue.test.ts',
      'test/controller/reconciler-effects.test.ts',
      'test/controller/decide/**/*.test.ts',
      'test/controller/reporting-decisions.test.ts',
      'test/controller/reported-once.test.ts',
      'test/controller/foreign-holder.test.ts',
      'test/controller/config.test.ts',
      'test/controller/namespace-config.test.ts',
      'test/kubesim/rollout-plan.test.ts',
      'test/kubesim/strategic-merge.test.ts',
      'test/kubesim/admission-cel.test.ts',
      'test/mock/route-modules-schemas.test.ts',
      'test/mock/validation/document-limits.test.ts',
      'test/net/host-port.test.ts',
      'test/ingress/protocol.test.ts',
      'test/ingress/window-share.test.ts',
      'test/helpers/wait.test.ts',
      'test/time/**/*.test.ts',
    ],
    environment: 'node',
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
