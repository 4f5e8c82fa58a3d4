import type { RunCaseDto, RunCaseHistoryDto, RunCaseRowDto } from './dto/run-item.dto';
import type { HistoryRecord, RowRecord, RunItemRow } from './run-items.repository';

/** The read shapes of run-items.repository.ts → response DTOs. */
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
