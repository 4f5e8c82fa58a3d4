import { RunAttributes, sortedAttributes } from '../../test-runs/run-metadata';
import { publicItem, RunReportReader } from '../exports.repository';
import { csvLine } from './text';

export const CSV_COLUMNS = [
  'run_item_id',
  'test_case_id',
  'test_case_key',
  'test_case_title',
  'suite_name',
  'priority',
  'tags',
  'automation_id',
  'status',
  'assignee_id',
  'assignee_name',
  'rows_total',
  'rows_passed',
  'rows_failed',
  'execution_count',
  'executed_by',
  'executed_by_name',
  'last_executed_at',
  'started_at',
  'finished_at',
  'duration_ms',
  'defect_ids',
  'comment',
  'actual_result',
  // The run's build and CI metadata (issue #24), the same on every line: a CSV has no header block.
  'run_build',
  'run_ci_provider',
  'run_ci_branch',
  'run_ci_commit_sha',
  'run_ci_job_url',
  'run_ci_pipeline_id',
  'run_attributes',
] as const;

/** The run's attributes in one cell: `key=value` pairs sorted by key, joined with `;`. */
export function attributesCell(attributes: RunAttributes): string {
  return sortedAttributes(attributes)
    .map(([k, v]) => `${k}=${v}`)
    .join(';');
}

/**
 * One header line, then one line per run item (RFC 4180: CRLF, fields quoted when needed, lists
 * joined with `;`), in report order. Streamed.
 */
export async function* csvReport(reader: RunReportReader): AsyncGenerator<string> {
  const run = reader.header.test_run;
  const runCells = [
    run.build,
    run.ci?.provider ?? null,
    run.ci?.branch ?? null,
    run.ci?.commit_sha ?? null,
    run.ci?.job_url ?? null,
    run.ci?.pipeline_id ?? null,
    attributesCell(run.attributes),
  ];
  yield csvLine(CSV_COLUMNS);
  for await (const raw of reader.items()) {
    const item = publicItem(raw);
    yield csvLine([
      item.id,
      item.test_case.id,
      item.test_case.key,
      item.test_case.title,
      item.test_case.suite_name,
      item.test_case.priority,
      item.test_case.tags,
      item.test_case.automation_id,
      item.status,
      item.assignee_id,
      item.assignee_name,
      item.rows_total,
      item.rows_passed,
      item.rows_failed,
      item.execution_count,
      item.executed_by,
      item.executed_by_name,
      item.last_executed_at,
      item.started_at,
      item.finished_at,
      item.duration_ms,
      item.defect_ids,
      item.comment,
      item.actual_result,
      ...runCells,
    ]);
  }
}
