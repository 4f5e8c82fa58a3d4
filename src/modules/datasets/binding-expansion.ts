/**
 * Pure rules of how a test case's dataset bindings become run rows (reference
 * environments-datasets-cases.md §5.6): the rows each binding selects, then the cartesian product
 * over the bindings in their order (first binding outermost, last varies fastest).
 */
import type { StoredDatasetRow } from './entities/dataset.entity';

/** One binding's contribution to a run row, as stored in `row_snapshot.datasets`. */
export type DatasetRowSnapshot = {
  binding_id: string;
  dataset_alias: string;
  dataset_id: string;
  dataset_name: string;
  revision_number: number;
  row_key: string;
  scenario_label: string | null;
  values: Record<string, unknown>;
};

export type ExpandedRowSnapshot = { datasets: DatasetRowSnapshot[] };

/** One run row of a test case: its label and the dataset rows it combines. */
export type ExpandedRow = { scenario_label: string; row_snapshot: ExpandedRowSnapshot };

/** Which revision of which dataset a case's run item used (run item `dataset_snapshot`). */
export type DatasetSnapshot = {
  bindings: Array<{
    binding_id: string;
    dataset_alias: string;
    dataset_id: string;
    revision_number: number;
  }>;
};

/** Rows of every binding of one case, plus the dataset snapshot for its run item. */
export type ExpandedCase = { rows: ExpandedRow[]; dataset_snapshot: DatasetSnapshot };

export const DEFAULT_SCENARIO_LABEL = 'Default scenario';

/** A binding with the rows it selected from its resolved revision, in the revision's order. */
export interface ResolvedBinding {
  binding_id: string;
  dataset_alias: string;
  dataset_id: string;
  dataset_name: string;
  revision_number: number;
  rows: readonly StoredDatasetRow[];
}

/** Binding fields that decide which rows are used. */
export interface RowSelection {
  row_selection_type: 'all' | 'subset' | string;
  selected_row_keys: readonly string[];
}

/**
 * The rows a binding uses: active rows of the revision, in revision order; with `subset` only those
 * whose key is selected (keys missing from the revision are ignored here).
 */
export function selectRows(
  revisionRows: readonly StoredDatasetRow[],
  sel: RowSelection,
): StoredDatasetRow[] {
  const active = revisionRows.filter((r) => r.is_active);
  if (sel.row_selection_type !== 'subset') return active;
  const wanted = new Set(sel.selected_row_keys);
  return active.filter((r) => wanted.has(r.row_key));
}

/** Label part of one dataset row: `<alias>:<scenario_label or row_key>`. */
export function labelPart(alias: string, row: StoredDatasetRow): string {
  return `${alias}:${row.scenario_label ?? row.row_key}`;
}

/** Number of combinations the product would produce (without building them). */
export function combinationCount(bindings: readonly ResolvedBinding[]): number {
  return bindings.reduce((n, b) => n * b.rows.length, 1);
}

/**
 * Cartesian product over the bindings (in the given order). No bindings → exactly one default row.
 * A binding with no rows makes the product empty (callers reject that before calling).
 */
export function cartesianRows(bindings: readonly ResolvedBinding[]): ExpandedRow[] {
  if (bindings.length === 0) {
    return [{ scenario_label: DEFAULT_SCENARIO_LABEL, row_snapshot: { datasets: [] } }];
  }
  let combos: Array<Array<{ b: ResolvedBinding; row: StoredDatasetRow }>> = [[]];
  for (const b of bindings) {
    const next: typeof combos = [];
    for (const prefix of combos) {
      for (const row of b.rows) next.push([...prefix, { b, row }]);
    }
    combos = next;
  }
  return combos.map((parts) => ({
    scenario_label: parts.map(({ b, row }) => labelPart(b.dataset_alias, row)).join(' | '),
    row_snapshot: {
      datasets: parts.map(({ b, row }) => ({
        binding_id: b.binding_id,
        dataset_alias: b.dataset_alias,
        dataset_id: b.dataset_id,
        dataset_name: b.dataset_name,
        revision_number: b.revision_number,
        row_key: row.row_key,
        scenario_label: row.scenario_label,
        values: row.values,
      })),
    },
  }));
}

/** The run item's dataset snapshot for these bindings. */
/**
 * A run item's dataset snapshot after a rerun that used `latest` (the revisions the new rows were
 * expanded from): per binding, the higher revision of the two; bindings the item did not have yet
 * are added. So "the highest revision used by the run case" (what a comparison reports) counts the
 * rerun rows too. An unreadable `current` counts as no binding.
 */
export function raisedDatasetSnapshot(current: unknown, latest: DatasetSnapshot): DatasetSnapshot {
  const before =
    current !== null &&
    typeof current === 'object' &&
    Array.isArray((current as { bindings?: unknown }).bindings)
      ? ((current as DatasetSnapshot).bindings ?? [])
      : [];
  const merged = before.map((b) => ({ ...b }));
  for (const b of latest.bindings) {
    const same = merged.find((m) => m.binding_id === b.binding_id && m.dataset_id === b.dataset_id);
    if (same === undefined) merged.push({ ...b });
    else if (b.revision_number > same.revision_number) same.revision_number = b.revision_number;
  }
  return { bindings: merged };
}

export function datasetSnapshot(bindings: readonly ResolvedBinding[]): DatasetSnapshot {
  return {
    bindings: bindings.map((b) => ({
      binding_id: b.binding_id,
      dataset_alias: b.dataset_alias,
      dataset_id: b.dataset_id,
      revision_number: b.revision_number,
    })),
  };
}
