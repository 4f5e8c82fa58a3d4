/**
 * The change classes of a run comparison (issue #17 §1): every case of either run falls in exactly
 * one class, decided by its status in the base run and in the compared run. Pure; the SQL of the
 * comparison is generated from the same constants ({@link changeClassSql}).
 */

/** Statuses that count as failing. */
export const FAILING_STATUSES = ['failure', 'error'] as const;
/** Statuses that count as passing. */
export const PASSING_STATUSES = ['passed', 'xfailed'] as const;

/** The classes, in the order items are listed (then by title). */
export const CHANGE_CLASSES = [
  'newly_failing',
  'fixed',
  'still_failing',
  'added',
  'removed',
  'changed',
  'unchanged',
] as const;
export type ChangeClass = (typeof CHANGE_CLASSES)[number];

/** Type guard for a change class. */
export function isChangeClass(value: unknown): value is ChangeClass {
  return typeof value === 'string' && (CHANGE_CLASSES as readonly string[]).includes(value);
}

export function isFailing(status: string): boolean {
  return (FAILING_STATUSES as readonly string[]).includes(status);
}

export function isPassing(status: string): boolean {
  return (PASSING_STATUSES as readonly string[]).includes(status);
}

/**
 * The class of one case. `base` / `current`: its status in the base run / the compared run, `null`
 * when the run does not contain the case.
 */
export function classifyChange(base: string | null, current: string | null): ChangeClass {
  if (base === null && current === null) throw new Error('a case of neither run');
  if (base === null) return 'added';
  if (current === null) return 'removed';
  if (isFailing(current)) return isFailing(base) ? 'still_failing' : 'newly_failing';
  if (isFailing(base) && isPassing(current)) return 'fixed';
  if (base === current) return 'unchanged';
  return 'changed';
}

function sqlList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(', ');
}

/**
 * The SQL form of {@link classifyChange} over two status columns (NULL: the run lacks the case).
 * The spec table-tests both against each other through the e2e suite; keep them in step.
 */
export function changeClassSql(base: string, current: string): string {
  const failing = sqlList(FAILING_STATUSES);
  const passing = sqlList(PASSING_STATUSES);
  return `CASE
    WHEN ${base} IS NULL THEN 'added'
    WHEN ${current} IS NULL THEN 'removed'
    WHEN ${current} IN (${failing}) AND ${base} IN (${failing}) THEN 'still_failing'
    WHEN ${current} IN (${failing}) THEN 'newly_failing'
    WHEN ${base} IN (${failing}) AND ${current} IN (${passing}) THEN 'fixed'
    WHEN ${base} = ${current} THEN 'unchanged'
    ELSE 'changed' END`;
}

/** Position of a class in the item order (1-based, as SQL's array_position answers it). */
export function changeClassRank(change: ChangeClass): number {
  return CHANGE_CLASSES.indexOf(change) + 1;
}
