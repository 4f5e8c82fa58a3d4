/**
 * Pure rules for the state of a dataset binding (api.md §2.7, §4.5; CONTRACT §10): the resulting
 * binding of a create or a PATCH is computed from the stored state and the present keys, then
 * validated as a whole.
 *
 * - `mode: pin_revision` needs `pinned_revision_number`; `follow_latest` has none (switching to
 *   follow_latest clears the pin; sending a pin together with follow_latest is an error).
 * - `row_selection_type: subset` needs a non-empty `selected_row_keys`; `all` has none (switching
 *   to all clears the keys; sending keys together with all is an error).
 * - Selected keys are de-duplicated, keeping the first occurrence.
 */
import type { FieldErrors } from '../../common/errors/app-exception';

export const BINDING_MODES = ['follow_latest', 'pin_revision'] as const;
export type BindingMode = (typeof BINDING_MODES)[number];
export const ROW_SELECTION_TYPES = ['all', 'subset'] as const;
export type RowSelectionType = (typeof ROW_SELECTION_TYPES)[number];

export interface BindingState {
  dataset_alias: string;
  mode: BindingMode;
  pinned_revision_number: number | null;
  row_selection_type: RowSelectionType;
  selected_row_keys: string[];
  sort_order: number;
}

/** Present keys of a create or PATCH body (`undefined` = absent; `null` only for the pin). */
export interface BindingChanges {
  dataset_alias?: string;
  mode?: BindingMode;
  pinned_revision_number?: number | null;
  row_selection_type?: RowSelectionType;
  selected_row_keys?: string[];
  sort_order?: number;
}

export const NEW_BINDING_DEFAULTS: Omit<BindingState, 'dataset_alias'> = {
  mode: 'follow_latest',
  pinned_revision_number: null,
  row_selection_type: 'all',
  selected_row_keys: [],
  sort_order: 0,
};

export type BindingResolution =
  | { ok: true; state: BindingState }
  | { ok: false; errors: FieldErrors };

function dedupe(keys: readonly string[]): string[] {
  return [...new Set(keys)];
}

/** The binding that results from applying `changes` to `current` (or to the defaults on create). */
export function resolveBindingState(
  current: BindingState,
  changes: BindingChanges,
): BindingResolution {
  const errors: FieldErrors = {};
  const mode = changes.mode ?? current.mode;
  let pinned: number | null;
  if (changes.pinned_revision_number !== undefined) pinned = changes.pinned_revision_number;
  else pinned = mode === 'follow_latest' ? null : current.pinned_revision_number;
  if (mode === 'pin_revision' && pinned === null) {
    errors.pinned_revision_number = [
      'pinned_revision_number is required when mode is pin_revision',
    ];
  }
  if (mode === 'follow_latest' && pinned !== null) {
    errors.pinned_revision_number = [
      'pinned_revision_number is only allowed when mode is pin_revision',
    ];
  }

  const selection = changes.row_selection_type ?? current.row_selection_type;
  let keys: string[];
  if (changes.selected_row_keys !== undefined) keys = dedupe(changes.selected_row_keys);
  else keys = selection === 'all' ? [] : current.selected_row_keys;
  if (selection === 'subset' && keys.length === 0) {
    errors.selected_row_keys = [
      'selected_row_keys must list at least one row key when row_selection_type is subset',
    ];
  }
  if (selection === 'all' && keys.length > 0) {
    errors.selected_row_keys = [
      'selected_row_keys is only allowed when row_selection_type is subset',
    ];
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    state: {
      dataset_alias: changes.dataset_alias ?? current.dataset_alias,
      mode,
      pinned_revision_number: pinned,
      row_selection_type: selection,
      selected_row_keys: keys,
      sort_order: changes.sort_order ?? current.sort_order,
    },
  };
}

/** Revision number a binding resolves to: its pin, else the dataset's current revision. */
export function resolvedRevisionNumber(
  b: { mode: string; pinned_revision_number: number | null },
  currentRevisionNumber: number,
): number {
  return b.mode === 'pin_revision' && b.pinned_revision_number !== null
    ? b.pinned_revision_number
    : currentRevisionNumber;
}
