import fc from 'fast-check';
import {
  CaseStats,
  caseStats,
  STATUS_LETTERS,
  recentFromLetters,
  runIdsFromBase64,
  windowFromLetters,
  statsFromLetters,
  lastFailureRunId,
  compareFlaky,
  countFlips,
  FlakyCandidate,
  flipRate,
  isFlaky,
  rankFlaky,
} from './case-stats';

describe('countFlips', () => {
  it.each([
    [[], 0],
    [['passed'], 0],
    [['passed', 'passed'], 0],
    [['passed', 'failure'], 1],
    [['failure', 'passed'], 1],
    [['passed', 'error', 'passed'], 2],
    [['xfailed', 'failure'], 1],
    [['failure', 'error'], 0],
    [['passed', 'xfailed'], 0],
    // other statuses are skipped over
    [['passed', 'skipped', 'failure'], 1],
    [['passed', 'skipped', 'passed'], 0],
    [['failure', 'blocked', 'untested', 'xpassed', 'failure'], 0],
    [['skipped', 'passed', 'in_progress', 'failure', 'skipped', 'passed'], 2],
  ])('%j has %i flips', (statuses, flips) => {
    expect(countFlips(statuses)).toBe(flips);
  });
});

describe('flipRate', () => {
  it.each([
    [0, 0, 0],
    [0, 1, 0],
    [0, 2, 0],
    [1, 2, 1],
    [1, 3, 0.5],
    [2, 5, 0.5],
    [3, 4, 1],
  ])('%i flips over %i results is %d', (flips, n, rate) => {
    expect(flipRate(flips, n)).toBe(rate);
  });
});

describe('caseStats', () => {
  const r = (run_id: string, status: string, flaky = false) => ({ run_id, status, flaky });

  it('is empty without results', () => {
    expect(caseStats([])).toEqual({
      runs: 0,
      passed: 0,
      failing: 0,
      flips: 0,
      flip_rate: 0,
      flaky_attempts: 0,
      last_status: null,
      last_failure_run_id: null,
    });
  });

  it('counts a window given newest first', () => {
    expect(
      caseStats([
        r('r6', 'skipped'),
        r('r5', 'passed', true),
        r('r4', 'error'),
        r('r3', 'xfailed'),
        r('r2', 'failure'),
        r('r1', 'passed', true),
      ]),
    ).toEqual({
      runs: 6,
      passed: 3,
      failing: 2,
      flips: 4,
      flip_rate: 1,
      flaky_attempts: 2,
      last_status: 'skipped',
      last_failure_run_id: 'r4',
    });
  });
});

describe('flaky ranking', () => {
  const stats = (o: Partial<CaseStats>): CaseStats => ({
    runs: 10,
    passed: 5,
    failing: 5,
    flips: 1,
    flip_rate: 0.1,
    flaky_attempts: 0,
    last_status: 'passed',
    last_failure_run_id: null,
    ...o,
  });
  const c = (id: string, title: string, o: Partial<CaseStats>): FlakyCandidate => ({
    test_case_id: id,
    title,
    ...stats(o),
  });

  it.each([
    [{ passed: 3, failing: 2, flip_rate: 0.25 }, 5, true],
    [{ passed: 3, failing: 1, flip_rate: 0.25 }, 5, false],
    [{ passed: 5, failing: 0, flips: 0, flip_rate: 0, flaky_attempts: 1 }, 5, true],
    [{ passed: 5, failing: 5, flips: 0, flip_rate: 0, flaky_attempts: 0 }, 5, false],
    [{ runs: 9, passed: 1, failing: 1, flip_rate: 1 }, 2, true],
    [{ runs: 9, passed: 1, failing: 1, flip_rate: 1 }, 3, false],
  ])('%j with min_runs %i is flaky: %p', (o, minRuns, expected) => {
    expect(isFlaky(stats(o), minRuns)).toBe(expected);
  });

  it('ranks by flip_rate, flaky_attempts, flips, title, id', () => {
    const list = [
      c('a', 'Zeta', { flip_rate: 0.5, flaky_attempts: 0 }),
      c('b', 'beta', { flip_rate: 0.5, flaky_attempts: 2 }),
      c('c', 'Alpha', { flip_rate: 0.9 }),
      c('d', 'alpha', { flip_rate: 0.5, flaky_attempts: 0 }),
      c('e', 'Alpha', { flip_rate: 0.5, flaky_attempts: 0 }),
      c('f', 'gamma', { flip_rate: 0.5, flaky_attempts: 2, flips: 3 }),
      c('g', 'steady', { flips: 0, flip_rate: 0, flaky_attempts: 0 }),
      c('h', 'rare', { passed: 1, failing: 1, flip_rate: 1 }),
    ];
    expect(rankFlaky(list, 5).map((x) => x.test_case_id)).toEqual(['c', 'f', 'b', 'd', 'e', 'a']);
    expect(compareFlaky(list[3], list[4])).toBeLessThan(0);
  });
});

describe('windowFromLetters', () => {
  it('decodes one letter per run, newest first, upper case marking flaky', () => {
    expect(windowFromLetters('fPse', 'r9')).toEqual([
      { run_id: 'r9', status: 'failure', flaky: false },
      { run_id: '', status: 'passed', flaky: true },
      { run_id: '', status: 'skipped', flaky: false },
      { run_id: 'r9', status: 'error', flaky: false },
    ]);
    expect(caseStats(windowFromLetters('sfPxE', 'r9'))).toEqual({
      runs: 5,
      passed: 2,
      failing: 2,
      flips: 2,
      flip_rate: 2 / 3,
      flaky_attempts: 2,
      last_status: 'skipped',
      last_failure_run_id: 'r9',
    });
  });

  it('has one distinct letter per status and refuses unknown letters', () => {
    const letters = Object.values(STATUS_LETTERS);
    expect(new Set(letters).size).toBe(9);
    expect(letters.every((l) => l === l.toLowerCase() && l.length === 1)).toBe(true);
    for (const [status, letter] of Object.entries(STATUS_LETTERS)) {
      expect(windowFromLetters(letter, null)[0].status).toBe(status);
    }
    expect(() => windowFromLetters('z', null)).toThrow();
  });
});

describe('recentFromLetters and runIdsFromBase64', () => {
  it('pairs each letter with its run id, newest first, without the flaky mark', () => {
    expect(recentFromLetters('fPs', ['r3', 'r2', 'r1'])).toEqual([
      { run_id: 'r3', status: 'failure' },
      { run_id: 'r2', status: 'passed' },
      { run_id: 'r1', status: 'skipped' },
    ]);
    expect(recentFromLetters('', [])).toEqual([]);
    expect(() => recentFromLetters('pf', ['r1'])).toThrow();
    expect(() => recentFromLetters('z', ['r1'])).toThrow();
  });

  it('decodes the uuids of a window from their bytes in base64', () => {
    const ids = ['01a210b4-72ec-778d-9bfe-30ca318817e7', '00000000-0000-7000-8000-0000000000ff'];
    const encoded = Buffer.concat(ids.map((id) => Buffer.from(id.replace(/-/g, ''), 'hex')));
    expect(runIdsFromBase64(encoded.toString('base64'))).toEqual(ids);
    // PostgreSQL's encode(…, 'base64') breaks its lines every 76 characters.
    const many = Buffer.concat(Array.from({ length: 6 }, () => encoded));
    const wrapped = many.toString('base64').replace(/.{76}/g, '$&\n');
    expect(wrapped).toContain('\n');
    expect(runIdsFromBase64(wrapped)).toEqual(Array.from({ length: 6 }, () => ids).flat());
    expect(runIdsFromBase64('')).toEqual([]);
    expect(() => runIdsFromBase64(Buffer.alloc(15).toString('base64'))).toThrow();
  });
});

describe('statsFromLetters and lastFailureRunId', () => {
  it.each([
    [
      '',
      {
        runs: 0,
        passed: 0,
        failing: 0,
        flips: 0,
        flip_rate: 0,
        flaky_attempts: 0,
        last_status: null,
      },
    ],
    [
      'p',
      {
        runs: 1,
        passed: 1,
        failing: 0,
        flips: 0,
        flip_rate: 0,
        flaky_attempts: 0,
        last_status: 'passed',
      },
    ],
    [
      'sfPxE',
      {
        runs: 5,
        passed: 2,
        failing: 2,
        flips: 2,
        flip_rate: 2 / 3,
        flaky_attempts: 2,
        last_status: 'skipped',
      },
    ],
    [
      'pspfbf',
      {
        runs: 6,
        passed: 2,
        failing: 2,
        flips: 1,
        flip_rate: 1 / 3,
        flaky_attempts: 0,
        last_status: 'passed',
      },
    ],
    [
      'PPPPP',
      {
        runs: 5,
        passed: 5,
        failing: 0,
        flips: 0,
        flip_rate: 0,
        flaky_attempts: 5,
        last_status: 'passed',
      },
    ],
    [
      'uiyb',
      {
        runs: 4,
        passed: 0,
        failing: 0,
        flips: 0,
        flip_rate: 0,
        flaky_attempts: 0,
        last_status: 'untested',
      },
    ],
  ])('%j', (letters, expected) => {
    expect(statsFromLetters(letters)).toEqual({ ...expected, last_failure_run_id: null });
  });

  it('gives caseStats of the window the letters stand for, for any letters', () => {
    const letter = fc.constantFrom(
      ...Object.values(STATUS_LETTERS).flatMap((l) => [l, l.toUpperCase()]),
    );
    fc.assert(
      fc.property(fc.array(letter, { maxLength: 60 }), (letters) => {
        const w = letters.join('');
        expect(statsFromLetters(w)).toEqual({
          ...caseStats(windowFromLetters(w, 'r')),
          last_failure_run_id: null,
        });
      }),
    );
  });

  it('refuses unknown letters', () => {
    expect(() => statsFromLetters('pz')).toThrow();
  });

  it.each([
    ['', [], null],
    ['ppp', ['r3', 'r2', 'r1'], null],
    ['pEf', ['r3', 'r2', 'r1'], 'r2'],
    ['fe', ['r2', 'r1'], 'r2'],
    ['sxye', ['r4', 'r3', 'r2', 'r1'], 'r1'],
  ])('lastFailureRunId(%j, %j) is %j', (letters, ids, expected) => {
    expect(lastFailureRunId(letters, ids)).toBe(expected);
  });
});

describe('rankFlaky', () => {
  it('orders as compareFlaky does, for any candidates', () => {
    const candidate = fc.record({
      test_case_id: fc.constantFrom('a', 'b', 'c', 'd'),
      title: fc.constantFrom('Alpha', 'alpha', 'Beta', 'ÉCLAIR', 'éclair', ''),
      runs: fc.constant(30),
      passed: fc.integer({ min: 0, max: 15 }),
      failing: fc.integer({ min: 0, max: 15 }),
      flips: fc.integer({ min: 0, max: 3 }),
      flip_rate: fc.constantFrom(0, 0.25, 0.5, 1),
      flaky_attempts: fc.integer({ min: 0, max: 2 }),
      last_status: fc.constant(null),
      last_failure_run_id: fc.constant(null),
    });
    fc.assert(
      fc.property(
        fc.array(candidate, { maxLength: 30 }),
        fc.integer({ min: 1, max: 10 }),
        (list, min) => {
          const expected = list.filter((c) => isFlaky(c, min)).sort(compareFlaky);
          expect(rankFlaky(list, min)).toEqual(expected);
        },
      ),
    );
  });
});
