import {
  canonicalJson,
  normalizeColumns,
  normalizeRows,
  sameTable,
  validateTable,
} from './dataset-table';

const cols = (...keys: string[]) => normalizeColumns(keys.map((column_key) => ({ column_key })));
const rows = (...r: Array<[string, Record<string, unknown>]>) =>
  normalizeRows(r.map(([row_key, values]) => ({ row_key, values })));

describe('normalizeColumns / normalizeRows', () => {
  it('fills defaults', () => {
    expect(normalizeColumns([{ column_key: 'u' }])).toEqual([
      {
        column_key: 'u',
        display_name: 'u',
        data_type: 'string',
        required: false,
        default_value: null,
        is_scenario_label: false,
      },
    ]);
    expect(normalizeRows([{ row_key: 'a', scenario_label: '  ' }])).toEqual([
      { row_key: 'a', scenario_label: null, values: {}, is_active: true },
    ]);
    expect(
      normalizeRows([{ row_key: 'a', scenario_label: 'L', is_active: false, values: { x: 1 } }])[0],
    ).toMatchObject({
      scenario_label: 'L',
      is_active: false,
      values: { x: 1 },
    });
  });
});

describe('validateTable', () => {
  it('accepts a valid table and an empty one', () => {
    expect(validateTable(cols('a', 'b'), rows(['r1', { a: 1 }], ['r2', { a: 2, b: 3 }]))).toEqual(
      {},
    );
    expect(validateTable([], [])).toEqual({});
  });

  it.each([
    ['duplicate column keys', cols('a', 'b', 'a'), rows(), 'columns.2.column_key'],
    [
      'two scenario-label columns',
      normalizeColumns([
        { column_key: 'a', is_scenario_label: true },
        { column_key: 'b', is_scenario_label: true },
      ]),
      rows(),
      'columns.1.is_scenario_label',
    ],
    ['duplicate row keys', cols('a'), rows(['r', {}], ['r', {}]), 'rows.1.row_key'],
    [
      'values for undefined columns',
      cols('a'),
      rows(['r', { a: 1 }], ['s', { b: 1 }]),
      'rows.1.values',
    ],
  ])('rejects %s', (_n, c, r, path) => {
    const errors = validateTable(c, r);
    expect(Object.keys(errors)).toEqual([path.split('.')[0], path]);
    expect(errors[path.split('.')[0]]).toEqual(errors[path]);
  });

  it('names the unknown columns and caps the number of errors', () => {
    const e = validateTable(cols('a'), rows(['r', { x: 1, y: 2 }]));
    expect(e['rows.0.values'][0]).toContain('x, y');
    const many = normalizeRows(Array.from({ length: 500 }, () => ({ row_key: 'same' })));
    const capped = validateTable([], many);
    // Every violation keeps its path (the 422 says how many); `rows` holds the first 100 messages.
    expect(Object.keys(capped)).toHaveLength(500); // `rows` + 499 duplicate row paths
    expect(capped['rows.499.row_key']).toEqual(['Duplicate row key "same"']);
    expect(capped.rows).toHaveLength(100);
  });
});

describe('sameTable', () => {
  it('ignores object key order but not row order or values', () => {
    const a = { columns: cols('a', 'b'), rows: rows(['r1', { a: 1, b: 2 }], ['r2', {}]) };
    const reordered = { columns: cols('a', 'b'), rows: rows(['r1', { b: 2, a: 1 }], ['r2', {}]) };
    expect(sameTable(a, reordered)).toBe(true);
    expect(sameTable(a, { ...a, rows: [...a.rows].reverse() })).toBe(false);
    expect(sameTable(a, { ...a, rows: rows(['r1', { a: 1, b: 3 }], ['r2', {}]) })).toBe(false);
    expect(sameTable(a, { ...a, columns: cols('a') })).toBe(false);
  });

  it('canonical JSON sorts keys recursively', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});
