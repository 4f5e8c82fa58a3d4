/** Counter name of test case keys in `project_counters`. */
export const TEST_CASE_KEY_COUNTER = 'test_case_key';

/** `TC-<n>`: the key of the n-th test case of a project (CONTRACT §7). */
export function formatCaseKey(n: number): string {
  return `TC-${n}`;
}

/**
 * The counter allocation lives in the repository; re-exported for the JUnit import, which allocates
 * case keys with its own `Db` (which can import it from `test-cases.repository` directly).
 */
export { allocateCounter } from './test-cases.repository';
