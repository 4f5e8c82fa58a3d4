import {
  FINAL_RUN_ITEM_STATUSES,
  ROLL_UP_PRECEDENCE,
  RUN_ITEM_STATUSES,
  RunItemStatus,
  StatusCounts,
  buildRunSummary,
  buildStatusBreakdown,
  computePassRate,
  countStatuses,
  decideRowStatusUpdate,
  isFinalStatus,
  isRunItemStatus,
  rollUpItemStatus,
  rollUpItemStatusFromCounts,
  rollUpRunItem,
  statusCountsFromRows,
} from './roll-up';

describe('status enum', () => {
  it('has the nine statuses in breakdown order', () => {
    expect(RUN_ITEM_STATUSES).toEqual([
      'untested',
      'in_progress',
      'passed',
      'error',
      'failure',
      'blocked',
      'skipped',
      'xfailed',
      'xpassed',
    ]);
  });

  it('precedence is a permutation of the statuses', () => {
    expect([...ROLL_UP_PRECEDENCE].sort()).toEqual([...RUN_ITEM_STATUSES].sort());
  });

  it.each<[RunItemStatus, boolean]>([
    ['untested', false],
    ['in_progress', false],
    ['passed', true],
    ['error', true],
    ['failure', true],
    ['blocked', true],
    ['skipped', true],
    ['xfailed', true],
    ['xpassed', true],
  ])('isFinalStatus(%s) = %s', (status, expected) => {
    expect(isFinalStatus(status)).toBe(expected);
    expect(FINAL_RUN_ITEM_STATUSES.includes(status)).toBe(expected);
  });

  it.each([
    ['passed', true],
    ['xpassed', true],
    ['failed', false],
    ['PASSED', false],
    [undefined, false],
  ])('isRunItemStatus(%p) = %s', (value, expected) => {
    expect(isRunItemStatus(value)).toBe(expected);
  });
});

describe('rollUpItemStatus', () => {
  it.each<[RunItemStatus[], RunItemStatus]>([
    [[], 'untested'],
    // single row: the item takes its status
    ...RUN_ITEM_STATUSES.map((s): [RunItemStatus[], RunItemStatus] => [[s], s]),
    // precedence, rule by rule
    [['passed', 'failure', 'error', 'blocked', 'xpassed', 'in_progress', 'untested'], 'failure'],
    [['error', 'blocked', 'xpassed', 'in_progress', 'untested', 'passed'], 'error'],
    [['blocked', 'xpassed', 'in_progress', 'untested', 'passed'], 'blocked'],
    [['xpassed', 'in_progress', 'untested', 'passed', 'xfailed', 'skipped'], 'xpassed'],
    [['in_progress', 'untested', 'passed', 'xfailed', 'skipped'], 'in_progress'],
    [['untested', 'passed', 'xfailed', 'skipped'], 'untested'],
    [['passed', 'xfailed', 'skipped'], 'passed'],
    [['xfailed', 'skipped'], 'xfailed'],
    [['skipped', 'skipped'], 'skipped'],
    // notable cases
    [['passed', 'passed', 'untested'], 'untested'],
    [['failure', 'passed'], 'failure'],
    [['passed', 'in_progress'], 'in_progress'],
    [['failure', 'in_progress'], 'failure'],
    [['xpassed', 'in_progress'], 'xpassed'],
    [['error', 'failure'], 'failure'],
    [['skipped', 'passed'], 'passed'],
  ])('%j → %s', (rows, expected) => {
    expect(rollUpItemStatus(rows)).toBe(expected);
    expect(rollUpItemStatusFromCounts(countStatuses(rows))).toBe(expected);
  });

  it('accepts any iterable', () => {
    expect(rollUpItemStatus(new Set<RunItemStatus>(['skipped', 'error']))).toBe('error');
  });

  it.each<[StatusCounts, RunItemStatus]>([
    [{}, 'untested'],
    [{ passed: 0, failure: 0 }, 'untested'],
    [{ passed: 3, failure: -1 }, 'passed'],
    [{ skipped: 1, xfailed: 2 }, 'xfailed'],
  ])('from counts %j → %s', (counts, expected) => {
    expect(rollUpItemStatusFromCounts(counts)).toBe(expected);
  });
});

describe('rollUpRunItem counters', () => {
  it.each<[RunItemStatus[], [RunItemStatus, number, number, number]]>([
    [[], ['untested', 0, 0, 0]],
    [['untested'], ['untested', 1, 0, 0]],
    [
      ['passed', 'passed'],
      ['passed', 2, 2, 0],
    ],
    [
      ['passed', 'failure', 'error', 'blocked'],
      ['failure', 4, 1, 3],
    ],
    [
      ['xpassed', 'passed'],
      ['xpassed', 2, 1, 0],
    ],
    [
      ['skipped', 'xfailed', 'in_progress'],
      ['in_progress', 3, 0, 0],
    ],
    [
      ['blocked', 'blocked', 'untested'],
      ['blocked', 3, 0, 2],
    ],
    [[...RUN_ITEM_STATUSES], ['failure', 9, 1, 3]],
  ])('%j → %j', (rows, [status, total, passed, failed]) => {
    expect(rollUpRunItem(rows)).toEqual({
      status,
      rows_total: total,
      rows_passed: passed,
      rows_failed: failed,
    });
  });
});

describe('statusCountsFromRows', () => {
  it('parses GROUP BY rows with string and bigint counts', () => {
    expect(
      statusCountsFromRows([
        { status: 'passed', count: '3' },
        { status: 'failure', count: 2 },
        { status: 'untested', count: BigInt(4) },
        { status: 'bogus', count: '9' },
        { status: 'passed', count: '1' },
      ]),
    ).toEqual({
      untested: 4,
      in_progress: 0,
      passed: 4,
      error: 0,
      failure: 2,
      blocked: 0,
      skipped: 0,
      xfailed: 0,
      xpassed: 0,
    });
  });
});

describe('computePassRate', () => {
  it.each<[number, number, number]>([
    [0, 0, 0],
    [5, 0, 0],
    [0, 10, 0],
    [10, 10, 100],
    [1, 2, 50],
    [1, 3, 33.33],
    [2, 3, 66.67],
    [1, 6, 16.67],
    [1, 7, 14.29],
    [1, 32, 3.13], // exact half rounds up
    [3, 8, 37.5],
    [57, 200, 28.5],
    [1, 10000, 0.01],
    [1, 20001, 0],
    [1, 19999, 0.01],
    [999999, 1000000, 100],
  ])('passed %d of %d → %d', (passed, total, expected) => {
    expect(computePassRate(passed, total)).toBe(expected);
  });
});

describe('buildRunSummary', () => {
  it.each<[string, StatusCounts, Record<string, number>]>([
    [
      'empty run',
      {},
      {
        total: 0,
        untested: 0,
        in_progress: 0,
        passed: 0,
        error: 0,
        failure: 0,
        blocked: 0,
        skipped: 0,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 0,
      },
    ],
    [
      'untested items count in total and drag pass_rate down',
      { passed: 1, untested: 1 },
      {
        total: 2,
        untested: 1,
        in_progress: 0,
        passed: 1,
        error: 0,
        failure: 0,
        blocked: 0,
        skipped: 0,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 50,
      },
    ],
    [
      'every status',
      {
        untested: 1,
        in_progress: 2,
        passed: 3,
        error: 4,
        failure: 5,
        blocked: 6,
        skipped: 7,
        xfailed: 8,
        xpassed: 9,
      },
      {
        total: 45,
        untested: 1,
        in_progress: 2,
        passed: 3,
        error: 4,
        failure: 5,
        blocked: 6,
        skipped: 7,
        xfailed: 8,
        xpassed: 9,
        pass_rate: 6.67,
      },
    ],
    [
      'all passed',
      { passed: 7 },
      {
        total: 7,
        untested: 0,
        in_progress: 0,
        passed: 7,
        error: 0,
        failure: 0,
        blocked: 0,
        skipped: 0,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 100,
      },
    ],
    [
      'invalid counts are treated as 0',
      { passed: -3, failure: Number.NaN, skipped: 2.9 },
      {
        total: 2,
        untested: 0,
        in_progress: 0,
        passed: 0,
        error: 0,
        failure: 0,
        blocked: 0,
        skipped: 2,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 0,
      },
    ],
  ])('%s', (_label, counts, expected) => {
    expect(buildRunSummary(counts)).toEqual(expected);
  });
});

describe('buildStatusBreakdown', () => {
  it.each<[string, StatusCounts, Array<[RunItemStatus, number]>]>([
    ['empty run', {}, []],
    ['zeros are omitted', { passed: 0, failure: 0 }, []],
    ['untested is included', { untested: 3 }, [['untested', 3]]],
    [
      'fixed order regardless of input order',
      { xpassed: 1, passed: 2, untested: 3, failure: 4, in_progress: 5 },
      [
        ['untested', 3],
        ['in_progress', 5],
        ['passed', 2],
        ['failure', 4],
        ['xpassed', 1],
      ],
    ],
    [
      'all nine',
      {
        xpassed: 9,
        xfailed: 8,
        skipped: 7,
        blocked: 6,
        failure: 5,
        error: 4,
        passed: 3,
        in_progress: 2,
        untested: 1,
      },
      [
        ['untested', 1],
        ['in_progress', 2],
        ['passed', 3],
        ['error', 4],
        ['failure', 5],
        ['blocked', 6],
        ['skipped', 7],
        ['xfailed', 8],
        ['xpassed', 9],
      ],
    ],
  ])('%s', (_label, counts, expected) => {
    expect(buildStatusBreakdown(counts)).toEqual({
      items: expected.map(([status, count]) => ({ status, count })),
    });
  });

  it('summary and breakdown agree on an item list rolled up from rows', () => {
    const items: RunItemStatus[][] = [
      ['passed'],
      ['passed', 'untested'],
      ['failure', 'passed'],
      [],
      ['in_progress'],
    ];
    const counts = countStatuses(items.map((rows) => rollUpItemStatus(rows)));
    expect(buildRunSummary(counts)).toMatchObject({
      total: 5,
      passed: 1,
      untested: 2,
      failure: 1,
      in_progress: 1,
      pass_rate: 20,
    });
    expect(buildStatusBreakdown(counts).items).toEqual([
      { status: 'untested', count: 2 },
      { status: 'in_progress', count: 1 },
      { status: 'passed', count: 1 },
      { status: 'failure', count: 1 },
    ]);
  });
});

describe('decideRowStatusUpdate', () => {
  const NOW = new Date('2026-05-01T10:00:00.000Z');
  const EARLIER = new Date('2026-05-01T09:00:00.000Z');
  const GIVEN = new Date('2026-05-01T09:30:00.000Z');

  type Case = [
    string,
    { status: RunItemStatus; finished_at: Date | null; last_executed_at?: Date | null },
    RunItemStatus,
    Date | null | undefined,
    { changed: boolean; count: number; finished: Date | null; last: Date | null },
  ];
  it.each<Case>([
    [
      'untested → passed, no finished_at',
      { status: 'untested', finished_at: null },
      'passed',
      undefined,
      { changed: true, count: 1, finished: NOW, last: NOW },
    ],
    [
      'untested → failure, explicit finished_at',
      { status: 'untested', finished_at: null },
      'failure',
      GIVEN,
      { changed: true, count: 1, finished: GIVEN, last: GIVEN },
    ],
    [
      'passed → failure re-execution',
      { status: 'passed', finished_at: EARLIER, last_executed_at: EARLIER },
      'failure',
      undefined,
      { changed: true, count: 1, finished: NOW, last: NOW },
    ],
    [
      'untested → in_progress (not final)',
      { status: 'untested', finished_at: null },
      'in_progress',
      undefined,
      { changed: true, count: 0, finished: null, last: null },
    ],
    [
      'failure → untested (not final)',
      { status: 'failure', finished_at: EARLIER, last_executed_at: EARLIER },
      'untested',
      undefined,
      { changed: true, count: 0, finished: EARLIER, last: EARLIER },
    ],
    [
      'passed → passed (unchanged) keeps finished_at',
      { status: 'passed', finished_at: EARLIER, last_executed_at: EARLIER },
      'passed',
      undefined,
      { changed: false, count: 0, finished: EARLIER, last: EARLIER },
    ],
    [
      'passed → passed without finished_at gets now',
      { status: 'passed', finished_at: null, last_executed_at: null },
      'passed',
      undefined,
      { changed: false, count: 0, finished: NOW, last: null },
    ],
    [
      'explicit null finished_at is kept',
      { status: 'untested', finished_at: null },
      'blocked',
      null,
      { changed: true, count: 1, finished: null, last: NOW },
    ],
  ])('%s', (_label, current, status, finishedAt, expected) => {
    const result = decideRowStatusUpdate({
      current: {
        status: current.status,
        execution_count: 0,
        finished_at: current.finished_at,
        last_executed_at: current.last_executed_at ?? null,
      },
      status,
      finishedAt,
      now: NOW,
    });
    expect(result).toEqual({
      status,
      statusChanged: expected.changed,
      execution_count: expected.count,
      finished_at: expected.finished,
      last_executed_at: expected.last,
    });
  });
});
