import { Injectable } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import { Db } from '../../common/persistence/db.service';
import type { RunItemStatus, StatusCounts } from '../test-runs/run-summary';
import { ciOf, RunAttributes, sortedAttributes } from '../test-runs/run-metadata';
import {
  ReportAssignee,
  ReportItem,
  ReportRow,
  ReportRun,
  ReportSummary,
  UNASSIGNED,
  aggregateRows,
  buildByAssignee,
  buildByStatus,
  buildReportSummary,
  isoOrNull,
} from './report';

/** Items fetched per round trip from the server-side cursor. */
const FETCH_SIZE = 500;

export interface ReportHeader {
  generated_at: string;
  test_run: ReportRun;
  summary: ReportSummary;
  by_status: Array<{ status: RunItemStatus; count: number }>;
  by_assignee: ReportAssignee[];
}

/** An item with what the JUnit writer needs beyond the report fields. */
export interface ReportItemWithRows extends ReportItem {
  rows: ReportRow[];
  /** Suite chain of the live case (root first); empty without a suite. */
  suite_path: string[];
}

export interface ItemQueryOptions {
  /** Include `system_out` / `system_err` of rows (JUnit only). */
  withOutputs?: boolean;
  /** Only items whose status is one of these. */
  statuses?: readonly string[];
  /** Items of cases with a suite first (JUnit groups suite-less cases in their own testsuite). */
  suitedFirst?: boolean;
}

interface RunRecord {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  environment_name: string | null;
  environment_revision_number: number | null;
  milestone_name: string | null;
  build: string | null;
  ci_provider: string | null;
  ci_branch: string | null;
  ci_commit_sha: string | null;
  ci_job_url: string | null;
  ci_pipeline_id: string | null;
  attributes: RunAttributes | null;
  status: string;
  created_by: string;
  created_by_name: string | null;
  assignee_id: string | null;
  assignee_name: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  archived_at: Date | null;
}

interface ItemRecord {
  id: string;
  test_case_id: string | null;
  status: RunItemStatus;
  assignee_id: string | null;
  assignee_name: string | null;
  comment: string | null;
  last_executed_at: Date | null;
  rows_total: number;
  rows_passed: number;
  rows_failed: number;
  created_at: Date;
  updated_at: Date;
  key: string | null;
  title: string | null;
  priority: string | null;
  tags: string[] | null;
  automation_id: string | null;
  suite_id: string | null;
  suite_name: string | null;
  rows: Array<Record<string, unknown>>;
}

const displayName = (alias: string) =>
  `coalesce(nullif(${alias}.display_name, ''), ${alias}.username)`;

function toRow(raw: Record<string, unknown>): ReportRow {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(raw.id),
    label: String(raw.label ?? ''),
    status: raw.status as RunItemStatus,
    comment: text(raw.comment),
    defect_ids: Array.isArray(raw.defect_ids) ? raw.defect_ids.map(String) : [],
    actual_result: text(raw.actual_result),
    executed_by: text(raw.executed_by),
    executed_by_name: text(raw.executed_by_name),
    execution_count: Number(raw.execution_count ?? 0),
    last_executed_at: isoOrNull(raw.last_executed_at),
    started_at: isoOrNull(raw.started_at),
    finished_at: isoOrNull(raw.finished_at),
    duration_ms:
      raw.duration_ms === null || raw.duration_ms === undefined ? null : Number(raw.duration_ms),
    ...(raw.system_out !== undefined
      ? { system_out: text(raw.system_out), system_err: text(raw.system_err) }
      : {}),
  };
}

/**
 * Reads one run's report inside a read-only REPEATABLE READ transaction, so the header and every
 * item come from the same snapshot. Items are streamed from a server-side cursor
 * ({@link FETCH_SIZE} at a time): memory stays bounded whatever the run size. Always `close()`.
 */
export class RunReportReader {
  private cursorSeq = 0;
  private closed = false;
  private suitePaths: Map<string, string[]> | null = null;

  private constructor(
    private readonly runner: QueryRunner,
    readonly header: ReportHeader,
    private readonly onClose: () => void,
  ) {}

  /**
   * Opens the snapshot and reads the header; null when the run does not exist. `onClose` runs once
   * its connection is back in the pool (after `close()`, or here when the run does not exist or the
   * opening fails).
   */
  static async open(
    dataSource: DataSource,
    runId: string,
    onClose: () => void = () => undefined,
  ): Promise<RunReportReader | null> {
    const runner = dataSource.createQueryRunner('slave');
    try {
      await runner.connect();
    } catch (error) {
      onClose();
      throw error;
    }
    try {
      await runner.query('BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const runs = (await runner.query(
        `SELECT r.id, r.project_id, r.name, r.description, r.environment_name, r.environment_revision_number,
                m.name AS milestone_name, r.build, r.ci_provider, r.ci_branch, r.ci_commit_sha,
                r.ci_job_url, r.ci_pipeline_id, r.attributes, r.status, r.created_by, ${displayName('u')} AS created_by_name,
                r.assignee_id, ${displayName('a')} AS assignee_name, r.created_at, r.updated_at, r.started_at,
                r.completed_at, r.archived_at
           FROM test_runs r
           LEFT JOIN users u ON u.id = r.created_by
           LEFT JOIN users a ON a.id = r.assignee_id
           LEFT JOIN milestones m ON m.id = r.milestone_id
          WHERE r.id = $1`,
        [runId],
      )) as RunRecord[];
      const run = runs[0];
      if (run === undefined) {
        await runner.query('ROLLBACK');
        await runner.release();
        onClose();
        return null;
      }
      const [statusRows, assigneeRows] = await Promise.all([
        runner.query(
          `SELECT status, count(*)::int AS count FROM run_items WHERE test_run_id = $1 GROUP BY status`,
          [runId],
        ) as Promise<Array<{ status: RunItemStatus; count: number }>>,
        runner.query(
          `SELECT ri.assignee_id, ${displayName('u')} AS assignee_name, count(*)::int AS count
             FROM run_items ri LEFT JOIN users u ON u.id = ri.assignee_id
            WHERE ri.test_run_id = $1 GROUP BY ri.assignee_id, u.display_name, u.username`,
          [runId],
        ) as Promise<
          Array<{ assignee_id: string | null; assignee_name: string | null; count: number }>
        >,
      ]);
      const counts: StatusCounts = {};
      for (const row of statusRows) counts[row.status] = row.count;
      const header: ReportHeader = {
        generated_at: new Date().toISOString(),
        test_run: {
          id: run.id,
          project_id: run.project_id,
          name: run.name,
          description: run.description,
          environment_name: run.environment_name,
          environment_revision_number: run.environment_revision_number,
          milestone_name: run.milestone_name,
          build: run.build,
          ci: ciOf(run),
          attributes: Object.fromEntries(sortedAttributes(run.attributes)),
          status: run.status,
          created_by: run.created_by,
          created_by_name: run.created_by_name,
          assignee: run.assignee_id,
          assignee_name: run.assignee_name,
          created_at: run.created_at.toISOString(),
          updated_at: run.updated_at.toISOString(),
          started_at: isoOrNull(run.started_at),
          completed_at: isoOrNull(run.completed_at),
          archived_at: isoOrNull(run.archived_at),
        },
        summary: buildReportSummary(counts),
        by_status: buildByStatus(counts),
        by_assignee: buildByAssignee(assigneeRows),
      };
      return new RunReportReader(runner, header, onClose);
    } catch (error) {
      try {
        await runner.query('ROLLBACK').catch(() => undefined);
        await runner.release();
      } finally {
        // The slot is given back even when the connection could not be (as close() does).
        onClose();
      }
      throw error;
    }
  }

  /** Row counts by (case has a suite, row status), for the JUnit writer's totals. */
  async rowTotals(): Promise<
    Array<{ suited: boolean; status: RunItemStatus; count: number; duration_ms: number }>
  > {
    const rows = (await this.runner.query(
      `SELECT (tc.suite_id IS NOT NULL) AS suited, w.status, count(*)::int AS count,
              coalesce(sum(w.duration_ms), 0)::bigint::text AS duration_ms
         FROM run_items ri
         JOIN run_item_rows w ON w.run_item_id = ri.id
         LEFT JOIN test_cases tc ON tc.id = ri.test_case_id
        WHERE ri.test_run_id = $1
        GROUP BY 1, 2`,
      [this.header.test_run.id],
    )) as Array<{ suited: boolean; status: RunItemStatus; count: number; duration_ms: string }>;
    return rows.map((r) => ({ ...r, duration_ms: Number(r.duration_ms) }));
  }

  /** Suite chains of the project (one query, on first use). */
  private async suites(): Promise<Map<string, string[]>> {
    if (this.suitePaths !== null) return this.suitePaths;
    const rows = (await this.runner.query(
      `SELECT id, parent_id, name FROM suites WHERE project_id = $1`,
      [this.header.test_run.project_id],
    )) as Array<{ id: string; parent_id: string | null; name: string }>;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const paths = new Map<string, string[]>();
    for (const row of rows) {
      const path: string[] = [];
      const seen = new Set<string>();
      let current: typeof row | undefined = row;
      while (current !== undefined && !seen.has(current.id)) {
        seen.add(current.id);
        path.unshift(current.name);
        current = current.parent_id === null ? undefined : byId.get(current.parent_id);
      }
      paths.set(row.id, path);
    }
    this.suitePaths = paths;
    return paths;
  }

  /**
   * The run's items ordered by test case key (then creation), live case data where the case still
   * exists and the item's snapshots otherwise; deleted cases are not left out.
   */
  async *items(options: ItemQueryOptions = {}): AsyncGenerator<ReportItemWithRows> {
    const suites = await this.suites();
    const cursor = `report_items_${++this.cursorSeq}`;
    const outputs = options.withOutputs
      ? `, 'system_out', w.system_out, 'system_err', w.system_err`
      : '';
    const params: unknown[] = [this.header.test_run.id];
    let statusFilter = '';
    if (options.statuses !== undefined) {
      params.push(options.statuses);
      statusFilter = `AND ri.status = ANY($2::text[])`;
    }
    const order = [
      ...(options.suitedFirst ? ['(tc.suite_id IS NULL)'] : []),
      `coalesce(tc.key_number, nullif(substring(ri.test_case_key from '([0-9]+)$'), '')::int) NULLS LAST`,
      'ri.created_at',
      'ri.id',
    ].join(', ');
    await this.runner.query(
      `DECLARE ${cursor} NO SCROLL CURSOR FOR
       SELECT ri.id, ri.test_case_id, ri.status, ri.assignee_id, ${displayName('au')} AS assignee_name, ri.comment,
              ri.last_executed_at, ri.rows_total, ri.rows_passed, ri.rows_failed, ri.created_at, ri.updated_at,
              CASE WHEN tc.id IS NULL THEN ri.test_case_key ELSE tc.key END AS key,
              CASE WHEN tc.id IS NULL THEN ri.test_case_title ELSE tc.title END AS title,
              CASE WHEN tc.id IS NULL THEN ri.test_case_priority ELSE tc.priority END AS priority,
              CASE WHEN tc.id IS NULL THEN ri.test_case_tags ELSE tc.tags END AS tags,
              tc.automation_id, tc.suite_id,
              CASE WHEN tc.id IS NULL THEN ri.suite_name ELSE s.name END AS suite_name,
              (SELECT coalesce(jsonb_agg(jsonb_build_object(
                        'id', w.id, 'label', w.scenario_label, 'status', w.status, 'comment', w.comment,
                        'defect_ids', w.defect_ids, 'actual_result', w.actual_result,
                        'executed_by', w.executed_by_id, 'executed_by_name', ${displayName('eu')},
                        'execution_count', w.execution_count, 'last_executed_at', w.last_executed_at,
                        'started_at', w.started_at, 'finished_at', w.finished_at,
                        'duration_ms', w.duration_ms${outputs}) ORDER BY w.row_order), '[]'::jsonb)
                 FROM run_item_rows w LEFT JOIN users eu ON eu.id = w.executed_by_id
                WHERE w.run_item_id = ri.id) AS rows
         FROM run_items ri
         LEFT JOIN test_cases tc ON tc.id = ri.test_case_id
         LEFT JOIN suites s ON s.id = tc.suite_id
         LEFT JOIN users au ON au.id = ri.assignee_id
        WHERE ri.test_run_id = $1 ${statusFilter}
        ORDER BY ${order}`,
      params,
    );
    try {
      for (;;) {
        const batch = (await this.runner.query(
          `FETCH ${FETCH_SIZE} FROM ${cursor}`,
        )) as ItemRecord[];
        for (const record of batch) yield this.toItem(record, suites);
        if (batch.length < FETCH_SIZE) break;
      }
    } finally {
      if (!this.closed) await this.runner.query(`CLOSE ${cursor}`).catch(() => undefined);
    }
  }

  private toItem(r: ItemRecord, suites: Map<string, string[]>): ReportItemWithRows {
    const rows = r.rows.map(toRow);
    return {
      id: r.id,
      test_case: {
        id: r.test_case_id,
        key: r.key,
        title: r.title,
        priority: r.priority,
        tags: r.tags ?? [],
        suite_name: r.suite_name,
        automation_id: r.automation_id,
      },
      status: r.status,
      assignee_id: r.assignee_id,
      assignee_name: r.assignee_id === null ? UNASSIGNED : (r.assignee_name ?? 'Unknown user'),
      ...aggregateRows(rows),
      last_executed_at: isoOrNull(r.last_executed_at),
      comment: r.comment,
      rows_total: r.rows_total,
      rows_passed: r.rows_passed,
      rows_failed: r.rows_failed,
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
      rows,
      suite_path: r.suite_id === null ? [] : (suites.get(r.suite_id) ?? []),
    };
  }

  /** Ends the snapshot and returns the connection to the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.runner.query('COMMIT');
    } finally {
      try {
        await this.runner.release();
      } finally {
        this.onClose();
      }
    }
  }
}

/** SQL of run report exports: every read goes through a {@link RunReportReader} snapshot. */
@Injectable()
export class ExportsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Opens a run's report snapshot (on its own pooled connection); null when the run does not exist.
   * `onClose` runs once that connection is released, whatever happens.
   */
  openRunReport(runId: string, onClose?: () => void): Promise<RunReportReader | null> {
    return RunReportReader.open(this.db.dataSource, runId, onClose);
  }
}

/** The report item as it appears in JSON/XML/CSV, keys in the reference order (§5.2). */
export function publicItem(item: ReportItemWithRows): ReportItem {
  return {
    id: item.id,
    test_case: item.test_case,
    status: item.status,
    assignee_id: item.assignee_id,
    assignee_name: item.assignee_name,
    executed_by: item.executed_by,
    executed_by_name: item.executed_by_name,
    execution_count: item.execution_count,
    last_executed_at: item.last_executed_at,
    comment: item.comment,
    defect_ids: item.defect_ids,
    actual_result: item.actual_result,
    started_at: item.started_at,
    finished_at: item.finished_at,
    duration_ms: item.duration_ms,
    time: item.time,
    rows_total: item.rows_total,
    rows_passed: item.rows_passed,
    rows_failed: item.rows_failed,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}
