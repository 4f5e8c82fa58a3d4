import { datasetRowsKey, matchRebuiltRows } from './rerun-match';

/** A run row combining the given (dataset, row key) pairs under `label`. */
const row = (id: string, label: string, pairs: Array<[string, string]> | null) => ({
  id,
  scenario_label: label,
  row_snapshot:
    pairs === null
      ? { imported: true }
      : { datasets: pairs.map(([dataset_id, row_key]) => ({ dataset_id, row_key, values: {} })) },
});

describe('datasetRowsKey', () => {
  it.each<[string, unknown, string | null]>([
    ['no bindings (the default row)', { datasets: [] }, ''],
    ['one dataset row', row('r', 'x', [['D', 'a']]).row_snapshot, '["D","a"]'],
    [
      'the same pairs in another order',
      row('r', 'x', [
        ['E', 'b'],
        ['D', 'a'],
      ]).row_snapshot,
      '["D","a"],["E","b"]',
    ],
    ['no snapshot', null, null],
    ['another shape', { imported: true }, null],
    ['a pair without its row key', { datasets: [{ dataset_id: 'D' }] }, null],
  ])('%s', (_label, snapshot, expected) => {
    expect(datasetRowsKey(snapshot)).toBe(expected);
  });
});

describe('matchRebuiltRows (a rerun with use_latest_revisions)', () => {
  const ids = (m: Array<{ row: { id: string }; parent: string }>) =>
    m.map(({ row: r, parent }) => `${r.id}<${parent}`);

  it('two dataset rows with one label: only the selected one is rerun', () => {
    const selected = [row('s1', 'd:X', [['D', 'a']])];
    const rebuilt = [row('n1', 'd:X', [['D', 'a']]), row('n2', 'd:X', [['D', 'b']])];
    expect(ids(matchRebuiltRows(selected, rebuilt))).toEqual(['n1<s1']);
  });

  it('a label changed in the new revision: the same dataset row is rerun', () => {
    const selected = [row('s1', 'd:Chrome', [['D', 'a']])];
    const rebuilt = [row('n1', 'd:Chrome 120', [['D', 'a']]), row('n2', 'd:Firefox', [['D', 'b']])];
    expect(ids(matchRebuiltRows(selected, rebuilt))).toEqual(['n1<s1']);
  });

  it('each rebuilt row gets the parent it matched; a dataset row gone is not rerun', () => {
    const selected = [
      row('s1', 'd:A', [['D', 'a']]),
      row('s2', 'd:B', [['D', 'b']]),
      row('s3', 'd:C', [['D', 'c']]),
    ];
    const rebuilt = [row('n2', 'd:B', [['D', 'b']]), row('n1', 'd:A', [['D', 'a']])];
    expect(ids(matchRebuiltRows(selected, rebuilt))).toEqual(['n2<s2', 'n1<s1']);
  });

  it('a selected row without dataset rows in its snapshot is matched by its label (the reference)', () => {
    const selected = [row('s1', 'd:X', null), row('s0', 'Default scenario', [])];
    const rebuilt = [row('n1', 'd:X', [['D', 'a']]), row('n2', 'd:Y', [['D', 'b']])];
    expect(ids(matchRebuiltRows(selected, rebuilt))).toEqual(['n1<s1']);
    expect(ids(matchRebuiltRows(selected, [row('n0', 'Default scenario', [])]))).toEqual(['n0<s0']);
  });

  it('nothing matches: nothing is added', () => {
    expect(
      matchRebuiltRows([row('s1', 'd:X', [['D', 'a']])], [row('n1', 'd:Y', [['E', 'a']])]),
    ).toEqual([]);
  });
});
