import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { ProjectRole } from '../../common/access/roles';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
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
import {
  decideRowStatusUpdate,
  isFinalStatus,
  rollUpRunItem,
  rollUpRunItemFromCounts,
  RunItemStatus,
  StatusCounts,
} from './roll-up';
import { toHistoryDto, toRowDto, toRunCaseDto } from './run-item.mapper';
import {
  CaseRecord,
  HistoryEntry,
  ItemRollUpWrite,
  NewItem,
  NewRow,
  RerunRow,
  RowCause,
  RowRecord,
  RunCaseScope,
  RunItemsRepository,
} from './run-items.repository';
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

/** Options of `addCases`. */
export interface AddCasesOptions {
  /** Assignee of new items; default the run's assignee. */
  assigneeId?: string | null;
  /** A case already in the run keeps its item unchanged (`skip`, the only behaviour). */
  onExisting?: 'skip';
  /** Field name used in 422 errors about the case ids (default `test_case_ids`). */
  field?: string;
  /**
   * Leave the run counters alone: a caller that adds cases in several batches (the JUnit import)
   * refreshes them once at the end, in the same transaction.
   */
  deferCounters?: boolean;
  /**
   * Results to store with the new items (the JUnit import): called once per new item with its
   * rows as expanded, it returns the rows to insert and their results. Items and rows are then
   * inserted in their final state, with the roll-up (status, row counters, last execution,
   * comment) and a history record for an item whose status is not the initial one, instead of
   * being inserted untested and updated afterwards.
   */
  results?: (caseId: string, planned: PlannedRow[]) => NewItemRows;
  /** `changed_by_id` of the history records written for `results`. */
  changedById?: string | null;
}

/** A new item's row as expanded from its case's dataset bindings, before it is written. */
export interface PlannedRow {
  id: string;
  row_order: number;
  scenario_label: string;
  /** JSON text. */
  row_snapshot: string;
}

/** A new item's rows as they are stored (`AddCasesOptions.results`). */
export interface NewItemRows {
  /** In row order; `result` null for a row left untested. */
  rows: NewRow[];
  /** The item's comment. */
  comment: string | null;
  /** The row result its history record copies when the item's status is not the initial one. */
  cause?: RowCause;
}

/** Result of `addCases`: item ids in the order of the requested cases. */
export interface AddCasesResult {
  /** Run item id per requested case id (new and already present ones). */
  itemIdByCase: Map<string, string>;
  createdIds: string[];
  existingIds: string[];
}

/**
 * Run items ("run cases"), their rows and history (reference runs-imports-plans.md §3 with the
 * CONTRACT §5 differences). Every change locks the run row first (`lockForItemChange`), so item
 * roll-ups and the run's counters are recomputed consistently in the same transaction.
 *
 * Exported for other features: `addCases(runId, caseIds, options)` (bulk, a handful of statements
 * for any number of cases) and `rollUpItems(runId, itemIds, changedById, causes)`.
 */
@Injectable()
export class RunItemsService {
  constructor(
    private readonly repo: RunItemsRepository,
    private readonly accessService: AccessService,
    private readonly runs: TestRunsService,
    private readonly expansion: BindingExpansionService,
  ) {}

  // ---------------------------------------------------------------------------------------------
  // Reads

  async list(user: AuthenticatedUser, q: ListRunCasesQueryDto): Promise<Page<RunCaseDto>> {
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
    const { rows, total } = await this.repo.findPage({
      scope,
      search: q.search,
      statuses: q.status,
      assigneeId: q.assignee_id,
      sortBy: q.sort_by ?? 'last_executed_at',
      sortOrder: q.sort_order ?? 'desc',
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    });
    return pageOf(rows.map(toRunCaseDto), q.page, q.page_size, total);
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
    const assigneeId = dto.assignee_id === undefined ? undefined : dto.assignee_id || null;
    if (assigneeId) await this.runs.checkAssignee(access.projectId, assigneeId, 'assignee_id');
    const result = await this.addCases(dto.test_run_id, [dto.test_case_id], {
      assigneeId,
      field: 'test_case_id',
    });
    const [item] = await this.items([result.itemIdByCase.get(dto.test_case_id) ?? '']);
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
      caseIds = dto.test_case_ids ?? [];
    }
    const result = await this.addCases(dto.test_run_id, caseIds, { onExisting: 'skip' }, cases);
    const order = [...new Set(caseIds)].map((c) => result.itemIdByCase.get(c) ?? '');
    const items = await this.items(order.filter((id) => id !== ''));
    return {
      items,
      created_count: result.createdIds.length,
      existing_count: result.existingIds.length,
    };
  }

  /**
   * Adds test cases to a run in a constant number of statements: locks the run (404 / 409
   * `run_closed`), validates the cases (422 `test_case_project_mismatch` for unknown, deleted
   * or foreign ids, 422
   * `test_case_status_not_allowed` for draft/archived ones), expands their rows from the
   * dataset bindings, inserts items and rows in bulk, refreshes the run counters. The caller has
   * checked access to the run's project. Must run inside the request transaction.
   */
  async addCases(
    runId: string,
    caseIds: string[],
    options: AddCasesOptions = {},
    preloaded?: CaseRecord[],
  ): Promise<AddCasesResult> {
    const run = await this.runs.lockForItemChange(runId);
    const ids = [...new Set(caseIds)];
    const field = options.field ?? 'test_case_ids';
    const cases = preloaded ?? (await this.loadCases(run.projectId, ids, field));
    const existing = await this.repo.findItemsByCase(runId, ids);
    const itemIdByCase = new Map<string, string>(existing.map((e) => [e.test_case_id, e.id]));
    const fresh = cases.filter((c) => !itemIdByCase.has(c.id));
    const createdIds = await this.insertItems(
      run,
      fresh,
      options.assigneeId !== undefined ? options.assigneeId : run.assigneeId,
      options,
    );
    fresh.forEach((c, i) => itemIdByCase.set(c.id, createdIds[i]));
    if (createdIds.length > 0 && options.deferCounters !== true) {
      await this.runs.refreshCounters(runId);
    }
    return { itemIdByCase, createdIds, existingIds: existing.map((e) => e.id) };
  }

  private async loadCases(projectId: string, ids: string[], field: string): Promise<CaseRecord[]> {
    const valid = ids.filter(isUuid);
    const rows = valid.length > 0 ? await this.repo.findCasesForShare(valid) : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    // Unknown or deleted ids are references in the body that do not resolve in the run's project:
    // 422 like ids of another project (issue 5: deleted cases added to runs are a 422).
    const foreign = ids.filter((id) => byId.get(id)?.project_id !== projectId);
    if (foreign.length > 0) {
      throw new AppException(
        'test_case_project_mismatch',
        'Some test cases do not exist in the project of the run',
        { [field]: [`not test cases of this project: ${foreign.join(', ')}`] },
      );
    }
    const inactive = ids.filter((id) => byId.get(id)?.status !== 'active');
    if (inactive.length > 0) {
      throw new AppException(
        'test_case_status_not_allowed',
        'Only active test cases can be added to a run',
        { [field]: [`not active: ${inactive.join(', ')}`] },
      );
    }
    return ids.map((id) => byId.get(id) as CaseRecord);
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

  /**
   * Inserts items and their expanded rows in bulk (with `options.results`, in their final state);
   * returns the new item ids in case order.
   */
  private async insertItems(
    run: LockedRun,
    cases: CaseRecord[],
    assigneeId: string | null,
    options: Pick<AddCasesOptions, 'results' | 'changedById'> = {},
  ): Promise<string[]> {
    if (cases.length === 0) return [];
    const expanded = await this.expansion.expandForCasesDetailed(
      run.projectId,
      cases.map((c) => c.id),
    );
    const items: NewItem[] = [];
    const rows: Array<{ itemId: string; row: NewRow }> = [];
    const moved: HistoryEntry[] = [];
    const causes = new Map<string, RowCause>();
    for (const c of cases) {
      const id = uuidv7();
      const e = expanded.get(c.id);
      const planned: PlannedRow[] = (e?.rows ?? []).map((r, i) => ({
        id: uuidv7(),
        row_order: i + 1,
        scenario_label: r.scenario_label,
        row_snapshot: JSON.stringify(r.row_snapshot),
      }));
      const initial = rollUpRunItem(planned.map((): RunItemStatus => 'untested')).status;
      const stored = options.results?.(c.id, planned) ?? {
        rows: planned.map((r) => ({ ...r, result: null })),
        comment: null,
      };
      let last: Date | null = null;
      for (const r of stored.rows) {
        rows.push({ itemId: id, row: r });
        const at = r.result?.finished_at ?? null;
        if (at !== null && (last === null || at.getTime() > last.getTime())) last = at;
      }
      const rollUp = rollUpRunItem(stored.rows.map((r) => r.result?.status ?? 'untested'));
      items.push({
        id,
        rollUp,
        last,
        comment: stored.comment,
        snapshot: JSON.stringify(e?.dataset_snapshot ?? { bindings: [] }),
      });
      if (rollUp.status !== initial) {
        moved.push({ id, from: initial, status: rollUp.status });
        if (stored.cause) causes.set(id, stored.cause);
      }
    }
    await this.repo.insertItems(run, assigneeId, items, cases);
    await this.repo.insertNewItemRows(run.projectId, rows);
    await this.repo.insertHistory(options.changedById ?? null, moved, causes);
    return items.map((i) => i.id);
  }

  // ---------------------------------------------------------------------------------------------
  // Item changes

  async update(access: ProjectAccess, id: string, dto: UpdateRunCaseDto): Promise<RunCaseDto> {
    await this.lockRunOfItem(id);
    let assigneeId: string | null | undefined;
    if (dto.assignee_id !== undefined) {
      assigneeId = dto.assignee_id === '' ? null : dto.assignee_id;
      if (assigneeId) await this.runs.checkAssignee(access.projectId, assigneeId, 'assignee_id');
    }
    await this.repo.updateItem(id, { assigneeId, comment: dto.comment });
    const [item] = await this.items([id]);
    return item;
  }

  async remove(id: string): Promise<void> {
    const run = await this.lockRunOfItem(id);
    await this.repo.deleteItem(id);
    await this.runs.refreshCounters(run.id);
  }

  // ---------------------------------------------------------------------------------------------
  // Row results

  /**
   * PATCH of a row result. A status change goes through `decideRowStatusUpdate` (final status
   * without finished_at → now; execution_count +1 only when entering a final status); the
   * executor defaults to the caller when a final status is entered; finished_at before
   * started_at is 422; duration_ms is derived from the timestamps when a final status is entered
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

    if (
      dto.executed_by !== undefined &&
      dto.executed_by_id !== undefined &&
      dto.executed_by !== dto.executed_by_id
    ) {
      const message = 'executed_by and executed_by_id are aliases; give one of them';
      throw AppException.validation({ executed_by: [message], executed_by_id: [message] });
    }
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
    if (next.startedAt && next.finishedAt && next.finishedAt.getTime() < next.startedAt.getTime()) {
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
    await this.rollUpItems(
      run.id,
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
   * ignored, as in the reference; nothing selected answers an empty page.
   */
  async rerun(user: AuthenticatedUser, itemId: string, dto: RerunDto): Promise<RowPageDto> {
    const mode = dto.mode ?? 'failed';
    const ids = dto.run_case_row_ids ?? [];
    if (mode === 'subset' && ids.length === 0) {
      throw AppException.validation({
        run_case_row_ids: ['at least one row id is required with mode subset'],
      });
    }
    const run = await this.lockRunOfItem(itemId);
    let selected: RowRecord[];
    if (mode === 'failed') {
      selected = await this.repo.findFailedRows(itemId);
    } else {
      selected = await this.repo.findRowsOfItem(itemId, [...new Set(ids)]);
    }
    if (selected.length === 0) return pageOf([], 1, EMPTY_RERUN_PAGE_SIZE, 0);

    let fresh: Array<Omit<RerunRow, 'id'>>;
    if (dto.use_latest_revisions) {
      const testCaseId = await this.repo.findTestCaseIdOfItem(itemId);
      if (!testCaseId) {
        throw AppException.validation({
          use_latest_revisions: ['the test case of this run case no longer exists'],
        });
      }
      // Pins are ignored: every binding resolves to its dataset's current revision (reference §3.8).
      const expanded = await this.expansion.expandForCases(run.projectId, [testCaseId], {
        useLatestRevisions: true,
      });
      const byLabel = new Map(selected.map((r) => [r.scenario_label, r.id]));
      fresh = (expanded.get(testCaseId) ?? [])
        .filter((r) => byLabel.has(r.scenario_label))
        .map((r) => ({
          parent: byLabel.get(r.scenario_label) as string,
          label: r.scenario_label,
          snapshot: r.row_snapshot,
        }));
    } else {
      fresh = selected.map((r) => ({
        parent: r.id,
        label: r.scenario_label,
        snapshot: r.row_snapshot ?? {},
      }));
    }
    if (fresh.length === 0) return pageOf([], 1, EMPTY_RERUN_PAGE_SIZE, 0);

    const newRows: RerunRow[] = fresh.map((f) => ({ id: uuidv7(), ...f }));
    await this.repo.insertRerunRows(run.projectId, itemId, newRows);
    await this.rollUpItems(run.id, [itemId], user.id);
    const rows = await this.repo.findRowsByIds(newRows.map((r) => r.id));
    return pageOf(rows.map(toRowDto), 1, rows.length, rows.length);
  }

  /**
   * Recomputes status, row counters and last_executed_at of the given items of a (locked) run from
   * their rows; writes a history record for every item whose status changed (with the causing row
   * result when given) and refreshes the run counters (unless `deferCounters`: the caller does it
   * once after several batches). `comments` sets the comment of those items in the same UPDATE
   * (the import copies each item's last row comment). A constant number of statements.
   */
  async rollUpItems(
    runId: string,
    itemIds: string[],
    changedById: string | null,
    causes: Map<string, RowCause> = new Map(),
    options: { deferCounters?: boolean; comments?: Map<string, string | null> } = {},
  ): Promise<void> {
    if (itemIds.length === 0) return;
    const counts = await this.repo.countRowsByItemAndStatus(itemIds);
    const current = await this.repo.findRollUpStates(itemIds);
    const byItem = new Map<string, { counts: StatusCounts; last: Date | null }>();
    for (const c of counts) {
      const entry = byItem.get(c.run_item_id) ?? { counts: {}, last: null };
      entry.counts[c.status] = (entry.counts[c.status] ?? 0) + c.n;
      if (c.last && (!entry.last || c.last.getTime() > entry.last.getTime())) entry.last = c.last;
      byItem.set(c.run_item_id, entry);
    }
    const changed: Array<ItemRollUpWrite & { from: RunItemStatus }> = [];
    const comments = options.comments ?? new Map<string, string | null>();
    for (const item of current) {
      const agg = byItem.get(item.id) ?? { counts: {}, last: null };
      const r = rollUpRunItemFromCounts(agg.counts);
      const lastTime = agg.last?.getTime() ?? null;
      const setComment = comments.has(item.id);
      if (
        setComment ||
        r.status !== item.status ||
        r.rows_total !== item.rows_total ||
        r.rows_passed !== item.rows_passed ||
        r.rows_failed !== item.rows_failed ||
        lastTime !== (item.last_executed_at?.getTime() ?? null)
      ) {
        changed.push({
          id: item.id,
          from: item.status,
          status: r.status,
          total: r.rows_total,
          passed: r.rows_passed,
          failed: r.rows_failed,
          last: agg.last,
          setComment,
          comment: comments.get(item.id) ?? null,
        });
      }
    }
    if (changed.length === 0) return;
    await this.repo.updateRollUps(changed);
    const moved = changed.filter((c) => c.status !== c.from);
    if (moved.length === 0) return;
    await this.repo.insertHistory(changedById, moved, causes);
    if (options.deferCounters !== true) await this.runs.refreshCounters(runId);
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
