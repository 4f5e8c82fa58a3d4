import type { JsonPart } from '../../common/http/json-body';
import { buildRunSummary, buildStatusBreakdown, RunItemStatus, StatusCounts } from './run-summary';
import type { TestRunDto } from './dto/test-run.dto';
import { ciOf } from './run-metadata';
import type { TestRunRow } from './test-runs.repository';

function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}

/** Item counts by rolled-up status, from the counters kept on the run row. */
export function runStatusCounts(r: TestRunRow): Record<RunItemStatus, number> {
  return {
    untested: r.count_untested,
    in_progress: r.count_in_progress,
    passed: r.count_passed,
    error: r.count_error,
    failure: r.count_failure,
    blocked: r.count_blocked,
    skipped: r.count_skipped,
    xfailed: r.count_xfailed,
    xpassed: r.count_xpassed,
  } satisfies StatusCounts;
}

/** The fields of the run object before `environment_snapshot`, in the order they are answered. */
export function fieldsBeforeSnapshot(r: TestRunRow) {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    description: r.description,
    environment_id: r.environment_id,
    environment_name: r.environment_name,
    environment_revision:
      r.environment_revision_id !== null
        ? {
            id: r.environment_revision_id,
            revision_number: r.environment_revision_number ?? 0,
            snapshot_hash: r.environment_snapshot_hash ?? '',
          }
        : null,
    environment_revision_id: r.environment_revision_id,
    environment_revision_number: r.environment_revision_number,
  };
}

/** The fields of the run object after `environment_snapshot`, in the order they are answered. */
export function fieldsAfterSnapshot(r: TestRunRow) {
  const counts = runStatusCounts(r);
  return {
    milestone_id: r.milestone_id,
    milestone_name: r.milestone_id !== null ? r.milestone_name : null,
    build: r.build,
    ci: ciOf(r),
    attributes: r.attributes ?? {},
    assignee: r.assignee_id,
    created_by: r.created_by,
    created_by_name: r.created_by_name ?? '',
    status: r.status,
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    archived_at: iso(r.archived_at),
    planned_item_count: r.planned_item_count,
    summary: buildRunSummary(counts),
    status_breakdown: buildStatusBreakdown(counts),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** Row and its snapshot → the run object of api.md §2.1 with every field (CONTRACT §5). */
export function toTestRunDto(r: TestRunRow, snapshot: Record<string, unknown>): TestRunDto {
  return {
    ...fieldsBeforeSnapshot(r),
    environment_snapshot: snapshot,
    ...fieldsAfterSnapshot(r),
  };
}

/**
 * The JSON of the run object ({@link toTestRunDto}, same fields in the same order) in three parts,
 * the snapshot being its serialised bytes as they are (cached per revision, never parsed).
 */
export function testRunJsonParts(r: TestRunRow, snapshot: Buffer): JsonPart[] {
  const before = JSON.stringify(fieldsBeforeSnapshot(r));
  const after = JSON.stringify(fieldsAfterSnapshot(r));
  return [`${before.slice(0, -1)},"environment_snapshot":`, snapshot, `,${after.slice(1)}`];
}
