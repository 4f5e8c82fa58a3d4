import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { ProjectRole } from '../../common/access/roles';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { CursorCodec, cursorScope } from '../../common/pagination/cursor';
import { CursorPage, KeysetPaging } from '../../common/pagination/keyset';
import { DatasetSnapshot, raisedDatasetSnapshot } from '../datasets/binding-expansion';
import { BindingExpansionService } from '../datasets/binding-expansion.service';
import { TEST_RUNS } from '../test-runs/test-runs.resource';
import { LockedRun, TestRunsService } from '../test-runs/test-runs.service';
import {
  BulkCreateRunCasesDto,
  BulkRunCasesResultDto,
  CreateRunCaseDto,
  ListRowsQueryDto,
  ListRunCasesQueryDto,
  RerunDto,
  RowPageDto,
  RunCaseDetailDto,
  RunCaseDetailQueryDto,
  RunCaseDto,
  RunCaseRowDto,
  UpdateRowDto,
  UpdateRunCaseDto,
} from './dto/run-item.dto';
import { matchRebuiltRows } from './rerun-match';
import { decideRowStatusUpdate, finishesBeforeStart, isFinalStatus } from './roll-up';
import { toHistoryDto, toRowDto, toRunCaseDto } from './run-item.mapper';
import {
  CaseRecord,
  RerunRow,
  RowRecord,
  runCaseKeysetOrder,
  RunCaseScope,
  RunItemsRepository,
} from './run-items.repository';
import { AddCasesInput, AddCasesResult, RunResultsWriter } from './run-results.writer';
import { toInstant } from '../../common/validation/datetime';

registerUniqueConstraints({
  uq_run_items_run_case: {
    code: 'run_case_already_exists',
    field: 'test_case_id',
    detail: 'This test case is already in the run',
  },
});

/** `page_size` of the empty page a rerun answers when nothing was selected (reference §3.8). */
const EMPTY_RERUN_PAGE_SIZE = 50;

/**
 * Run items ("run cases"), their rows and history (reference runs-imports-plans.md §3 with the
 * CONTRACT §5 differences). Every change locks the run row first (`lockForItemChange`), so item
 * roll-ups and the run's counters are recomputed consistently in the same transaction. Adding
 * cases, rerunning rows and rolling up go through {@link RunResultsWriter}, the path other
 * features take too.
 */
@Injectable()
export class RunItemsService {
  constructor(
    private readonly repo: RunItemsRepository,
    private readonly results: RunResultsWriter,
    private readonly accessService: AccessService,
    private readonly runs: TestRunsService,
    private readonly expansion: BindingExpansionService,
    private readonly cursors: CursorCodec,
  ) {}

  // ---------------------------------------------------------------------------------------------
  // Reads

  async list(
    user: AuthenticatedUser,
    q: ListRunCasesQueryDto,
  ): Promise<Page<RunCaseDto> | CursorPage<RunCaseDto>> {
    let scope: RunCaseScope;
    if (q.test_run_id !== undefined) {
      await this.runAccess(user, q.test_run_id, 'viewer');
      scope = { runId: q.test_run_id, testCaseId: q.test_case_id };
    } else {
      if (q.project_id === undefined || q.test_case_id === undefined) {
        const errors: Record<string, string[]> = {};
        const message = 'test_run_id, or both project_id and test_case_id, are required';
        if (q.project_id === undefined) errors['query.project_id'] = [message];
        if (q.test_case_id === undefined) errors['query.test_case_id'] = [message];
        throw AppException.validation(errors);
      }
      await this.accessService.forProject(user, q.project_id);
      const found =
        isUuid(q.test_case_id) &&
        (await this.repo.caseExistsInProject(q.test_case_id, q.project_id));
      if (!found) throw AppException.notFound('test_case_not_found', 'Test case');
      scope = { projectId: q.project_id, testCaseId: q.test_case_id };
    }
    const filter = {
      scope,
      search: q.search,
      statuses: q.status,
      assigneeId: q.assignee_id,
      sortBy: q.sort_by ?? 'last_executed_at',
      sortOrder: q.sort_order ?? 'desc',
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    } as const;
    const keyset =
      q.cursor === undefined
        ? undefined
        : new KeysetPaging(
            this.cursors,
            cursorScope('run-cases', { ...filter, limit: undefined, offset: undefined }),
            runCaseKeysetOrder(filter.sortBy, filter.sortOrder),
            q.cursor,
            q.page_size,
          );
    const { rows, total } = await this.repo.findPage({ ...filter, keyset: keyset?.request });
    if (keyset) return keyset.page(rows, toRunCaseDto);
    return pageOf(rows.map(toRunCaseDto), q.page, q.page_size, total ?? 0);
  }

  async get(id: string, q: RunCaseDetailQueryDto): Promise<RunCaseDetailDto> {
    const [item] = await this.items([id]);
    if (!item) throw AppException.notFound('run_case_not_found', 'Run case');
    const history = await this.repo.findHistoryPage(
      id,
      q.history_page_size,
      offsetOf(q.history_page, q.history_page_size),
    );
    return {
      ...item,
      history: pageOf(
        history.rows.map(toHistoryDto),
        q.history_page,
        q.history_page_size,
        history.total,
      ),
    };
  }

  /** One row as `GET /run-cases/{id}/rows` lists it (what `If-Match` on its PATCH compares). */
  async row(rowId: string): Promise<RunCaseRowDto> {
    const row = await this.repo.findRow(rowId);
    if (!row) throw AppException.notFound('run_case_row_not_found', 'Run case row');
    return toRowDto(row);
  }

  async rows(id: string, q: ListRowsQueryDto): Promise<RowPageDto> {
    const { rows, total } = await this.repo.findRowsPage(
      id,
      q.status,
      q.page_size,
      offsetOf(q.page, q.page_size),
    );
    return pageOf(rows.map(toRowDto), q.page, q.page_size, total);
  }

  // ---------------------------------------------------------------------------------------------
  // Adding cases

  /**
   * POST /run-cases: one case ("create or get", reference §3.5): a case already in the run is
   * answered with its existing item, unchanged (its assignee is not updated).
   */
  async create(user: AuthenticatedUser, dto: CreateRunCaseDto): Promise<RunCaseDto> {
    const access = await this.runAccess(user, dto.test_run_id, 'tester');
    // "Body assignee_id or the run's assignee" (reference §3.5): null and blank are not an assignee.
    const assigneeId = dto.assignee_id || undefined;
    if (assigneeId) await this.runs.checkAssignee(access.projectId, assigneeId, 'assignee_id');
    // Uuids are case-insensitive: the writer's lookups use the id as the database spells it.
    const caseId = canonicalId(dto.test_case_id);
    const result = await this.addCases(dto.test_run_id, {
      caseIds: [caseId],
      assigneeId,
      field: 'test_case_id',
    });
    const [item] = await this.items([result.itemIdByCase.get(caseId) ?? '']);
    return item;
  }

  /** POST /run-cases/bulk: many cases by id or a whole suite tree; present ones are skipped. */
  async bulkCreate(
    user: AuthenticatedUser,
    dto: BulkCreateRunCasesDto,
  ): Promise<BulkRunCasesResultDto> {
    // An empty list counts as absent (reference §3.5).
    const byIds = dto.test_case_ids !== undefined && dto.test_case_ids.length > 0;
    const bySuite = dto.suite_id !== undefined && dto.suite_id !== '';
    if (byIds === bySuite) {
      const message = 'Give exactly one of test_case_ids (non-empty) and suite_id';
      throw AppException.validation({ test_case_ids: [message], suite_id: [message] });
    }
    const access = await this.runAccess(user, dto.test_run_id, 'tester');
    let caseIds: string[];
    let cases: CaseRecord[] | undefined;
    if (bySuite) {
      cases = await this.suiteCases(access.projectId, dto.suite_id ?? '');
      caseIds = cases.map((c) => c.id);
    } else {
      caseIds = (dto.test_case_ids ?? []).map(canonicalId);
    }
    const result = await this.addCases(dto.test_run_id, { caseIds, preloaded: cases });
    const order = [...new Set(caseIds)].map((c) => result.itemIdByCase.get(c) ?? '');
    const items = await this.items(order.filter((id) => id !== ''));
    return {
      items,
      created_count: result.createdIds.length,
      existing_count: result.existingIds.length,
    };
  }

  /**
   * Adds test cases to a run (locked by the writer: 404 / 409 `run_closed`); present ones keep
   * their item.
   */
  private async addCases(runId: string, input: AddCasesInput): Promise<AddCasesResult> {
    const { added } = await this.results.applyResults(runId, { addCases: input });
    return added as AddCasesResult;
  }

  /**
   * Active cases of a suite of the project and all its descendants (recursive), in key order. As
   * in the reference (§3.5) the suite itself is not validated: an unknown suite, or one of another
   * project, has no cases here.
   */
  private async suiteCases(projectId: string, suiteId: string): Promise<CaseRecord[]> {
    if (!isUuid(suiteId)) return [];
    return this.repo.findActiveSuiteTreeCases(projectId, suiteId);
  }

  // ---------------------------------------------------------------------------------------------
  // Item changes

  async update(access: ProjectAccess, id: string, dto: UpdateRunCaseDto): Promise<RunCaseDto> {
    await this.lockRunOfItem(id);
    let assigneeId: string | null | undefined;
    if (dto.assignee_id !== undefined) {
      assigneeId = dto.assignee_id ? canonicalId(dto.assignee_id) : null;
      // A new assignee must have access; the current one re-sent is kept (as a run's PATCH keeps
      // its assignee), also when they have left the project since.
      if (assigneeId && assigneeId !== (await this.repo.findAssigneeOfItem(id)))
        await this.runs.checkAssignee(access.projectId, assigneeId, 'assignee_id');
    }
    await this.repo.updateItem(id, { assigneeId, comment: dto.comment });
    const [item] = await this.items([id]);
    return item;
  }

  async remove(id: string): Promise<void> {
    const run = await this.lockRunOfItem(id);
    await this.results.removeItem(run, id);
  }

  // ---------------------------------------------------------------------------------------------
  // Row results

  /**
   * PATCH of a row result. A status change goes through `decideRowStatusUpdate` (final status
   * without finished_at → now; execution_count +1 only when entering a final status); the
   * executor defaults to the caller when a final status is entered; finished_at before
   * started_at is 422 on a finished row or when finished_at is given (`finishesBeforeStart`: a row
   * executed again keeps its earlier finished_at until it finishes again); duration_ms is derived from the timestamps when a final status is entered
   * without one. The item is rolled up, a history record is written when its status changes and
   * the run counters follow.
   */
  async updateRow(
    access: ProjectAccess,
    user: AuthenticatedUser,
    rowId: string,
    dto: UpdateRowDto,
  ): Promise<RunCaseRowDto> {
    const runId = await this.repo.findRunIdOfRow(rowId);
    if (runId === undefined) throw AppException.notFound('run_case_row_not_found', 'Run case row');
    const run = await this.runs.lockForItemChange(runId);
    const row = await this.repo.findRow(rowId);
    if (!row) throw AppException.notFound('run_case_row_not_found', 'Run case row');

    // executed_by and executed_by_id, when both given, agree (UpdateRowDto checks it first).
    const executedByGiven = dto.executed_by !== undefined ? dto.executed_by : dto.executed_by_id;
    if (executedByGiven) await this.checkExecutor(access.projectId, executedByGiven, dto);

    const now = new Date();
    const next = {
      status: row.status,
      executionCount: row.execution_count,
      lastExecutedAt: row.last_executed_at,
      startedAt: dto.started_at !== undefined ? toDate(dto.started_at) : row.started_at,
      finishedAt: dto.finished_at !== undefined ? toDate(dto.finished_at) : row.finished_at,
      durationMs: dto.duration_ms !== undefined ? dto.duration_ms : row.duration_ms,
      executedById:
        executedByGiven !== undefined
          ? executedByGiven === ''
            ? null
            : executedByGiven
          : row.executed_by_id,
    };
    let entersFinal = false;
    if (dto.status !== undefined) {
      const decision = decideRowStatusUpdate({
        current: {
          status: row.status,
          execution_count: row.execution_count,
          finished_at: row.finished_at,
          last_executed_at: row.last_executed_at,
        },
        status: dto.status,
        finishedAt: dto.finished_at === undefined ? undefined : toDate(dto.finished_at),
        now,
      });
      entersFinal = decision.statusChanged && isFinalStatus(dto.status);
      next.status = decision.status;
      next.executionCount = decision.execution_count;
      next.finishedAt = decision.finished_at;
      next.lastExecutedAt = decision.last_executed_at;
      if (entersFinal && executedByGiven === undefined) next.executedById = user.id;
    }
    if (
      finishesBeforeStart({
        status: next.status,
        startedAt: next.startedAt,
        finishedAt: next.finishedAt,
        finishedAtGiven: dto.finished_at !== undefined,
      })
    ) {
      throw AppException.validation({
        finished_at: ['finished_at must not be earlier than started_at'],
      });
    }
    if (entersFinal && dto.duration_ms === undefined && next.startedAt && next.finishedAt) {
      next.durationMs = next.finishedAt.getTime() - next.startedAt.getTime();
    }

    const comment = dto.comment !== undefined ? dto.comment : row.comment;
    const defectIds = dto.defect_ids !== undefined ? dto.defect_ids : (row.defect_ids ?? []);
    const actualResult = dto.actual_result !== undefined ? dto.actual_result : row.actual_result;
    const systemOut = dto.system_out !== undefined ? dto.system_out : row.system_out;
    const systemErr = dto.system_err !== undefined ? dto.system_err : row.system_err;
    await this.repo.updateRowResult(rowId, {
      ...next,
      comment,
      defectIds,
      actualResult,
      systemOut,
      systemErr,
    });
    await this.results.rollUpItems(
      run,
      [row.run_item_id],
      user.id,
      new Map([
        [
          row.run_item_id,
          {
            rowId,
            comment,
            defectIds,
            actualResult,
            systemOut,
            systemErr,
            executedById: next.executedById,
            startedAt: next.startedAt,
            finishedAt: next.finishedAt,
            durationMs: next.durationMs,
          },
        ],
      ]),
    );
    const updated = await this.repo.findRow(rowId);
    return toRowDto(updated as RowRecord);
  }

  /**
   * Rerun (reference §3.8): new `untested` rows for the failed rows (failure, error) or for the
   * listed rows of this item; old rows are kept. Listed ids that are not rows of this item are
   * ignored, as in the reference; nothing selected answers an empty page. With
   * `use_latest_revisions` a rebuilt row reruns the selected row combining the same dataset rows
   * (the reference matches labels, which two dataset rows may share: `matchRebuiltRows`).
   */
  async rerun(user: AuthenticatedUser, itemId: string, dto: RerunDto): Promise<RowPageDto> {
    const mode = dto.mode ?? 'failed';
    // With mode subset the list is non-empty (RerunDto checks it with the request's shape).
    const ids = dto.run_case_row_ids ?? [];
    const run = await this.lockRunOfItem(itemId);
    let selected: RowRecord[];
    if (mode === 'failed') {
      selected = await this.repo.findFailedRows(itemId);
    } else {
      selected = await this.repo.findRowsOfItem(itemId, [...new Set(ids)]);
    }
    if (selected.length === 0) return pageOf([], 1, EMPTY_RERUN_PAGE_SIZE, 0);

    let fresh: Array<Omit<RerunRow, 'id'>>;
    let latest: DatasetSnapshot | null = null;
    if (dto.use_latest_revisions) {
      const testCaseId = await this.repo.findTestCaseIdOfItem(itemId);
      if (!testCaseId) {
        throw AppException.validation({
          use_latest_revisions: ['the test case of this run case no longer exists'],
        });
      }
      // Pins are ignored: every binding resolves to its dataset's current revision (reference §3.8).
      const expanded = await this.expansion.expandForCasesDetailed(run.projectId, [testCaseId], {
        useLatestRevisions: true,
      });
      latest = expanded.get(testCaseId)?.dataset_snapshot ?? null;
      // Each rebuilt row reruns the selected row combining the same dataset rows (matchRebuiltRows).
      fresh = matchRebuiltRows(selected, expanded.get(testCaseId)?.rows ?? []).map(
        ({ row, parent }) => ({ parent, label: row.scenario_label, snapshot: row.row_snapshot }),
      );
    } else {
      fresh = selected.map((r) => ({
        parent: r.id,
        label: r.scenario_label,
        snapshot: r.row_snapshot ?? {},
      }));
    }
    if (fresh.length === 0) return pageOf([], 1, EMPTY_RERUN_PAGE_SIZE, 0);

    const newRows: RerunRow[] = fresh.map((f) => ({ id: uuidv7(), ...f }));
    await this.results.applyResults(run, {
      rerun: { itemId, rows: newRows },
      changedById: user.id,
    });
    if (latest !== null) {
      // The item now used these revisions too: a comparison reports the data change.
      const current = await this.repo.findDatasetSnapshot(itemId);
      await this.repo.updateDatasetSnapshot(itemId, raisedDatasetSnapshot(current, latest));
    }
    const rows = await this.repo.findRowsByIds(newRows.map((r) => r.id));
    return pageOf(rows.map(toRowDto), 1, rows.length, rows.length);
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /** Items by id, in the given order (one query). */
  async items(ids: string[]): Promise<RunCaseDto[]> {
    if (ids.length === 0) return [];
    const rows = await this.repo.findByIds(ids);
    const byId = new Map(rows.map((r) => [r.id, toRunCaseDto(r)]));
    return ids.map((id) => byId.get(id)).filter((d): d is RunCaseDto => d !== undefined);
  }

  /** Access to the project of a run given in a body or query (404 test_run_not_found, 403). */
  private async runAccess(
    user: AuthenticatedUser,
    runId: string,
    minRole: ProjectRole,
  ): Promise<ProjectAccess> {
    const access = await this.accessService.forResource(user, TEST_RUNS, runId);
    this.accessService.require(access, minRole);
    return access;
  }

  /**
   * Locks the run of an item (404 / 409 `run_closed`) and checks the item still exists once the
   * lock is held: a concurrent DELETE of the item takes the same lock, so it has either not
   * started or is committed by then (404 instead of an empty answer or a foreign-key failure).
   */
  private async lockRunOfItem(itemId: string): Promise<LockedRun> {
    const runId = await this.repo.findRunIdOfItem(itemId);
    if (runId === undefined) throw AppException.notFound('run_case_not_found', 'Run case');
    const run = await this.runs.lockForItemChange(runId);
    if (!(await this.repo.exists(itemId))) {
      throw AppException.notFound('run_case_not_found', 'Run case');
    }
    return run;
  }

  private async checkExecutor(projectId: string, userId: string, dto: UpdateRowDto): Promise<void> {
    if (!isUuid(userId) || !(await this.accessService.canAccess(userId, projectId))) {
      const field = dto.executed_by !== undefined ? 'executed_by' : 'executed_by_id';
      throw new AppException('invalid_user', 'The executor has no access to this project', {
        [field]: ['must be the id of a user with access to the project'],
      });
    }
  }
}

function toDate(value: string | null): Date | null {
  return value === null ? null : toInstant(value);
}
