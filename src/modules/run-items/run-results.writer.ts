import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { cartesianRows, datasetSnapshot, ExpandedCase } from '../datasets/binding-expansion';
import { BindingExpansionService } from '../datasets/binding-expansion.service';
import { LockedRun, TestRunsService } from '../test-runs/test-runs.service';
import type { RunItemStatus, StatusCounts } from '../test-runs/run-summary';
import { rollUpRunItem, rollUpRunItemFromCounts } from './roll-up';
import { prefetch } from './prefetch';
import { planRowWrites } from './row-plan';
import {
  CaseRecord,
  DEFAULT_ROW_SNAPSHOT,
  ItemRollUpWrite,
  NewItem,
  NewRow,
  RerunRow,
  RowCause,
  RowInsert,
  RowUpdate,
  RowWrite,
  RunItemsRepository,
} from './run-items.repository';

/** Testcases whose results are applied per batch of statements (all results of a case together). */
export const RESULTS_BATCH = 1000;

/** Cases to add to a run, untested (`ApplyResultsInput.addCases`). */
export interface AddCasesInput {
  caseIds: string[];
  /** Assignee of new items; default the run's assignee. */
  assigneeId?: string | null;
  /** Field name used in 422 errors about the case ids (default `test_case_ids`). */
  field?: string;
  /** The cases, already read (key-share locked) by the caller, in the order of `caseIds`. */
  preloaded?: CaseRecord[];
}

/** One result of a case, stored in the row its label names (see `row-plan.ts`). */
export interface ResultInput {
  /** Row label: the dataset name, else the dataset key, else the raw testcase name. */
  label: string;
  status: RunItemStatus;
  comment: string | null;
  system_out: string | null;
  system_err: string | null;
  duration_ms: number | null;
}

/**
 * The cases an import created in this transaction, by id (`ResultsInput.created`): only looked up,
 * so the caller may make each record when it is asked for instead of holding them all.
 */
export type CreatedCases = Pick<ReadonlyMap<string, CaseRecord>, 'has' | 'get'>;

/** Results of several cases (`ApplyResultsInput.results`). */
export interface ResultsInput {
  /**
   * Results per case id, cases in order of first appearance, results in report order. Consumed:
   * each case's entry is deleted once its batch is written, so that a large import's results can
   * be collected while the rest is applied (the caller keeps no other reference to them).
   */
  byCase: Map<string, ResultInput[]>;
  /** The executor of every result. */
  executedById: string;
  /** When every result finished (it started `duration_ms` earlier). */
  finishedAt: Date;
  /** Told the number of results applied so far after each batch (a background import's progress). */
  onProgress?: (applied: number) => Promise<void>;
  /**
   * Cases the caller created earlier in this transaction (an import's new cases), as stored: not
   * in the run, without dataset bindings, invisible to other transactions. Their items and rows
   * are written without reading anything first (no item lookup, no key-share lock, no expansion);
   * what is stored is the same as for any case added with results.
   */
  created?: CreatedCases;
  /**
   * Writes cases of `created` (their ids, in batch order) right before the items of their batch are
   * inserted: the caller inserts its new cases batch by batch, and the writer builds the batch's
   * items and rows meanwhile (while the database writes the cases). Every case of `created` that
   * has results is passed exactly once.
   */
  writeCreated?: (caseIds: string[]) => Promise<void>;
}

/** What `applyResults` writes into one locked run. */
export interface ApplyResultsInput {
  /** Cases added untested (a case already in the run keeps its item unchanged). */
  addCases?: AddCasesInput;
  /** New untested rows of one item (a rerun), appended after its last row. */
  rerun?: { itemId: string; rows: RerunRow[] };
  /**
   * Results: a case not in the run is added with its results already in its rows; an item in the
   * run gets its rows written by label. Applied {@link RESULTS_BATCH} testcases at a time.
   */
  results?: ResultsInput;
  /** `changed_by_id` of the history records written. */
  changedById?: string | null;
}

/** Result of adding cases: item ids in the order of the requested cases. */
export interface AddCasesResult {
  /** Run item id per requested case id (new and already present ones). */
  itemIdByCase: Map<string, string>;
  createdIds: string[];
  existingIds: string[];
}

export interface ApplyResultsOutcome {
  /** With `addCases`. */
  added: AddCasesResult | null;
}

/** A new item's row as expanded from its case's dataset bindings, before it is written. */
type PlannedRow = Omit<NewRow, 'result'>;

/** A new item's rows as they are stored. */
interface NewItemRows {
  /** In row order; `result` null for a row left untested. */
  rows: NewRow[];
  /** The item's comment. */
  comment: string | null;
}

/** Passed to the roll-up instead of the causes: write no history records (imported results). */
const NO_HISTORY = Symbol('no history');

/** Whether the run's counters must be rolled up once the work is done. */
interface Tally {
  counters: boolean;
}

/**
 * The one writer of a run's items, rows, history and counters for other features (imports, test
 * plans) and for the run-items endpoints that add cases or rows (POST /run-cases, reruns).
 *
 * `applyResults(run, input)` locks the run once (404 `test_run_not_found`, 409 `run_closed`;
 * a caller that locked it earlier with `lockRun` passes the locked run), writes items, rows and
 * history set-based (a constant number of statements per batch), and rolls up the run's counters
 * once at the end. Must run inside the request transaction.
 */
@Injectable()
export class RunResultsWriter {
  constructor(
    private readonly repo: RunItemsRepository,
    private readonly runs: TestRunsService,
    private readonly expansion: BindingExpansionService,
  ) {}

  /** Locks the run for a change of its items (404; 409 `run_closed` when completed or archived). */
  lockRun(runId: string): Promise<LockedRun> {
    return this.runs.lockForItemChange(runId);
  }

  async applyResults(
    target: string | LockedRun,
    input: ApplyResultsInput,
  ): Promise<ApplyResultsOutcome> {
    const run = typeof target === 'string' ? await this.lockRun(target) : target;
    const changedById = input.changedById ?? null;
    const tally: Tally = { counters: false };
    let added: AddCasesResult | null = null;
    if (input.addCases) {
      const a = input.addCases;
      added = await this.addCases(run, a.caseIds, tally, a, a.preloaded);
    }
    if (input.rerun) {
      await this.repo.insertRerunRows(run.projectId, input.rerun.itemId, input.rerun.rows);
      await this.rollUp(run.projectId, [input.rerun.itemId], changedById, tally);
    }
    if (input.results && input.results.byCase.size > 0) {
      await this.applyResultBatches(run, input.results, changedById, tally);
      tally.counters = true;
    }
    if (tally.counters) await this.repo.refreshRunCounters(run.id);
    return { added };
  }

  /**
   * Recomputes the given items of a locked run from their rows (`rollUp`) and then the run's
   * counters when an item's status moved: a change of one row (PATCH of a row result).
   */
  async rollUpItems(
    run: LockedRun,
    itemIds: string[],
    changedById: string | null,
    causes: Map<string, RowCause>,
  ): Promise<void> {
    const tally: Tally = { counters: false };
    await this.rollUp(run.projectId, itemIds, changedById, tally, causes);
    if (tally.counters) await this.repo.refreshRunCounters(run.id);
  }

  /** Deletes an item of a locked run (rows and history by cascade); the counters follow. */
  async removeItem(run: LockedRun, itemId: string): Promise<void> {
    await this.repo.deleteItem(itemId);
    await this.repo.refreshRunCounters(run.id);
  }

  // ---------------------------------------------------------------------------------------------
  // Adding cases

  /**
   * Adds test cases to a locked run in a constant number of statements: validates the cases (422
   * `test_case_project_mismatch` for unknown, deleted or foreign ids, 422
   * `test_case_status_not_allowed` for draft/archived ones), expands their rows from the dataset
   * bindings, inserts items and rows in bulk (with `results`, in their final state). The caller
   * has checked access to the run's project.
   */
  private async addCases(
    run: LockedRun,
    caseIds: string[],
    tally: Tally,
    options: {
      assigneeId?: string | null;
      field?: string;
      results?: (caseId: string, planned: PlannedRow[]) => NewItemRows;
      changedById?: string | null;
      beforeInsert?: () => Promise<void>;
    },
    preloaded?: CaseRecord[],
    created?: CreatedCases,
  ): Promise<AddCasesResult> {
    const ids = [...new Set(caseIds)];
    const field = options.field ?? 'test_case_ids';
    // Cases created in this transaction are neither read again nor looked up in the run.
    const stored = created === undefined ? ids : ids.filter((id) => !created.has(id));
    let cases: CaseRecord[];
    if (preloaded !== undefined) cases = preloaded;
    else if (stored.length === ids.length) cases = await this.loadCases(run.projectId, ids, field);
    else {
      const loaded = new Map(
        (stored.length > 0 ? await this.loadCases(run.projectId, stored, field) : []).map((c) => [
          c.id,
          c,
        ]),
      );
      cases = ids.map((id) => (created?.get(id) ?? loaded.get(id)) as CaseRecord);
    }
    const existing = stored.length > 0 ? await this.repo.findItemsByCase(run.id, stored) : [];
    const itemIdByCase = new Map<string, string>(existing.map((e) => [e.test_case_id, e.id]));
    const fresh = cases.filter((c) => !itemIdByCase.has(c.id));
    const createdIds = await this.insertItems(
      run,
      fresh,
      options.assigneeId !== undefined ? options.assigneeId : run.assigneeId,
      options,
      created,
    );
    fresh.forEach((c, i) => itemIdByCase.set(c.id, createdIds[i]));
    if (createdIds.length > 0) tally.counters = true;
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
   * Inserts items and their expanded rows in bulk (with `options.results`, in their final state,
   * rolled up, instead of being inserted untested and updated afterwards); returns the new item ids
   * in case order. New items leave no history record: untested ones keep their initial status, and
   * imported results write none (reference §4.10).
   */
  private async insertItems(
    run: LockedRun,
    cases: CaseRecord[],
    assigneeId: string | null,
    options: {
      results?: (caseId: string, planned: PlannedRow[]) => NewItemRows;
      changedById?: string | null;
      /** Awaited before the items' COPY; the items are built meanwhile ({@link prefetch}). */
      beforeInsert?: () => Promise<void>;
    },
    created?: CreatedCases,
  ): Promise<string[]> {
    if (cases.length === 0) return [];
    // A case created in this transaction has no dataset bindings: it expands like any unbound case.
    const bound = cases.filter((c) => created?.has(c.id) !== true).map((c) => c.id);
    const expanded =
      bound.length > 0
        ? await this.expansion.expandForCasesDetailed(run.projectId, bound)
        : new Map<string, ExpandedCase>();
    if (bound.length < cases.length) {
      const unbound: ExpandedCase = {
        rows: cartesianRows([]),
        dataset_snapshot: datasetSnapshot([]),
      };
      for (const c of cases) if (!expanded.has(c.id)) expanded.set(c.id, unbound);
    }
    const ids: string[] = [];
    const rows: Array<{ itemId: string; row: NewRow }> = [];
    // Cases sharing a dataset snapshot (all unbound ones) share its JSON text.
    const snapshots = new Map<object, string>();
    // Made lazily: each item is built (and its rows kept for the second COPY) as the items' COPY
    // reads it, so the service builds while the database writes.
    function* newItems(): Generator<[NewItem, CaseRecord]> {
      for (const c of cases) {
        const id = uuidv7();
        ids.push(id);
        const e = expanded.get(c.id);
        const planned: PlannedRow[] = (e?.rows ?? []).map((r, i) => ({
          id: uuidv7(),
          row_order: i + 1,
          scenario_label: r.scenario_label,
          row_snapshot: JSON.stringify(r.row_snapshot),
        }));
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
        const snapshot = e?.dataset_snapshot ?? { bindings: [] };
        let snapshotJson = snapshots.get(snapshot);
        if (snapshotJson === undefined) {
          snapshotJson = JSON.stringify(snapshot);
          snapshots.set(snapshot, snapshotJson);
        }
        yield [{ id, rollUp, last, comment: stored.comment, snapshot: snapshotJson }, c];
      }
    }
    if (options.beforeInsert === undefined) {
      await this.repo.insertItems(run, assigneeId, newItems());
    } else {
      const items = prefetch(newItems());
      try {
        await options.beforeInsert();
      } catch (error) {
        items.stop();
        throw error;
      }
      await this.repo.insertItems(run, assigneeId, items.rest());
    }
    await this.repo.insertNewItemRows(run.projectId, rows);
    return ids;
  }

  // ---------------------------------------------------------------------------------------------
  // Results

  /** Groups the cases into batches of about {@link RESULTS_BATCH} results and applies each. */
  private async applyResultBatches(
    run: LockedRun,
    results: ResultsInput,
    changedById: string | null,
    tally: Tally,
  ): Promise<void> {
    let batch: Array<[string, ResultInput[]]> = [];
    let batchResults = 0;
    let applied = 0;
    for (const entry of results.byCase) {
      batch.push(entry);
      batchResults += entry[1].length;
      if (batchResults >= RESULTS_BATCH) {
        await this.applyResultBatch(run, batch, results, changedById, tally);
        for (const [caseId] of batch) results.byCase.delete(caseId);
        applied += batchResults;
        await results.onProgress?.(applied);
        batch = [];
        batchResults = 0;
      }
    }
    if (batch.length > 0) {
      await this.applyResultBatch(run, batch, results, changedById, tally);
      for (const [caseId] of batch) results.byCase.delete(caseId);
      await results.onProgress?.(applied + batchResults);
    }
  }

  /**
   * Applies the results of some cases. Cases not yet in the run get their items and rows inserted
   * with the results already in them (one INSERT each, no update); items already in the run get
   * their rows planned against the stored ones ({@link planRowWrites}) and written in three bulk
   * statements, then the roll-up (status, counters, history, and each item's comment from its
   * last row).
   */
  private async applyResultBatch(
    run: LockedRun,
    batch: Array<[string, ResultInput[]]>,
    results: ResultsInput,
    changedById: string | null,
    tally: Tally,
  ): Promise<void> {
    const { executedById, finishedAt: now } = results;
    const caseIds = batch.map(([caseId]) => caseId);
    const created = results.created;
    const lookUp = created === undefined ? caseIds : caseIds.filter((id) => !created.has(id));
    const items = new Map(
      (lookUp.length > 0 ? await this.repo.findItemsByCase(run.id, lookUp) : []).map((r) => [
        r.test_case_id,
        r.id,
      ]),
    );
    const missing = caseIds.filter((id) => !items.has(id));
    if (missing.length > 0) {
      const resultsOf = new Map(batch);
      const writeCreated = results.writeCreated;
      const createdHere =
        writeCreated === undefined || created === undefined
          ? []
          : missing.filter((id) => created.has(id));
      const added = await this.addCases(
        run,
        missing,
        tally,
        {
          changedById,
          results: (caseId, planned) =>
            storedRows(planned, labelled(resultsOf.get(caseId) ?? [], now), executedById, now),
          beforeInsert:
            writeCreated === undefined || createdHere.length === 0
              ? undefined
              : () => writeCreated(createdHere),
        },
        undefined,
        created,
      );
      const createdItems = new Set(added.createdIds);
      for (const [caseId, itemId] of added.itemIdByCase) {
        if (!createdItems.has(itemId)) items.set(caseId, itemId);
      }
    }
    if (items.size === 0) return;

    const itemIds = [...new Set(items.values())];
    const existingRows = await this.repo.findRowStates(itemIds);
    const rowsByItem = new Map<string, typeof existingRows>();
    for (const row of existingRows) {
      const list = rowsByItem.get(row.run_item_id);
      if (list === undefined) rowsByItem.set(row.run_item_id, [row]);
      else list.push(row);
    }
    const updates: RowUpdate[] = [];
    const inserts: RowInsert[] = [];
    const deletes: string[] = [];
    // Each item copies the comment of its case's last result in report order (reference §4.10),
    // whichever of its rows that result went to.
    const comments = new Map<string, string | null>();
    for (const [caseId, caseResults] of batch) {
      const itemId = items.get(caseId);
      if (itemId === undefined) continue;
      const results = labelled(caseResults, now);
      const rowPlan = planRowWrites(rowsByItem.get(itemId) ?? [], results);
      deletes.push(...rowPlan.deletes);
      for (const u of rowPlan.updates) {
        updates.push({ id: u.rowId, label: u.label, relabel: u.relabel, ...u.payload });
      }
      for (const ins of rowPlan.inserts) {
        inserts.push({
          id: uuidv7(),
          run_item_id: itemId,
          row_order: ins.row_order,
          label: ins.label,
          ...ins.payload,
        });
      }
      const last = results[results.length - 1];
      if (last !== undefined) comments.set(itemId, last.payload.comment);
    }
    await this.repo.deleteRows(deletes);
    await this.repo.writeResultsIntoRows(updates, executedById, now);
    await this.repo.insertRowsWithResults(run.projectId, inserts, executedById, now);

    // Imported results leave no history records (reference §4.10): the rows and the item record
    // them, and a history row would repeat them (issue #23).
    await this.rollUp(
      run.projectId,
      itemIds,
      changedById,
      tally,
      NO_HISTORY,
      comments,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Roll-up

  /**
   * Recomputes status, row counters and last_executed_at of the given items of a locked run from
   * their rows; writes a history record for every item whose status changed (with the causing row
   * result when given), and marks the run's counters for the roll-up when one did. `comments` sets
   * the comment of those items in the same UPDATE (results copy each item's last row comment). A
   * constant number of statements.
   */
  private async rollUp(
    projectId: string,
    itemIds: string[],
    changedById: string | null,
    tally: Tally,
    causes: Map<string, RowCause> | typeof NO_HISTORY = new Map(),
    comments: Map<string, string | null> = new Map(),
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
    if (causes !== NO_HISTORY) await this.repo.insertHistory(projectId, changedById, moved, causes);
    tally.counters = true;
  }
}

/** A case's results as row writes labelled for {@link planRowWrites} (report order). */
function labelled(results: ResultInput[], now: Date): Array<{ label: string; payload: RowWrite }> {
  return results.map((r) => ({
    label: r.label,
    payload: {
      status: r.status,
      comment: r.comment,
      system_out: r.system_out,
      system_err: r.system_err,
      duration_ms: r.duration_ms,
      started_at: r.duration_ms === null ? now : new Date(now.getTime() - r.duration_ms),
    },
  }));
}

/**
 * The rows of an item that results add to the run, as they are to be stored: the same plan as for
 * stored rows ({@link planRowWrites} on the expanded rows, all pristine) applied before the first
 * write. Written rows carry their result (what `writeResultsIntoRows`/`insertRowsWithResults` store for an
 * item already in the run); a taken-over row gets its new label and a plain snapshot; surplus
 * rows are dropped.
 */
function storedRows(
  planned: PlannedRow[],
  results: Array<{ label: string; payload: RowWrite }>,
  userId: string,
  now: Date,
): NewItemRows {
  const plan = planRowWrites(
    planned.map((r) => ({ ...r, status: 'untested', execution_count: 0 })),
    results,
  );
  const result = (write: RowWrite) => ({
    status: write.status,
    comment: write.comment,
    system_out: write.system_out,
    system_err: write.system_err,
    executed_by_id: userId,
    started_at: write.started_at,
    finished_at: now,
    duration_ms: write.duration_ms,
  });
  const updates = new Map(plan.updates.map((u) => [u.rowId, u]));
  const deleted = new Set(plan.deletes);
  const rows: NewItemRows['rows'] = [];
  let last: { rowId: string; write: RowWrite } | undefined;
  for (const row of planned) {
    if (deleted.has(row.id)) continue;
    const u = updates.get(row.id);
    if (u === undefined) {
      rows.push({ ...row, result: null });
      continue;
    }
    rows.push({
      ...row,
      scenario_label: u.label,
      row_snapshot: u.relabel ? DEFAULT_ROW_SNAPSHOT : row.row_snapshot,
      result: result(u.payload),
    });
  }
  // The item's last written row: its last insert, else its last update (as for stored rows).
  const lastUpdate = plan.updates.at(-1);
  if (lastUpdate) last = { rowId: lastUpdate.rowId, write: lastUpdate.payload };
  for (const ins of plan.inserts) {
    const id = uuidv7();
    rows.push({
      id,
      row_order: ins.row_order,
      scenario_label: ins.label,
      row_snapshot: DEFAULT_ROW_SNAPSHOT,
      result: result(ins.payload),
    });
    last = { rowId: id, write: ins.payload };
  }
  return { rows, comment: last?.write.comment ?? null };
}
