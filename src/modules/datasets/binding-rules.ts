/**
 * Pure rules for the state of a dataset binding (api.md §2.7, §4.5; CONTRACT §10): the resulting
 * binding of a create or a PATCH is computed from the stored state and the present keys, then
 * validated as a whole.
 *
 * - `mode: pin_revision` needs `pinned_revision_number`; with `follow_latest` a pin means nothing, so
 *   it is never kept (switching to follow_latest clears it; a pin sent along with it is ignored).
 * - `row_selection_type: subset` needs a non-empty `selected_row_keys`; with `all` keys mean nothing
 *   and are never kept (switching to all clears them; keys sent along with it are ignored).
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
  let pinned: number | null = null;
  if (mode === 'pin_revision') {
    pinned =
      changes.pinned_revision_number !== undefined
        ? changes.pinned_revision_number
        : current.pinned_revision_number;
    if (pinned === null) {
      errors.pinned_revision_number = [
        'pinned_revision_number is required when mode is pin_revision',
      ];
    }
  }

  const selection = changes.row_selection_type ?? current.row_selection_type;
  let keys: string[] = [];
  if (selection === 'subset') {
    keys =
      changes.selected_row_keys !== undefined
        ? dedupe(changes.selected_row_keys)
        : current.selected_row_keys;
    if (keys.length === 0) {
      errors.selected_row_keys = [
        'selected_row_keys must list at least one row key when row_selection_type is subset',
      ];
    }
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
