/**
 * Pure rules of the suite tree (CONTRACT §7; reference environments-datasets-cases.md §6.8): at most
 * four levels (a root suite is level 1), and a suite can never be placed under itself or under one of
 * its descendants.
 */

export const MAX_SUITE_DEPTH = 4;

export type SuiteParentProblem = 'suite_parent_cycle' | 'suite_depth_limit_exceeded';

export interface ParentCheck {
  /** The suite being moved, or null for a new suite. */
  suiteId: string | null;
  /** The new parent, then its parent, … up to the root. */
  parentChain: readonly string[];
  /** Levels of the moved subtree: 1 for a leaf or a new suite, 2 with children, … */
  subtreeHeight: number;
}

/** Why the suite cannot go under that parent, or null when it can. */
export function checkSuiteParent(c: ParentCheck): SuiteParentProblem | null {
  if (c.suiteId !== null && c.parentChain.includes(c.suiteId)) return 'suite_parent_cycle';
  if (c.parentChain.length + c.subtreeHeight > MAX_SUITE_DEPTH) return 'suite_depth_limit_exceeded';
  return null;
}
