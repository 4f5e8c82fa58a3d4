/**
 * Pure rule of which cases a run created from a test plan gets (reference runs-imports-plans.md
 * §6.4): the active cases of the plan's suites (with their descendants), then the plan's active
 * explicit cases, each case once, first occurrence kept.
 */
export function planCaseOrder(
  suiteCaseIds: readonly string[],
  explicitCaseIds: readonly string[],
): string[] {
  return [...new Set([...suiteCaseIds, ...explicitCaseIds])];
}
