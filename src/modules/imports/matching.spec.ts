import fc from 'fast-check';

import { filterCandidates, sqlTitleProbe } from '../../../test/support/title-probe-model';
import { normalizeTitle } from './junit/dialects';
import {
  CreationKeyMap,
  MAX_AUTOMATION_ID_CHARS,
  MatchIndex,
  REASONS,
  SuitePlanner,
  candidateFilterOf,
  creationKey,
  creationKeyOf,
  matchKeysOf,
  readsByKeys,
  runLevelReason,
  storageAutomationId,
  storageSuitePath,
  storageTitle,
  suitePathOf,
  titleProbe,
  type CandidateCase,
  type SuiteRow,
  wantedKeysOf,
} from './matching';

const suites: SuiteRow[] = [
  { id: 's1', parent_id: null, name: 'Auth' },
  { id: 's2', parent_id: 's1', name: 'Login' },
  { id: 's3', parent_id: null, name: 'Billing' },
];

const kase = (id: string, title: string, extra: Partial<CandidateCase> = {}): CandidateCase => ({
  id,
  title,
  automation_id: null,
  suite_id: null,
  status: 'active',
  ...extra,
});

const result = (title: string, suite_path: string[] = [], automation_id: string | null = null) => ({
  title,
  suite_path,
  automation_id,
});

describe('storage shapes', () => {
  it('keeps short automation ids and shortens long ones stably and uniquely', () => {
    expect(storageAutomationId('a.b')).toBe('a.b');
    const long = 'x'.repeat(400);
    const other = 'x'.repeat(399) + 'y';
    expect(storageAutomationId(long)).toHaveLength(MAX_AUTOMATION_ID_CHARS);
    expect(storageAutomationId(long)).toBe(storageAutomationId(long));
    expect(storageAutomationId(long)).not.toBe(storageAutomationId(other));
  });

  it('clips titles to 500 characters', () => {
    expect(storageTitle('  t  ')).toBe('t');
    expect(storageTitle('a'.repeat(600))).toHaveLength(500);
  });

  it.each([
    [[], []],
    [
      ['a', ' ', 'b'],
      ['a', 'b'],
    ],
    [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
    ],
    [
      ['a', 'b', 'c', 'd', 'e', 'f'],
      ['a', 'b', 'c', 'd / e / f'],
    ],
  ])('folds suite path %j into at most 4 levels: %j', (input, expected) => {
    expect(storageSuitePath(input)).toEqual(expected);
  });

  it('builds the suite chain of a case', () => {
    const map = new Map(suites.map((s) => [s.id, s]));
    expect(suitePathOf('s2', map)).toEqual(['Auth', 'Login']);
    expect(suitePathOf(null, map)).toEqual([]);
  });
});

describe('MatchIndex.match (reference §4.6)', () => {
  const cases = [
    kase('c1', 'Login works', { automation_id: 'auth.LoginTest.test_login', suite_id: 's2' }),
    kase('c2', 'Logout works', { suite_id: 's2' }),
    kase('c3', 'Logout works', { suite_id: 's3' }),
    kase('c4', 'Pay invoice'),
    kase('c5', 'Draft thing', { status: 'draft', automation_id: 'draft.id' }),
    kase('c6', 'Refund', { suite_id: 's3' }),
    kase('c7', 'Refund'),
  ];
  const index = new MatchIndex(cases, suites);

  it('matches by automation_id first', () => {
    expect(index.match(result('whatever', [], 'auth.LoginTest.test_login'))).toEqual({
      type: 'matched',
      caseId: 'c1',
      by: 'automation_id',
    });
  });

  it('falls back to suite path + normalised title', () => {
    expect(index.match(result('test_logout_works', ['auth', 'LOGIN'], 'unknown.id'))).toEqual({
      type: 'matched',
      caseId: 'c2',
      by: 'name',
    });
  });

  it('falls back to the project-wide normalised title', () => {
    expect(index.match(result('testPayInvoice', ['Elsewhere']))).toEqual({
      type: 'matched',
      caseId: 'c4',
      by: 'name',
    });
  });

  it('reports an ambiguous title', () => {
    expect(index.match(result('Logout works', ['Other']))).toEqual({
      type: 'ambiguous',
      reason: REASONS.ambiguousName,
      by: 'name',
    });
  });

  it('prefers the suite match over an ambiguous title', () => {
    expect(index.match(result('Refund', ['Billing']))).toEqual({
      type: 'matched',
      caseId: 'c6',
      by: 'name',
    });
  });

  it('never matches draft or archived cases, but knows their automation ids are taken', () => {
    expect(index.match(result('Draft thing', [], 'draft.id'))).toEqual({
      type: 'unmatched',
      reason: REASONS.noCase,
    });
    expect(index.isAutomationIdTaken('draft.id')).toBe(true);
    expect(index.isAutomationIdTaken('free.id')).toBe(false);
  });

  it('reports ambiguous suite+name matches', () => {
    const idx = new MatchIndex(
      [kase('a', 'Same', { suite_id: 's3' }), kase('b', 'same', { suite_id: 's3' })],
      suites,
    );
    expect(idx.match(result('SAME', ['Billing']))).toEqual({
      type: 'ambiguous',
      reason: REASONS.ambiguousSuiteAndName,
      by: 'name',
    });
  });

  it('matches cases added while planning (second result of the same created case)', () => {
    const idx = new MatchIndex([], []);
    idx.add({ id: 'new', title: 'Created', automation_id: 'x.y' }, ['A']);
    expect(idx.match(result('Created', ['A'], 'x.y'))).toEqual({
      type: 'matched',
      caseId: 'new',
      by: 'automation_id',
    });
  });

  it('counts a case added twice under its automation id as two, under its title as one', () => {
    const idx = new MatchIndex([], []);
    idx.add({ id: 'c', title: 'Twice', automation_id: 'x.y' }, ['A']);
    idx.add({ id: 'c', title: 'Twice', automation_id: 'x.y' }, ['A']);
    expect(idx.match(result('Twice', ['A'], 'x.y'))).toEqual({
      type: 'ambiguous',
      reason: REASONS.ambiguousAutomationId,
      by: 'automation_id',
    });
    expect(idx.match(result('Twice', ['A']))).toEqual({ type: 'matched', caseId: 'c', by: 'name' });
    expect(idx.match(result('Twice', ['B']))).toEqual({ type: 'matched', caseId: 'c', by: 'name' });
  });

  it('rewrites reasons for run-level imports', () => {
    expect(runLevelReason({ type: 'unmatched', reason: REASONS.noCase })).toBe(REASONS.noRunItem);
    expect(runLevelReason({ type: 'ambiguous', reason: '', by: 'automation_id' })).toBe(
      REASONS.ambiguousRunItemAutomationId,
    );
    expect(runLevelReason({ type: 'ambiguous', reason: '', by: 'name' })).toBe(
      REASONS.ambiguousRunItemName,
    );
  });
});

/** Random projects (up to 12 cases) and reports (1–4 results) whose titles come from `title`. */
function projectsAndReports(title: fc.Arbitrary<string>) {
  const automationId = fc.option(fc.constantFrom('a.B.t', 'a.B.u', 'draft.id'), { nil: null });
  const path = fc.constantFrom<string[]>([], ['Auth'], ['auth', 'Login'], ['Billing'], ['Other']);
  const candidate = fc.record({
    id: fc.constantFrom('c1', 'c2', 'c3', 'c4', 'c5', 'c6'),
    title,
    automation_id: automationId,
    suite_id: fc.constantFrom(null, 's1', 's2', 's3'),
    status: fc.constantFrom('active', 'active', 'draft', 'archived'),
  });
  const report = fc.array(fc.record({ title, suite_path: path, automation_id: automationId }), {
    minLength: 1,
    maxLength: 4,
  });
  return [fc.array(candidate, { maxLength: 12 }), report] as const;
}

/** `forReport` answers every result (match, and whether its automation id is taken) as `all`. */
function expectSameAnswers(
  all: MatchIndex,
  forReport: MatchIndex,
  results: ReadonlyArray<ReturnType<typeof result>>,
): void {
  for (const r of results) {
    expect(forReport.matchKeys(matchKeysOf(r))).toEqual(all.match(r));
    if (r.automation_id !== null) {
      const id = storageAutomationId(r.automation_id);
      expect(forReport.isAutomationIdTaken(id)).toBe(all.isAutomationIdTaken(id));
    }
  }
}

describe('MatchIndex built for a report (only the cases its results can find)', () => {
  it('answers every result of the report as the index of all cases does (property)', () => {
    const title = fc.constantFrom('Login works', 'test_login_works', 'LOGIN WORKS', 'Refund', 'x');
    fc.assert(
      fc.property(...projectsAndReports(title), (cases, results) => {
        const all = new MatchIndex(cases, suites);
        const forReport = new MatchIndex(cases, suites, wantedKeysOf(results.map(matchKeysOf)));
        expectSameAnswers(all, forReport, results);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves out the cases no result can find', () => {
    const cases = [
      kase('c1', 'Login works', { automation_id: 'a.B.t' }),
      kase('c2', 'Refund', { automation_id: 'a.B.u', status: 'draft' }),
    ];
    const wanted = wantedKeysOf([matchKeysOf(result('Pay', [], 'a.B.v'))]);
    const forReport = new MatchIndex(cases, suites, wanted);
    expect(forReport.isAutomationIdTaken('a.B.t')).toBe(false);
    expect(forReport.isAutomationIdTaken('a.B.u')).toBe(false);
    expect(forReport.match(result('Login works'))).toEqual({
      type: 'unmatched',
      reason: REASONS.noCase,
    });
    const all = new MatchIndex(cases, suites);
    expect(all.isAutomationIdTaken('a.B.t')).toBe(true);
    expect(all.isAutomationIdTaken('a.B.u')).toBe(true);
  });
});

describe('title probes (what the database filters the candidates by)', () => {
  // Titles made of the pieces normalisation acts on, so that different titles often normalise alike.
  const piece = fc.constantFrom(
    'test',
    'Test',
    'TEST',
    'tests',
    'contest',
    'te',
    'st',
    '_',
    '-',
    ' ',
    '  ',
    '\t',
    'login',
    'Login',
    'LOGIN',
    'works',
    'aB',
    'Ab',
    '1',
    '2x',
    'X',
    'e',
    's',
    't',
    '.',
    '/',
    'é',
    'ß',
    'SS',
  );
  const ascii = fc.string({
    unit: fc.integer({ min: 1, max: 127 }).map((c) => String.fromCharCode(c)),
  });
  const pieced = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''));

  it("an ASCII title's SQL probe is the probe of its normalised title (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          ascii,
          pieced.filter((t) => /^[\x01-\x7f]*$/.test(t)),
        ),
        (t) => {
          expect(sqlTitleProbe(t)).toBe(titleProbe(normalizeTitle(t)));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('never leaves out a case whose title normalises like a result title (property)', () => {
    fc.assert(
      fc.property(pieced, pieced, (caseTitle, resultTitle) => {
        const keys = matchKeysOf(result(resultTitle));
        const filter = candidateFilterOf(wantedKeysOf([keys]));
        const kept = filterCandidates([kase('c1', caseTitle)], filter).length === 1;
        if (normalizeTitle(caseTitle) === keys.title) expect(kept).toBe(true);
      }),
      { numRuns: 20000 },
    );
  });

  it('answers every result as the index of all cases does, from the filtered rows (property)', () => {
    fc.assert(
      fc.property(...projectsAndReports(pieced), (cases, results) => {
        const all = new MatchIndex(cases, suites);
        const wanted = wantedKeysOf(results.map(matchKeysOf));
        const read = filterCandidates(cases, candidateFilterOf(wanted));
        expectSameAnswers(all, new MatchIndex(read, suites, wanted), results);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads a title by its letters and digits but t, e and s; other characters give the probe ""', () => {
    expect(sqlTitleProbe('test_Login-works 2')).toBe('loginwork2');
    expect(sqlTitleProbe('Café')).toBe('');
    expect(titleProbe(normalizeTitle('testLoginWorks2'))).toBe('loginwork2');
    expect(candidateFilterOf(wantedKeysOf([matchKeysOf(result('Pay'))])).titleProbes).toEqual([
      '',
      'pay',
    ]);
  });
});

describe('readsByKeys (by key when the keys are fewer than half the cases ever made)', () => {
  const filter = (ids: number, probes: number) => ({
    automationIds: Array.from({ length: ids }, (_, i) => `id${i}`),
    titleProbes: Array.from({ length: probes }, (_, i) => `p${i}`),
  });
  it.each([
    [1, 1, 0, false],
    [1, 1, 2, false],
    [1, 1, 3, true],
    [10, 1000, 2000, false],
    [1000, 10, 2001, true],
    [10000, 10001, 20000, false],
    [10000, 10001, 200000, true],
    [100000, 100001, 20000, false],
  ])('%i ids, %i probes, %i cases ever → %s', (ids, probes, casesEver, byKey) => {
    expect(readsByKeys(filter(ids, probes), casesEver)).toBe(byKey);
  });
});

describe('creationKey', () => {
  it('uses the automation id, else suite path and normalised title', () => {
    expect(creationKey(result('A', ['x'], 'id'))).toBe(creationKey(result('B', ['y'], 'id')));
    expect(creationKey(result('test_login', ['S']))).toBe(creationKey(result('Login', ['s'])));
    expect(creationKey(result('Login', ['S1']))).not.toBe(creationKey(result('Login', ['S2'])));
  });
});

describe('CreationKeyMap', () => {
  // The plan keys its planned cases by the parts of the creation key; it must hold exactly what a
  // map by the key itself holds, with and without the automation id.
  const word = fc.constantFrom('Login', 'login', 'test_login', 'Lo"gin', '[x]', ',', 'ü', ' ', '');
  const anyResult = fc.record({
    title: word,
    suite_path: fc.array(word, { maxLength: 3 }),
    automation_id: fc.option(fc.constantFrom('a', 'b', 'n:x', '[[]'), { nil: null }),
  });
  it('answers like a Map by creationKeyOf', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyResult, fc.boolean()), { maxLength: 30 }), (ops) => {
        const map = new CreationKeyMap<number>();
        const plain = new Map<string, number>();
        ops.forEach(([r, byName], i) => {
          const keys = matchKeysOf(r);
          const nameKey = creationKeyOf({ ...keys, automationId: null });
          expect(map.get(keys)).toBe(plain.get(creationKeyOf(keys)));
          expect(map.getNamed(keys)).toBe(plain.get(nameKey));
          expect(map.hasNamed(keys)).toBe(plain.has(nameKey));
          if (byName) {
            map.setNamed(keys, i);
            plain.set(nameKey, i);
          } else {
            map.set(keys, i);
            plain.set(creationKeyOf(keys), i);
          }
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('SuitePlanner', () => {
  it('reuses existing suites by exact name under the same parent and plans the rest once', () => {
    const planner = new SuitePlanner(suites);
    expect(planner.resolve([])).toBeNull();
    expect(planner.resolve(['Auth', 'Login'])).toEqual({ existing: 's2' });
    expect(planner.resolve(['Auth', 'Signup', 'Email'])).toEqual({ planned: 1 });
    expect(planner.resolve(['Auth', 'Signup'])).toEqual({ planned: 0 });
    expect(planner.resolve(['New'])).toEqual({ planned: 2 });
    expect(planner.planned).toEqual([
      { name: 'Signup', parent: { existing: 's1' }, path: ['Auth', 'Signup'] },
      { name: 'Email', parent: { planned: 0 }, path: ['Auth', 'Signup', 'Email'] },
      { name: 'New', parent: null, path: ['New'] },
    ]);
  });
});

describe('memoised path forms (one per parsed path array)', () => {
  // Matching and creation keys normalise a suite path once per array; reusing an array (as the
  // parsers do for a suite's testcases) must give what a fresh array with the same names gives.
  const index = new MatchIndex(
    [
      kase('c1', 'Login works', { suite_id: 's2' }),
      kase('c2', 'Logout works', { suite_id: 's2' }),
      kase('c3', 'Login works', { suite_id: 's3' }),
    ],
    suites,
  );
  const shared = ['Auth', 'Login'];
  it.each([
    ['test_login_works', 'c1'],
    ['test_logout_works', 'c2'],
    ['test_login_works', 'c1'],
  ])('%s under a shared path array → %s', (title, id) => {
    expect(index.match(result(title, shared))).toEqual({ type: 'matched', caseId: id, by: 'name' });
    expect(index.match(result(title, [...shared]))).toEqual(index.match(result(title, shared)));
    expect(creationKey(result(title, shared))).toBe(creationKey(result(title, [...shared])));
    expect(creationKey(result(title, shared))).toBe(
      `n:${JSON.stringify([['auth', 'login'], title.replace(/^test_/, '').replace(/_/g, ' ')])}`,
    );
  });

  it('a planner resolves a path array again to the same suite', () => {
    const planner = new SuitePlanner(suites);
    const path = ['Auth', 'New'];
    const first = planner.resolve(path);
    expect(planner.resolve(path)).toBe(first);
    expect(planner.resolve([...path])).toEqual(first);
    expect(planner.planned).toHaveLength(1);
    expect(planner.nameOf(first)).toBe('New');
    expect(planner.nameOf({ existing: 's2' })).toBe('Login');
    expect(planner.nameOf(null)).toBeNull();
  });
});
