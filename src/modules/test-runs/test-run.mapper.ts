import { RawJson } from '../../common/http/raw-json';
import {
  buildRunSummary,
  buildStatusBreakdown,
  RunItemStatus,
  StatusCounts,
} from '../run-items/roll-up';
import type { TestRunDto } from './dto/test-run.dto';
import type { RunStatus } from './run-status';

/** The columns every run read selects (alias `r` = test_runs, `u` = creator, `m` = milestone). */
export const RUN_COLUMNS = `r.id, r.project_id, r.name, r.description, r.environment_id,
  r.environment_name, r.environment_revision_id, r.environment_revision_number,
  r.environment_snapshot_hash, r.environment_snapshot, r.milestone_id, m.name AS milestone_name,
  r.build, r.assignee_id, r.created_by,
  coalesce(nullif(u.display_name, ''), u.username) AS created_by_name,
  r.status, r.started_at, r.completed_at, r.archived_at, r.planned_item_count,
  r.count_untested, r.count_in_progress, r.count_passed, r.count_error, r.count_failure,
  r.count_blocked, r.count_skipped, r.count_xfailed, r.count_xpassed, r.created_at, r.updated_at`;

/**
 * RUN_COLUMNS with the snapshot as JSON text, answered as it is ({@link RawJson}): for the hot
 * reads (GET one run, the list), where parsing and serialising it again was most of the CPU.
 */
export const RUN_COLUMNS_RAW_SNAPSHOT = RUN_COLUMNS.replace(
  'r.environment_snapshot,',
  'r.environment_snapshot::text AS environment_snapshot,',
);

/** The joins RUN_COLUMNS needs. */
export const RUN_JOINS = `LEFT JOIN users u ON u.id = r.created_by
  LEFT JOIN milestones m ON m.id = r.milestone_id`;

export interface TestRunRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  environment_id: string | null;
  environment_name: string | null;
  environment_revision_id: string | null;
  environment_revision_number: number | null;
  environment_snapshot_hash: string | null;
  /** Parsed, or JSON text with RUN_COLUMNS_RAW_SNAPSHOT. */
  environment_snapshot: Record<string, unknown> | string | null;
  milestone_id: string | null;
  milestone_name: string | null;
  build: string | null;
  assignee_id: string | null;
  created_by: string;
  created_by_name: string | null;
  status: RunStatus;
  started_at: Date | null;
  completed_at: Date | null;
  archived_at: Date | null;
  planned_item_count: number;
  count_untested: number;
  count_in_progress: number;
  count_passed: number;
  count_error: number;
  count_failure: number;
  count_blocked: number;
  count_skipped: number;
  count_xfailed: number;
  count_xpassed: number;
  created_at: Date;
  updated_at: Date;
}

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

/** Row → the run object of api.md §2.1 with every field (CONTRACT §5). */
export function toTestRunDto(r: TestRunRow): TestRunDto {
  const counts = runStatusCounts(r);
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
    environment_snapshot:
      typeof r.environment_snapshot === 'string'
        ? new RawJson(r.environment_snapshot)
        : (r.environment_snapshot ?? {}),
    milestone_id: r.milestone_id,
    milestone_name: r.milestone_id !== null ? r.milestone_name : null,
    build: r.build,
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
