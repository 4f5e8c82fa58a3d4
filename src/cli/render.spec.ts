import {
  CompareResult,
  ImportResult,
  ReadinessResult,
  renderCompare,
  renderImports,
  renderProblem,
  renderReadiness,
  renderTable,
} from './render';

describe('renderTable', () => {
  it.each<[string, string[], (string | number | null)[][], string]>([
    ['header only', ['a', 'bb'], [], 'a  bb\n-  --\n'],
    [
      'text left, numbers right, null as -',
      ['name', 'n'],
      [
        ['alpha', 1],
        ['b', 1234],
        ['c', null],
      ],
      'name      n\n-----  ----\nalpha     1\nb      1234\nc         -\n',
    ],
    ['a column mixing text and numbers is text', ['x'], [['a'], [10]], 'x\n--\na\n10\n'],
  ])('%s', (_name, headers, rows, expected) => {
    expect(renderTable(headers, rows)).toBe(expected);
  });
});

const result = (over: Partial<ImportResult> & { failure?: number }): ImportResult => ({
  id: 'i1',
  test_run_id: 'r1',
  target_run: { id: 'r1', name: 'Nightly', match_mode: 'existing' },
  source_filename: 'TEST-a.xml',
  dry_run: false,
  status: 'completed',
  summary: {
    total_cases: 5,
    matched_by_automation_id: 3,
    matched_by_name: 1,
    created_test_cases: 1,
    updated: 5,
    unmatched: 0,
    ambiguous: 0,
    warnings: 0,
  },
  statuses: {
    passed: 3,
    failure: over.failure ?? 1,
    error: 0,
    skipped: 1,
    xfailed: 0,
    xpassed: 0,
    flaky: 0,
  },
  ...over,
});

describe('renderImports', () => {
  it('prints the run once and a row per file', () => {
    expect(renderImports([result({})])).toBe(
      [
        'Run: Nightly (r1, existing)',
        'file        status     tests  passed  failed  skipped  matched  created  unmatched  ambiguous',
        '----------  ---------  -----  ------  ------  -------  -------  -------  ---------  ---------',
        'TEST-a.xml  completed      5       3       1        1        4        1          0          0',
        '',
      ].join('\n'),
    );
  });

  it('adds a total row for several files, and says a dry run created no run', () => {
    const dry = { id: null, name: 'Nightly', match_mode: 'created' };
    const out = renderImports([
      result({ target_run: dry, status: 'preview' }),
      result({ target_run: dry, status: 'preview', source_filename: 'TEST-b.xml', failure: 2 }),
    ]);
    expect(out).toContain('Run: Nightly (not created: dry run, created)\n');
    expect(out.trimEnd().split('\n').pop()).toMatch(/^total\s+10\s+6\s+3\s+2\s+8\s+2\s+0\s+0$/);
  });
});

describe('renderCompare', () => {
  const base: CompareResult = {
    run: { id: 'r2', name: 'Nightly 2', build: '872' },
    base: { id: 'r1', name: 'Nightly 1', build: '871' },
    counts: {
      newly_failing: 1,
      fixed: 1,
      still_failing: 0,
      added: 0,
      removed: 0,
      changed: 0,
      unchanged: 3,
    },
    build_changed: true,
    environment: { same_environment: true, from_revision: 3, to_revision: 4, changed: true },
    datasets: [{ name: 'Cards', from_revision: 1, to_revision: 2 }],
    items: [
      { title: 'Checkout', change: 'newly_failing', base_status: 'passed', status: 'failure' },
      { title: 'Login', change: 'fixed', base_status: 'error', status: 'passed' },
    ],
  };

  it('prints both runs, the counts, the drift and the newly failing and fixed tests', () => {
    const out = renderCompare(base);
    expect(out).toContain('Run:  Nightly 2 [872] (r2)\nBase: Nightly 1 [871] (r1)\n');
    expect(out).toContain(
      'newly_failing 1, fixed 1, still_failing 0, added 0, removed 0, changed 0, unchanged 3\n',
    );
    expect(out).toContain('Environment changed: same environment, revision 3 → 4\n');
    expect(out).toContain('Build changed: 871 → 872\n');
    expect(out).toMatch(
      /Datasets changed:\ndataset\s+base revision\s+revision\n[- ]+\nCards\s+1\s+2\n/,
    );
    expect(out).toMatch(
      /Newly failing \(1\):\ntest\s+base\s+now\n[- ]+\nCheckout\s+passed\s+failure\n/,
    );
    expect(out).toMatch(/Fixed \(1\):\ntest\s+base\s+now\n[- ]+\nLogin\s+error\s+passed\n/);
  });

  it('leaves out what did not change', () => {
    const out = renderCompare({
      ...base,
      build_changed: false,
      environment: { ...base.environment, changed: false },
      datasets: [],
      items: [],
    });
    expect(out).toContain('Environment unchanged\n');
    expect(out).not.toMatch(/Build changed|Datasets|Newly failing|Fixed/);
  });
});

describe('renderReadiness', () => {
  const r: ReadinessResult = {
    verdict: 'not_ready',
    product_id: 'p',
    criteria: { environment_id: null, build: '2.4.0', min_risk_level: 'high' },
    counts: { components: 2, passing: 1, failing: 1, not_run: 0, uncovered: 0 },
    blockers: [
      {
        component_name: 'Payments',
        risk_level: 'critical',
        risk_score: 82,
        reason: 'failing',
        test_case_ids: ['a', 'b'],
      },
    ],
  };
  it.each<[string, ReadinessResult, RegExp[]]>([
    [
      'not ready, with blockers',
      r,
      [
        /^Verdict: NOT READY\n/,
        /Criteria: min risk level high, build 2\.4\.0\n/,
        /Payments\s+critical\s+82\s+failing\s+2\n/,
      ],
    ],
    [
      'ready',
      { ...r, verdict: 'ready', blockers: [] },
      [/^Verdict: READY\n/, /^(?![\s\S]*Blockers)/],
    ],
  ])('%s', (_name, input, patterns) => {
    const out = renderReadiness(input);
    for (const p of patterns) expect(out).toMatch(p);
  });
});

describe('renderProblem', () => {
  it.each<[number, unknown, string]>([
    [
      404,
      { title: 'Not Found', detail: 'Project not found', code: 'project_not_found', status: 404 },
      'tms: Not Found (404 project_not_found)\n  Project not found\n',
    ],
    [
      422,
      {
        title: 'Unprocessable',
        detail: 'Invalid',
        code: 'validation_error',
        errors: { 'body.name': ['must not be empty'] },
      },
      'tms: Unprocessable (422 validation_error)\n  Invalid\n  body.name: must not be empty\n',
    ],
    [502, '<html>Bad gateway</html>', 'tms: HTTP 502 (502)\n'],
    [500, null, 'tms: HTTP 500 (500)\n'],
  ])('%i', (status, body, expected) => {
    expect(renderProblem(status, body)).toBe(expected);
  });
});
