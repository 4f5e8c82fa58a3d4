import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import type { BindingMode, BindingState, RowSelectionType } from './binding-rules';

/** A binding as every read answers it, with its dataset's name and current revision number. */
export interface BindingRow {
  id: string;
  test_case_id: string;
  dataset_id: string;
  dataset_name: string;
  dataset_alias: string;
  mode: BindingMode;
  pinned_revision_number: number | null;
  row_selection_type: RowSelectionType;
  selected_row_keys: string[];
  sort_order: number;
  current_revision_number: number;
  created_at: Date;
  updated_at: Date;
}

/** What the run-row expansion reads of a binding (the same shape without order and timestamps). */
export type BindingToExpand = Omit<BindingRow, 'sort_order' | 'created_at' | 'updated_at'>;

export interface NewBinding extends BindingState {
  id: string;
  projectId: string;
  testCaseId: string;
  datasetId: string;
}

const BINDING_SELECT = `SELECT b.id, b.test_case_id, b.dataset_id, d.name AS dataset_name, b.dataset_alias, b.mode,
       b.pinned_revision_number, b.row_selection_type, b.selected_row_keys, b.sort_order,
       d.current_revision_number, b.created_at, b.updated_at
  FROM test_case_dataset_bindings b JOIN datasets d ON d.id = b.dataset_id`;

/** Order of a case's bindings everywhere (reads and run-row expansion). */
const BINDING_ORDER = 'b.sort_order, b.created_at, b.id';

/** SQL of the dataset bindings of test cases (`test_case_dataset_bindings`). */
@Injectable()
export class BindingsRepository {
  constructor(private readonly db: Db) {}

  /** The bindings of one case, in binding order. */
  async listByCase(testCaseId: string): Promise<BindingRow[]> {
    return this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.test_case_id = $1 ORDER BY ${BINDING_ORDER}`,
      [testCaseId],
    );
  }

  /** The bindings of many cases in one query, by case then binding order. */
  async listByCases(testCaseIds: string[]): Promise<BindingRow[]> {
    return this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.test_case_id = ANY($1::uuid[]) ORDER BY b.test_case_id, ${BINDING_ORDER}`,
      [testCaseIds],
    );
  }

  /** One binding of a case; undefined when the case has no such binding. */
  async findInCase(testCaseId: string, bindingId: string): Promise<BindingRow | undefined> {
    const rows = await this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.id = $1 AND b.test_case_id = $2`,
      [bindingId, testCaseId],
    );
    return rows[0];
  }

  /** Locks one binding of a case; undefined when the case has no such binding. */
  async lockInCase(testCaseId: string, bindingId: string): Promise<BindingRow | undefined> {
    const rows = await this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.id = $1 AND b.test_case_id = $2 FOR UPDATE OF b`,
      [bindingId, testCaseId],
    );
    return rows[0];
  }

  /** The case's bindings that already use this dataset or this alias. */
  async findTaken(
    testCaseId: string,
    datasetId: string,
    alias: string,
  ): Promise<Array<{ dataset_id: string; dataset_alias: string }>> {
    return this.db.query<{ dataset_id: string; dataset_alias: string }>(
      `SELECT dataset_id, dataset_alias FROM test_case_dataset_bindings
        WHERE test_case_id = $1 AND (dataset_id = $2 OR dataset_alias = $3)`,
      [testCaseId, datasetId, alias],
    );
  }

  /** Whether another binding of the case uses this alias. */
  async aliasTaken(testCaseId: string, alias: string): Promise<boolean> {
    const taken = await this.db.query(
      `SELECT 1 FROM test_case_dataset_bindings WHERE test_case_id = $1 AND dataset_alias = $2`,
      [testCaseId, alias],
    );
    return taken.length > 0;
  }

  async insert(b: NewBinding): Promise<void> {
    await this.db.query(
      `INSERT INTO test_case_dataset_bindings (id, project_id, test_case_id, dataset_id, dataset_alias, mode,
              pinned_revision_number, row_selection_type, selected_row_keys, sort_order)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10)`,
      [
        b.id,
        b.projectId,
        b.testCaseId,
        b.datasetId,
        b.dataset_alias,
        b.mode,
        b.pinned_revision_number,
        b.row_selection_type,
        b.selected_row_keys,
        b.sort_order,
      ],
    );
  }

  /** Writes the whole state of a binding. */
  async update(bindingId: string, state: BindingState): Promise<void> {
    await this.db.query(
      `UPDATE test_case_dataset_bindings
          SET dataset_alias = $2, mode = $3, pinned_revision_number = $4, row_selection_type = $5,
              selected_row_keys = $6::text[], sort_order = $7, updated_at = now()
        WHERE id = $1`,
      [
        bindingId,
        state.dataset_alias,
        state.mode,
        state.pinned_revision_number,
        state.row_selection_type,
        state.selected_row_keys,
        state.sort_order,
      ],
    );
  }

  /** Deletes one binding of a case; false when the case has no such binding. */
  async deleteInCase(testCaseId: string, bindingId: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `WITH d AS (DELETE FROM test_case_dataset_bindings WHERE id = $1 AND test_case_id = $2 RETURNING id)
       SELECT id FROM d`,
      [bindingId, testCaseId],
    );
    return rows.length > 0;
  }

  /** The bindings of these cases of the project, by case then binding order (run-row expansion). */
  async listToExpand(projectId: string, caseIds: string[]): Promise<BindingToExpand[]> {
    // FOR KEY SHARE of the datasets until the run write commits: a dataset deleted meanwhile
    // (its revisions go with it) waits, instead of leaving the revision read that follows with
    // nothing (422 dataset_revision_not_found for a revision that existed). A new revision
    // (an update of the dataset row's other columns) does not wait.
    return this.db.query<BindingToExpand>(
      `SELECT b.id, b.test_case_id, b.dataset_id, d.name AS dataset_name, b.dataset_alias, b.mode,
              b.pinned_revision_number, b.row_selection_type, b.selected_row_keys, d.current_revision_number
         FROM test_case_dataset_bindings b JOIN datasets d ON d.id = b.dataset_id
        WHERE b.project_id = $1 AND b.test_case_id = ANY($2::uuid[])
        ORDER BY b.test_case_id, ${BINDING_ORDER}
          FOR KEY SHARE OF d`,
      [projectId, caseIds],
    );
  }
}
