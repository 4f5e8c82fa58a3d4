import { rollUpItemStatus } from '../run-items/roll-up';
import {
  RunItemStatus,
  StatusCounts,
  buildRunSummary,
  buildStatusBreakdown,
  computePassRate,
  countStatuses,
  statusCountsFromRows,
} from './run-summary';

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
