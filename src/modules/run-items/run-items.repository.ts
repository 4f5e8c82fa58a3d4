import { Injectable } from '@nestjs/common';
import {
  KeysetOrder,
  KeysetRequest,
  keysetAfter,
  keysetColumns,
  keysetOrderBy,
} from '../../common/pagination/keyset';
import { likePattern } from '../../common/pagination/page';
import { copyLines, copyRow } from '../../common/persistence/copy-text';
import { Db } from '../../common/persistence/db.service';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import type { RunStatus } from '../test-runs/run-status';
import type { RunCaseSortKey } from './dto/run-item.dto';
import type { RunItemStatus } from '../test-runs/run-summary';
import type { DatasetSnapshot } from '../datasets/binding-expansion';
import type { RunItemRollUp } from './roll-up';
import type { ExistingRow } from './row-plan';

/**
 * Columns of a run item read (`ri` = run_items, `tr` = its run, `tc` = its live test case,
 * `ls` = the live case's suite, `au` = assignee). Case key/title/priority/tags are the live values
 * while the case exists, else the snapshots taken when it was added; the suite is the snapshot,
 * else (no suite when the case was added) the live one (reference §3.3). `assignee_name` is the
 * assignee's username (reference §3.3).
 */
export const ITEM_COLUMNS = `ri.id, ri.project_id, ri.test_run_id, ri.test_case_id,
  tr.name AS test_run_name, tr.status AS test_run_status,
  tr.environment_name AS test_run_environment_name,
  tr.environment_revision_number AS test_run_environment_revision_number,
  tr.build AS test_run_build, ri.assignee_id,
  au.username AS assignee_name,
  ri.status, ri.rows_total, ri.rows_passed, ri.rows_failed, ri.comment,
  coalesce(tc.key, ri.test_case_key) AS test_case_key,
  coalesce(tc.title, ri.test_case_title) AS test_case_title,
  CASE WHEN tc.id IS NULL THEN ri.test_case_priority ELSE tc.priority END AS test_case_priority,
  coalesce(tc.tags, ri.test_case_tags) AS test_case_tags,
  CASE WHEN ri.suite_name IS NULL THEN tc.suite_id ELSE ri.suite_id END AS suite_id,
  coalesce(ri.suite_name, ls.name) AS suite_name,
  ri.last_executed_at, ri.created_at, ri.updated_at`;

export const ITEM_JOINS = `JOIN test_runs tr ON tr.id = ri.test_run_id
  LEFT JOIN test_cases tc ON tc.id = ri.test_case_id
  LEFT JOIN suites ls ON ls.id = tc.suite_id
  LEFT JOIN users au ON au.id = ri.assignee_id`;

/** A run item as every read answers it (ITEM_COLUMNS). */
export interface RunItemRow {
  id: string;
  project_id: string;
  test_run_id: string;
  test_case_id: string | null;
  test_run_name: string;
  test_run_status: RunStatus;
  test_run_environment_name: string | null;
  test_run_environment_revision_number: number | null;
  test_run_build: string | null;
  assignee_id: string | null;
  assignee_name: string | null;
  status: RunItemStatus;
  rows_total: number;
  rows_passed: number;
  rows_failed: number;
  comment: string | null;
  test_case_key: string | null;
  test_case_title: string | null;
  test_case_priority: string | null;
  test_case_tags: string[] | null;
  suite_id: string | null;
  suite_name: string | null;
  last_executed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const ROW_COLUMNS = `w.id, w.run_item_id, w.parent_row_id, w.row_order, w.scenario_label,
  w.row_snapshot, w.status, w.comment, w.defect_ids, w.actual_result, w.system_out, w.system_err,
  w.executed_by_id, w.execution_count, w.last_executed_at, w.started_at, w.finished_at,
  w.duration_ms::float8 AS duration_ms, w.created_at, w.updated_at`;

/** A row of a run item as every read answers it (ROW_COLUMNS). */
export interface RowRecord {
  id: string;
  run_item_id: string;
  parent_row_id: string | null;
  row_order: number;
  scenario_label: string;
  row_snapshot: Record<string, unknown> | null;
  status: RunItemStatus;
  comment: string | null;
  defect_ids: string[] | null;
  actual_result: string | null;
  system_out: string | null;
  system_err: string | null;
  executed_by_id: string | null;
  execution_count: number;
  last_executed_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  created_at: Date;
  updated_at: Date;
}

export const HISTORY_COLUMNS = `h.id, h.run_item_id, h.run_item_row_id, h.from_status, h.to_status,
  h.comment, h.defect_ids, h.actual_result, h.system_out, h.system_err, h.executed_by_id,
  h.started_at, h.finished_at, h.duration_ms::float8 AS duration_ms, h.changed_by_id, h.changed_at`;

/** A history record as its read answers it (HISTORY_COLUMNS). */
export interface HistoryRecord {
  id: string;
  run_item_id: string;
  run_item_row_id: string | null;
  from_status: RunItemStatus | null;
  to_status: RunItemStatus;
  comment: string | null;
  defect_ids: string[] | null;
  actual_result: string | null;
  system_out: string | null;
  system_err: string | null;
  executed_by_id: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  changed_by_id: string | null;
  changed_at: Date;
}

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

/** The snapshot of a row written by a result without a dataset (a plain row). */
export const DEFAULT_ROW_SNAPSHOT = JSON.stringify({ datasets: [] });

/** What a result writes into one row. */
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

/** A test case as it joins a run. */
export interface CaseRecord {
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
export interface HistoryEntry {
  id: string;
  from: RunItemStatus;
  status: RunItemStatus;
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

/** A new item's row as stored: expanded from its case's bindings, with a result or untested. */
export interface NewRow {
  id: string;
  row_order: number;
  scenario_label: string;
  /** JSON text. */
  row_snapshot: string;
  result: NewRowResult | null;
}

/** A new item in its final state (status and counters rolled up from its rows). */
export interface NewItem {
  id: string;
  rollUp: RunItemRollUp;
  last: Date | null;
  comment: string | null;
  /** JSON text of the dataset snapshot. */
  snapshot: string;
}

/** Where a list of run items comes from (the service has checked access and the filters). */
export type RunCaseScope =
  | { runId: string; testCaseId?: string }
  | { projectId: string; testCaseId: string };

export interface RunCaseFilter {
  scope: RunCaseScope;
  search?: string;
  statuses?: string[];
  assigneeId?: string;
  sortBy: RunCaseSortKey;
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** Keyset paging (`cursor`): the order and where to start; then limit/offset are unused. */
  keyset?: KeysetRequest;
}

/** The result fields of a row as a PATCH leaves them. */
export interface RowResultWrite {
  status: RunItemStatus;
  executionCount: number;
  lastExecutedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  executedById: string | null;
  comment: string | null;
  defectIds: string[];
  actualResult: string | null;
  systemOut: string | null;
  systemErr: string | null;
}

/** New untested rows of one item (a rerun), appended after its last row. */
export interface RerunRow {
  id: string;
  parent: string;
  label: string;
  snapshot: Record<string, unknown>;
}

/** Status, counters and last execution stored on an item (what a roll-up compares). */
export interface ItemRollUpState {
  id: string;
  status: RunItemStatus;
  rows_total: number;
  rows_passed: number;
  rows_failed: number;
  last_executed_at: Date | null;
}

/** A roll-up written to an item (`setComment`: also replace its comment). */
export interface ItemRollUpWrite {
  id: string;
  status: RunItemStatus;
  total: number;
  passed: number;
  failed: number;
  last: Date | null;
  setComment: boolean;
  comment: string | null;
}

const SORT_EXPRESSIONS: Record<RunCaseSortKey, string[]> = {
  // Never executed = the oldest ('-infinity'): ix_run_items_run_last_executed_keyset's expression,
  // so the index gives this order (offset and keyset pages alike).
  last_executed_at: ["coalesce(ri.last_executed_at, '-infinity'::timestamptz)"],
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

/** The key types of SORT_EXPRESSIONS, for the keyset cast. */
const SORT_TYPES: Record<RunCaseSortKey, KeysetOrder['keys'][number]['type'][]> = {
  last_executed_at: ['timestamptz'],
  test_case_title: ['text'],
  test_case_key: ['int', 'text'],
  suite_name: ['text'],
  status: ['text'],
  assignee_name: ['text'],
  created_at: ['timestamptz'],
};

/**
 * The keyset order of a run-case list (`cursor`), the same order as {@link orderBy}: never-executed
 * items are the oldest as `'-infinity'` (NULLS LAST descending, FIRST ascending), so the keys are
 * never NULL and a row comparison walks them. Within a run, ix_run_items_run_last_executed_keyset
 * serves the default order and ix_run_items_run_status_id the status order; the others sort by
 * values of joined rows (case title/key, suite, assignee) or by created_at, which no index of
 * run_items orders.
 */
export function runCaseKeysetOrder(key: RunCaseSortKey, order: 'asc' | 'desc'): KeysetOrder {
  const exprs = SORT_EXPRESSIONS[key];
  return {
    keys: [
      ...exprs.map((sql, i) => ({ sql, type: SORT_TYPES[key][i] })),
      { sql: 'ri.id', type: 'uuid' as const },
    ],
    dir: order === 'asc' ? 'ASC' : 'DESC',
  };
}

function orderBy(key: RunCaseSortKey, dir: 'ASC' | 'DESC'): string {
  // last_executed_at: never-executed items count as the oldest (last in desc, first in asc).
  const parts = SORT_EXPRESSIONS[key].map((e) => `${e} ${dir}`);
  return [...parts, `ri.id ${dir}`].join(', ');
}

/**
 * SQL of run items, their rows and history (`run_items`, `run_item_rows`, `run_item_history`) and
 * of the run's counters (`test_runs.count_*`): the run-items module is the only writer of these. Bulk writes are `unnest` of parallel
 * arrays: a constant number of statements whatever the number of items.
 */
@Injectable()
export class RunItemsRepository {
  constructor(private readonly db: Db) {}

  // ---------------------------------------------------------------------------------------------
  // Reads

  /**
   * One page of run items and the number of all that match (window count, else a count); the
   * page's whole rows read only for its items.
   */
  async findPage(f: RunCaseFilter): Promise<{ rows: RunItemRow[]; total: number | null }> {
    const params: unknown[] = [];
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const where: string[] = [];
    if ('runId' in f.scope) {
      where.push(`ri.test_run_id = ${add(f.scope.runId)}`);
      if (f.scope.testCaseId !== undefined) {
        where.push(
          isUuid(f.scope.testCaseId) ? `ri.test_case_id = ${add(f.scope.testCaseId)}` : 'false',
        );
      }
      if (f.search) {
        const p = add(likePattern(f.search));
        where.push(
          `(coalesce(tc.title, ri.test_case_title) ILIKE ${p} OR coalesce(tc.key, ri.test_case_key) ILIKE ${p})`,
        );
      }
    } else {
      where.push(
        `ri.project_id = ${add(f.scope.projectId)}`,
        `ri.test_case_id = ${add(f.scope.testCaseId)}`,
      );
      if (f.search) {
        const p = add(likePattern(f.search));
        where.push(`(tr.name ILIKE ${p} OR tr.build ILIKE ${p} OR tr.environment_name ILIKE ${p})`);
      }
    }
    if (f.statuses?.length) where.push(`ri.status = ANY(${add(f.statuses)}::varchar[])`);
    if (f.assigneeId !== undefined) {
      where.push(isUuid(f.assigneeId) ? `ri.assignee_id = ${add(f.assigneeId)}` : 'false');
    }
    const order = orderBy(f.sortBy, f.sortOrder === 'asc' ? 'ASC' : 'DESC');
    const filter = where.join(' AND ');
    if (f.keyset) {
      // A keyset page: a range walk from the cursor's row, no OFFSET and no count.
      const k = f.keyset;
      const after = k.after ? ` AND ${keysetAfter(k.order, k.after, add)}` : '';
      const rows = await this.db.query<RunItemRow>(
        `SELECT ${ITEM_COLUMNS}, ${keysetColumns(k.order)}
           FROM run_items ri ${ITEM_JOINS}
          WHERE ${filter}${after}
          ORDER BY ${keysetOrderBy(k.order)}
          LIMIT ${add(k.limit)}`,
        params,
      );
      return { rows, total: null };
    }
    // A deferred join: the page's ids and the window count are taken from the matching items
    // alone (narrow rows; PostgreSQL drops the outer joins neither the filter nor the sort reads),
    // and only the page's items are then read whole with their run, case, suite and assignee.
    // Counting and sorting the whole joined rows took 32-43 ms a page of a 10,000-item run, this
    // 7-22 ms (bench/README.md fix 66).
    const rows = await this.db.query<RunItemRow & { total: number }>(
      `WITH page AS (
         SELECT ri.id, count(*) OVER ()::int AS total
           FROM run_items ri ${ITEM_JOINS}
          WHERE ${filter}
          ORDER BY ${order}
          LIMIT ${add(f.limit)} OFFSET ${add(f.offset)}
       )
       SELECT ${ITEM_COLUMNS}, page.total
         FROM page
         JOIN run_items ri ON ri.id = page.id
         ${ITEM_JOINS}
        ORDER BY ${order}`,
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
    return { rows, total };
  }

  /** True when the test case exists in the project. */
  async caseExistsInProject(caseId: string, projectId: string): Promise<boolean> {
    const found = await this.db.query(
      `SELECT 1 FROM test_cases WHERE id = $1 AND project_id = $2`,
      [caseId, projectId],
    );
    return found.length > 0;
  }

  /** Items by id (any order). */
  async findByIds(ids: string[]): Promise<RunItemRow[]> {
    return this.db.query<RunItemRow>(
      `SELECT ${ITEM_COLUMNS} FROM run_items ri ${ITEM_JOINS} WHERE ri.id = ANY($1::uuid[])`,
      [ids],
    );
  }

  /** A page of an item's history, newest first, and the number of all its records. */
  async findHistoryPage(
    itemId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: HistoryRecord[]; total: number }> {
    const rows = await this.db.query<HistoryRecord & { total: number }>(
      `SELECT ${HISTORY_COLUMNS}, count(*) OVER ()::int AS total
         FROM run_item_history h
        WHERE h.run_item_id = $1
        ORDER BY h.changed_at DESC, h.id DESC
        LIMIT $2 OFFSET $3`,
      [itemId, limit, offset],
    );
    let total = rows[0]?.total;
    if (total === undefined) {
      const c = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM run_item_history WHERE run_item_id = $1`,
        [itemId],
      );
      total = c[0]?.n ?? 0;
    }
    return { rows, total };
  }

  /** A page of an item's rows in row order (optionally of some statuses) and their number. */
  async findRowsPage(
    itemId: string,
    statuses: string[] | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: RowRecord[]; total: number }> {
    const params: unknown[] = [itemId];
    let filter = 'w.run_item_id = $1';
    if (statuses?.length) {
      params.push(statuses);
      filter += ` AND w.status = ANY($${params.length}::varchar[])`;
    }
    params.push(limit, offset);
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
    return { rows, total };
  }

  /** The items of the run for the given cases (one index probe per case). */
  async findItemsByCase(
    runId: string,
    caseIds: string[],
  ): Promise<Array<{ id: string; test_case_id: string }>> {
    return this.db.query<{ id: string; test_case_id: string }>(RUN_ITEMS_BY_CASE_SQL, [
      runId,
      caseIds,
    ]);
  }

  /**
   * Cases by id with their suite name. Key-share lock: a concurrent DELETE of a case waits for this
   * transaction instead of making the item insert fail on its foreign key.
   */
  async findCasesForShare(ids: string[]): Promise<CaseRecord[]> {
    return this.db.query<CaseRecord>(
      `SELECT ${CASE_COLUMNS} FROM test_cases tc LEFT JOIN suites s ON s.id = tc.suite_id
              WHERE tc.id = ANY($1::uuid[])
                FOR KEY SHARE OF tc`,
      [ids],
    );
  }

  /**
   * Active cases of a suite of the project and all its descendants (recursive), in key order,
   * key-share locked.
   */
  async findActiveSuiteTreeCases(projectId: string, suiteId: string): Promise<CaseRecord[]> {
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

  /** The run of an item, if the item exists. */
  async findRunIdOfItem(itemId: string): Promise<string | undefined> {
    const rows = await this.db.query<{ test_run_id: string }>(
      `SELECT test_run_id FROM run_items WHERE id = $1`,
      [itemId],
    );
    return rows[0]?.test_run_id;
  }

  /** The item's assignee (null when unassigned or when there is no such item). */
  async findAssigneeOfItem(itemId: string): Promise<string | null> {
    const rows = await this.db.query<{ assignee_id: string | null }>(
      `SELECT assignee_id FROM run_items WHERE id = $1`,
      [itemId],
    );
    return rows[0]?.assignee_id ?? null;
  }

  async exists(itemId: string): Promise<boolean> {
    const still = await this.db.query(`SELECT 1 FROM run_items WHERE id = $1`, [itemId]);
    return still.length > 0;
  }

  /** The run of a row's item, if the row exists. */
  async findRunIdOfRow(rowId: string): Promise<string | undefined> {
    const located = await this.db.query<{ test_run_id: string }>(
      `SELECT ri.test_run_id FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
        WHERE w.id = $1`,
      [rowId],
    );
    return located[0]?.test_run_id;
  }

  async findRow(rowId: string): Promise<RowRecord | undefined> {
    const [row] = await this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w WHERE w.id = $1`,
      [rowId],
    );
    return row;
  }

  /** The failed rows (failure, error) of an item, in row order. */
  async findFailedRows(itemId: string): Promise<RowRecord[]> {
    return this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w
          WHERE w.run_item_id = $1 AND w.status IN ('failure', 'error')
          ORDER BY w.row_order`,
      [itemId],
    );
  }

  /** The rows of an item among `rowIds` (ids that are no uuid are left out), in row order. */
  async findRowsOfItem(itemId: string, rowIds: string[]): Promise<RowRecord[]> {
    return this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w
          WHERE w.run_item_id = $1 AND w.id = ANY($2::uuid[])
          ORDER BY w.row_order`,
      [itemId, rowIds.filter(isUuid)],
    );
  }

  /** Rows by id, in row order. */
  async findRowsByIds(rowIds: string[]): Promise<RowRecord[]> {
    return this.db.query<RowRecord>(
      `SELECT ${ROW_COLUMNS} FROM run_item_rows w WHERE w.id = ANY($1::uuid[]) ORDER BY w.row_order`,
      [rowIds],
    );
  }

  /** The test case of an item (null once the case is deleted; undefined for no item). */
  async findTestCaseIdOfItem(itemId: string): Promise<string | null | undefined> {
    const [item] = await this.db.query<{ test_case_id: string | null }>(
      `SELECT test_case_id FROM run_items WHERE id = $1`,
      [itemId],
    );
    return item?.test_case_id;
  }

  /** The dataset snapshot of an item (the revisions its rows were expanded from). */
  async findDatasetSnapshot(itemId: string): Promise<unknown> {
    const [item] = await this.db.query<{ dataset_snapshot: unknown }>(
      `SELECT dataset_snapshot FROM run_items WHERE id = $1`,
      [itemId],
    );
    return item?.dataset_snapshot ?? null;
  }

  async updateDatasetSnapshot(itemId: string, snapshot: DatasetSnapshot): Promise<void> {
    await this.db.query(`UPDATE run_items SET dataset_snapshot = $2::jsonb WHERE id = $1`, [
      itemId,
      JSON.stringify(snapshot),
    ]);
  }

  /** Row counts by status and the latest execution, per item. */
  async countRowsByItemAndStatus(
    itemIds: string[],
  ): Promise<Array<{ run_item_id: string; status: RunItemStatus; n: number; last: Date | null }>> {
    return this.db.query<{
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
  }

  /** The stored roll-up of the given items. */
  async findRollUpStates(itemIds: string[]): Promise<ItemRollUpState[]> {
    return this.db.query<ItemRollUpState>(
      `SELECT id, status, rows_total, rows_passed, rows_failed, last_executed_at
         FROM run_items WHERE id = ANY($1::uuid[])`,
      [itemIds],
    );
  }

  /** The rows of the given items as a row plan sees them, by item and row order. */
  async findRowStates(itemIds: string[]): Promise<Array<ExistingRow & { run_item_id: string }>> {
    if (itemIds.length === 0) return [];
    return this.db.query<ExistingRow & { run_item_id: string }>(
      `SELECT id, run_item_id, row_order, scenario_label, status, execution_count
         FROM run_item_rows WHERE run_item_id = ANY($1::uuid[])
        ORDER BY run_item_id, row_order`,
      [itemIds],
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Writes

  /**
   * The new items of a run in one `COPY`; `items` may be lazy (each item is then made as the
   * statement reads it). The case's key, title, priority and tags are not copied: they stay NULL
   * until the case changes or is deleted, when triggers write them (migration
   * RunItemCaseCopiesOnDemand); the suite is copied.
   */
  async insertItems(
    run: { id: string; projectId: string },
    assigneeId: string | null,
    items: Iterable<[NewItem, CaseRecord]>,
  ): Promise<void> {
    await this.db.copyIn(
      `COPY run_items (id, project_id, test_run_id, test_case_id, assignee_id, status, rows_total,
                       rows_passed, rows_failed, last_executed_at, comment, suite_id, suite_name,
                       dataset_snapshot) FROM STDIN`,
      copyLines(items, ([i, c]) =>
        copyRow([
          i.id,
          run.projectId,
          run.id,
          c.id,
          assigneeId,
          i.rollUp.status,
          i.rollUp.rows_total,
          i.rollUp.rows_passed,
          i.rollUp.rows_failed,
          i.last,
          i.comment,
          c.suite_id,
          c.suite_name,
          i.snapshot,
        ]),
      ),
    );
  }

  /**
   * The rows of new items (one `COPY`). A row with a result is one execution: execution_count 1,
   * last executed when it finished.
   */
  async insertNewItemRows(
    projectId: string,
    rows: Iterable<{ itemId: string; row: NewRow }>,
  ): Promise<void> {
    await this.db.copyIn(
      `COPY run_item_rows (id, project_id, run_item_id, row_order, scenario_label, row_snapshot,
                           status, comment, system_out, system_err, executed_by_id,
                           execution_count, last_executed_at, started_at, finished_at,
                           duration_ms) FROM STDIN`,
      copyLines(rows, ({ itemId, row }) => {
        const r = row.result;
        return copyRow([
          row.id,
          projectId,
          itemId,
          row.row_order,
          row.scenario_label,
          row.row_snapshot,
          r?.status ?? 'untested',
          r?.comment,
          r?.system_out,
          r?.system_err,
          r?.executed_by_id,
          r === null ? 0 : 1,
          r?.finished_at,
          r?.started_at,
          r?.finished_at,
          r?.duration_ms,
        ]);
      }),
    );
  }

  /**
   * One history record per item (of the project's locked run) whose status moved, copying the
   * causing row result if any (one `COPY`).
   */
  async insertHistory(
    projectId: string,
    changedById: string | null,
    moved: HistoryEntry[],
    causes: Map<string, RowCause>,
  ): Promise<void> {
    await this.db.copyIn(
      `COPY run_item_history (id, project_id, run_item_id, run_item_row_id, from_status, to_status,
                              comment, defect_ids, actual_result, system_out, system_err,
                              executed_by_id, started_at, finished_at, duration_ms,
                              changed_by_id) FROM STDIN`,
      moved.map((m) => {
        const c = causes.get(m.id);
        return copyRow([
          uuidv7(),
          projectId,
          m.id,
          c?.rowId,
          m.from,
          m.status,
          c?.comment,
          c?.defectIds ?? [],
          c?.actualResult,
          c?.systemOut,
          c?.systemErr,
          c?.executedById,
          c?.startedAt,
          c?.finishedAt,
          c?.durationMs,
          changedById,
        ]);
      }),
    );
  }

  /** Assignee and/or comment of an item (absent keys keep their value). */
  async updateItem(
    id: string,
    changes: { assigneeId?: string | null; comment?: string | null },
  ): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (changes.assigneeId !== undefined) {
      params.push(changes.assigneeId);
      sets.push(`assignee_id = $${params.length}`);
    }
    if (changes.comment !== undefined) {
      params.push(changes.comment);
      sets.push(`comment = $${params.length}`);
    }
    if (sets.length === 0) return;
    await this.db.query(
      `UPDATE run_items SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
      params,
    );
  }

  /** Deletes an item with its rows and history (cascade). */
  async deleteItem(id: string): Promise<void> {
    await this.db.query(`DELETE FROM run_items WHERE id = $1`, [id]);
  }

  /** The result of one row as a PATCH leaves it. */
  async updateRowResult(rowId: string, w: RowResultWrite): Promise<void> {
    await this.db.query(
      `UPDATE run_item_rows
          SET status = $2, execution_count = $3, last_executed_at = $4, started_at = $5,
              finished_at = $6, duration_ms = $7, executed_by_id = $8, comment = $9,
              defect_ids = $10::text[], actual_result = $11, system_out = $12, system_err = $13,
              updated_at = now()
        WHERE id = $1`,
      [
        rowId,
        w.status,
        w.executionCount,
        w.lastExecutedAt,
        w.startedAt,
        w.finishedAt,
        w.durationMs,
        w.executedById,
        w.comment,
        w.defectIds,
        w.actualResult,
        w.systemOut,
        w.systemErr,
      ],
    );
  }

  /** New untested rows of an item (a rerun), numbered after its last row, in the given order. */
  async insertRerunRows(projectId: string, itemId: string, rows: RerunRow[]): Promise<void> {
    await this.db.query(
      `INSERT INTO run_item_rows (id, project_id, run_item_id, parent_row_id, row_order,
                                  scenario_label, row_snapshot)
       SELECT u.id, $1, $2, u.parent, m.max_order + u.ord, u.label, u.snapshot
         FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::jsonb[])
              WITH ORDINALITY AS u(id, parent, label, snapshot, ord)
        CROSS JOIN (SELECT coalesce(max(row_order), 0) AS max_order
                      FROM run_item_rows WHERE run_item_id = $2) m`,
      [
        projectId,
        itemId,
        rows.map((f) => f.id),
        rows.map((f) => f.parent),
        rows.map((f) => f.label),
        rows.map((f) => JSON.stringify(f.snapshot)),
      ],
    );
  }

  /** Writes the roll-ups of several items in one statement. */
  async updateRollUps(changed: ItemRollUpWrite[]): Promise<void> {
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
  }

  async deleteRows(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`DELETE FROM run_item_rows WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /**
   * Writes results into existing rows: status, comment, output, executor, timing; the execution
   * count grows by one (each import is one execution). A taken-over pristine row gets its new
   * label and a plain snapshot.
   */
  async writeResultsIntoRows(rows: RowUpdate[], userId: string, now: Date): Promise<void> {
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

  /** New rows of items already in the run, each with its result (one execution). */
  async insertRowsWithResults(
    projectId: string,
    rows: RowInsert[],
    userId: string,
    now: Date,
  ): Promise<void> {
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

  // ---------------------------------------------------------------------------------------------
  // The run's counters

  /**
   * Recomputes the item counters stored on the run (`test_runs.count_*`) from its items (one
   * statement). Called once after any change of a run's items, in the same transaction, with the
   * run locked.
   */
  async refreshRunCounters(runId: string): Promise<void> {
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
}
