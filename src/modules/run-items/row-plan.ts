/**
 * Pure rule: which rows of a run item an import writes (reference runs-imports-plans.md §4.10).
 *
 * Each imported result carries a row label (its dataset name, else its dataset key, else the raw
 * testcase name). For one run item:
 * - results with the same label hit the same row: the last one wins;
 * - a label that names an existing row updates that row; when several rows carry it (a rerun
 *   copies its row's label), the latest one (highest row order): the rerun row takes the new
 *   result and the row it reran keeps its old one (§3.8);
 * - when no existing row carries any of the labels and every existing row is still pristine
 *   (`untested`, never executed — e.g. the single `Default scenario` row of a newly added case),
 *   those rows are taken over: relabelled in row order for the labels, the surplus deleted (a
 *   documented choice: the reference appends when the case occurs once and its rows are not a
 *   single default row, which would leave a case bound to a dataset `untested` after a report
 *   that ran it);
 * - any other label appends a new row after the last one.
 */

export interface ExistingRow {
  id: string;
  row_order: number;
  scenario_label: string;
  status: string;
  execution_count: number;
}

export interface LabelledResult<T> {
  label: string;
  payload: T;
}

export interface RowPlan<T> {
  /** Rows written in place; `relabel` when the label changes (a taken-over pristine row). */
  updates: Array<{ rowId: string; label: string; relabel: boolean; payload: T }>;
  /** Pristine rows that are no longer needed. */
  deletes: string[];
  inserts: Array<{ label: string; row_order: number; payload: T }>;
}

export function isPristine(row: Pick<ExistingRow, 'status' | 'execution_count'>): boolean {
  return row.status === 'untested' && row.execution_count === 0;
}

/** Plans the row writes of one run item for the results imported into it (report order). */
export function planRowWrites<T>(
  rows: readonly ExistingRow[],
  results: readonly LabelledResult<T>[],
): RowPlan<T> {
  const last = new Map<string, T>();
  for (const result of results) {
    last.delete(result.label); // keep first-occurrence order, last payload
    last.set(result.label, result.payload);
  }
  const labels = [...new Map(results.map((r) => [r.label, true])).keys()];
  const ordered = [...rows].sort((a, b) => a.row_order - b.row_order);
  // The latest row of each label: a rerun row comes after the row it reran.
  const byLabel = new Map<string, ExistingRow>();
  for (const row of ordered) byLabel.set(row.scenario_label, row);
  let nextOrder = ordered.reduce((max, row) => Math.max(max, row.row_order), 0) + 1;

  const plan: RowPlan<T> = { updates: [], deletes: [], inserts: [] };
  const payloadOf = (label: string): T => last.get(label) as T;
  const takeOver = labels.every((label) => !byLabel.has(label)) && ordered.every(isPristine);
  if (takeOver) {
    labels.forEach((label, i) => {
      const row = ordered[i];
      if (row !== undefined) {
        plan.updates.push({
          rowId: row.id,
          label,
          relabel: row.scenario_label !== label,
          payload: payloadOf(label),
        });
      } else {
        plan.inserts.push({ label, row_order: nextOrder++, payload: payloadOf(label) });
      }
    });
    for (const row of ordered.slice(labels.length)) plan.deletes.push(row.id);
    return plan;
  }
  for (const label of labels) {
    const row = byLabel.get(label);
    if (row !== undefined)
      plan.updates.push({ rowId: row.id, label, relabel: false, payload: payloadOf(label) });
    else plan.inserts.push({ label, row_order: nextOrder++, payload: payloadOf(label) });
  }
  return plan;
}
