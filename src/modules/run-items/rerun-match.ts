/**
 * Pure rule of a rerun with `use_latest_revisions` (reference runs-imports-plans.md §3.8): which
 * rows rebuilt from the case's current dataset revisions are added, and which selected row each
 * one reruns.
 */

/** A run row as far as matching goes: its label and its snapshot. */
export interface MatchableRow {
  scenario_label: string;
  row_snapshot: unknown;
}

/**
 * The dataset rows a run row combines, as a set of (dataset, row key) pairs (a case binds a
 * dataset once, so the dataset names the binding; row keys are stable across revisions); null
 * when its snapshot names none in that shape (an imported row, a row stored before snapshots).
 */
export function datasetRowsKey(snapshot: unknown): string | null {
  const datasets = (snapshot as { datasets?: unknown } | null | undefined)?.datasets;
  if (!Array.isArray(datasets)) return null;
  const pairs: string[] = [];
  for (const d of datasets as unknown[]) {
    const { dataset_id: dataset, row_key: key } = (d ?? {}) as Record<string, unknown>;
    if (typeof dataset !== 'string' || typeof key !== 'string') return null;
    pairs.push(JSON.stringify([dataset, key]));
  }
  return pairs.sort().join(',');
}

/**
 * The rebuilt rows to add, each with the id of the selected row it reruns: a rebuilt row reruns
 * the selected row that combines the same dataset rows, whatever their labels now (a label may
 * change between revisions, and two dataset rows may share one); a selected row whose snapshot
 * names no dataset rows is matched by its label, as the reference matches every row. Rebuilt rows
 * that rerun no selected row are left out.
 */
export function matchRebuiltRows<R extends MatchableRow>(
  selected: ReadonlyArray<MatchableRow & { id: string }>,
  rebuilt: readonly R[],
): Array<{ row: R; parent: string }> {
  const byKey = new Map<string, string>();
  const byLabel = new Map<string, string>();
  for (const s of selected) {
    const key = datasetRowsKey(s.row_snapshot);
    if (key !== null) byKey.set(key, s.id);
    else byLabel.set(s.scenario_label, s.id);
  }
  const out: Array<{ row: R; parent: string }> = [];
  for (const row of rebuilt) {
    const key = datasetRowsKey(row.row_snapshot);
    const parent = (key !== null ? byKey.get(key) : undefined) ?? byLabel.get(row.scenario_label);
    if (parent !== undefined) out.push({ row, parent });
  }
  return out;
}
