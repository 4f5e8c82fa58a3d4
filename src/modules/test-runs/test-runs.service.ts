import { Injectable } from '@nestjs/common';
import { JsonBody, type JsonPart } from '../../common/http/json-body';
import { AccessService } from '../../common/access/access.service';
import { isProjectRole } from '../../common/access/roles';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AccessRefusal, AppException } from '../../common/errors/app-exception';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { offsetOf, pageOf } from '../../common/pagination/page';
import {
  CreateTestRunFields,
  ListTestRunsQueryDto,
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
import { SnapshotCache, snapshotBytesOf } from './snapshot-cache';
import {
  attributeFilters,
  CI_COLUMNS,
  CI_FIELDS,
  ciToStore,
  MAX_RUN_ATTRIBUTES,
  normalizeCommitSha,
  RunAttributes,
  RunCi,
} from './run-metadata';
import { WebhookEvents } from '../webhooks/webhook-events.service';
import { testRunJsonParts, toTestRunDto } from './test-run.mapper';
import { selectedRunJsonParts, SNAPSHOT_FIELD } from './test-run-fields';
import {
  NewTestRun,
  RunChanges,
  RunListFilter,
  runKeysetOrder,
  TestRunRow,
  TestRunsRepository,
} from './test-runs.repository';
import { CursorCodec, cursorScope } from '../../common/pagination/cursor';
import { fieldSelection, selects } from '../../common/pagination/fields';
import { KeysetPaging } from '../../common/pagination/keyset';
import { isDateOnly, toInstant } from '../../common/validation/datetime';
import { blankToNull } from '../../common/normalize';

/** The environment revision captured on a run. */
type EnvironmentCapture = NonNullable<NewTestRun['environment']>;

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

/**
 * Test runs (api.md §2.1, §3.1, §4.1; CONTRACT §5). Exported for test plans' create-run and
 * imports: `create(access, user, fields)` and `update(access, user, run, patch)`; and for run
 * items: `lockForItemChange(runId)`. The counters on the run (`count_*`) are the run-items
 * module's: it refreshes them after every change of a run's items.
 */
@Injectable()
export class TestRunsService {
  constructor(
    private readonly repo: TestRunsRepository,
    private readonly accessService: AccessService,
    private readonly snapshots: SnapshotCache,
    private readonly webhooks: WebhookEvents,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * The JSON of a page of runs (`Page<TestRunDto>`) in parts, each run's snapshot as its cached
   * bytes: the page joined with creator and milestone names, plus the total; no snapshot JSON is
   * read from the database when the cache holds the page's revisions, else one query for those
   * missing. With `cursor`: a keyset page (`{items, page_size, has_next, next_cursor}`, no count);
   * with `fields` only those fields, and no snapshot read at all (database or cache) unless
   * `environment_snapshot` is one of them.
   */
  async listJson(
    q: ListTestRunsQueryDto,
  ): Promise<{ parts: JsonPart[]; next_cursor?: string | null }> {
    // created_to is inclusive: the exclusive bound is the next day for a date, else the next
    // millisecond (the API answers created_at in milliseconds, the column holds microseconds, so
    // `<= 06:17:00.678` left out the run answered as created at .678).
    let createdBefore: Date | undefined;
    if (q.created_to) {
      createdBefore = toInstant(q.created_to);
      if (isDateOnly(q.created_to)) createdBefore.setUTCDate(createdBefore.getUTCDate() + 1);
      else createdBefore.setUTCMilliseconds(createdBefore.getUTCMilliseconds() + 1);
    }
    const filter: RunListFilter = {
      projectId: q.project_id,
      statuses: q.status,
      // Blank values are dropped (the reference does the same).
      environmentIds: q.environment_id?.filter((v) => v !== '') ?? [],
      milestoneIds: q.milestone_id?.filter((v) => v !== '') ?? [],
      createdBy: q.created_by === '' ? undefined : q.created_by,
      search: q.search,
      builds: q.build,
      branches: q.branch,
      commitShaPrefix: q.commit_sha === undefined ? undefined : normalizeCommitSha(q.commit_sha),
      attributes: attributeFilters(q.attribute),
      createdFrom: q.created_from ? toInstant(q.created_from) : undefined,
      createdBefore,
      sortBy: q.sort_by ?? 'created_at',
      sortOrder: q.sort_order ?? 'desc',
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    };
    const selection = fieldSelection(q.fields);
    const withSnapshot = selects(selection, SNAPSHOT_FIELD);
    const keyset =
      q.cursor === undefined
        ? undefined
        : new KeysetPaging(
            this.cursors,
            cursorScope('test-runs', { ...filter, limit: undefined, offset: undefined }),
            runKeysetOrder(filter.sortBy, filter.sortOrder),
            q.cursor,
            q.page_size,
          );
    const found = await this.repo.findPage({ ...filter, keyset: keyset?.request, withSnapshot });
    const cursorPage = keyset?.page(found.rows, (row) => row);
    const rows = cursorPage ? cursorPage.items : found.rows;
    const snapshots = withSnapshot ? await this.snapshotBytes(rows) : null;
    const { items: _items, ...envelope } =
      cursorPage ?? pageOf(rows, q.page, q.page_size, found.total ?? 0);
    const parts: JsonPart[] = ['{"items":['];
    rows.forEach((row, i) => {
      if (i > 0) parts.push(',');
      parts.push(
        ...(selection === null && snapshots
          ? testRunJsonParts(row, snapshots[i])
          : selectedRunJsonParts(row, snapshots?.[i] ?? null, selection)),
      );
    });
    parts.push(`],${JSON.stringify(envelope).slice(1)}`);
    return { parts, next_cursor: cursorPage?.next_cursor };
  }

  /**
   * GET of one run for a caller: access check and read in ONE query (the run with creator and
   * milestone names, counters on the row, and the caller's membership). Non-members and missing
   * runs alike get 404 `test_run_not_found`; administrators see every run; any member is at least
   * viewer, the minimum role of this read.
   */
  async getForUserJson(
    user: AuthenticatedUser,
    id: string,
    fields?: readonly string[],
  ): Promise<JsonPart[]> {
    if (!isUuid(id)) throw AppException.notFound('test_run_not_found', 'Test run');
    const selection = fieldSelection(fields);
    const withSnapshot = selects(selection, SNAPSHOT_FIELD);
    const row = await this.repo.findForUser(id, user.id, withSnapshot);
    if (!row || (!user.isAdmin && !isProjectRole(row.caller_role))) {
      throw AppException.notFound('test_run_not_found', 'Test run');
    }
    if (!withSnapshot) return selectedRunJsonParts(row, null, selection);
    const [snapshot] = await this.snapshotBytes([row]);
    return selection === null
      ? testRunJsonParts(row, snapshot)
      : selectedRunJsonParts(row, snapshot, selection);
  }

  /**
   * One query (and the snapshot's when not cached): the run with creator and milestone names, as
   * its JSON with the snapshot's cached bytes (never parsed).
   */
  async getJson(id: string): Promise<JsonBody> {
    return runJsonBody(await this.read(id));
  }

  /** {@link getJson}'s row with its snapshot's bytes. */
  private async read(id: string): Promise<RunRead> {
    const row = await this.repo.findById(id);
    if (!row) throw AppException.notFound('test_run_not_found', 'Test run');
    return this.readOf(row);
  }

  /** A row read with RUN_COLUMNS with its snapshot's bytes (from the cache when shared). */
  private async readOf(row: TestRunRow): Promise<RunRead> {
    const [snapshot] = await this.snapshotBytes([row]);
    return { row, snapshot };
  }

  /** The snapshot bytes of each run: its own, or its revision's (cached; one query for misses). */
  private snapshotBytes(rows: readonly TestRunRow[]): Promise<Buffer[]> {
    return snapshotBytesOf(rows, this.snapshots, (ids) => this.repo.findRevisionSnapshots(ids));
  }

  /**
   * Creates a run in `access.projectId` (caller already checked: tester). Validates and captures
   * the environment's current revision, validates milestone and assignee. Returns the run's id
   * ({@link createJson} answers with the run).
   */
  async create(
    access: ProjectAccess,
    user: AuthenticatedUser,
    fields: CreateTestRunFields,
  ): Promise<string> {
    // Only the id: the snapshot's bytes are not read for callers that answer something else.
    return (await this.insertRun(access, user, fields)).id;
  }

  /** {@link create}, answered as the run's JSON with its snapshot's cached bytes (never parsed). */
  async createJson(
    access: ProjectAccess,
    user: AuthenticatedUser,
    fields: CreateTestRunFields,
  ): Promise<JsonBody> {
    return runJsonBody(await this.readOf(await this.insertRun(access, user, fields)));
  }

  /** {@link create}'s checks, insert and `test_run.created` event: the new run's row. */
  private async insertRun(
    access: ProjectAccess,
    user: AuthenticatedUser,
    fields: CreateTestRunFields,
  ): Promise<TestRunRow> {
    const projectId = access.projectId;
    const environmentId = blankToNull(fields.environment_id);
    const milestoneId = blankToNull(fields.milestone_id);
    // With both, one statement reads the revision and key-share locks the milestone.
    const withMilestone = milestoneId !== null && isUuid(milestoneId) ? milestoneId : undefined;
    const env = environmentId
      ? await this.captureEnvironment(projectId, environmentId, withMilestone)
      : null;
    if (milestoneId) {
      if (env?.milestoneStatus !== undefined) assertMilestoneUsable(env.milestoneStatus);
      else await this.checkMilestone(projectId, milestoneId);
    }
    const assignee = blankToNull(fields.assignee);
    if (assignee) await this.checkAssignee(projectId, assignee);
    const row = await this.repo.insert(
      {
        id: uuidv7(),
        projectId,
        name: fields.name,
        description: fields.description ?? null,
        environment: env,
        milestoneId,
        build: fields.build ?? null,
        ci: ciToStore(fields.ci),
        attributes: fields.attributes ?? {},
        assigneeId: assignee,
        createdBy: user.id,
      },
      'test_run.created',
    );
    await this.webhooks.emitTo(projectId, 'test_run.created', row.subscribers, () =>
      runEventData(row),
    );
    return row;
  }

  /**
   * PATCH of a run (api.md §3.1, CONTRACT §5). Order: timestamp shape (422) → role for the target
   * status (403) → archived run (409 run_archived) → transition rules (409) → referenced
   * environment / milestone / assignee (422) → write. All in the request's transaction. A caller
   * that holds the run's lock already (`lockForItemChange`) passes the locked run.
   * ({@link updateJson} answers with the run.)
   */
  async update(
    access: ProjectAccess,
    user: AuthenticatedUser,
    target: string | LockedRun,
    dto: UpdateTestRunDto,
  ): Promise<void> {
    await this.updateRead(access, user, target, dto);
  }

  /** {@link update}, answered as the run's JSON with its snapshot's cached bytes (never parsed). */
  async updateJson(
    access: ProjectAccess,
    user: AuthenticatedUser,
    target: string | LockedRun,
    dto: UpdateTestRunDto,
  ): Promise<JsonBody> {
    return runJsonBody(await this.updateRead(access, user, target, dto));
  }

  private async updateRead(
    access: ProjectAccess,
    _user: AuthenticatedUser,
    target: string | LockedRun,
    dto: UpdateTestRunDto,
  ): Promise<RunRead> {
    const id = typeof target === 'string' ? target : target.id;
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

    const run = typeof target === 'string' ? await this.lock(id) : target;
    const itemsInProgress = to === 'completed' ? await this.repo.countItemsInProgress(id) : 0;
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
    if (!decision.ok) {
      // A role refusal is checked again on a retry (never stored under an Idempotency-Key).
      const Refusal = decision.code === 'insufficient_project_role' ? AccessRefusal : AppException;
      throw new Refusal(decision.code, decision.detail, decision.errors);
    }

    const changes: RunChanges = {};
    const set = (column: keyof RunChanges, value: unknown) => {
      changes[column] = value;
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
      // The revision's snapshot, stored there once.
      set('environment_snapshot', null);
    }
    if (dto.milestone_id !== undefined) {
      const sent = blankToNull(dto.milestone_id);
      const milestoneId = sent === null ? null : canonicalId(sent);
      // Re-sending the current link (in any letter case) is accepted even if that milestone was
      // archived since.
      if (milestoneId && milestoneId !== run.milestoneId) {
        await this.checkMilestone(run.projectId, milestoneId);
      }
      set('milestone_id', milestoneId);
    }
    if (dto.assignee !== undefined) {
      const given = blankToNull(dto.assignee);
      const assignee = given === null ? null : canonicalId(given);
      if (assignee && assignee !== run.assigneeId)
        await this.checkAssignee(run.projectId, assignee);
      set('assignee_id', assignee);
    }
    if (dto.name !== undefined) set('name', dto.name);
    if (dto.description !== undefined) set('description', dto.description);
    if (dto.build !== undefined) set('build', dto.build);
    if (dto.ci !== undefined) {
      const ci = ciToStore(dto.ci);
      for (const field of CI_FIELDS) set(CI_COLUMNS[field], ci[field]);
    }
    if (dto.attributes !== undefined) set('attributes', JSON.stringify(dto.attributes));
    if (dto.planned_item_count !== undefined) set('planned_item_count', dto.planned_item_count);
    if (decision.changed) {
      set('status', decision.status);
      for (const [field, value] of Object.entries(decision.timestamps)) {
        set(field as RunTimestampField, value);
      }
    }
    await this.repo.update(id, changes);
    const updated = await this.read(id);
    if (decision.changed) await this.emitStatusChange(updated.row, run.status, decision.status);
    return updated;
  }

  /**
   * Webhook events of a status change (issue #20), in the request's transaction:
   * `test_run.status_changed` (the run with `from` and `to`), and `test_run.completed`.
   */
  private async emitStatusChange(row: TestRunRow, from: RunStatus, to: RunStatus): Promise<void> {
    const data = runEventData(row);
    await this.webhooks.emit(row.project_id, 'test_run.status_changed', { ...data, from, to });
    if (to === 'completed') await this.webhooks.emit(row.project_id, 'test_run.completed', data);
  }

  /**
   * Run metadata given with an import into an existing run (issue #24): `build` and each given
   * `ci` field replace the run's; given attributes are set key by key, the others kept (422
   * `validation_error` on `attribute` when the run would then have more than
   * {@link MAX_RUN_ATTRIBUTES}). The caller holds the run's lock; nothing given writes nothing.
   */
  async mergeMetadata(
    run: LockedRun,
    given: { build?: string; ci?: Partial<RunCi>; attributes?: RunAttributes },
  ): Promise<void> {
    const changes: RunChanges = {};
    if (given.build !== undefined) changes.build = given.build;
    for (const field of CI_FIELDS) {
      const value = given.ci?.[field];
      if (value !== undefined && value !== null) {
        changes[CI_COLUMNS[field]] = field === 'commit_sha' ? normalizeCommitSha(value) : value;
      }
    }
    if (given.attributes !== undefined && Object.keys(given.attributes).length > 0) {
      const merged = { ...(await this.repo.findAttributes(run.id)), ...given.attributes };
      const count = Object.keys(merged).length;
      if (count > MAX_RUN_ATTRIBUTES) {
        throw AppException.validation({
          attribute: [
            `the run would have ${count} attributes; at most ${MAX_RUN_ATTRIBUTES} are allowed`,
          ],
        });
      }
      changes.attributes = JSON.stringify(merged);
    }
    await this.repo.update(run.id, changes);
  }

  /** Permanently deletes the run with its items, rows and history (cascade). */
  async remove(id: string): Promise<void> {
    await this.repo.delete(id);
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

  /** Throws 422 `invalid_assignee` unless the user may access the project. */
  async checkAssignee(projectId: string, userId: string, field = 'assignee'): Promise<void> {
    if (!isUuid(userId) || !(await this.accessService.canAccess(userId, projectId))) {
      throw new AppException('invalid_assignee', 'The assignee has no access to this project', {
        [field]: ['must be the id of a user with access to the project'],
      });
    }
  }

  private async lock(id: string): Promise<LockedRun> {
    const r = await this.repo.lockForUpdate(id);
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

  /**
   * The environment's current revision (422 `invalid_environment` unless an active environment of
   * the project). With `milestoneId`, the same statement key-share locks that milestone and reads
   * its status (`milestoneStatus`, null when it is not the project's), as checkMilestone would.
   */
  private async captureEnvironment(
    projectId: string,
    environmentId: string,
    milestoneId?: string,
  ): Promise<EnvironmentCapture & { milestoneStatus?: string | null }> {
    const invalid = () =>
      new AppException(
        'invalid_environment',
        'The environment does not exist in this project or is archived',
        { environment_id: ['must be the id of an active environment of this project'] },
      );
    if (!isUuid(environmentId)) throw invalid();
    const e = await this.repo.findEnvironmentRevision(projectId, environmentId, milestoneId);
    if (!e || e.archived_at !== null || e.status === 'archived') throw invalid();
    return {
      environmentId: e.id,
      name: e.name,
      revisionId: e.revision_id,
      revisionNumber: e.revision_number,
      snapshotHash: e.snapshot_hash,
      ...(milestoneId === undefined ? {} : { milestoneStatus: e.milestone_status ?? null }),
    };
  }

  private async checkMilestone(projectId: string, milestoneId: string): Promise<void> {
    const status = isUuid(milestoneId)
      ? await this.repo.findMilestoneStatusForKeyShare(projectId, milestoneId)
      : undefined;
    assertMilestoneUsable(status ?? null);
  }
}

/** 422 `invalid_milestone` unless the milestone (its status; null: none in the project) is usable. */
function assertMilestoneUsable(status: string | null): void {
  if (status === null || status === 'archived') {
    throw new AppException(
      'invalid_milestone',
      'The milestone does not exist in this project or is archived',
      { milestone_id: ['must be the id of a milestone of this project that is not archived'] },
    );
  }
}

/** A row read with RUN_COLUMNS and its snapshot's serialised bytes. */
interface RunRead {
  row: TestRunRow;
  snapshot: Buffer;
}

/** The same run object as JSON, the snapshot as its bytes (`testRunJsonParts`). */
function runJsonBody({ row, snapshot }: RunRead): JsonBody {
  return new JsonBody(testRunJsonParts(row, snapshot));
}

/**
 * A run as webhook events carry it: its GET representation without the environment snapshot
 * (built from the row: the snapshot is never parsed for it).
 */
function runEventData(row: TestRunRow): Omit<TestRunDto, 'environment_snapshot'> {
  const { environment_snapshot: _snapshot, ...data } = toTestRunDto(row, {});
  return data;
}
