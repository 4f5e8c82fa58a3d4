import { planRowWrites, type ExistingRow } from './row-plan';

const row = (
  id: string,
  order: number,
  label: string,
  status = 'untested',
  count = 0,
): ExistingRow => ({
  id,
  row_order: order,
  scenario_label: label,
  status,
  execution_count: count,
});

describe('planRowWrites', () => {
  it('takes over the single pristine default row of a new item (relabel)', () => {
    const plan = planRowWrites(
      [row('r1', 1, 'Default scenario')],
      [{ label: 'test_login', payload: 'passed' }],
    );
    expect(plan).toEqual({
      updates: [{ rowId: 'r1', label: 'test_login', relabel: true, payload: 'passed' }],
      deletes: [],
      inserts: [],
    });
  });

  it('updates the row that already carries the label (second import of the same report)', () => {
    const plan = planRowWrites(
      [row('r1', 1, 'test_login', 'failure', 1)],
      [{ label: 'test_login', payload: 'passed' }],
    );
    expect(plan.updates).toEqual([
      { rowId: 'r1', label: 'test_login', relabel: false, payload: 'passed' },
    ]);
    expect(plan.inserts).toEqual([]);
    expect(plan.deletes).toEqual([]);
  });

  it('lets the last result of a label win and keeps first-occurrence order of labels', () => {
    const plan = planRowWrites(
      [row('r1', 1, 'Default scenario')],
      [
        { label: 'a', payload: 1 },
        { label: 'b', payload: 2 },
        { label: 'a', payload: 3 },
      ],
    );
    expect(plan.updates).toEqual([{ rowId: 'r1', label: 'a', relabel: true, payload: 3 }]);
    expect(plan.inserts).toEqual([{ label: 'b', row_order: 2, payload: 2 }]);
  });

  it('deletes surplus pristine rows when taking them over', () => {
    const plan = planRowWrites(
      [row('r1', 1, 'ds:a'), row('r2', 2, 'ds:b'), row('r3', 3, 'ds:c')],
      [{ label: 'x', payload: 'p' }],
    );
    expect(plan.updates).toEqual([{ rowId: 'r1', label: 'x', relabel: true, payload: 'p' }]);
    expect(plan.deletes).toEqual(['r2', 'r3']);
  });

  it('writes to the latest row of a label: the rerun row, not the row it reran', () => {
    const plan = planRowWrites(
      [row('r1', 1, 't', 'failure', 1), row('r2', 2, 't')],
      [{ label: 't', payload: 'passed' }],
    );
    expect(plan).toEqual({
      updates: [{ rowId: 'r2', label: 't', relabel: false, payload: 'passed' }],
      deletes: [],
      inserts: [],
    });
  });

  it('appends after the last row when executed rows carry other labels', () => {
    const plan = planRowWrites(
      [row('r1', 1, 'old', 'passed', 1), row('r2', 4, 'Default scenario')],
      [{ label: 'new', payload: 'p' }],
    );
    expect(plan.updates).toEqual([]);
    expect(plan.deletes).toEqual([]);
    expect(plan.inserts).toEqual([{ label: 'new', row_order: 5, payload: 'p' }]);
  });

  it('appends rows for an item without rows', () => {
    const plan = planRowWrites([], [{ label: 'a', payload: 1 }]);
    expect(plan.inserts).toEqual([{ label: 'a', row_order: 1, payload: 1 }]);
  });

  it('mixes updates of known labels and inserts of new ones', () => {
    const plan = planRowWrites(
      [row('r1', 1, 'a', 'passed', 2)],
      [
        { label: 'a', payload: 'x' },
        { label: 'c', payload: 'y' },
      ],
    );
    expect(plan.updates).toEqual([{ rowId: 'r1', label: 'a', relabel: false, payload: 'x' }]);
    expect(plan.inserts).toEqual([{ label: 'c', row_order: 2, payload: 'y' }]);
  });
});
