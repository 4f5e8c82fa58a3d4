import {
  BindingState,
  NEW_BINDING_DEFAULTS,
  resolveBindingState,
  resolvedRevisionNumber,
} from './binding-rules';

const fresh: BindingState = { dataset_alias: 'users', ...NEW_BINDING_DEFAULTS };
const pinnedSubset: BindingState = {
  dataset_alias: 'users',
  mode: 'pin_revision',
  pinned_revision_number: 2,
  row_selection_type: 'subset',
  selected_row_keys: ['a', 'b'],
  sort_order: 3,
};

describe('resolveBindingState', () => {
  it('defaults: follow_latest, all, sort 0', () => {
    expect(resolveBindingState(fresh, {})).toEqual({ ok: true, state: fresh });
  });

  it.each([
    ['pin without number', fresh, { mode: 'pin_revision' as const }, 'pinned_revision_number'],
    [
      'pin with explicit null',
      fresh,
      { mode: 'pin_revision' as const, pinned_revision_number: null },
      'pinned_revision_number',
    ],
    [
      'clearing the pin of a pinned binding',
      pinnedSubset,
      { pinned_revision_number: null },
      'pinned_revision_number',
    ],
    ['subset without keys', fresh, { row_selection_type: 'subset' as const }, 'selected_row_keys'],
    ['subset with empty keys', pinnedSubset, { selected_row_keys: [] }, 'selected_row_keys'],
  ])('rejects %s', (_n, current, changes, key) => {
    const res = resolveBindingState(current, changes);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(Object.keys(res.errors)).toEqual([key]);
  });

  it('switching to follow_latest clears the pin; switching to all clears the keys', () => {
    const res = resolveBindingState(pinnedSubset, {
      mode: 'follow_latest',
      row_selection_type: 'all',
    });
    expect(res).toEqual({
      ok: true,
      state: {
        ...pinnedSubset,
        mode: 'follow_latest',
        pinned_revision_number: null,
        row_selection_type: 'all',
        selected_row_keys: [],
      },
    });
  });

  it.each([
    ['a pin with follow_latest', fresh, { pinned_revision_number: 3 }],
    ['keys with all', fresh, { selected_row_keys: ['a'] }],
    [
      'switching to follow_latest and all while sending a pin and keys',
      pinnedSubset,
      {
        mode: 'follow_latest' as const,
        pinned_revision_number: 7,
        row_selection_type: 'all' as const,
        selected_row_keys: ['a'],
      },
    ],
  ])('ignores %s (they mean nothing there)', (_n, current, changes) => {
    expect(resolveBindingState(current, changes)).toEqual({
      ok: true,
      state: {
        ...current,
        mode: 'follow_latest',
        pinned_revision_number: null,
        row_selection_type: 'all',
        selected_row_keys: [],
      },
    });
  });

  it('keeps stored values for absent keys and de-duplicates selected keys', () => {
    const res = resolveBindingState(pinnedSubset, {
      sort_order: 9,
      selected_row_keys: ['b', 'a', 'b'],
    });
    expect(res).toEqual({
      ok: true,
      state: { ...pinnedSubset, sort_order: 9, selected_row_keys: ['b', 'a'] },
    });
    const pin = resolveBindingState(fresh, {
      mode: 'pin_revision',
      pinned_revision_number: 4,
      row_selection_type: 'subset',
      selected_row_keys: ['x'],
    });
    expect(pin.ok && pin.state).toMatchObject({
      mode: 'pin_revision',
      pinned_revision_number: 4,
      selected_row_keys: ['x'],
    });
  });
});

describe('resolvedRevisionNumber', () => {
  it('pin wins for pin_revision, else the current revision', () => {
    expect(resolvedRevisionNumber({ mode: 'pin_revision', pinned_revision_number: 2 }, 5)).toBe(2);
    expect(resolvedRevisionNumber({ mode: 'follow_latest', pinned_revision_number: null }, 5)).toBe(
      5,
    );
  });
});
