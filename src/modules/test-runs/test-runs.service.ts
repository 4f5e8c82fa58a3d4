import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { isProjectRole } from '../../common/access/roles';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { Db } from '../../common/persistence/db.service';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import {
  CreateTestRunFields,
  ListTestRunsQueryDto,
  RunSortKey,
  TestRunDto,
  UpdateTestRunDto,
} from './dto/test-run.dto';
import {
  checkRunTimestampFields,
  decideRunTransition,
  requiredRoleForRunPatch,
  RunStatus,
  RunTimestampField,
} from './run-status';
import {
  RUN_COLUMNS,
  RUN_COLUMNS_RAW_SNAPSHOT,
  RUN_JOINS,
  TestRunRow,
  toTestRunDto,
} from './test-run.mapper';
import { isDateOnly, toInstant } from '../../common/validation/datetime';

/** The environment revision captured on a run. */
interface EnvironmentCapture {
  environmentId: string;
  name: string;
  revisionId: string;
  revisionNumber: number;
  snapshotHash: string;
  snapshot: Record<string, unknown>;
}

/** The lifecycle state of a run, read under a row lock. */
export interface LockedRun {
  id: string;
  projectId: string;
  status: RunStatus;
  assigneeId: string | null;
  milestoneId: string | null;
  startedAt: Date | null;
  completedAt: Date | null;
  archivedAt: Date | null;
}

const SORT_EXPRESSIONS: Record<RunSortKey, string> = {
  created_at: 'r.created_at',
  name: 'lower(r.name)',
  status: 'r.status',
  build: "lower(coalesce(r.build, ''))",
  environment: "lower(coalesce(r.environment_name, ''))",
};

/** Blank-after-trim ids count as absent. */
function blankToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

/**
 * Test runs (api.md §2.1, §3.1, §4.1; CONTRACT §5). Exported for test plans' create-run:
 * `create(access, user, fields)` and `update(access, user, id, patch)`; and for run items:
 * `lockForItemChange(runId)` and `refreshCounters(runId)`.
 */
@Injectable()
export class TestRunsService {
  constructor(
    private readonly db: Db,
    private readonly accessService: AccessService,
  ) {}

  /** One query: the page joined with creator and milestone names, plus the total (window). */
  async list(q: ListTestRunsQueryDto): Promise<Page<TestRunDto>> {
    const params: unknown[] = [q.project_id];
    const where = ['r.project_id = $1'];
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (q.status?.length) where.push(`r.status = ANY(${add(q.status)}::varchar[])`);
    else where.push(`r.status <> 'archived'`);
    // Blank values are dropped (the reference does the same); ids that cannot exist match nothing.
    const environmentIds = q.environment_id?.filter((v) => v !== '') ?? [];
    if (environmentIds.length) {
      where.push(`r.environment_id = ANY(${add(environmentIds.filter(isUuid))}::uuid[])`);
    }
    const milestoneIds = q.milestone_id?.filter((v) => v !== '') ?? [];
    if (milestoneIds.length) {
      where.push(`r.milestone_id = ANY(${add(milestoneIds.filter(isUuid))}::uuid[])`);
    }
    if (q.created_by !== undefined && q.created_by !== '') {
      where.push(isUuid(q.created_by) ? `r.created_by = ${add(q.created_by)}` : 'false');
    }
    if (q.search) {
      const p = add(likePattern(q.search));
      where.push(`(r.name ILIKE ${p} OR r.build ILIKE ${p} OR r.environment_name ILIKE ${p})`);
    }
    if (q.created_from) where.push(`r.created_at >= ${add(toInstant(q.created_from))}`);
    if (q.created_to) {
      if (isDateOnly(q.created_to)) {
        const end = toInstant(q.created_to);
        end.setUTCDate(end.getUTCDate() + 1);
        where.push(`r.created_at < ${add(end)}`);
      } else {
        where.push(`r.created_at <= ${add(toInstant(q.created_to))}`);
      }
    }
    const dir = (q.sort_order ?? 'desc') === 'asc' ? 'ASC' : 'DESC';
    const key = SORT_EXPRESSIONS[q.sort_by ?? 'created_at'];
    const order = `${key} ${dir}, r.id ${dir}`;
    const filter = where.join(' AND ');
    const filterParams = [...params];
    const limit = add(q.page_size);
    const offset = add(offsetOf(q.page, q.page_size));
    // The page: an index walk in sort order that stops after OFFSET + LIMIT rows (no count of
    // every matching run, which would grow with the project).
    const rows = await this.db.query<TestRunRow>(
      `WITH page AS (
         SELECT r.id FROM test_runs r
          WHERE ${filter}
          ORDER BY ${order}
          LIMIT ${limit} OFFSET ${offset}
       )
       SELECT ${RUN_COLUMNS_RAW_SNAPSHOT}
         FROM page
         JOIN test_runs r ON r.id = page.id
         ${RUN_JOINS}
        ORDER BY ${order}`,
      params,
    );
    const total = await this.countForList(q, filter, filterParams);
    return pageOf(rows.map(toTestRunDto), q.page, q.page_size, total);
  }

  /**
   * `total` of a list: with only the project and status filters (the common case) it is read from
   * `project_run_counts`, kept by triggers on test_runs; other filters count the matching runs.
   */
  private async countForList(
    q: ListTestRunsQueryDto,
    filter: string,
    params: unknown[],
  ): Promise<number> {
    const onlyStatus =
      !q.environment_id?.some((v) => v !== '') &&
      !q.milestone_id?.some((v) => v !== '') &&
      (q.created_by === undefined || q.created_by === '') &&
      !q.search &&
      !q.created_from &&
      !q.created_to;
    if (onlyStatus) {
      const rows = q.status?.length
        ? await this.db.query<{ n: string | null }>(
            `SELECT sum(n) AS n FROM project_run_counts WHERE project_id = $1 AND status = ANY($2::varchar[])`,
            [q.project_id, q.status],
          )
        : await this.db.query<{ n: string | null }>(
            `SELECT sum(n) AS n FROM project_run_counts WHERE project_id = $1 AND status <> 'archived'`,
            [q.project_id],
          );
      return Number(rows[0]?.n ?? 0);
    }
    const c = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM test_runs r WHERE ${filter}`,
      params,
    );
    return c[0]?.n ?? 0;
  }

  /**
   * GET of one run for a caller: access check and read in ONE query (the run with creator and
   * milestone names, counters on the row, and the caller's membership). Non-members and missing
   * runs alike get 404 `test_run_not_found`; administrators see every run; any member is at least
   * viewer, the minimum role of this read.
   */
  async getForUser(user: AuthenticatedUser, id: string): Promise<TestRunDto> {
    if (!isUuid(id)) throw AppException.notFound('test_run_not_found', 'Test run');
    const rows = await this.db.prepared<TestRunRow & { caller_role: string | null }>(
      'test-runs.get-for-user',
      `SELECT ${RUN_COLUMNS_RAW_SNAPSHOT}, pm.role AS caller_role
         FROM test_runs r ${RUN_JOINS}
         LEFT JOIN project_members pm ON pm.project_id = r.project_id AND pm.user_id = $2
        WHERE r.id = $1`,
      [id, user.id],
    );
    const row = rows[0];
    if (!row || (!user.isAdmin && !isProjectRole(row.caller_role))) {
      throw AppException.notFound('test_run_not_found', 'Test run');
    }
    return toTestRunDto(row);
  }

  /** One query: the run with creator and milestone names; counters are on the row. */
  async get(id: string): Promise<TestRunDto> {
    const rows = await this.db.query<TestRunRow>(
      `SELECT ${RUN_COLUMNS} FROM test_runs r ${RUN_JOINS} WHERE r.id = $1`,
      [id],
    );
    if (!rows[0]) throw AppException.notFound('test_run_not_found', 'Test run');
    return toTestRunDto(rows[0]);
  }

  /**
   * Creates a run in `access.projectId` (caller already checked: tester). Validates and captures
   * the environment's current revision, validates milestone and assignee. Returns the run object.
   */
  async create(
    access: ProjectAccess,
    user: AuthenticatedUser,
    fields: CreateTestRunFields,
  ): Promise<TestRunDto> {
    const projectId = access.projectId;
    const environmentId = blankToNull(fields.environment_id);
    const env = environmentId ? await this.captureEnvironment(projectId, environmentId) : null;
    const milestoneId = blankToNull(fields.milestone_id);
    if (milestoneId) await this.checkMilestone(projectId, milestoneId);
    const assignee = blankToNull(fields.assignee);
    if (assignee) await this.checkAssignee(projectId, assignee);
    const id = uuidv7();
    await this.db.query(
      `INSERT INTO test_runs (id, project_id, name, description, environment_id, environment_name,
                              environment_revision_id, environment_revision_number,
                              environment_snapshot_hash, environment_snapshot, milestone_id, build,
                              assignee_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        id,
        projectId,
        fields.name,
        fields.description ?? null,
        env?.environmentId ?? null,
        env?.name ?? null,
        env?.revisionId ?? null,
        env?.revisionNumber ?? null,
        env?.snapshotHash ?? null,
        JSON.stringify(env?.snapshot ?? {}),
        milestoneId,
        fields.build ?? null,
        assignee,
        user.id,
      ],
    );
    return this.get(id);
  }

  /**
   * PATCH of a run (api.md §3.1, CONTRACT §5). Order: timestamp shape (422) → role for the target
   * status (403) → archived run (409 run_archived) → transition rules (409) → referenced
   * environment / milestone / assignee (422) → write. All in the request's transaction.
   */
  async update(
    access: ProjectAccess,
    _user: AuthenticatedUser,
    id: string,
    dto: UpdateTestRunDto,
  ): Promise<TestRunDto> {
    const to = dto.status ?? null;
    const explicit: Partial<Record<RunTimestampField, Date | null>> = {
      started_at: dto.started_at ? toInstant(dto.started_at) : null,
      completed_at: dto.completed_at ? toInstant(dto.completed_at) : null,
      archived_at: dto.archived_at ? toInstant(dto.archived_at) : null,
    };
    const shape = checkRunTimestampFields(to, explicit);
    if (shape) throw new AppException(shape.code, shape.detail, shape.errors);
    this.accessService.require(
      access,
      requiredRoleForRunPatch(to),
      to === 'archived' ? 'Archiving a run' : undefined,
    );

    const run = await this.lock(id);
    const itemsInProgress = to === 'completed' ? await this.countItemsInProgress(id) : 0;
    const decision = decideRunTransition({
      from: run.status,
      to,
      role: access.role,
      itemsInProgress,
      explicitTimestamps: explicit,
      current: {
        started_at: run.startedAt,
        completed_at: run.completedAt,
        archived_at: run.archivedAt,
      },
      now: new Date(),
    });
    if (!decision.ok) throw new AppException(decision.code, decision.detail, decision.errors);

    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };

    if (dto.environment_id !== undefined) {
      const environmentId = dto.environment_id;
      if (environmentId === null || environmentId === '') {
        throw new AppException(
          'invalid_environment',
          'environment_id cannot be removed from a run; give another environment instead',
          { environment_id: ['must be the id of an environment of this project, not null'] },
        );
      }
      const env = await this.captureEnvironment(run.projectId, environmentId);
      set('environment_id', env.environmentId);
      set('environment_name', env.name);
      set('environment_revision_id', env.revisionId);
      set('environment_revision_number', env.revisionNumber);
      set('environment_snapshot_hash', env.snapshotHash);
      set('environment_snapshot', JSON.stringify(env.snapshot));
    }
    if (dto.milestone_id !== undefined) {
      const milestoneId = blankToNull(dto.milestone_id);
      // Re-sending the current link is accepted even if that milestone was archived since.
      if (milestoneId && milestoneId !== run.milestoneId) {
        await this.checkMilestone(run.projectId, milestoneId);
      }
      set('milestone_id', milestoneId);
    }
    if (dto.assignee !== undefined) {
      const assignee = blankToNull(dto.assignee);
      if (assignee && assignee !== run.assigneeId)
        await this.checkAssignee(run.projectId, assignee);
      set('assignee_id', assignee);
    }
    if (dto.name !== undefined) set('name', dto.name);
    if (dto.description !== undefined) set('description', dto.description);
    if (dto.build !== undefined) set('build', dto.build);
    if (dto.planned_item_count !== undefined) set('planned_item_count', dto.planned_item_count);
    if (decision.changed) {
      set('status', decision.status);
      for (const [field, value] of Object.entries(decision.timestamps)) set(field, value);
    }
    if (sets.length > 0) {
      await this.db.query(
        `UPDATE test_runs SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
    }
    return this.get(id);
  }

  /** Permanently deletes the run with its items, rows and history (cascade). */
  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM test_runs WHERE id = $1`, [id]);
  }

  /**
   * Locks the run for a change of its items/rows and checks it is open: 404 when missing,
   * 409 `run_closed` when completed or archived (CONTRACT §5).
   */
  async lockForItemChange(runId: string): Promise<LockedRun> {
    const run = await this.lock(runId);
    if (run.status === 'completed' || run.status === 'archived') {
      throw new AppException(
        'run_closed',
        `The run is ${run.status}; its items and results can no longer change`,
      );
    }
    return run;
  }

  /**
   * Recomputes the item counters stored on the run from its items (one statement). Call after any
   * change of items in the same transaction, with the run locked (`lockForItemChange`).
   */
  async refreshCounters(runId: string): Promise<void> {
    await this.db.query(
      `UPDATE test_runs r
          SET count_untested = c.untested, count_in_progress = c.in_progress,
              count_passed = c.passed, count_error = c.error, count_failure = c.failure,
              count_blocked = c.blocked, count_skipped = c.skipped, count_xfailed = c.xfailed,
              count_xpassed = c.xpassed, updated_at = now()
         FROM (SELECT count(*) FILTER (WHERE status = 'untested')::int AS untested,
                      count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
                      count(*) FILTER (WHERE status = 'passed')::int AS passed,
                      count(*) FILTER (WHERE status = 'error')::int AS error,
                      count(*) FILTER (WHERE status = 'failure')::int AS failure,
                      count(*) FILTER (WHERE status = 'blocked')::int AS blocked,
                      count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
                      count(*) FILTER (WHERE status = 'xfailed')::int AS xfailed,
                      count(*) FILTER (WHERE status = 'xpassed')::int AS xpassed
                 FROM run_items WHERE test_run_id = $1) c
        WHERE r.id = $1`,
      [runId],
    );
  }

  /** Throws 422 `invalid_assignee` unless the user may access the project. */
  async checkAssignee(projectId: string, userId: string, field = 'assignee'): Promise<void> {
    if (!isUuid(userId) || !(await this.accessService.canAccess(userId, projectId))) {
      throw new AppException('invalid_assignee', 'The assignee has no access to this project', {
        [field]: ['must be the id of a user with access to the project'],
      });
    }
  }

  private async lock(id: string): Promise<LockedRun> {
    const rows = await this.db.query<{
      id: string;
      project_id: string;
      status: RunStatus;
      assignee_id: string | null;
      milestone_id: string | null;
      started_at: Date | null;
      completed_at: Date | null;
      archived_at: Date | null;
    }>(
      `SELECT id, project_id, status, assignee_id, milestone_id, started_at, completed_at,
              archived_at
         FROM test_runs WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const r = rows[0];
    if (!r) throw AppException.notFound('test_run_not_found', 'Test run');
    return {
      id: r.id,
      projectId: r.project_id,
      status: r.status,
      assigneeId: r.assignee_id,
      milestoneId: r.milestone_id,
      startedAt: r.started_at,
      completedAt: r.completed_at,
      archivedAt: r.archived_at,
    };
  }

  /** Run items that are in_progress or have a row in_progress (blocks completion). */
  private async countItemsInProgress(runId: string): Promise<number> {
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

  private async captureEnvironment(
    projectId: string,
    environmentId: string,
  ): Promise<EnvironmentCapture> {
    const invalid = () =>
      new AppException(
        'invalid_environment',
        'The environment does not exist in this project or is archived',
        { environment_id: ['must be the id of an active environment of this project'] },
      );
    if (!isUuid(environmentId)) throw invalid();
    const rows = await this.db.query<{
      id: string;
      name: string;
      status: string;
      archived_at: Date | null;
      revision_id: string;
      revision_number: number;
      snapshot_hash: string;
      full_snapshot: Record<string, unknown> | null;
    }>(
      `SELECT e.id, e.name, e.status, e.archived_at, r.id AS revision_id, r.revision_number,
              r.snapshot_hash, r.full_snapshot
         FROM environments e JOIN environment_revisions r ON r.id = e.current_revision_id
        WHERE e.id = $1 AND e.project_id = $2`,
      [environmentId, projectId],
    );
    const e = rows[0];
    if (!e || e.archived_at !== null || e.status === 'archived') throw invalid();
    return {
      environmentId: e.id,
      name: e.name,
      revisionId: e.revision_id,
      revisionNumber: e.revision_number,
      snapshotHash: e.snapshot_hash,
      snapshot: e.full_snapshot ?? {},
    };
  }

  private async checkMilestone(projectId: string, milestoneId: string): Promise<void> {
    const rows = isUuid(milestoneId)
      ? await this.db.query<{ status: string }>(
          // Key-share lock: a concurrent DELETE waits for this transaction, so the insert or
          // update that follows never meets a vanished milestone (FK violation → 500).
          `SELECT status FROM milestones WHERE id = $1 AND project_id = $2 FOR KEY SHARE`,
          [milestoneId, projectId],
        )
      : [];
    if (!rows[0] || rows[0].status === 'archived') {
      throw new AppException(
        'invalid_milestone',
        'The milestone does not exist in this project or is archived',
        { milestone_id: ['must be the id of a milestone of this project that is not archived'] },
      );
    }
  }
}
