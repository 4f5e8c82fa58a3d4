import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { ProjectRole } from '../../common/access/roles';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { Db } from '../../common/persistence/db.service';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
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
  RunCaseSortKey,
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
import {
  HISTORY_COLUMNS,
  HistoryRecord,
  ITEM_COLUMNS,
  ITEM_JOINS,
  ROW_COLUMNS,
  RowRecord,
  RunItemRow,
  toHistoryDto,
  toRowDto,
  toRunCaseDto,
} from './run-item.mapper';
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
 * The items of run `$1` for the cases `$2` (`uuid[]`), as rows `{id, test_case_id}`: one probe of
 * the (test_run_id, test_case_id) unique index per case. Written as LATERAL … LIMIT 1 so that the
 * planner cannot walk all of the run's items instead: for a run whose items were inserted earlier
 * in the same transaction (an import, batch by batch), the statistics say the run has none, and
 * `test_run_id = $1 AND test_case_id = ANY($2)` then scanned the run's index range and filtered
 * (17 ms per 1,000 cases on average in the 100,000-testcase import, growing with the run; this
 * form takes 1–2 ms whatever the run's size).
 */
export const RUN_ITEMS_BY_CASE_SQL = `SELECT x.id, c.id AS test_case_id
   FROM unnest($2::uuid[]) AS c(id)
  CROSS JOIN LATERAL (
        SELECT ri.id FROM run_items ri
         WHERE ri.test_run_id = $1 AND ri.test_case_id = c.id
         LIMIT 1
       ) x`;

/** Rows inserted per statement when adding cases (keeps parameters a sane size). */
const ROW_CHUNK = 5000;

/** A test case as it joins a run. */
interface CaseRecord {
  id: string;
  project_id: string;
  status: string;
  key: string;
  title: string;
  priority: string | null;
  tags: string[];
  suite_id: string | null;
  suite_name: string | null;
}

const CASE_COLUMNS = `tc.id, tc.project_id, tc.status, tc.key, tc.title, tc.priority, tc.tags,
  tc.suite_id, s.name AS suite_name`;

/** The row result that caused a change of an item's status (copied into its history record). */
export interface RowCause {
  rowId: string;
  comment: string | null;
  defectIds: string[];
  actualResult: string | null;
  systemOut: string | null;
  systemErr: string | null;
  executedById: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
}

/** An item whose status moved (a history record). */
interface HistoryEntry {
  id: string;
  from: RunItemStatus;
  status: RunItemStatus;
}

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

/** A result stored in a new row (one execution, by `executed_by_id`, ending at `finished_at`). */
export interface NewRowResult {
  status: RunItemStatus;
  comment: string | null;
  system_out: string | null;
  system_err: string | null;
  executed_by_id: string | null;
  started_at: Date | null;
  finished_at: Date;
  duration_ms: number | null;
}

/** A new item's rows as they are stored (`AddCasesOptions.results`). */
export interface NewItemRows {
  /** In row order; `result` null for a row left untested. */
  rows: Array<PlannedRow & { result: NewRowResult | null }>;
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

const SORT_EXPRESSIONS: Record<RunCaseSortKey, string[]> = {
  last_executed_at: ['ri.last_executed_at'],
  test_case_title: ["lower(coalesce(tc.title, ri.test_case_title, ''))"],
  // Keys share the `TC-` prefix: shorter first gives numeric order.
  test_case_key: [
    "length(coalesce(tc.key, ri.test_case_key, ''))",
    "coalesce(tc.key, ri.test_case_key, '')",
  ],
  suite_name: ["lower(coalesce(ri.suite_name, ls.name, ''))"],
  status: ['ri.status'],
  assignee_name: ["lower(coalesce(au.username, ''))"],
  created_at: ['ri.created_at'],
};

function orderBy(key: RunCaseSortKey, dir: 'ASC' | 'DESC'): string {
  // last_executed_at: never-executed items count as the oldest (last in desc, first in asc).
  const nulls = key === 'last_executed_at' ? (dir === 'DESC' ? ' NULLS LAST' : ' NULLS FIRST') : '';
  const parts = SORT_EXPRESSIONS[key].map((e) => `${e} ${dir}${nulls}`);
  return [...parts, `ri.id ${dir}`].join(', ');
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
    private readonly db: Db,
    private readonly accessService: AccessService,
    private readonly runs: TestRunsService,
    private readonly expansion: BindingExpansionService,
  ) {}

  // ---------------------------------------------------------------------------------------------
  // Reads

  async list(user: AuthenticatedUser, q: ListRunCasesQueryDto): Promise<Page<RunCaseDto>> {
    const params: unknown[] = [];
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const where: string[] = [];
    if (q.test_run_id !== undefined) {
      await this.runAccess(user, q.test_run_id, 'viewer');
      where.push(`ri.test_run_id = ${add(q.test_run_id)}`);
      if (q.test_case_id !== undefined) {
        where.push(isUuid(q.test_case_id) ? `ri.test_case_id = ${add(q.test_case_id)}` : 'false');
      }
      if (q.search) {
        const p = add(likePattern(q.search));
        where.push(
          `(coalesce(tc.title, ri.test_case_title) ILIKE ${p} OR coalesce(tc.key, ri.test_case_key) ILIKE ${p})`,
        );
      }
    } else {
      if (q.project_id === undefined || q.test_case_id === undefined) {
        const errors: Record<string, string[]> = {};
        const message = 'test_run_id, or both project_id and test_case_id, are required';
        if (q.project_id === undefined) errors['query.project_id'] = [message];
        if (q.test_case_id === undefined) errors['query.test_case_id'] = [message];
        throw AppException.validation(errors);
      }
      await this.accessService.forProject(user, q.project_id);
      const found = isUuid(q.test_case_id)
        ? await this.db.query(`SELECT 1 FROM test_cases WHERE id = $1 AND project_id = $2`, [
            q.test_case_id,
            q.project_id,
          ])
        : [];
      if (found.length === 0) throw AppException.notFound('test_case_not_found', 'Test case');
      where.push(
        `ri.project_id = ${add(q.project_id)}`,
        `ri.test_case_id = ${add(q.test_case_id)}`,
      );
      if (q.search) {
        const p = add(likePattern(q.search));
        where.push(`(tr.name ILIKE ${p} OR tr.build ILIKE ${p} OR tr.environment_name ILIKE ${p})`);
      }
    }
    if (q.status?.length) where.push(`ri.status = ANY(${add(q.status)}::varchar[])`);
    if (q.assignee_id !== undefined) {
      where.push(isUuid(q.assignee_id) ? `ri.assignee_id = ${add(q.assignee_id)}` : 'false');
    }
    const dir = (q.sort_order ?? 'desc') === 'asc' ? 'ASC' : 'DESC';
    const order = orderBy(q.sort_by ?? 'last_executed_at', dir);
    const filter = where.join(' AND ');
    const rows = await this.db.query<RunItemRow & { total: number }>(
      `SELECT ${ITEM_COLUMNS}, count(*) OVER ()::int AS total
         FROM run_items ri ${ITEM_JOINS}
        WHERE ${filter}
        ORDER BY ${order}
        LIMIT ${add(q.page_size)} OFFSET ${add(offsetOf(q.page, q.page_size))}`,
      params,
    );
    let total = rows[0]?.total;
    if (total === undefined) {
      const c = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM run_items ri ${ITEM_JOINS} WHERE ${filter}`,
        params.slice(0, -2),
      );
      total = c[0]?.n ?? 0;
    }
    return pageOf(rows.map(toRunCaseDto), q.page, q.page_size, total);
  }

  async get(id: string, q: RunCaseDetailQueryDto): Promise<RunCaseDetailDto> {
    const [item] = await this.items([id]);
    if (!item) throw AppException.notFound('run_case_not_found', 'Run case');
    const history = await this.db.query<HistoryRecord & { total: number }>(
      `SELECT ${HISTORY_COLUMNS}, count(*) OVER ()::int AS total
         FROM run_item_history h
        WHERE h.run_item_id = $1
        ORDER BY h.changed_at DESC, h.id DESC
        LIMIT $2 OFFSET $3`,
      [id, q.history_page_size, offsetOf(q.history_page, q.history_page_size)],
    );
    let total = history[0]?.total;
    if (total === undefined) {
      const c = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM run_item_history WHERE run_item_id = $1`,
        [id],
      );
      total = c[0]?.n ?? 0;
    }
    return {
      ...item,
      history: pageOf(history.map(toHistoryDto), q.history_page, q.history_page_size, total),
    };
  }

  async rows(id: string, q: ListRowsQueryDto): Promise<RowPageDto> {
    const params: unknown[] = [id];
    let filter = 'w.run_item_id = $1';
    if (q.status?.length) {
      params.push(q.status);
      filter += ` AND w.status = ANY($${params.length}::varchar[])`;
    }
    params.push(q.page_size, offsetOf(q.page, q.page_size));
    const rows = await this.db.query<RowRecord & { total: number }>(
      `SELECT ${ROW_COLUMNS}, count(*) OVER ()::int AS total
         FROM run_item_rows w
        WHERE ${filter}
        ORDER BY w.row_order ASC, w.id ASC
        LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    let total = rows[0]?.total;
    if (total === undefined) {
      const c = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM run_item_rows w WHERE ${filter}`,
        params.slice(0, -2),
      );
      total = c[0]?.n ?? 0;
    }
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
    const existing = await this.db.query<{ id: string; test_case_id: string }>(
      RUN_ITEMS_BY_CASE_SQL,
      [runId, ids],
    );
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
    const rows =
      valid.length > 0
        ? await this.db.query<CaseRecord>(
            // Key-share lock: a concurrent DELETE of a case waits for this transaction instead
            // of making the item insert fail on its foreign key.
            `SELECT ${CASE_COLUMNS} FROM test_cases tc LEFT JOIN suites s ON s.id = tc.suite_id
              WHERE tc.id = ANY($1::uuid[])
                FOR KEY SHARE OF tc`,
            [valid],
          )
        : [];
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
    return this.db.query<CaseRecord>(
      `WITH RECURSIVE tree(id) AS (
         SELECT id FROM suites WHERE id = $1 AND project_id = $2
         UNION
         SELECT c.id FROM suites c JOIN tree t ON c.parent_id = t.id WHERE c.project_id = $2
       )
       SELECT ${CASE_COLUMNS}
         FROM test_cases tc LEFT JOIN suites s ON s.id = tc.suite_id
        WHERE tc.project_id = $2 AND tc.status = 'active' AND tc.suite_id IN (SELECT id FROM tree)
        ORDER BY tc.key_number, tc.id
          FOR KEY SHARE OF tc`,
      [suiteId, projectId],
    );
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
    const items: Array<{
      id: string;
      rollUp: ReturnType<typeof rollUpRunItem>;
      last: Date | null;
      comment: string | null;
      snapshot: string;
    }> = [];
    const rows: Array<{ itemId: string; row: NewItemRows['rows'][number] }> = [];
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
    await this.db.query(
      `INSERT INTO run_items (id, project_id, test_run_id, test_case_id, assignee_id, status,
                              rows_total, rows_passed, rows_failed, last_executed_at, comment,
                              test_case_key, test_case_title, test_case_priority,
                              test_case_tags, suite_id, suite_name, dataset_snapshot)
       SELECT u.id, $1, $2, u.case_id, $3, u.status, u.rows_total, u.rows_passed, u.rows_failed,
              u.last, u.comment, u.key, u.title, u.priority,
              ARRAY(SELECT jsonb_array_elements_text(u.tags)), u.suite_id, u.suite_name,
              u.dataset_snapshot
         FROM unnest($4::uuid[], $5::uuid[], $6::varchar[], $7::int[], $8::int[], $9::int[],
                     $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[],
                     $15::jsonb[], $16::uuid[], $17::text[], $18::jsonb[])
              AS u(id, case_id, status, rows_total, rows_passed, rows_failed, last, comment, key,
                   title, priority, tags, suite_id, suite_name, dataset_snapshot)`,
      [
        run.projectId,
        run.id,
        assigneeId,
        items.map((i) => i.id),
        cases.map((c) => c.id),
        items.map((i) => i.rollUp.status),
        items.map((i) => i.rollUp.rows_total),
        items.map((i) => i.rollUp.rows_passed),
        items.map((i) => i.rollUp.rows_failed),
        items.map((i) => i.last),
        items.map((i) => i.comment),
        cases.map((c) => c.key),
        cases.map((c) => c.title),
        cases.map((c) => c.priority),
        cases.map((c) => JSON.stringify(c.tags ?? [])),
        cases.map((c) => c.suite_id),
        cases.map((c) => c.suite_name),
        items.map((i) => i.snapshot),
      ],
    );
    for (let start = 0; start < rows.length; start += ROW_CHUNK) {
      const chunk = rows.slice(start, start + ROW_CHUNK);
      const result = <K extends keyof NewRowResult>(key: K) =>
        chunk.map((r) => (r.row.result === null ? null : r.row.result[key]));
      // A row with a result is one execution: execution_count 1, last executed when it finished.
      await this.db.query(
        `INSERT INTO run_item_rows (id, project_id, run_item_id, row_order, scenario_label,
                                    row_snapshot, status, comment, system_out, system_err,
                                    executed_by_id, execution_count, last_executed_at, started_at,
                                    finished_at, duration_ms)
         SELECT u.id, $1, u.item_id, u.row_order, u.label, u.snapshot, coalesce(u.status, 'untested'),
                u.comment, u.system_out, u.system_err, u.executed_by,
                CASE WHEN u.status IS NULL THEN 0 ELSE 1 END, u.finished_at, u.started_at,
                u.finished_at, u.duration_ms
           FROM unnest($2::uuid[], $3::uuid[], $4::int[], $5::text[], $6::jsonb[], $7::varchar[],
                       $8::text[], $9::text[], $10::text[], $11::uuid[], $12::timestamptz[],
                       $13::timestamptz[], $14::bigint[])
                AS u(id, item_id, row_order, label, snapshot, status, comment, system_out,
                     system_err, executed_by, started_at, finished_at, duration_ms)`,
        [
          run.projectId,
          chunk.map((r) => r.row.id),
          chunk.map((r) => r.itemId),
          chunk.map((r) => r.row.row_order),
          chunk.map((r) => r.row.scenario_label),
          chunk.map((r) => r.row.row_snapshot),
          result('status'),
          result('comment'),
          result('system_out'),
          result('system_err'),
          result('executed_by_id'),
          result('started_at'),
          result('finished_at'),
          result('duration_ms'),
        ],
      );
    }
    await this.insertHistory(options.changedById ?? null, moved, causes);
    return items.map((i) => i.id);
  }

  // ---------------------------------------------------------------------------------------------
  // Item changes

  async update(access: ProjectAccess, id: string, dto: UpdateRunCaseDto): Promise<RunCaseDto> {
    await this.lockRunOfItem(id);
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (dto.assignee_id !== undefined) {
      const assignee = dto.assignee_id === '' ? null : dto.assignee_id;
      if (assignee) await this.runs.checkAssignee(access.projectId, assignee, 'assignee_id');
      params.push(assignee);
      sets.push(`assignee_id = $${params.length}`);
    }
    if (dto.comment !== undefined) {
      params.push(dto.comment);
      sets.push(`comment = $${params.length}`);
    }
    if (sets.length > 0) {
      await this.db.query(
        `UPDATE run_items SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
    }
    const [item] = await this.items([id]);
    return item;
  }

  async remove(id: string): Promise<void> {
    const run = await this.lockRunOfItem(id);
    await this.db.query(`DELETE FROM run_items WHERE id = $1`, [id]);
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
    const located = await this.db.query<{ test_run_id: string }>(
      `SELECT ri.test_run_id FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
        WHERE w.id = $1`,
      [rowId],
    );
    if (!located[0]) throw AppException.notFound('run_case_row_not_found', 'Run case row');
    const run = await this.runs.lockForItemChange(located[0].test_run_id);
    const [row] = await this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w WHERE w.id = $1`,
      [rowId],
    );
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
    await this.db.query(
      `UPDATE run_item_rows
          SET status = $2, execution_count = $3, last_executed_at = $4, started_at = $5,
              finished_at = $6, duration_ms = $7, executed_by_id = $8, comment = $9,
              defect_ids = $10::text[], actual_result = $11, system_out = $12, system_err = $13,
              updated_at = now()
        WHERE id = $1`,
      [
        rowId,
        next.status,
        next.executionCount,
        next.lastExecutedAt,
        next.startedAt,
        next.finishedAt,
        next.durationMs,
        next.executedById,
        comment,
        defectIds,
        actualResult,
        systemOut,
        systemErr,
      ],
    );
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
    const [updated] = await this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w WHERE w.id = $1`,
      [rowId],
    );
    return toRowDto(updated);
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
      selected = await this.db.query<RowRecord>(
        `SELECT ${ROW_COLUMNS} FROM run_item_rows w
          WHERE w.run_item_id = $1 AND w.status IN ('failure', 'error')
          ORDER BY w.row_order`,
        [itemId],
      );
    } else {
      const unique = [...new Set(ids)];
      selected = await this.db.query<RowRecord>(
        `SELECT ${ROW_COLUMNS} FROM run_item_rows w
          WHERE w.run_item_id = $1 AND w.id = ANY($2::uuid[])
          ORDER BY w.row_order`,
        [itemId, unique.filter(isUuid)],
      );
    }
    if (selected.length === 0) return pageOf([], 1, EMPTY_RERUN_PAGE_SIZE, 0);

    let fresh: Array<{ parent: string; label: string; snapshot: Record<string, unknown> }>;
    if (dto.use_latest_revisions) {
      const [item] = await this.db.query<{ test_case_id: string | null }>(
        `SELECT test_case_id FROM run_items WHERE id = $1`,
        [itemId],
      );
      if (!item?.test_case_id) {
        throw AppException.validation({
          use_latest_revisions: ['the test case of this run case no longer exists'],
        });
      }
      // Pins are ignored: every binding resolves to its dataset's current revision (reference §3.8).
      const expanded = await this.expansion.expandForCases(run.projectId, [item.test_case_id], {
        useLatestRevisions: true,
      });
      const byLabel = new Map(selected.map((r) => [r.scenario_label, r.id]));
      fresh = (expanded.get(item.test_case_id) ?? [])
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

    const newIds = fresh.map(() => uuidv7());
    await this.db.query(
      `INSERT INTO run_item_rows (id, project_id, run_item_id, parent_row_id, row_order,
                                  scenario_label, row_snapshot)
       SELECT u.id, $1, $2, u.parent, m.max_order + u.ord, u.label, u.snapshot
         FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::jsonb[])
              WITH ORDINALITY AS u(id, parent, label, snapshot, ord)
        CROSS JOIN (SELECT coalesce(max(row_order), 0) AS max_order
                      FROM run_item_rows WHERE run_item_id = $2) m`,
      [
        run.projectId,
        itemId,
        newIds,
        fresh.map((f) => f.parent),
        fresh.map((f) => f.label),
        fresh.map((f) => JSON.stringify(f.snapshot)),
      ],
    );
    await this.rollUpItems(run.id, [itemId], user.id);
    const rows = await this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w WHERE w.id = ANY($1::uuid[]) ORDER BY w.row_order`,
      [newIds],
    );
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
    const counts = await this.db.query<{
      run_item_id: string;
      status: RunItemStatus;
      n: number;
      last: Date | null;
    }>(
      `SELECT run_item_id, status, count(*)::int AS n, max(last_executed_at) AS last
         FROM run_item_rows WHERE run_item_id = ANY($1::uuid[])
        GROUP BY run_item_id, status`,
      [itemIds],
    );
    const current = await this.db.query<{
      id: string;
      status: RunItemStatus;
      rows_total: number;
      rows_passed: number;
      rows_failed: number;
      last_executed_at: Date | null;
    }>(
      `SELECT id, status, rows_total, rows_passed, rows_failed, last_executed_at
         FROM run_items WHERE id = ANY($1::uuid[])`,
      [itemIds],
    );
    const byItem = new Map<string, { counts: StatusCounts; last: Date | null }>();
    for (const c of counts) {
      const entry = byItem.get(c.run_item_id) ?? { counts: {}, last: null };
      entry.counts[c.status] = (entry.counts[c.status] ?? 0) + c.n;
      if (c.last && (!entry.last || c.last.getTime() > entry.last.getTime())) entry.last = c.last;
      byItem.set(c.run_item_id, entry);
    }
    const changed: Array<{
      id: string;
      from: RunItemStatus;
      status: RunItemStatus;
      total: number;
      passed: number;
      failed: number;
      last: Date | null;
      setComment: boolean;
      comment: string | null;
    }> = [];
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
    await this.db.query(
      `UPDATE run_items ri
          SET status = u.status, rows_total = u.total, rows_passed = u.passed,
              rows_failed = u.failed, last_executed_at = u.last,
              comment = CASE WHEN u.set_comment THEN u.comment ELSE ri.comment END,
              updated_at = now()
         FROM unnest($1::uuid[], $2::varchar[], $3::int[], $4::int[], $5::int[], $6::timestamptz[],
                     $7::boolean[], $8::text[])
              AS u(id, status, total, passed, failed, last, set_comment, comment)
        WHERE ri.id = u.id`,
      [
        changed.map((c) => c.id),
        changed.map((c) => c.status),
        changed.map((c) => c.total),
        changed.map((c) => c.passed),
        changed.map((c) => c.failed),
        changed.map((c) => c.last),
        changed.map((c) => c.setComment),
        changed.map((c) => c.comment),
      ],
    );
    const moved = changed.filter((c) => c.status !== c.from);
    if (moved.length === 0) return;
    await this.insertHistory(changedById, moved, causes);
    if (options.deferCounters !== true) await this.runs.refreshCounters(runId);
  }

  /** One history record per item whose status moved, copying the causing row result if any. */
  private async insertHistory(
    changedById: string | null,
    moved: HistoryEntry[],
    causes: Map<string, RowCause>,
  ): Promise<void> {
    if (moved.length === 0) return;
    const cause = (id: string) => causes.get(id);
    await this.db.query(
      `INSERT INTO run_item_history (id, project_id, run_item_id, run_item_row_id, from_status,
                                     to_status, comment, defect_ids, actual_result, system_out,
                                     system_err, executed_by_id, started_at, finished_at,
                                     duration_ms, changed_by_id)
       SELECT u.id, ri.project_id, u.item_id, u.row_id, u.from_status, u.to_status, u.comment,
              ARRAY(SELECT jsonb_array_elements_text(u.defect_ids)), u.actual_result,
              u.system_out, u.system_err, u.executed_by, u.started_at, u.finished_at,
              u.duration_ms, $1
         FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::varchar[], $6::varchar[], $7::text[],
                     $8::jsonb[], $9::text[], $10::text[], $11::text[], $12::uuid[],
                     $13::timestamptz[], $14::timestamptz[], $15::bigint[])
              AS u(id, item_id, row_id, from_status, to_status, comment, defect_ids,
                   actual_result, system_out, system_err, executed_by, started_at, finished_at,
                   duration_ms)
         JOIN run_items ri ON ri.id = u.item_id`,
      [
        changedById,
        moved.map(() => uuidv7()),
        moved.map((m) => m.id),
        moved.map((m) => cause(m.id)?.rowId ?? null),
        moved.map((m) => m.from),
        moved.map((m) => m.status),
        moved.map((m) => cause(m.id)?.comment ?? null),
        moved.map((m) => JSON.stringify(cause(m.id)?.defectIds ?? [])),
        moved.map((m) => cause(m.id)?.actualResult ?? null),
        moved.map((m) => cause(m.id)?.systemOut ?? null),
        moved.map((m) => cause(m.id)?.systemErr ?? null),
        moved.map((m) => cause(m.id)?.executedById ?? null),
        moved.map((m) => cause(m.id)?.startedAt ?? null),
        moved.map((m) => cause(m.id)?.finishedAt ?? null),
        moved.map((m) => cause(m.id)?.durationMs ?? null),
      ],
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /** Items by id, in the given order (one query). */
  async items(ids: string[]): Promise<RunCaseDto[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<RunItemRow>(
      `SELECT ${ITEM_COLUMNS} FROM run_items ri ${ITEM_JOINS} WHERE ri.id = ANY($1::uuid[])`,
      [ids],
    );
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
    const rows = await this.db.query<{ test_run_id: string }>(
      `SELECT test_run_id FROM run_items WHERE id = $1`,
      [itemId],
    );
    if (!rows[0]) throw AppException.notFound('run_case_not_found', 'Run case');
    const run = await this.runs.lockForItemChange(rows[0].test_run_id);
    const still = await this.db.query(`SELECT 1 FROM run_items WHERE id = $1`, [itemId]);
    if (still.length === 0) throw AppException.notFound('run_case_not_found', 'Run case');
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
