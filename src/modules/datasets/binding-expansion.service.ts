import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import {
  cartesianRows,
  combinationCount,
  datasetSnapshot,
  ExpandedCase,
  ExpandedRow,
  ResolvedBinding,
  selectRows,
} from './binding-expansion';
import { resolvedRevisionNumber } from './binding-rules';
import { BindingsRepository, BindingToExpand } from './bindings.repository';
import { DatasetsRepository } from './datasets.repository';
import type { StoredDatasetRow } from './entities/dataset.entity';

export type {
  DatasetRowSnapshot,
  DatasetSnapshot,
  ExpandedCase,
  ExpandedRow,
  ExpandedRowSnapshot,
} from './binding-expansion';
export { DEFAULT_SCENARIO_LABEL } from './binding-expansion';

/** Most run rows one test case may expand to (the product of its bindings' row counts). */
export const MAX_ROWS_PER_CASE = 10000;

export interface ExpansionOptions {
  /** Use every dataset's current revision, ignoring pins (rerun with `use_latest_revisions`). */
  useLatestRevisions?: boolean;
}

/**
 * Expands test cases into run rows from their dataset bindings (reference
 * environments-datasets-cases.md §5.6), for run items. Two queries for any number of cases: the
 * bindings of all cases, then every distinct resolved revision once.
 */
@Injectable()
export class BindingExpansionService {
  constructor(
    private readonly bindings: BindingsRepository,
    private readonly datasets: DatasetsRepository,
  ) {}

  /**
   * Run rows per case id (every requested id is in the map). A case without bindings gets exactly one
   * row `{scenario_label: 'Default scenario', row_snapshot: {datasets: []}}`.
   *
   * @throws AppException 422 `dataset_binding_empty_selection` when a binding selects no active row,
   *   422 `dataset_revision_not_found` when a resolved revision is missing, 422 `validation_error`
   *   when a case would expand to more than MAX_ROWS_PER_CASE rows.
   */
  async expandForCases(
    projectId: string,
    caseIds: string[],
    options: ExpansionOptions = {},
  ): Promise<Map<string, ExpandedRow[]>> {
    const detailed = await this.expandForCasesDetailed(projectId, caseIds, options);
    return new Map([...detailed].map(([id, c]) => [id, c.rows]));
  }

  /** As expandForCases, plus each case's `dataset_snapshot` (bindings and revisions used). */
  async expandForCasesDetailed(
    projectId: string,
    caseIds: string[],
    options: ExpansionOptions = {},
  ): Promise<Map<string, ExpandedCase>> {
    const revisionOf = (b: BindingToExpand) =>
      options.useLatestRevisions
        ? b.current_revision_number
        : resolvedRevisionNumber(b, b.current_revision_number);
    const ids = [...new Set(caseIds)];
    const out = new Map<string, ExpandedCase>();
    if (ids.length === 0) return out;
    const bindings = await this.bindings.listToExpand(projectId, ids);

    const wanted = new Map<string, { datasetId: string; number: number }>();
    for (const b of bindings) {
      const number = revisionOf(b);
      wanted.set(`${b.dataset_id}:${number}`, { datasetId: b.dataset_id, number });
    }
    const revisions = new Map<string, StoredDatasetRow[]>();
    if (wanted.size > 0) {
      const rows = await this.datasets.revisionRowsOf([...wanted.values()]);
      for (const r of rows) revisions.set(`${r.dataset_id}:${r.revision_number}`, r.rows);
    }

    const byCase = new Map<string, ResolvedBinding[]>(ids.map((id) => [id, []]));
    for (const b of bindings) {
      const number = revisionOf(b);
      const revisionRows = revisions.get(`${b.dataset_id}:${number}`);
      if (!revisionRows) {
        throw new AppException(
          'dataset_revision_not_found',
          `Binding "${b.dataset_alias}" of a test case refers to revision ${number} of dataset "${b.dataset_name}", which does not exist`,
          { dataset_binding_id: [b.id] },
        );
      }
      const rows = selectRows(revisionRows, b);
      if (rows.length === 0) {
        throw new AppException(
          'dataset_binding_empty_selection',
          `Binding "${b.dataset_alias}" (dataset "${b.dataset_name}", revision ${number}) selects no active row`,
          { dataset_binding_id: [b.id] },
        );
      }
      byCase.get(b.test_case_id)?.push({
        binding_id: b.id,
        dataset_alias: b.dataset_alias,
        dataset_id: b.dataset_id,
        dataset_name: b.dataset_name,
        revision_number: number,
        rows,
      });
    }
    for (const [caseId, resolved] of byCase) {
      if (combinationCount(resolved) > MAX_ROWS_PER_CASE) {
        throw AppException.validation(
          {
            test_case_id: [
              `The dataset bindings of test case ${caseId} expand to more than ${MAX_ROWS_PER_CASE} rows`,
            ],
          },
          'A test case expands to too many dataset rows',
        );
      }
      out.set(caseId, {
        rows: cartesianRows(resolved),
        dataset_snapshot: datasetSnapshot(resolved),
      });
    }
    return out;
  }
}
