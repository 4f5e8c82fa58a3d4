import {
  cartesianRows,
  combinationCount,
  datasetSnapshot,
  raisedDatasetSnapshot,
  ResolvedBinding,
  selectRows,
} from './binding-expansion';
import type { StoredDatasetRow } from './entities/dataset.entity';

const row = (row_key: string, extra: Partial<StoredDatasetRow> = {}): StoredDatasetRow => ({
  row_key,
  scenario_label: null,
  values: { k: row_key },
  is_active: true,
  ...extra,
});
const binding = (alias: string, rows: StoredDatasetRow[]): ResolvedBinding => ({
  binding_id: `b-${alias}`,
  dataset_alias: alias,
  dataset_id: `d-${alias}`,
  dataset_name: `Dataset ${alias}`,
  revision_number: 2,
  rows,
});

describe('selectRows', () => {
  const revision = [row('a'), row('b', { is_active: false }), row('c'), row('d')];
  it('all → active rows in revision order', () => {
    expect(
      selectRows(revision, { row_selection_type: 'all', selected_row_keys: [] }).map(
        (r) => r.row_key,
      ),
    ).toEqual(['a', 'c', 'd']);
  });
  it('subset → selected active rows in revision order, unknown keys ignored', () => {
    const sel = { row_selection_type: 'subset', selected_row_keys: ['d', 'b', 'a', 'zz'] };
    expect(selectRows(revision, sel).map((r) => r.row_key)).toEqual(['a', 'd']);
  });
  it('can be empty', () => {
    expect(
      selectRows(revision, { row_selection_type: 'subset', selected_row_keys: ['b'] }),
    ).toEqual([]);
  });
});

describe('cartesianRows', () => {
  it('no bindings → one default row', () => {
    expect(cartesianRows([])).toEqual([
      { scenario_label: 'Default scenario', row_snapshot: { datasets: [] } },
    ]);
  });

  it('one binding → one row per selected row, label alias:label-or-key', () => {
    const out = cartesianRows([
      binding('users', [row('admin', { scenario_label: 'Administrator' }), row('guest')]),
    ]);
    expect(out.map((r) => r.scenario_label)).toEqual(['users:Administrator', 'users:guest']);
    expect(out[0].row_snapshot.datasets).toEqual([
      {
        binding_id: 'b-users',
        dataset_alias: 'users',
        dataset_id: 'd-users',
        dataset_name: 'Dataset users',
        revision_number: 2,
        row_key: 'admin',
        scenario_label: 'Administrator',
        values: { k: 'admin' },
      },
    ]);
  });

  it('several bindings → product, first binding outermost, last varies fastest', () => {
    const out = cartesianRows([
      binding('u', [row('a'), row('b')]),
      binding('br', [row('chrome'), row('firefox'), row('safari')]),
    ]);
    expect(out.map((r) => r.scenario_label)).toEqual([
      'u:a | br:chrome',
      'u:a | br:firefox',
      'u:a | br:safari',
      'u:b | br:chrome',
      'u:b | br:firefox',
      'u:b | br:safari',
    ]);
    expect(out[4].row_snapshot.datasets.map((d) => d.row_key)).toEqual(['b', 'firefox']);
  });

  it('an empty binding empties the product; counts multiply', () => {
    const bs = [binding('u', [row('a'), row('b')]), binding('x', [])];
    expect(cartesianRows(bs)).toEqual([]);
    expect(combinationCount(bs)).toBe(0);
    expect(
      combinationCount([
        binding('u', [row('a'), row('b')]),
        binding('v', [row('c'), row('d'), row('e')]),
      ]),
    ).toBe(6);
    expect(combinationCount([])).toBe(1);
  });

  it('dataset snapshot lists bindings with revision numbers', () => {
    expect(datasetSnapshot([binding('u', [row('a')])])).toEqual({
      bindings: [{ binding_id: 'b-u', dataset_alias: 'u', dataset_id: 'd-u', revision_number: 2 }],
    });
  });
});

describe('raisedDatasetSnapshot (a run item after a rerun on the latest revisions)', () => {
  const b = (binding_id: string, dataset_id: string, revision_number: number) => ({
    binding_id,
    dataset_alias: binding_id,
    dataset_id,
    revision_number,
  });
  it.each<[string, unknown, ReturnType<typeof b>[], ReturnType<typeof b>[]]>([
    ['raises a revision', { bindings: [b('x', 'd1', 1)] }, [b('x', 'd1', 2)], [b('x', 'd1', 2)]],
    ['never lowers one', { bindings: [b('x', 'd1', 3)] }, [b('x', 'd1', 2)], [b('x', 'd1', 3)]],
    [
      'adds a binding the item did not have, keeps the others',
      { bindings: [b('x', 'd1', 1)] },
      [b('y', 'd2', 4)],
      [b('x', 'd1', 1), b('y', 'd2', 4)],
    ],
    ['reads an empty or unreadable snapshot as none', {}, [b('x', 'd1', 2)], [b('x', 'd1', 2)]],
    ['…or null', null, [b('x', 'd1', 2)], [b('x', 'd1', 2)]],
  ])('%s', (_name, current, latest, expected) => {
    expect(raisedDatasetSnapshot(current, { bindings: latest })).toEqual({ bindings: expected });
  });
});
