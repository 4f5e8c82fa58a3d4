import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import { RUN_ITEMS_BY_CASE_SQL } from '../run-items/run-items.repository';
import type { RunStatus } from '../test-runs/run-status';
import type { CandidateCase, SuiteRow } from './matching';

/** A run as the import sees it. */
export interface RunRef {
  id: string;
  project_id: string;
  name: string;
  status: RunStatus;
  created_at: Date;
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

/**
 * SQL of the JUnit import: its reads (the target run, the candidates of matching, the run items of
 * a run-level filter; one query per kind, `= ANY($n)` for batches) and its own record
 * (`junit_imports`). Suites and cases are written by their modules' repositories, items, rows and
 * counters by the run-items module's writer.
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
