/**
 * Pure rules of the run report (CONTRACT §6, reference runs-imports-plans.md §5.2): summary figures,
 * per-status and per-assignee breakdowns, failures, and an item's execution fields aggregated from
 * its rows. No I/O: the reader hands rows from the database to these functions.
 */
import {
  RUN_ITEM_STATUSES,
  RunItemStatus,
  StatusCounts,
  computePassRate,
  normalizeStatusCounts,
} from '../test-runs/run-summary';
import type { RunAttributes, RunCi } from '../test-runs/run-metadata';

export const REPORT_FORMATS = ['json', 'xml', 'junit', 'csv', 'pdf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const UNASSIGNED = 'Unassigned';
export const FAILURE_STATUSES: readonly string[] = ['error', 'failure', 'xpassed'];

export interface ReportRun {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  environment_name: string | null;
  environment_revision_number: number | null;
  milestone_name: string | null;
  build: string | null;
  /** CI metadata (issue #24): null without any CI field, else all five keys. */
  ci: RunCi | null;
  /** Free key → value strings; `{}` when none. */
  attributes: RunAttributes;
  status: string;
  created_by: string;
  created_by_name: string | null;
  assignee: string | null;
  assignee_name: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  archived_at: string | null;
}

export interface ReportSummary {
  total: number;
  passed: number;
  error: number;
  failure: number;
  blocked: number;
  skipped: number;
  xfailed: number;
  xpassed: number;
  untested: number;
  in_progress: number;
  /** round(passed / total × 100, 2); 0 without items. */
  pass_rate: number;
  /** round(items with a result / total × 100, 2); 0 without items. */
  progress_rate: number;
}

export interface ReportAssignee {
  assignee_id: string | null;
  assignee_name: string;
  count: number;
}

export interface ReportFailure {
  run_item_id: string;
  test_case_id: string | null;
  test_case_key: string | null;
  test_case_title: string | null;
  assignee_id: string | null;
  assignee_name: string;
  comment: string | null;
  defect_ids: string[];
}

export interface ReportItem {
  id: string;
  test_case: {
    id: string | null;
    key: string | null;
    title: string | null;
    priority: string | null;
    tags: string[];
    suite_name: string | null;
    automation_id: string | null;
  };
  status: RunItemStatus;
  assignee_id: string | null;
  assignee_name: string;
  executed_by: string | null;
  executed_by_name: string | null;
  execution_count: number;
  last_executed_at: string | null;
  comment: string | null;
  defect_ids: string[];
  actual_result: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  /** Duration in seconds as text (JUnit `time`), or null. */
  time: string | null;
  rows_total: number;
  rows_passed: number;
  rows_failed: number;
  created_at: string;
  updated_at: string;
}

/** One execution row of an item, as read for the report. */
export interface ReportRow {
  id: string;
  label: string;
  status: RunItemStatus;
  comment: string | null;
  defect_ids: string[];
  actual_result: string | null;
  executed_by: string | null;
  executed_by_name: string | null;
  execution_count: number;
  last_executed_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  system_out?: string | null;
  system_err?: string | null;
}

/** Summary figures from item counts by status (every item counts, `untested` included). */
export function buildReportSummary(counts: StatusCounts): ReportSummary {
  const c = normalizeStatusCounts(counts);
  const total = RUN_ITEM_STATUSES.reduce((sum, s) => sum + c[s], 0);
  const done = total - c.untested - c.in_progress;
  return {
    total,
    passed: c.passed,
    error: c.error,
    failure: c.failure,
    blocked: c.blocked,
    skipped: c.skipped,
    xfailed: c.xfailed,
    xpassed: c.xpassed,
    untested: c.untested,
    in_progress: c.in_progress,
    pass_rate: computePassRate(c.passed, total),
    progress_rate: computePassRate(done, total),
  };
}

/** All nine statuses in the fixed order, zeros included. */
export function buildByStatus(
  counts: StatusCounts,
): Array<{ status: RunItemStatus; count: number }> {
  const c = normalizeStatusCounts(counts);
  return RUN_ITEM_STATUSES.map((status) => ({ status, count: c[status] }));
}

/** One entry per assignee (null → `Unassigned`), by count descending, then name. */
export function buildByAssignee(
  rows: ReadonlyArray<{ assignee_id: string | null; assignee_name: string | null; count: number }>,
): ReportAssignee[] {
  return rows
    .map((r) => ({
      assignee_id: r.assignee_id,
      assignee_name: r.assignee_id === null ? UNASSIGNED : (r.assignee_name ?? 'Unknown user'),
      count: r.count,
    }))
    .sort((a, b) => b.count - a.count || a.assignee_name.localeCompare(b.assignee_name));
}

function maxIso(values: Array<string | null>): string | null {
  let best: string | null = null;
  for (const v of values)
    if (v !== null && (best === null || Date.parse(v) > Date.parse(best))) best = v;
  return best;
}

function minIso(values: Array<string | null>): string | null {
  let best: string | null = null;
  for (const v of values)
    if (v !== null && (best === null || Date.parse(v) < Date.parse(best))) best = v;
  return best;
}

/** Normalises a database timestamp (Date or text with an offset) to ISO 8601 UTC, or null. */
export function isoOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(String(value));
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Seconds as JUnit writes them: `1.5`, `0.25`, `12`. */
export function secondsText(ms: number | null): string | null {
  if (ms === null) return null;
  return String(Math.round(ms) / 1000);
}

/**
 * An item's execution fields from its rows: the most recently executed row gives executor, actual
 * result; execution counts and durations add up; started is the earliest, finished the latest;
 * defect ids are the union (first spelling kept).
 */
export function aggregateRows(
  rows: readonly ReportRow[],
): Pick<
  ReportItem,
  | 'executed_by'
  | 'executed_by_name'
  | 'execution_count'
  | 'defect_ids'
  | 'actual_result'
  | 'started_at'
  | 'finished_at'
  | 'duration_ms'
  | 'time'
> {
  let latest: ReportRow | null = null;
  for (const row of rows) {
    if (row.last_executed_at === null) continue;
    if (
      latest === null ||
      Date.parse(row.last_executed_at) > Date.parse(latest.last_executed_at ?? '')
    )
      latest = row;
  }
  const durations = rows.map((r) => r.duration_ms).filter((d): d is number => d !== null);
  const duration = durations.length > 0 ? durations.reduce((a, b) => a + b, 0) : null;
  const defects: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const id of row.defect_ids) {
      if (!seen.has(id.toLowerCase())) {
        seen.add(id.toLowerCase());
        defects.push(id);
      }
    }
  }
  return {
    executed_by: latest?.executed_by ?? null,
    executed_by_name: latest?.executed_by_name ?? null,
    execution_count: rows.reduce((sum, r) => sum + r.execution_count, 0),
    defect_ids: defects,
    actual_result: latest?.actual_result ?? null,
    started_at: minIso(rows.map((r) => r.started_at)),
    finished_at: maxIso(rows.map((r) => r.finished_at)),
    duration_ms: duration,
    time: secondsText(duration),
  };
}

export function toFailure(item: ReportItem): ReportFailure {
  return {
    run_item_id: item.id,
    test_case_id: item.test_case.id,
    test_case_key: item.test_case.key,
    test_case_title: item.test_case.title,
    assignee_id: item.assignee_id,
    assignee_name: item.assignee_name,
    comment: item.comment,
    defect_ids: item.defect_ids,
  };
}
