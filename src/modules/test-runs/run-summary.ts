/**
 * Pure rules of a run's result vocabulary and summary: the nine item / row statuses, counts by
 * status, and the run `summary` / `status_breakdown` computed from item counts (reference
 * runs-imports-plans.md §1.3; CONTRACT §5). Owned by test-runs (the run object answers them);
 * run items, exports, milestones and imports import them from here.
 */

/** Run item / row statuses, in the fixed order used by `status_breakdown` (CONTRACT §5). */
export const RUN_ITEM_STATUSES = [
  'untested',
  'in_progress',
  'passed',
  'error',
  'failure',
  'blocked',
  'skipped',
  'xfailed',
  'xpassed',
] as const;
export type RunItemStatus = (typeof RUN_ITEM_STATUSES)[number];

/** Type guard for a run item status string. */
export function isRunItemStatus(value: unknown): value is RunItemStatus {
  return typeof value === 'string' && (RUN_ITEM_STATUSES as readonly string[]).includes(value);
}

/** Count per status; missing keys mean 0. */
export type StatusCounts = Partial<Record<RunItemStatus, number>>;

function emptyCounts(): Record<RunItemStatus, number> {
  const counts = {} as Record<RunItemStatus, number>;
  for (const status of RUN_ITEM_STATUSES) counts[status] = 0;
  return counts;
}

/** A count as a non-negative integer (missing, NaN and negative values become 0). */
export function normalizeCount(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0) return 0;
  return Math.trunc(value);
}

/** Complete, normalised counts for every status. */
export function normalizeStatusCounts(counts: StatusCounts): Record<RunItemStatus, number> {
  const result = emptyCounts();
  for (const status of RUN_ITEM_STATUSES) result[status] = normalizeCount(counts[status]);
  return result;
}

/** Counts a list of statuses (e.g. the rows of one item). */
export function countStatuses(statuses: Iterable<RunItemStatus>): Record<RunItemStatus, number> {
  const counts = emptyCounts();
  for (const status of statuses) counts[status] += 1;
  return counts;
}

/**
 * Counts from `SELECT status, COUNT(*) … GROUP BY status` rows. PostgreSQL returns COUNT as a
 * string, so numeric strings and bigints are accepted; rows with an unknown status are ignored and
 * repeated statuses are added up.
 */
export function statusCountsFromRows(
  rows: Iterable<{ status: string; count: number | string | bigint }>,
): Record<RunItemStatus, number> {
  const counts = emptyCounts();
  for (const row of rows) {
    if (!isRunItemStatus(row.status)) continue;
    counts[row.status] += normalizeCount(Number(row.count));
  }
  return counts;
}

/** The run `summary` object (api.md §2.1 plus `untested`, CONTRACT §5). */
export interface RunSummary {
  /** All run items, `untested` included. */
  total: number;
  untested: number;
  in_progress: number;
  passed: number;
  error: number;
  failure: number;
  blocked: number;
  skipped: number;
  xfailed: number;
  xpassed: number;
  /** `round(passed / total × 100, 2)`; 0 when the run has no items. */
  pass_rate: number;
}

/**
 * `round(passed / total × 100, 2)`, 0 when `total` is 0. Computed on exact integers (no
 * floating-point drift) and rounding halves up, e.g. 1/32 → 3.13.
 */
export function computePassRate(passed: number, total: number): number {
  const t = normalizeCount(total);
  if (t === 0) return 0;
  const numerator = normalizeCount(passed) * 10000;
  let hundredths = Math.floor(numerator / t);
  const remainder = numerator - hundredths * t;
  if (remainder * 2 >= t) hundredths += 1;
  return hundredths / 100;
}

/** The run summary from run item counts by (rolled-up) item status. */
export function buildRunSummary(countsByStatus: StatusCounts): RunSummary {
  const c = normalizeStatusCounts(countsByStatus);
  let total = 0;
  for (const status of RUN_ITEM_STATUSES) total += c[status];
  return {
    total,
    untested: c.untested,
    in_progress: c.in_progress,
    passed: c.passed,
    error: c.error,
    failure: c.failure,
    blocked: c.blocked,
    skipped: c.skipped,
    xfailed: c.xfailed,
    xpassed: c.xpassed,
    pass_rate: computePassRate(c.passed, total),
  };
}

export interface StatusBreakdownItem {
  status: RunItemStatus;
  count: number;
}

/** The run `status_breakdown` object. */
export interface StatusBreakdown {
  items: StatusBreakdownItem[];
}

/** Statuses with count > 0, in the fixed order of `RUN_ITEM_STATUSES`; empty run → `{items: []}`. */
export function buildStatusBreakdown(countsByStatus: StatusCounts): StatusBreakdown {
  const c = normalizeStatusCounts(countsByStatus);
  return {
    items: RUN_ITEM_STATUSES.filter((status) => c[status] > 0).map((status) => ({
      status,
      count: c[status],
    })),
  };
}
