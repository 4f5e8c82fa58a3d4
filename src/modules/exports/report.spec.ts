import {
  aggregateRows,
  buildByAssignee,
  buildByStatus,
  buildReportSummary,
  isoOrNull,
  secondsText,
  type ReportRow,
} from './report';

const row = (overrides: Partial<ReportRow>): ReportRow => ({
  id: 'r',
  label: 'Default scenario',
  status: 'untested',
  comment: null,
  defect_ids: [],
  actual_result: null,
  executed_by: null,
  executed_by_name: null,
  execution_count: 0,
  last_executed_at: null,
  started_at: null,
  finished_at: null,
  duration_ms: null,
  ...overrides,
});

describe('buildReportSummary (reference §5.2)', () => {
  it('counts every item, with pass and progress rates rounded to 2 decimals', () => {
    expect(buildReportSummary({ passed: 1, failure: 1, untested: 1 })).toEqual({
      total: 3,
      passed: 1,
      error: 0,
      failure: 1,
      blocked: 0,
      skipped: 0,
      xfailed: 0,
      xpassed: 0,
      untested: 1,
      in_progress: 0,
      pass_rate: 33.33,
      progress_rate: 66.67,
    });
  });

  it('is all zeros for an empty run', () => {
    expect(buildReportSummary({})).toMatchObject({ total: 0, pass_rate: 0, progress_rate: 0 });
  });

  it('does not count in_progress items as progress', () => {
    expect(buildReportSummary({ in_progress: 1, passed: 1 }).progress_rate).toBe(50);
  });
});

describe('buildByStatus', () => {
  it('lists all nine statuses in the fixed order, zeros included', () => {
    expect(buildByStatus({ xpassed: 2 })).toEqual([
      { status: 'untested', count: 0 },
      { status: 'in_progress', count: 0 },
      { status: 'passed', count: 0 },
      { status: 'error', count: 0 },
      { status: 'failure', count: 0 },
      { status: 'blocked', count: 0 },
      { status: 'skipped', count: 0 },
      { status: 'xfailed', count: 0 },
      { status: 'xpassed', count: 2 },
    ]);
  });
});

describe('buildByAssignee', () => {
  it('names the unassigned, sorts by count descending then name', () => {
    expect(
      buildByAssignee([
        { assignee_id: 'b', assignee_name: 'Bob', count: 2 },
        { assignee_id: null, assignee_name: null, count: 5 },
        { assignee_id: 'a', assignee_name: 'Alice', count: 2 },
      ]),
    ).toEqual([
      { assignee_id: null, assignee_name: 'Unassigned', count: 5 },
      { assignee_id: 'a', assignee_name: 'Alice', count: 2 },
      { assignee_id: 'b', assignee_name: 'Bob', count: 2 },
    ]);
  });
});

describe('aggregateRows', () => {
  it('takes executor and actual result of the latest row, sums counts and durations, spans times', () => {
    const agg = aggregateRows([
      row({
        executed_by: 'u1',
        executed_by_name: 'One',
        execution_count: 2,
        last_executed_at: '2026-05-01T10:00:00.000Z',
        started_at: '2026-05-01T09:59:00.000Z',
        finished_at: '2026-05-01T10:00:00.000Z',
        duration_ms: 1500,
        defect_ids: ['BUG-1'],
        actual_result: 'old',
      }),
      row({
        executed_by: 'u2',
        executed_by_name: 'Two',
        execution_count: 1,
        last_executed_at: '2026-05-02T10:00:00.000Z',
        started_at: '2026-05-02T09:00:00.000Z',
        finished_at: '2026-05-02T10:00:00.000Z',
        duration_ms: 250,
        defect_ids: ['bug-1', 'BUG-2'],
        actual_result: 'new',
      }),
      row({}),
    ]);
    expect(agg).toEqual({
      executed_by: 'u2',
      executed_by_name: 'Two',
      execution_count: 3,
      defect_ids: ['BUG-1', 'BUG-2'],
      actual_result: 'new',
      started_at: '2026-05-01T09:59:00.000Z',
      finished_at: '2026-05-02T10:00:00.000Z',
      duration_ms: 1750,
      time: '1.75',
    });
  });

  it('is empty for rows never executed', () => {
    expect(aggregateRows([row({})])).toMatchObject({
      executed_by: null,
      execution_count: 0,
      duration_ms: null,
      time: null,
    });
  });
});

describe('helpers', () => {
  it.each([
    [null, null],
    [0, '0'],
    [1500, '1.5'],
    [250, '0.25'],
  ])('secondsText(%j) = %j', (ms, text) => {
    expect(secondsText(ms)).toBe(text);
  });

  it('normalises timestamps to ISO UTC', () => {
    expect(isoOrNull('2026-05-01T12:00:00+02:00')).toBe('2026-05-01T10:00:00.000Z');
    expect(isoOrNull(new Date('2026-05-01T10:00:00Z'))).toBe('2026-05-01T10:00:00.000Z');
    expect(isoOrNull(null)).toBeNull();
    expect(isoOrNull('garbage')).toBeNull();
  });
});
