import type { RunStatus } from '../test-runs/run-status';
import type { RunCaseDto, RunCaseHistoryDto, RunCaseRowDto } from './dto/run-item.dto';
import type { RunItemStatus } from './roll-up';

/**
 * Columns of a run item read (`ri` = run_items, `tr` = its run, `tc` = its live test case,
 * `ls` = the live case's suite, `au` = assignee). Case key/title/priority/tags are the live values
 * while the case exists, else the snapshots taken when it was added; the suite is the snapshot,
 * else (no suite when the case was added) the live one (reference §3.3). `assignee_name` is the
 * assignee's username (reference §3.3).
 */
export const ITEM_COLUMNS = `ri.id, ri.project_id, ri.test_run_id, ri.test_case_id,
  tr.name AS test_run_name, tr.status AS test_run_status,
  tr.environment_name AS test_run_environment_name,
  tr.environment_revision_number AS test_run_environment_revision_number,
  tr.build AS test_run_build, ri.assignee_id,
  au.username AS assignee_name,
  ri.status, ri.rows_total, ri.rows_passed, ri.rows_failed, ri.comment,
  coalesce(tc.key, ri.test_case_key) AS test_case_key,
  coalesce(tc.title, ri.test_case_title) AS test_case_title,
  CASE WHEN tc.id IS NULL THEN ri.test_case_priority ELSE tc.priority END AS test_case_priority,
  coalesce(tc.tags, ri.test_case_tags) AS test_case_tags,
  CASE WHEN ri.suite_name IS NULL THEN tc.suite_id ELSE ri.suite_id END AS suite_id,
  coalesce(ri.suite_name, ls.name) AS suite_name,
  ri.last_executed_at, ri.created_at, ri.updated_at`;

export const ITEM_JOINS = `JOIN test_runs tr ON tr.id = ri.test_run_id
  LEFT JOIN test_cases tc ON tc.id = ri.test_case_id
  LEFT JOIN suites ls ON ls.id = tc.suite_id
  LEFT JOIN users au ON au.id = ri.assignee_id`;

export interface RunItemRow {
  id: string;
  project_id: string;
  test_run_id: string;
  test_case_id: string | null;
  test_run_name: string;
  test_run_status: RunStatus;
  test_run_environment_name: string | null;
  test_run_environment_revision_number: number | null;
  test_run_build: string | null;
  assignee_id: string | null;
  assignee_name: string | null;
  status: RunItemStatus;
  rows_total: number;
  rows_passed: number;
  rows_failed: number;
  comment: string | null;
  test_case_key: string | null;
  test_case_title: string | null;
  test_case_priority: string | null;
  test_case_tags: string[] | null;
  suite_id: string | null;
  suite_name: string | null;
  last_executed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function iso(d: Date | null): string | null {
  return d ? new Date(d).toISOString() : null;
}

export function toRunCaseDto(r: RunItemRow): RunCaseDto {
  return {
    id: r.id,
    project_id: r.project_id,
    test_run_id: r.test_run_id,
    test_case_id: r.test_case_id,
    test_run_name: r.test_run_name,
    test_run_status: r.test_run_status,
    test_run_environment_name: r.test_run_environment_name,
    test_run_environment_revision_number: r.test_run_environment_revision_number,
    test_run_build: r.test_run_build,
    assignee_id: r.assignee_id,
    assignee_name: r.assignee_id ? r.assignee_name : null,
    status: r.status,
    rows_total: r.rows_total,
    rows_passed: r.rows_passed,
    rows_failed: r.rows_failed,
    comment: r.comment,
    test_case_key: r.test_case_key,
    test_case_title: r.test_case_title,
    test_case_priority: r.test_case_priority,
    test_case_tags: r.test_case_tags ?? [],
    suite_id: r.suite_id,
    suite_name: r.suite_name,
    external_issues: [],
    last_executed_at: iso(r.last_executed_at),
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

export const ROW_COLUMNS = `w.id, w.run_item_id, w.parent_row_id, w.row_order, w.scenario_label,
  w.row_snapshot, w.status, w.comment, w.defect_ids, w.actual_result, w.system_out, w.system_err,
  w.executed_by_id, w.execution_count, w.last_executed_at, w.started_at, w.finished_at,
  w.duration_ms::float8 AS duration_ms, w.created_at, w.updated_at`;

export interface RowRecord {
  id: string;
  run_item_id: string;
  parent_row_id: string | null;
  row_order: number;
  scenario_label: string;
  row_snapshot: Record<string, unknown> | null;
  status: RunItemStatus;
  comment: string | null;
  defect_ids: string[] | null;
  actual_result: string | null;
  system_out: string | null;
  system_err: string | null;
  executed_by_id: string | null;
  execution_count: number;
  last_executed_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  created_at: Date;
  updated_at: Date;
}

export function toRowDto(r: RowRecord): RunCaseRowDto {
  return {
    id: r.id,
    run_case_id: r.run_item_id,
    parent_row_id: r.parent_row_id,
    row_order: r.row_order,
    scenario_label: r.scenario_label,
    row_snapshot: r.row_snapshot ?? {},
    status: r.status,
    comment: r.comment,
    defect_ids: r.defect_ids ?? [],
    actual_result: r.actual_result,
    system_out: r.system_out,
    system_err: r.system_err,
    executed_by_id: r.executed_by_id,
    execution_count: r.execution_count,
    last_executed_at: iso(r.last_executed_at),
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
    duration_ms: r.duration_ms,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

export const HISTORY_COLUMNS = `h.id, h.run_item_id, h.run_item_row_id, h.from_status, h.to_status,
  h.comment, h.defect_ids, h.actual_result, h.system_out, h.system_err, h.executed_by_id,
  h.started_at, h.finished_at, h.duration_ms::float8 AS duration_ms, h.changed_by_id, h.changed_at`;

export interface HistoryRecord {
  id: string;
  run_item_id: string;
  run_item_row_id: string | null;
  from_status: RunItemStatus | null;
  to_status: RunItemStatus;
  comment: string | null;
  defect_ids: string[] | null;
  actual_result: string | null;
  system_out: string | null;
  system_err: string | null;
  executed_by_id: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  changed_by_id: string | null;
  changed_at: Date;
}

export function toHistoryDto(h: HistoryRecord): RunCaseHistoryDto {
  return {
    id: h.id,
    run_case_id: h.run_item_id,
    run_case_row_id: h.run_item_row_id,
    from_status: h.from_status,
    to_status: h.to_status,
    time: null,
    comment: h.comment,
    defect_ids: h.defect_ids ?? [],
    actual_result: h.actual_result,
    system_out: h.system_out,
    system_err: h.system_err,
    executed_by_id: h.executed_by_id,
    started_at: iso(h.started_at),
    finished_at: iso(h.finished_at),
    duration_ms: h.duration_ms,
    changed_by_id: h.changed_by_id,
    changed_at: new Date(h.changed_at).toISOString(),
  };
}
