/**
 * Pure rules for a dataset's table (reference environments-datasets-cases.md §4.3–4.4): defaults of
 * columns and rows, table validation, and whether two tables are the same (a new revision is written
 * only when the table changes, CONTRACT §10).
 */
import type { FieldErrors } from '../../common/errors/app-exception';
import type { StoredDatasetColumn, StoredDatasetRow } from './entities/dataset.entity';

export interface DatasetColumnInput {
  column_key: string;
  display_name?: string;
  data_type?: string;
  required?: boolean;
  default_value?: string | null;
  is_scenario_label?: boolean;
}

export interface DatasetRowInput {
  row_key: string;
  scenario_label?: string | null;
  values?: Record<string, unknown>;
  is_active?: boolean;
}

/** At most this many messages under a table's list key (`rows`: a 10,000-row table may be all wrong). */
export const MAX_TABLE_ERRORS = 100;

/** Fills column defaults: display name = key, type `string`, not required, no default, no label. */
export function normalizeColumns(columns: readonly DatasetColumnInput[]): StoredDatasetColumn[] {
  return columns.map((c) => ({
    column_key: c.column_key,
    display_name:
      c.display_name !== undefined && c.display_name !== '' ? c.display_name : c.column_key,
    data_type: c.data_type !== undefined && c.data_type !== '' ? c.data_type : 'string',
    required: c.required ?? false,
    default_value: c.default_value ?? null,
    is_scenario_label: c.is_scenario_label ?? false,
  }));
}

/** Fills row defaults: blank label → null, values `{}`, active. */
export function normalizeRows(rows: readonly DatasetRowInput[]): StoredDatasetRow[] {
  return rows.map((r) => ({
    row_key: r.row_key,
    scenario_label:
      r.scenario_label === undefined || r.scenario_label === null || r.scenario_label.trim() === ''
        ? null
        : r.scenario_label,
    values: r.values ?? {},
    is_active: r.is_active ?? true,
  }));
}

/**
 * Table validation, in the reference order: unique column keys, at most one scenario-label column,
 * unique row keys, values only for defined columns. Returns field errors (empty when valid), keyed
 * by the exact path (`columns.2.column_key`, `rows.7.values`); each message also appears under the
 * list it concerns (`columns` or `rows`, the keys the reference reports these table rules under).
 * Every violation keeps its path (so the 422 can say how many fields there were); a list key holds
 * the first {@link MAX_TABLE_ERRORS} messages.
 */
export function validateTable(
  columns: readonly StoredDatasetColumn[],
  rows: readonly StoredDatasetRow[],
): FieldErrors {
  const errors: FieldErrors = {};
  const add = (path: string, msg: string) => {
    const list = (errors[path.split('.')[0]] ??= []);
    if (list.length < MAX_TABLE_ERRORS) list.push(msg);
    (errors[path] ??= []).push(msg);
  };

  const columnKeys = new Set<string>();
  columns.forEach((c, i) => {
    if (columnKeys.has(c.column_key))
      add(`columns.${i}.column_key`, `Duplicate column key "${c.column_key}"`);
    columnKeys.add(c.column_key);
  });
  let labels = 0;
  columns.forEach((c, i) => {
    if (!c.is_scenario_label) return;
    labels++;
    if (labels > 1)
      add(`columns.${i}.is_scenario_label`, 'At most one column may be the scenario label');
  });
  const rowKeys = new Set<string>();
  rows.forEach((r, i) => {
    if (rowKeys.has(r.row_key)) add(`rows.${i}.row_key`, `Duplicate row key "${r.row_key}"`);
    rowKeys.add(r.row_key);
  });
  rows.forEach((r, i) => {
    const unknown = Object.keys(r.values).filter((k) => !columnKeys.has(k));
    if (unknown.length > 0) {
      add(
        `rows.${i}.values`,
        `Row "${r.row_key}" has values for undefined columns: ${unknown.join(', ')}`,
      );
    }
  });
  return errors;
}

/** Canonical JSON (object keys sorted recursively) so equal tables compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return (
      '{' +
      Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort()
        .map((k) => JSON.stringify(k) + ':' + canonicalJson(obj[k]))
        .join(',') +
      '}'
    );
  }
  return JSON.stringify(value) ?? 'null';
}

/** True when two tables (columns and rows, in order) are identical. */
export function sameTable(
  a: { columns: readonly StoredDatasetColumn[]; rows: readonly StoredDatasetRow[] },
  b: { columns: readonly StoredDatasetColumn[]; rows: readonly StoredDatasetRow[] },
): boolean {
  if (a.columns.length !== b.columns.length || a.rows.length !== b.rows.length) return false;
  return (
    canonicalJson(a.columns) === canonicalJson(b.columns) &&
    canonicalJson(a.rows) === canonicalJson(b.rows)
  );
}
