import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The few long files (a whole helm install scenario, a TypeScript build, child processes) start
 * first, so they run beside the many short ones instead of after them; on a fresh clone vitest has
 * no timings of its own to order by. The rest keep vitest's own order.
 */
const SLOW_FIRST = [
  'test/e2e/kubesim.test.ts',
  'test/build/cli-build.test.ts',
  'test/controller/resilience.test.ts',
  'test/controller/uninstall.test.ts',
  'test/forwarder/lifecycle.test.ts',
  'test/kube/leader.test.ts',
  'test/cli-mock-ingress.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = SLOW_FIRST.findIndex((p) => f.moduleId.endsWith(p));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}
