import {
  RUN_ITEM_STATUSES,
  RunItemStatus,
  StatusCounts,
  countStatuses,
  isRunItemStatus,
} from '../test-runs/run-summary';
import {
  FINAL_RUN_ITEM_STATUSES,
  ROLL_UP_PRECEDENCE,
  decideRowStatusUpdate,
  finishesBeforeStart,
  isFinalStatus,
  rollUpItemStatus,
  rollUpItemStatusFromCounts,
  rollUpRunItem,
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

describe('finishesBeforeStart (422 on finished_at)', () => {
  const T0 = new Date('2026-05-01T09:00:00.000Z');
  const T1 = new Date('2026-05-01T10:00:00.000Z');
  it.each<[string, RunItemStatus, Date | null, Date | null, boolean, boolean]>([
    ['a finished row finished before it started', 'passed', T1, T0, false, true],
    ['a finished row, in order', 'failure', T0, T1, false, false],
    ['the same instant', 'passed', T0, T0, true, false],
    ['executed again: a new start after the earlier finish', 'in_progress', T1, T0, false, false],
    ['back to untested with a new start', 'untested', T1, T0, false, false],
    ['a not finished row given a finish before its start', 'in_progress', T1, T0, true, true],
    ['no start', 'passed', null, T0, true, false],
    ['no finish', 'passed', T1, null, false, false],
  ])('%s', (_label, status, startedAt, finishedAt, finishedAtGiven, expected) => {
    expect(finishesBeforeStart({ status, startedAt, finishedAt, finishedAtGiven })).toBe(expected);
  });
});
