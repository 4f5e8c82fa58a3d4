import { Injectable } from '@nestjs/common';
import {
  KeysetOrder,
  KeysetRequest,
  keysetAfter,
  keysetColumns,
} from '../../common/pagination/keyset';
import { Db } from '../../common/persistence/db.service';
import { RUN_ITEMS_BY_CASE_SQL } from '../run-items/run-items.repository';
import type { RunStatus } from '../test-runs/run-status';
import type { CandidateCase, CandidateFilter, SuiteRow } from './matching';

/** `loadCandidates` by key: a project's cases under some automation ids or title probes. */
export const CANDIDATES_BY_KEY_SQL = `SELECT id, title, automation_id, suite_id, status
  FROM test_cases
 WHERE id IN (SELECT id FROM test_cases
               WHERE project_id = $1 AND automation_id IN (SELECT unnest($2::text[]))
              UNION ALL
              SELECT id FROM test_cases
               WHERE project_id = $1 AND status = 'active'
                 AND test_case_title_probe(title) IN (SELECT unnest($3::text[])))
 ORDER BY key_number, id`;

/** `loadCandidates` of every case: the active ones and the automated others. */
export const ALL_CANDIDATES_SQL = `SELECT id, title, automation_id, suite_id, status FROM test_cases
 WHERE project_id = $1 AND (status = 'active' OR automation_id IS NOT NULL)
 ORDER BY key_number, id`;

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
  /** The counters the list shows, read out of `summary`. */
  summary: Record<string, unknown>;
  created_by: string;
  created_by_name: string | null;
  created_at: Date;
}

/** An import record with its state (`GET /imports/{id}`, background imports). */
export interface ImportJobRow {
  id: string;
  project_id: string;
  test_run_id: string | null;
  file_name: string;
  size_bytes: string;
  sha256: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  progress_processed: number;
  progress_total: number | null;
  started_at: Date | null;
  finished_at: Date | null;
  problem: Record<string, unknown> | null;
  request: Record<string, unknown> | null;
  /** The answer without its per-case lists; null unless succeeded. */
  summary: Record<string, unknown> | null;
  /** The whole answer's JSON text, as stored; null unless succeeded. */
  answer: string | null;
  created_by: string;
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

  /**
   * The run. `keyShare`: `FOR KEY SHARE` until the request's transaction ends, so a background
   * import's record (which references the run) is inserted while the run cannot be deleted: a
   * delete in flight is waited for, and the run is then gone (null), instead of the record's
   * foreign key failing.
   */
  async findRun(runId: string, keyShare = false): Promise<RunRef | null> {
    const rows = await this.db.query<RunRef>(
      `SELECT id, project_id, name, status, created_at FROM test_runs WHERE id = $1${
        keyShare ? ' FOR KEY SHARE' : ''
      }`,
      [runId],
    );
    return rows[0] ?? null;
  }

  /**
   * Open runs of the project named `name` (case-insensitive), newest first — candidates of a
   * project-level import (reference §4.12). `lock`: `FOR UPDATE` (the run lock every item change
   * takes), so a run completed, archived or deleted by a request committing meanwhile is waited for
   * and then no longer a candidate (PostgreSQL checks the status again on the locked row), instead
   * of being chosen and then refused.
   */
  async findOpenRunsByName(projectId: string, name: string, lock = false): Promise<RunRef[]> {
    return this.db.query<RunRef>(
      `SELECT id, project_id, name, status, created_at FROM test_runs
        WHERE project_id = $1 AND lower(name) = lower($2) AND status IN ('not_started', 'in_progress')
        ORDER BY created_at DESC, id DESC${lock ? ' FOR UPDATE' : ''}`,
      [projectId, name],
    );
  }

  /** Serialises project-level imports that resolve the same run name (until the transaction ends). */
  async lockRunName(projectId: string, name: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `junit-import:${projectId}:${name.toLowerCase()}`,
    ]);
  }

  /**
   * What matching needs of the project's cases for one report. With a `filter`: every case holding
   * one of its automation ids (whatever its status: an inactive one's id cannot be taken by a new
   * case) and the active cases whose title probe is one of its (`test_case_title_probe`, indexed; a
   * superset of the cases its normalised titles can match, see `titleProbe`), each key an index
   * lookup, so the read scales with the report. Without one (`readsByKeys` says when): the active
   * cases and the automated others, one sequential read. `MatchIndex` then keeps the exact ones.
   * (`unnest` semi-joins rather than `= ANY`: with thousands of keys the planner turned `= ANY`
   * into a sequential scan testing every case against the whole array.)
   */
  async loadCandidates(
    projectId: string,
    filter: CandidateFilter | null,
  ): Promise<CandidateCase[]> {
    if (filter === null) return this.db.query<CandidateCase>(ALL_CANDIDATES_SQL, [projectId]);
    return this.db.query<CandidateCase>(CANDIDATES_BY_KEY_SQL, [
      projectId,
      filter.automationIds,
      filter.titleProbes,
    ]);
  }

  /**
   * The project's suites. `lock`: `FOR KEY SHARE` on each, held until the import commits, so that
   * every suite a new case goes into still exists then (test_cases.suite_id has no foreign key:
   * deleting a suite locks it `FOR UPDATE`, which waits for this lock, and then moves its cases; a
   * suite deleted before this read is not returned). The locks are taken in id order, the order
   * suite deletes and moves lock suites in (`SuitesRepository.lockForDelete`, `lockAllOfProject`):
   * in creation order, an import and a delete could each hold a suite the other waits for. The
   * rows are answered oldest first either way.
   */
  async loadSuites(projectId: string, lock: boolean): Promise<SuiteRow[]> {
    return this.db.query<SuiteRow>(
      lock
        ? `SELECT id, parent_id, name FROM (
             SELECT id, parent_id, name, created_at FROM suites WHERE project_id = $1
              ORDER BY id FOR KEY SHARE
           ) s ORDER BY created_at, id`
        : `SELECT id, parent_id, name FROM suites WHERE project_id = $1 ORDER BY created_at, id`,
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

  /**
   * The record of a synchronous import: `succeeded`, started and finished when it was made.
   * `answer` is stored as `json`, its text kept as it is (the whole answer: 24 MB for 100,000 new
   * cases, which `jsonb` would convert to its binary form), `summary` as `jsonb` (what the list
   * reads: migration `ImportAnswerText`).
   */
  async insertRecord(record: {
    id: string;
    projectId: string;
    runId: string;
    fileName: string;
    sizeBytes: number;
    sha256: string;
    /** The answer without its per-case lists, as JSON text. */
    summaryJson: string;
    /** The whole answer's JSON text. */
    answerJson: string;
    userId: string;
    createdAt: Date;
    testcases: number;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO junit_imports (id, project_id, test_run_id, file_name, size_bytes, sha256, summary,
                                  answer, created_by, created_at, status, progress_processed,
                                  progress_total, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::json, $9, $10, 'succeeded', $11, $11, $10, $10)`,
      [
        record.id,
        record.projectId,
        record.runId,
        record.fileName,
        record.sizeBytes,
        record.sha256,
        record.summaryJson,
        record.answerJson,
        record.userId,
        record.createdAt,
        record.testcases,
      ],
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Background imports (issue #18 §3)

  /** The record of a background import, `queued` (its files are stored beside it). */
  async insertQueued(record: {
    id: string;
    projectId: string;
    runId: string | null;
    fileName: string;
    sizeBytes: number;
    sha256: string;
    request: object;
    userId: string;
    createdAt: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO junit_imports (id, project_id, test_run_id, file_name, size_bytes, sha256, summary,
                                  created_by, created_at, status, request)
       VALUES ($1, $2, $3, $4, $5, $6, '{}'::jsonb, $7, $8, 'queued', $9::jsonb)`,
      [
        record.id,
        record.projectId,
        record.runId,
        record.fileName,
        record.sizeBytes,
        record.sha256,
        record.userId,
        record.createdAt,
        JSON.stringify(record.request),
      ],
    );
  }

  /** One stored chunk of a background import's file (in the current transaction). */
  async insertChunk(
    importId: string,
    projectId: string,
    chunk: { fileIndex: number; seq: number; data: Buffer },
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO import_uploads (import_id, project_id, file_index, seq, data) VALUES ($1, $2, $3, $4, $5)`,
      [importId, projectId, chunk.fileIndex, chunk.seq, chunk.data],
    );
  }

  /** Stored chunks of one file from `fromSeq` on, in order (at most `limit`). */
  async readChunks(
    importId: string,
    fileIndex: number,
    fromSeq: number,
    limit: number,
  ): Promise<Array<{ seq: number; data: Buffer }>> {
    return this.db.query<{ seq: number; data: Buffer }>(
      `SELECT seq, data FROM import_uploads
        WHERE import_id = $1 AND file_index = $2 AND seq >= $3
        ORDER BY seq LIMIT $4`,
      [importId, fileIndex, fromSeq, limit],
    );
  }

  /** An import record with its state (any import, synchronous or background). */
  async findImport(id: string): Promise<ImportJobRow | null> {
    const rows = await this.db.query<ImportJobRow>(
      `SELECT id, project_id, test_run_id, file_name, size_bytes::text AS size_bytes, sha256, status,
              progress_processed, progress_total, started_at, finished_at, problem, request,
              CASE WHEN status = 'succeeded' THEN summary END AS summary, answer::text AS answer,
              created_by, created_at
         FROM junit_imports WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Serialises the attempts at one background import (until the transaction ends), then answers
   * its state as seen under that lock.
   */
  async lockImport(id: string): Promise<string | null> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `junit-import-job:${id}`,
    ]);
    const rows = await this.db.query<{ status: string }>(
      `SELECT status FROM junit_imports WHERE id = $1`,
      [id],
    );
    return rows[0]?.status ?? null;
  }

  /**
   * An attempt starts (on its own, outside the import's transaction, so that it shows at once):
   * `running`, progress reset. False when the import has ended (or is gone).
   */
  async markRunning(id: string): Promise<boolean> {
    const rows = await this.db.dataSource.query<[unknown[], number]>(
      `UPDATE junit_imports
          SET status = 'running', started_at = now(), progress_processed = 0, progress_total = NULL
        WHERE id = $1 AND status IN ('queued', 'running')`,
      [id],
    );
    return rows[1] > 0;
  }

  /** Progress of a running import (on its own, outside the import's transaction). */
  async setProgress(id: string, processed: number, total: number): Promise<void> {
    await this.db.dataSource.query(
      `UPDATE junit_imports SET progress_processed = $2, progress_total = $3
        WHERE id = $1 AND status = 'running'`,
      [id, processed, total],
    );
  }

  /**
   * A background import applied (in its transaction): `succeeded` with its target run, file facts
   * and answer (stored as {@link insertRecord} stores them); its stored files are deleted.
   */
  async completeRecord(record: {
    id: string;
    runId: string;
    fileName: string;
    /** The answer without its per-case lists, as JSON text. */
    summaryJson: string;
    /** The whole answer's JSON text. */
    answerJson: string;
    testcases: number;
  }): Promise<void> {
    await this.db.query(
      `UPDATE junit_imports
          SET status = 'succeeded', test_run_id = $2, file_name = $3, summary = $4::jsonb,
              answer = $5::json, progress_processed = $6, progress_total = $6, finished_at = now(),
              request = NULL
        WHERE id = $1`,
      [
        record.id,
        record.runId,
        record.fileName,
        record.summaryJson,
        record.answerJson,
        record.testcases,
      ],
    );
    await this.db.query(`DELETE FROM import_uploads WHERE import_id = $1`, [record.id]);
  }

  /**
   * A background import failed for good (in the current transaction): `failed` with its problem,
   * its stored files deleted. False (nothing changes) when the import has already ended or is gone.
   */
  async failRecord(id: string, problem: object): Promise<boolean> {
    const [, updated] = await this.db.query<unknown>(
      `UPDATE junit_imports SET status = 'failed', problem = $2::jsonb, finished_at = now(),
              request = NULL
        WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, JSON.stringify(problem)],
    );
    await this.db.query(`DELETE FROM import_uploads WHERE import_id = $1`, [id]);
    return Number(updated) > 0;
  }

  /**
   * A page of a run's import records that succeeded, newest first (issue lists left out), and the
   * total; with `keyset` (`cursor`, order IMPORT_KEYSET_ORDER) the records after the cursor's, an
   * index range walk on ix_junit_imports_run_created, and no total (null).
   */
  async listRecords(
    runId: string,
    limit: number,
    offset: number,
    keyset?: KeysetRequest,
  ): Promise<{ rows: ImportRecordRow[]; total: number | null }> {
    const params: unknown[] = [runId, keyset ? keyset.limit : limit, keyset ? 0 : offset];
    const after = keyset?.after
      ? ` AND ${keysetAfter(keyset.order, keyset.after, (v) => `$${params.push(v)}`)}`
      : '';
    const keys = keyset ? `, ${keysetColumns(keyset.order)}` : '';
    const [rows, count] = await Promise.all([
      this.db.query<ImportRecordRow>(
        `SELECT j.id, j.project_id, j.test_run_id, j.file_name, j.size_bytes::text AS size_bytes, j.sha256,
                jsonb_build_object('status', j.summary->'status', 'summary', j.summary->'summary',
                                   'statuses', j.summary->'statuses',
                                   'source_content_type', j.summary->'source_content_type',
                                   'match_mode', j.summary->'target_run'->'match_mode') AS summary,
                j.created_by, coalesce(nullif(u.display_name, ''), u.username) AS created_by_name, j.created_at${keys}
           FROM junit_imports j
           LEFT JOIN users u ON u.id = j.created_by
          WHERE j.test_run_id = $1 AND j.status = 'succeeded'${after}
          ORDER BY j.created_at DESC, j.id DESC
          LIMIT $2 OFFSET $3`,
        params,
      ),
      keyset
        ? Promise.resolve([])
        : this.db.query<{ total: number }>(
            `SELECT count(*)::int AS total FROM junit_imports WHERE test_run_id = $1 AND status = 'succeeded'`,
            [runId],
          ),
    ]);
    return { rows, total: keyset ? null : (count[0]?.total ?? 0) };
  }
}

/** The order of a run's import records (newest first, ties by id) as a keyset (`cursor`). */
export const IMPORT_KEYSET_ORDER: KeysetOrder = {
  keys: [
    { sql: 'j.created_at', type: 'timestamptz' },
    { sql: 'j.id', type: 'uuid' },
  ],
  dir: 'DESC',
};
