import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import type { RunItemStatus } from '../run-items/roll-up';
import { RUN_ITEMS_BY_CASE_SQL } from '../run-items/run-items.repository';
import type { RunStatus } from '../test-runs/run-status';
import type { CandidateCase, SuiteRow } from './matching';
import type { ExistingRow } from './row-plan';

/** A run as the import sees it. */
export interface RunRef {
  id: string;
  project_id: string;
  name: string;
  status: RunStatus;
  created_at: Date;
}

export interface NewSuite {
  id: string;
  parent_id: string | null;
  name: string;
}

export interface NewCase {
  id: string;
  key: string;
  key_number: number;
  title: string;
  automation_id: string | null;
  suite_id: string | null;
  preconditions: string | null;
  /** JSON of the steps array. */
  steps: string;
}

/** What an import writes into one row. */
export interface RowWrite {
  status: RunItemStatus;
  comment: string | null;
  system_out: string | null;
  system_err: string | null;
  duration_ms: number | null;
  started_at: Date;
}

export interface RowUpdate extends RowWrite {
  id: string;
  label: string;
  relabel: boolean;
}

export interface RowInsert extends RowWrite {
  id: string;
  run_item_id: string;
  row_order: number;
  label: string;
}

export interface ImportRecordRow {
  id: string;
  project_id: string;
  test_run_id: string;
  file_name: string;
  size_bytes: string;
  sha256: string;
  summary: Record<string, unknown>;
  created_by: string;
  created_by_name: string | null;
  created_at: Date;
}

export const DEFAULT_ROW_SNAPSHOT = JSON.stringify({ datasets: [] });

/**
 * SQL of the JUnit import: set-based lookups (one query per kind, `= ANY($n)` for batches) and bulk
 * writes (`unnest` of parallel arrays), never one statement per testcase.
 */
@Injectable()
export class ImportRepository {
  constructor(private readonly db: Db) {}

  async findRun(runId: string): Promise<RunRef | null> {
    const rows = await this.db.query<RunRef>(
      `SELECT id, project_id, name, status, created_at FROM test_runs WHERE id = $1`,
      [runId],
    );
    return rows[0] ?? null;
  }

  /**
   * Open runs of the project named `name` (case-insensitive), newest first — candidates of a
   * project-level import (reference §4.12).
   */
  async findOpenRunsByName(projectId: string, name: string): Promise<RunRef[]> {
    return this.db.query<RunRef>(
      `SELECT id, project_id, name, status, created_at FROM test_runs
        WHERE project_id = $1 AND lower(name) = lower($2) AND status IN ('not_started', 'in_progress')
        ORDER BY created_at DESC, id DESC`,
      [projectId, name],
    );
  }

  /** Serialises project-level imports that resolve the same run name (until the transaction ends). */
  async lockRunName(projectId: string, name: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `junit-import:${projectId}:${name.toLowerCase()}`,
    ]);
  }

  /** Active cases of the project, plus any case holding one of `automationIds` (whatever its status). */
  async loadCandidates(projectId: string, automationIds: string[]): Promise<CandidateCase[]> {
    return this.db.query<CandidateCase>(
      `SELECT id, title, automation_id, suite_id, status FROM test_cases
        WHERE project_id = $1 AND (status = 'active' OR automation_id = ANY($2::text[]))
        ORDER BY key_number, id`,
      [projectId, automationIds],
    );
  }

  async loadSuites(projectId: string): Promise<SuiteRow[]> {
    return this.db.query<SuiteRow>(
      `SELECT id, parent_id, name FROM suites WHERE project_id = $1 ORDER BY created_at, id`,
      [projectId],
    );
  }

  /** Run items of `runId` for the given cases: case id → item id. */
  async loadRunItems(runId: string, caseIds: string[]): Promise<Map<string, string>> {
    if (caseIds.length === 0) return new Map();
    const rows = await this.db.query<{ id: string; test_case_id: string }>(RUN_ITEMS_BY_CASE_SQL, [
      runId,
      caseIds,
    ]);
    return new Map(rows.map((r) => [r.test_case_id, r.id]));
  }

  /** One INSERT for all new suites (parents and children together: FKs are checked per statement). */
  async insertSuites(projectId: string, suites: NewSuite[]): Promise<void> {
    if (suites.length === 0) return;
    await this.db.query(
      `INSERT INTO suites (id, project_id, parent_id, name)
       SELECT u.id, $1, u.parent_id, u.name
         FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS u(id, parent_id, name)`,
      [
        projectId,
        suites.map((s) => s.id),
        suites.map((s) => s.parent_id),
        suites.map((s) => s.name),
      ],
    );
  }

  /** One INSERT for all new cases (keys allocated by the caller from the project counter). */
  async insertCases(projectId: string, userId: string, cases: NewCase[]): Promise<void> {
    if (cases.length === 0) return;
    await this.db.query(
      `INSERT INTO test_cases (id, project_id, key, key_number, title, preconditions, steps, status,
                               test_case_type, automation_id, suite_id, owner_id, tags, created_by)
       SELECT u.id, $1, u.key, u.key_number, u.title, u.preconditions, u.steps::jsonb, 'active',
              'automated', u.automation_id, u.suite_id, $2, ARRAY['auto-imported']::text[], $2
         FROM unnest($3::uuid[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[],
                     $10::uuid[]) AS u(id, key, key_number, title, preconditions, steps, automation_id, suite_id)`,
      [
        projectId,
        userId,
        cases.map((c) => c.id),
        cases.map((c) => c.key),
        cases.map((c) => c.key_number),
        cases.map((c) => c.title),
        cases.map((c) => c.preconditions),
        cases.map((c) => c.steps),
        cases.map((c) => c.automation_id),
        cases.map((c) => c.suite_id),
      ],
    );
  }

  /** Rows of the given run items. */
  async loadRows(itemIds: string[]): Promise<Array<ExistingRow & { run_item_id: string }>> {
    if (itemIds.length === 0) return [];
    return this.db.query<ExistingRow & { run_item_id: string }>(
      `SELECT id, run_item_id, row_order, scenario_label, status, execution_count
         FROM run_item_rows WHERE run_item_id = ANY($1::uuid[])
        ORDER BY run_item_id, row_order`,
      [itemIds],
    );
  }

  async deleteRows(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`DELETE FROM run_item_rows WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /**
   * Writes imported results into existing rows: status, comment, output, executor, timing; the
   * execution count grows by one (each import is one execution). A taken-over pristine row gets
   * its new label and a plain snapshot.
   */
  async updateRows(rows: RowUpdate[], userId: string, now: Date): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `UPDATE run_item_rows r
          SET scenario_label = u.label,
              row_snapshot = CASE WHEN u.relabel THEN $3::jsonb ELSE r.row_snapshot END,
              status = u.status, comment = u.comment, system_out = u.system_out,
              system_err = u.system_err, executed_by_id = $1, execution_count = r.execution_count + 1,
              last_executed_at = $2, started_at = u.started_at, finished_at = $2,
              duration_ms = u.duration_ms, updated_at = now()
         FROM unnest($4::uuid[], $5::text[], $6::boolean[], $7::text[], $8::text[], $9::text[],
                     $10::text[], $11::timestamptz[], $12::int[])
              AS u(id, label, relabel, status, comment, system_out, system_err, started_at, duration_ms)
        WHERE r.id = u.id`,
      [
        userId,
        now,
        DEFAULT_ROW_SNAPSHOT,
        rows.map((r) => r.id),
        rows.map((r) => r.label),
        rows.map((r) => r.relabel),
        rows.map((r) => r.status),
        rows.map((r) => r.comment),
        rows.map((r) => r.system_out),
        rows.map((r) => r.system_err),
        rows.map((r) => r.started_at.toISOString()),
        rows.map((r) => r.duration_ms),
      ],
    );
  }

  async insertRows(projectId: string, rows: RowInsert[], userId: string, now: Date): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO run_item_rows (id, project_id, run_item_id, row_order, scenario_label, row_snapshot,
                                  status, comment, system_out, system_err, executed_by_id,
                                  execution_count, last_executed_at, started_at, finished_at, duration_ms)
       SELECT u.id, $1, u.run_item_id, u.row_order, u.label, $4::jsonb, u.status, u.comment,
              u.system_out, u.system_err, $2, 1, $3, u.started_at, $3, u.duration_ms
         FROM unnest($5::uuid[], $6::uuid[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[],
                     $12::text[], $13::timestamptz[], $14::int[])
              AS u(id, run_item_id, row_order, label, status, comment, system_out, system_err,
                   started_at, duration_ms)`,
      [
        projectId,
        userId,
        now,
        DEFAULT_ROW_SNAPSHOT,
        rows.map((r) => r.id),
        rows.map((r) => r.run_item_id),
        rows.map((r) => r.row_order),
        rows.map((r) => r.label),
        rows.map((r) => r.status),
        rows.map((r) => r.comment),
        rows.map((r) => r.system_out),
        rows.map((r) => r.system_err),
        rows.map((r) => r.started_at.toISOString()),
        rows.map((r) => r.duration_ms),
      ],
    );
  }

  async insertRecord(record: {
    id: string;
    projectId: string;
    runId: string;
    fileName: string;
    sizeBytes: number;
    sha256: string;
    summary: object;
    userId: string;
    createdAt: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO junit_imports (id, project_id, test_run_id, file_name, size_bytes, sha256, summary,
                                  created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)`,
      [
        record.id,
        record.projectId,
        record.runId,
        record.fileName,
        record.sizeBytes,
        record.sha256,
        JSON.stringify(record.summary),
        record.userId,
        record.createdAt,
      ],
    );
  }

  /** A page of a run's import records, newest first (issue lists left out), and the total. */
  async listRecords(
    runId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: ImportRecordRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db.query<ImportRecordRow>(
        `SELECT j.id, j.project_id, j.test_run_id, j.file_name, j.size_bytes::text AS size_bytes, j.sha256,
                jsonb_build_object('status', j.summary->'status', 'summary', j.summary->'summary',
                                   'statuses', j.summary->'statuses',
                                   'source_content_type', j.summary->'source_content_type',
                                   'match_mode', j.summary->'target_run'->'match_mode') AS summary,
                j.created_by, coalesce(nullif(u.display_name, ''), u.username) AS created_by_name, j.created_at
           FROM junit_imports j
           LEFT JOIN users u ON u.id = j.created_by
          WHERE j.test_run_id = $1
          ORDER BY j.created_at DESC, j.id DESC
          LIMIT $2 OFFSET $3`,
        [runId, limit, offset],
      ),
      this.db.query<{ total: number }>(
        `SELECT count(*)::int AS total FROM junit_imports WHERE test_run_id = $1`,
        [runId],
      ),
    ]);
    return { rows, total: count[0]?.total ?? 0 };
  }
}
