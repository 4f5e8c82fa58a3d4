/**
 * Pure rules for run items ("run cases") and their rows: roll-up of an item's status and counters
 * from its rows, and the row status update (reference runs-imports-plans.md §3.1, §3.6; CONTRACT
 * §5). The status vocabulary and the run-level summary are test-runs' (`run-summary.ts`).
 */
import {
  countStatuses,
  normalizeCount,
  normalizeStatusCounts,
  RUN_ITEM_STATUSES,
  RunItemStatus,
  StatusCounts,
} from '../test-runs/run-summary';

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

/**
 * Whether a row's resulting timestamps are refused (422 on `finished_at`): `finished_at` earlier than
 * `started_at`, on a row that is finished (a final status) or whose `finished_at` the request gives.
 * A row that is not finished (`untested`, `in_progress`: executed again) keeps the `finished_at` of
 * its earlier execution, which a new `started_at` is not compared with; entering a final status
 * later gives it a new one.
 */
export function finishesBeforeStart(input: {
  status: RunItemStatus;
  startedAt: Date | null;
  finishedAt: Date | null;
  finishedAtGiven: boolean;
}): boolean {
  const { status, startedAt, finishedAt, finishedAtGiven } = input;
  if (startedAt === null || finishedAt === null) return false;
  if (!isFinalStatus(status) && !finishedAtGiven) return false;
  return finishedAt.getTime() < startedAt.getTime();
}
