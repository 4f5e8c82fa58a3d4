/**
 * Pure rules for run items ("run cases") and their rows: status enum, roll-up of an item's status
 * and counters from its rows, and the run summary / status breakdown computed from item counts
 * (reference runs-imports-plans.md §1.3, §3.1, §3.6; CONTRACT §5).
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

/** Statuses that record an outcome: everything but `untested` and `in_progress`. */
export const FINAL_RUN_ITEM_STATUSES: readonly RunItemStatus[] = RUN_ITEM_STATUSES.filter(
  (status) => status !== 'untested' && status !== 'in_progress',
);

/** True for a final (outcome) status, i.e. anything but `untested` / `in_progress`. */
export function isFinalStatus(status: RunItemStatus): boolean {
  return status !== 'untested' && status !== 'in_progress';
}

/**
 * Roll-up precedence: an item takes the first status of this list that any of its rows has
 * (reference §3.6). An item without rows is `untested`.
 */
export const ROLL_UP_PRECEDENCE: readonly RunItemStatus[] = [
  'failure',
  'error',
  'blocked',
  'xpassed',
  'in_progress',
  'untested',
  'passed',
  'xfailed',
  'skipped',
];

/** Row statuses counted in `rows_failed` (xpassed is deliberately not one of them). */
export const FAILED_ROW_STATUSES: readonly RunItemStatus[] = ['failure', 'error', 'blocked'];

/** Count per status; missing keys mean 0. */
export type StatusCounts = Partial<Record<RunItemStatus, number>>;

function emptyCounts(): Record<RunItemStatus, number> {
  const counts = {} as Record<RunItemStatus, number>;
  for (const status of RUN_ITEM_STATUSES) counts[status] = 0;
  return counts;
}

/** A count as a non-negative integer (missing, NaN and negative values become 0). */
function normalizeCount(value: number | undefined): number {
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

/** Item status from row counts by status (see `ROLL_UP_PRECEDENCE`). */
export function rollUpItemStatusFromCounts(rowCounts: StatusCounts): RunItemStatus {
  for (const status of ROLL_UP_PRECEDENCE) {
    if (normalizeCount(rowCounts[status]) > 0) return status;
  }
  return 'untested';
}

/** Item status from the statuses of its rows (see `ROLL_UP_PRECEDENCE`); no rows → `untested`. */
export function rollUpItemStatus(rowStatuses: Iterable<RunItemStatus>): RunItemStatus {
  return rollUpItemStatusFromCounts(countStatuses(rowStatuses));
}

/** Aggregate stored on a run item after every row change. */
export interface RunItemRollUp {
  status: RunItemStatus;
  /** Number of rows. */
  rows_total: number;
  /** Rows `passed`. */
  rows_passed: number;
  /** Rows `failure` + `error` + `blocked`. */
  rows_failed: number;
}

/** Status and row counters of a run item from row counts by status. */
export function rollUpRunItemFromCounts(rowCounts: StatusCounts): RunItemRollUp {
  const counts = normalizeStatusCounts(rowCounts);
  let rowsTotal = 0;
  for (const status of RUN_ITEM_STATUSES) rowsTotal += counts[status];
  let rowsFailed = 0;
  for (const status of FAILED_ROW_STATUSES) rowsFailed += counts[status];
  return {
    status: rollUpItemStatusFromCounts(counts),
    rows_total: rowsTotal,
    rows_passed: counts.passed,
    rows_failed: rowsFailed,
  };
}

/** Status and row counters of a run item from the statuses of its rows. */
export function rollUpRunItem(rowStatuses: Iterable<RunItemStatus>): RunItemRollUp {
  return rollUpRunItemFromCounts(countStatuses(rowStatuses));
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

/** Fields of a row touched by a status update. */
export interface RowExecutionState {
  status: RunItemStatus;
  execution_count: number;
  finished_at: Date | null;
  last_executed_at: Date | null;
}

export interface RowStatusUpdateInput {
  current: RowExecutionState;
  /** Status from the PATCH body. */
  status: RunItemStatus;
  /** `finished_at` from the body: `undefined` = key absent, `null` = explicitly cleared. */
  finishedAt?: Date | null;
  now: Date;
}

export interface RowStatusUpdate extends RowExecutionState {
  /** True when the status differs from the current one. */
  statusChanged: boolean;
}

/**
 * Row status update (CONTRACT §5): `execution_count` grows by one only when the row enters a final
 * status (a status change whose target is final); a final status without an explicit `finished_at`
 * gets `now` when it is entered (an unchanged final status keeps its `finished_at`, or gets `now`
 * when it has none); an explicit `finished_at` (or `null`) is always taken as given.
 * `last_executed_at` becomes the resulting `finished_at` (or `now` when that is null) when a final
 * status is entered, and is kept otherwise.
 */
export function decideRowStatusUpdate(input: RowStatusUpdateInput): RowStatusUpdate {
  const { current, status, finishedAt, now } = input;
  const statusChanged = status !== current.status;
  const entersFinal = statusChanged && isFinalStatus(status);

  let finished = current.finished_at;
  if (finishedAt !== undefined) {
    finished = finishedAt;
  } else if (isFinalStatus(status) && (statusChanged || finished === null)) {
    finished = now;
  }

  return {
    status,
    statusChanged,
    execution_count: current.execution_count + (entersFinal ? 1 : 0),
    finished_at: finished,
    last_executed_at: entersFinal ? (finished ?? now) : current.last_executed_at,
  };
}
