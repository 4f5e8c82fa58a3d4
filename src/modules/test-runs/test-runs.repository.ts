import { Injectable } from '@nestjs/common';
import {
  KeysetOrder,
  KeysetRequest,
  keysetAfter,
  keysetColumns,
  keysetOrderBy,
} from '../../common/pagination/keyset';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { isUuid } from '../../common/persistence/ids';
import type { RunSortKey } from './dto/test-run.dto';
import type { RunAttributes, RunCi } from './run-metadata';
import type { RunStatus } from './run-status';
import type { RevisionSnapshotRow } from './snapshot-cache';
import { subscribersSql } from '../webhooks/webhooks.repository';
import type { WebhookEventType } from '../webhooks/webhook-policy';

/** The columns every run read selects (alias `r` = test_runs, `u` = creator, `m` = milestone). */
export const RUN_COLUMNS = `r.id, r.project_id, r.name, r.description, r.environment_id,
  r.environment_name, r.environment_revision_id, r.environment_revision_number,
  r.environment_snapshot_hash, r.environment_snapshot, r.milestone_id, m.name AS milestone_name,
  r.build, r.ci_provider, r.ci_branch, r.ci_commit_sha, r.ci_job_url, r.ci_pipeline_id,
  r.attributes, r.assignee_id, r.created_by,
  coalesce(nullif(u.display_name, ''), u.username) AS created_by_name,
  r.status, r.started_at, r.completed_at, r.archived_at, r.planned_item_count,
  r.count_untested, r.count_in_progress, r.count_passed, r.count_error, r.count_failure,
  r.count_blocked, r.count_skipped, r.count_xfailed, r.count_xpassed, r.created_at, r.updated_at`;

/**
 * RUN_COLUMNS with the run's own snapshot as JSON text (NULL for nearly every run: its snapshot is
 * its revision's, served from the snapshot cache): for the hot reads (GET one run, the list).
 */
export const RUN_COLUMNS_RAW_SNAPSHOT = RUN_COLUMNS.replace(
  'r.environment_snapshot,',
  'r.environment_snapshot::text AS environment_snapshot,',
);

/**
 * RUN_COLUMNS without the run's own snapshot (NULL): for reads whose answer leaves
 * `environment_snapshot` out (`fields`), which then read no snapshot at all.
 */
export const RUN_COLUMNS_NO_SNAPSHOT = RUN_COLUMNS.replace(
  'r.environment_snapshot,',
  'NULL::text AS environment_snapshot,',
);

/** The joins RUN_COLUMNS needs. */
export const RUN_JOINS = `LEFT JOIN users u ON u.id = r.created_by
  LEFT JOIN milestones m ON m.id = r.milestone_id`;

/** A run as every read answers it (RUN_COLUMNS). */
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
  /**
   * The run's own snapshot (parsed, or JSON text with RUN_COLUMNS_RAW_SNAPSHOT); null when it is
   * its revision's (`environment_revision_id`), stored once in environment_revisions.
   */
  environment_snapshot: Record<string, unknown> | string | null;
  milestone_id: string | null;
  milestone_name: string | null;
  build: string | null;
  ci_provider: string | null;
  ci_branch: string | null;
  ci_commit_sha: string | null;
  ci_job_url: string | null;
  ci_pipeline_id: string | null;
  /** Parsed jsonb: string values. */
  attributes: RunAttributes;
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

/** The lifecycle columns of a run, read under a row lock. */
export interface RunLockRow {
  id: string;
  project_id: string;
  status: RunStatus;
  assignee_id: string | null;
  milestone_id: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  archived_at: Date | null;
}

/** An environment with its current revision, as a run captures it. */
export interface EnvironmentRevisionRow {
  id: string;
  name: string;
  status: string;
  archived_at: Date | null;
  revision_id: string;
  revision_number: number;
  snapshot_hash: string;
}

/** The snapshots of revisions, by id (`= ANY($1)`): what the snapshot cache misses. */
export const REVISION_SNAPSHOTS_SQL = `SELECT id, full_snapshot FROM environment_revisions
  WHERE id = ANY($1::uuid[])`;

/** The filters of a run list (blank values already dropped by the service). */
export interface RunListFilter {
  projectId: string;
  statuses?: string[];
  environmentIds: string[];
  milestoneIds: string[];
  createdBy?: string;
  search?: string;
  /** Whole builds, matched case-insensitively (lower-cased by the database, as the index is). */
  builds?: string[];
  /** Exact `ci_branch` values. */
  branches?: string[];
  /** Lowercase hex prefix of `ci_commit_sha` (7–64 digits). */
  commitShaPrefix?: string;
  /** Containment objects (`attributes @> x`), every one must match. */
  attributes?: RunAttributes[];
  createdFrom?: Date;
  /** Exclusive upper bound of created_at (the day after a date-only `created_to`, else 1 ms after it). */
  createdBefore?: Date;
  sortBy: RunSortKey;
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** Keyset paging (`cursor`): the order and where to start; then limit/offset are unused. */
  keyset?: KeysetRequest;
  /** False: the rows leave the run's own snapshot out (RUN_COLUMNS_NO_SNAPSHOT). */
  withSnapshot?: boolean;
}

export interface NewTestRun {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  environment: {
    environmentId: string;
    name: string;
    revisionId: string;
    revisionNumber: number;
    snapshotHash: string;
  } | null;
  milestoneId: string | null;
  build: string | null;
  ci: RunCi;
  attributes: RunAttributes;
  assigneeId: string | null;
  createdBy: string;
}

/** Columns a PATCH sets, in the order they are written; absent keys keep their value. */
export type RunChanges = Partial<
  Record<
    | 'environment_id'
    | 'environment_name'
    | 'environment_revision_id'
    | 'environment_revision_number'
    | 'environment_snapshot_hash'
    | 'environment_snapshot'
    | 'milestone_id'
    | 'assignee_id'
    | 'name'
    | 'description'
    | 'build'
    | 'ci_provider'
    | 'ci_branch'
    | 'ci_commit_sha'
    | 'ci_job_url'
    | 'ci_pipeline_id'
    | 'attributes'
    | 'planned_item_count'
    | 'status'
    | 'started_at'
    | 'completed_at'
    | 'archived_at',
    unknown
  >
>;

const SORT_EXPRESSIONS: Record<RunSortKey, string> = {
  created_at: 'r.created_at',
  name: 'lower(r.name)',
  status: 'r.status',
  build: "lower(coalesce(r.build, ''))",
  environment: "lower(coalesce(r.environment_name, ''))",
};

/**
 * The keyset order of a run list (`cursor`): the sort key then the id, both in `order`. Each is
 * served by an index after `project_id`: ix_test_runs_project_created, _name, _build,
 * _environment_name and ix_test_runs_project_status_id.
 */
export function runKeysetOrder(sortBy: RunSortKey, order: 'asc' | 'desc'): KeysetOrder {
  return {
    keys: [
      { sql: SORT_EXPRESSIONS[sortBy], type: sortBy === 'created_at' ? 'timestamptz' : 'text' },
      { sql: 'r.id', type: 'uuid' },
    ],
    dir: order === 'asc' ? 'ASC' : 'DESC',
  };
}

/** SQL of test runs (`test_runs`; its `count_*` counters are written by the run-items module). */
@Injectable()
export class TestRunsRepository {
  constructor(private readonly db: Db) {}

  /**
   * One page of runs joined with creator and milestone names: an index walk in sort order that
   * stops after OFFSET + LIMIT rows (no count of every matching run, which would grow with the
   * project); then the total.
   */
  async findPage(f: RunListFilter): Promise<{ rows: TestRunRow[]; total: number | null }> {
    const params: unknown[] = [f.projectId];
    const where = ['r.project_id = $1'];
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (f.statuses?.length) where.push(`r.status = ANY(${add(f.statuses)}::varchar[])`);
    else where.push(`r.status <> 'archived'`);
    // Ids that cannot exist match nothing.
    if (f.environmentIds.length) {
      where.push(`r.environment_id = ANY(${add(f.environmentIds.filter(isUuid))}::uuid[])`);
    }
    if (f.milestoneIds.length) {
      where.push(`r.milestone_id = ANY(${add(f.milestoneIds.filter(isUuid))}::uuid[])`);
    }
    if (f.createdBy !== undefined) {
      where.push(isUuid(f.createdBy) ? `r.created_by = ${add(f.createdBy)}` : 'false');
    }
    if (f.search) {
      const p = add(likePattern(f.search));
      where.push(`(r.name ILIKE ${p} OR r.build ILIKE ${p} OR r.environment_name ILIKE ${p})`);
    }
    // Run metadata (issue #24): ix_test_runs_project_build, ix_test_runs_project_ci_branch,
    // ix_test_runs_project_ci_commit_sha (prefix range), ix_test_runs_attributes (GIN).
    if (f.builds?.length) {
      // The values are lower-cased by the same SQL lower() as the index expression (an InitPlan,
      // evaluated once): JavaScript's toLowerCase() differs for some letters (final sigma, İ).
      where.push(
        `lower(coalesce(r.build, '')) = ANY(ARRAY(SELECT lower(b) FROM unnest(${add(f.builds)}::text[]) b))`,
      );
    }
    if (f.branches?.length) where.push(`r.ci_branch = ANY(${add(f.branches)}::varchar[])`);
    if (f.commitShaPrefix !== undefined) {
      // Hex digits only (validated): nothing to escape in the pattern.
      where.push(`r.ci_commit_sha LIKE ${add(`${f.commitShaPrefix}%`)}`);
    }
    for (const pair of f.attributes ?? []) {
      where.push(`r.attributes @> ${add(JSON.stringify(pair))}::jsonb`);
    }
    if (f.createdFrom) where.push(`r.created_at >= ${add(f.createdFrom)}`);
    if (f.createdBefore) where.push(`r.created_at < ${add(f.createdBefore)}`);
    const dir = f.sortOrder === 'asc' ? 'ASC' : 'DESC';
    const order = `${SORT_EXPRESSIONS[f.sortBy]} ${dir}, r.id ${dir}`;
    const filter = where.join(' AND ');
    const filterParams = [...params];
    const columns = f.withSnapshot === false ? RUN_COLUMNS_NO_SNAPSHOT : RUN_COLUMNS_RAW_SNAPSHOT;
    if (f.keyset)
      return { rows: await this.keysetRows(f.keyset, filter, params, columns), total: null };
    const limit = add(f.limit);
    const offset = add(f.offset);
    const rows = await this.db.query<TestRunRow>(
      `WITH page AS (
         SELECT r.id FROM test_runs r
          WHERE ${filter}
          ORDER BY ${order}
          LIMIT ${limit} OFFSET ${offset}
       )
       SELECT ${columns}
         FROM page
         JOIN test_runs r ON r.id = page.id
         ${RUN_JOINS}
        ORDER BY ${order}`,
      params,
    );
    return { rows, total: await this.count(f, filter, filterParams) };
  }

  /**
   * A keyset page (`cursor`): the matching runs after the cursor's row in the keyset order, an
   * index range walk of `limit` rows wherever it starts (no OFFSET, no count), with their key
   * values (`_k0`, `_k1`) for the next cursor.
   */
  private async keysetRows(
    k: KeysetRequest,
    filter: string,
    params: unknown[],
    columns: string,
  ): Promise<TestRunRow[]> {
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const after = k.after ? ` AND ${keysetAfter(k.order, k.after, add)}` : '';
    const order = keysetOrderBy(k.order);
    return this.db.query<TestRunRow>(
      `WITH page AS (
         SELECT r.id, ${keysetColumns(k.order)} FROM test_runs r
          WHERE ${filter}${after}
          ORDER BY ${order}
          LIMIT ${add(k.limit)}
       )
       SELECT ${columns}, page._k0, page._k1
         FROM page
         JOIN test_runs r ON r.id = page.id
         ${RUN_JOINS}
        ORDER BY ${order}`,
      params,
    );
  }

  /**
   * `total` of a list: with only the project and status filters (the common case) it is read from
   * `project_run_counts`, kept by triggers on test_runs; other filters count the matching runs.
   */
  private async count(f: RunListFilter, filter: string, params: unknown[]): Promise<number> {
    const onlyStatus =
      f.environmentIds.length === 0 &&
      f.milestoneIds.length === 0 &&
      f.createdBy === undefined &&
      !f.search &&
      !f.builds?.length &&
      !f.branches?.length &&
      f.commitShaPrefix === undefined &&
      !f.attributes?.length &&
      !f.createdFrom &&
      !f.createdBefore;
    if (onlyStatus) {
      const rows = f.statuses?.length
        ? await this.db.query<{ n: string | null }>(
            `SELECT sum(n) AS n FROM project_run_counts WHERE project_id = $1 AND status = ANY($2::varchar[])`,
            [f.projectId, f.statuses],
          )
        : await this.db.query<{ n: string | null }>(
            `SELECT sum(n) AS n FROM project_run_counts WHERE project_id = $1 AND status <> 'archived'`,
            [f.projectId],
          );
      return Number(rows[0]?.n ?? 0);
    }
    const c = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM test_runs r WHERE ${filter}`,
      params,
    );
    return c[0]?.n ?? 0;
  }

  /** The run with the caller's membership role (one prepared statement: the hot GET). */
  async findForUser(
    id: string,
    userId: string,
    withSnapshot = true,
  ): Promise<(TestRunRow & { caller_role: string | null }) | undefined> {
    const rows = await this.db.prepared<TestRunRow & { caller_role: string | null }>(
      withSnapshot ? 'test-runs.get-for-user' : 'test-runs.get-for-user-no-snapshot',
      `SELECT ${withSnapshot ? RUN_COLUMNS_RAW_SNAPSHOT : RUN_COLUMNS_NO_SNAPSHOT}, pm.role AS caller_role
         FROM test_runs r ${RUN_JOINS}
         LEFT JOIN project_members pm ON pm.project_id = r.project_id AND pm.user_id = $2
        WHERE r.id = $1`,
      [id, userId],
    );
    return rows[0];
  }

  async findById(id: string): Promise<TestRunRow | undefined> {
    const rows = await this.db.prepared<TestRunRow>(
      'test_runs.by_id',
      `SELECT ${RUN_COLUMNS} FROM test_runs r ${RUN_JOINS} WHERE r.id = $1`,
      [id],
    );
    return rows[0];
  }

  /**
   * Inserts the run and answers it as every read does (RUN_COLUMNS, its own snapshot parsed): one
   * statement, the insert's RETURNING joined with creator and milestone names, and the ids of the
   * project's webhook subscriptions to `event` (`subscribers`, read as the webhooks module does).
   */
  async insert(
    run: NewTestRun,
    event: WebhookEventType,
  ): Promise<TestRunRow & { subscribers: string[] }> {
    const env = run.environment;
    const rows = await this.db.prepared<TestRunRow & { subscribers: string[] }>(
      'test_runs.insert',
      `WITH r AS (
         INSERT INTO test_runs (id, project_id, name, description, environment_id, environment_name,
                                environment_revision_id, environment_revision_number,
                                environment_snapshot_hash, environment_snapshot, milestone_id, build,
                                assignee_id, created_by, attributes, ci_provider, ci_branch,
                                ci_commit_sha, ci_job_url, ci_pipeline_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb, $16, $17,
                 $18, $19, $20)
         RETURNING *
       )
       SELECT ${RUN_COLUMNS}, ARRAY(${subscribersSql('r.project_id', '$21')}) AS subscribers
         FROM r ${RUN_JOINS}`,
      [
        run.id,
        run.projectId,
        run.name,
        run.description,
        env?.environmentId ?? null,
        env?.name ?? null,
        env?.revisionId ?? null,
        env?.revisionNumber ?? null,
        env?.snapshotHash ?? null,
        // With a revision the snapshot is the revision's, stored there once (NULL here).
        env ? null : '{}',
        run.milestoneId,
        run.build,
        run.assigneeId,
        run.createdBy,
        JSON.stringify(run.attributes),
        run.ci.provider,
        run.ci.branch,
        run.ci.commit_sha,
        run.ci.job_url,
        run.ci.pipeline_id,
        event,
      ],
    );
    return rows[0];
  }

  /** Sets the given columns (in their order) and updated_at; nothing to set writes nothing. */
  async update(id: string, changes: RunChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [column, value] of Object.entries(changes)) {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length === 0) return;
    await this.db.query(
      `UPDATE test_runs SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
      params,
    );
  }

  /** Permanently deletes the run with its items, rows and history (cascade). */
  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM test_runs WHERE id = $1`, [id]);
  }

  /** `FOR UPDATE` on the run: its lifecycle columns. */
  async lockForUpdate(id: string): Promise<RunLockRow | undefined> {
    const rows = await this.db.prepared<RunLockRow>(
      'test_runs.lock',
      `SELECT id, project_id, status, assignee_id, milestone_id, started_at, completed_at,
              archived_at
         FROM test_runs WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return rows[0];
  }

  /** The run's attributes (the caller holds the run's lock): what an import merges into. */
  async findAttributes(id: string): Promise<RunAttributes> {
    const rows = await this.db.query<{ attributes: RunAttributes }>(
      `SELECT attributes FROM test_runs WHERE id = $1`,
      [id],
    );
    return rows[0]?.attributes ?? {};
  }

  /** Run items that are in_progress or have a row in_progress (a read: blocks completion). */
  async countItemsInProgress(runId: string): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM run_items ri
        WHERE ri.test_run_id = $1
          AND (ri.status = 'in_progress'
               OR EXISTS (SELECT 1 FROM run_item_rows w
                           WHERE w.run_item_id = ri.id AND w.status = 'in_progress'))`,
      [runId],
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * An environment of the project with its current revision. With `milestoneId` (a uuid) the same
   * statement reads that milestone's status under a key-share lock, as
   * {@link findMilestoneStatusForKeyShare} does (`milestone_status`, null when not the project's).
   */
  async findEnvironmentRevision(
    projectId: string,
    environmentId: string,
    milestoneId?: string,
  ): Promise<(EnvironmentRevisionRow & { milestone_status?: string | null }) | undefined> {
    const milestone =
      milestoneId === undefined
        ? ''
        : `, (SELECT m.status FROM milestones m WHERE m.id = $3 AND m.project_id = $2
               FOR KEY SHARE) AS milestone_status`;
    const rows = await this.db.prepared<
      EnvironmentRevisionRow & { milestone_status?: string | null }
    >(
      milestoneId === undefined
        ? 'test_runs.environment_revision'
        : 'test_runs.environment_revision_milestone',
      `SELECT e.id, e.name, e.status, e.archived_at, r.id AS revision_id, r.revision_number,
              r.snapshot_hash${milestone}
         FROM environments e JOIN environment_revisions r ON r.id = e.current_revision_id
        WHERE e.id = $1 AND e.project_id = $2`,
      milestoneId === undefined
        ? [environmentId, projectId]
        : [environmentId, projectId, milestoneId],
    );
    return rows[0];
  }

  /** The snapshots of these revisions (parsed jsonb), one query. */
  async findRevisionSnapshots(revisionIds: string[]): Promise<RevisionSnapshotRow[]> {
    return this.db.query<RevisionSnapshotRow>(REVISION_SNAPSHOTS_SQL, [revisionIds]);
  }

  /**
   * The status of a milestone of the project. Key-share lock: a concurrent DELETE waits for this
   * transaction, so the insert or update that follows never meets a vanished milestone (FK
   * violation → 500).
   */
  async findMilestoneStatusForKeyShare(
    projectId: string,
    milestoneId: string,
  ): Promise<string | undefined> {
    const rows = await this.db.prepared<{ status: string }>(
      'test_runs.milestone_status',
      `SELECT status FROM milestones WHERE id = $1 AND project_id = $2 FOR KEY SHARE`,
      [milestoneId, projectId],
    );
    return rows[0]?.status;
  }
}
