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
    expect(out).toContain('Run: Nightly (dry run: would be created)\n');
    expect(out.trimEnd().split('\n').pop()).toMatch(/^total\s+10\s+6\s+3\s+2\s+8\s+2\s+0\s+0$/);
  });

  it('prints each file of a multi-file import, then the import as the total', () => {
    // One request, three files (what `tms import` sends): the table named only the first file and
    // gave it every file's counts.
    const r = result({ source_filename: 'a.xml' });
    r.summary = {
      ...r.summary,
      files: [
        { name: 'a.xml', testcases: 2, passed: 1, failed: 1, skipped: 0 },
        { name: 'b.xml', testcases: 2, passed: 1, failed: 0, skipped: 1 },
        { name: 'c.xml', testcases: 1, passed: 1, failed: 0, skipped: 0 },
      ],
    };
    expect(renderImports([r])).toBe(
      [
        'Run: Nightly (r1, existing)',
        'file   status     tests  passed  failed  skipped  matched  created  unmatched  ambiguous',
        '-----  ---------  -----  ------  ------  -------  -------  -------  ---------  ---------',
        'a.xml  completed      2       1       1        0        -        -          -          -',
        'b.xml  completed      2       1       0        1        -        -          -          -',
        'c.xml  completed      1       1       0        0        -        -          -          -',
        'total                 5       3       1        1        4        1          0          0',
        '',
      ].join('\n'),
    );
  });

  it('names a one-file import after its file, and totals several imports, not their file rows', () => {
    const one = result({ source_filename: 'junit.xml' });
    one.summary = {
      ...one.summary,
      files: [{ name: 'TEST-x.xml', testcases: 5, passed: 3, failed: 1, skipped: 1 }],
    };
    expect(renderImports([one]).split('\n')[3]).toMatch(
      /^TEST-x\.xml\s+completed\s+5\s+3\s+1\s+1\s+4\s+1\s+0\s+0$/,
    );

    // A test in both files of an import counts in each file, once in the import (and the total).
    const twice = result({});
    twice.summary = {
      ...twice.summary,
      files: [
        { name: 'a.xml', testcases: 5, passed: 3, failed: 1, skipped: 1 },
        { name: 'a-rerun.xml', testcases: 1, passed: 1, failed: 0, skipped: 0 },
      ],
    };
    const lines = renderImports([twice, result({ source_filename: 'b.xml' })])
      .trimEnd()
      .split('\n');
    expect(lines.slice(3).map((l) => l.split(/\s+/)[0])).toEqual([
      'a.xml',
      'a-rerun.xml',
      'b.xml',
      'total',
    ]);
    expect(lines.pop()).toMatch(/^total\s+10\s+6\s+2\s+2\s+8\s+2\s+0\s+0$/);
  });

  it('counts as the file summary does: xpassed with the failed, xfailed with the skipped', () => {
    const r = result({ failure: 0 });
    r.summary = { ...r.summary, total_cases: 7 };
    r.statuses = {
      ...r.statuses,
      passed: 3,
      error: 1,
      skipped: 1,
      xfailed: 1,
      xpassed: 1,
      flaky: 1,
    };
    // tests 7 = passed 3 (the flaky one included) + failed 2 (error, xpassed) + skipped 2.
    expect(renderImports([r]).split('\n')[3]).toMatch(/^TEST-a\.xml\s+completed\s+7\s+3\s+2\s+2\s/);
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
