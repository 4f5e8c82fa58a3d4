import fc from 'fast-check';

import {
  JunitResult,
  RawOutcome,
  RawTestcase,
  buildComment,
  caseIdentity,
  countStatuses,
  describeAttempts,
  foldAttempts,
  foldRetries,
  mapTestcase,
  normalizeAsciiTitle,
  normalizeSuitePath,
  normalizeTitle,
  normalizeTitleByRules,
  parseDurationMs,
  parseSuitePathProperty,
  readDatasetHint,
  retryKey,
} from './dialects';

let nextIndex = 0;

function raw(overrides: Partial<RawTestcase> = {}): RawTestcase {
  return {
    index: nextIndex++,
    name: 'test_login',
    generated_name: false,
    classname: 'tests.AuthTest',
    file: null,
    line: null,
    time: '1.5',
    status_attr: null,
    result_attr: null,
    suite_path: ['Suite'],
    properties: {},
    outcomes: [],
    system_out: null,
    system_err: null,
    truncated: false,
    ...overrides,
  };
}

function outcome(kind: RawOutcome['kind'], overrides: Partial<RawOutcome> = {}): RawOutcome {
  return {
    kind,
    message: null,
    type: null,
    time: null,
    text: null,
    system_out: null,
    system_err: null,
    ...overrides,
  };
}

describe('mapTestcase: status of one element', () => {
  const cases: Array<[string, Partial<RawTestcase>, JunitResult['status']]> = [
    ['no outcome → passed', {}, 'passed'],
    ['<failure> → failure', { outcomes: [outcome('failure')] }, 'failure'],
    ['<error> → error', { outcomes: [outcome('error')] }, 'error'],
    ['<skipped> → skipped', { outcomes: [outcome('skipped')] }, 'skipped'],
    [
      'failure wins over error and skipped',
      { outcomes: [outcome('skipped'), outcome('error'), outcome('failure')] },
      'failure',
    ],
    ['error wins over skipped', { outcomes: [outcome('skipped'), outcome('error')] }, 'error'],
    [
      'pytest skipped type="pytest.xfail" → xfailed',
      { outcomes: [outcome('skipped', { type: 'pytest.xfail', message: 'known bug' })] },
      'xfailed',
    ],
    [
      'unittest-xml skipped type="XFAIL" → xfailed',
      { outcomes: [outcome('skipped', { type: 'XFAIL' })] },
      'xfailed',
    ],
    [
      'pytest.skip stays skipped',
      { outcomes: [outcome('skipped', { type: 'pytest.skip' })] },
      'skipped',
    ],
    [
      'pytest [XPASS(strict)] failure → xpassed',
      { outcomes: [outcome('failure', { message: '[XPASS(strict)] should fail' })] },
      'xpassed',
    ],
    [
      'XPASS(strict) only in the body → xpassed',
      { outcomes: [outcome('failure', { text: '[XPASS(strict)] should fail' })] },
      'xpassed',
    ],
    [
      'XPASS text elsewhere in the message is a plain failure',
      { outcomes: [outcome('failure', { message: 'see [XPASS(strict)]' })] },
      'failure',
    ],
    ['status="disabled" → skipped', { status_attr: 'disabled' }, 'skipped'],
    ['status="notrun" → skipped', { status_attr: 'notrun' }, 'skipped'],
    ['GoogleTest result="suppressed" → skipped', { result_attr: 'suppressed' }, 'skipped'],
    ['status="run" → passed', { status_attr: 'run' }, 'passed'],
    ['status="failed" without child → failure', { status_attr: 'failed' }, 'failure'],
    ['status="errored" without child → error', { status_attr: 'errored' }, 'error'],
    [
      'a <failure> child beats status="disabled"',
      { status_attr: 'disabled', outcomes: [outcome('failure')] },
      'failure',
    ],
  ];

  it.each(cases)('%s', (_label, overrides, expected) => {
    const result = mapTestcase(raw(overrides));
    expect(result.status).toBe(expected);
    expect(result.flaky).toBe(false);
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]?.status).toBe(expected);
  });

  it('takes message, details and comment from the deciding element (reference §4.4)', () => {
    const result = mapTestcase(
      raw({ outcomes: [outcome('failure', { message: 'logout failed', text: 'Traceback' })] }),
    );
    expect(result).toMatchObject({
      message: 'logout failed',
      details: 'Traceback',
      comment: 'logout failed\n\nTraceback',
      duration_ms: 1500,
    });
  });

  it('joins the bodies of several elements of the deciding kind', () => {
    const result = mapTestcase(
      raw({
        outcomes: [
          outcome('failure', { message: 'first', text: 'trace 1' }),
          outcome('failure', { message: 'second', text: 'trace 2' }),
          outcome('error', { message: 'teardown', text: 'ignored' }),
        ],
      }),
    );
    expect(result.message).toBe('first');
    expect(result.details).toBe('trace 1\n\nsecond\ntrace 2');
  });

  it('keeps the skip reason of an xfail as message', () => {
    const result = mapTestcase(
      raw({ outcomes: [outcome('skipped', { type: 'pytest.xfail', message: 'bug 12' })] }),
    );
    expect(result).toMatchObject({ status: 'xfailed', message: 'bug 12', comment: 'bug 12' });
  });

  it('fills identity, title, suite path and dataset from properties', () => {
    const result = mapTestcase(
      raw({
        properties: {
          automation_id: ' AUTH-1 ',
          tms_test_title: 'Login works',
          tms_suite_path: '["Web", "Auth"]',
          tms_dataset_key: 'admin',
          tms_dataset_name: 'Users',
          tms_dataset_data: '{"user":"admin","role":"root"}',
          tms_dataset_source_ref: 'tests/data.py',
          tms_steps: 'open page',
          tms_preconditions: 'logged out',
          tms_assertions: 'dashboard shown',
        },
      }),
    );
    expect(result).toMatchObject({
      automation_id: 'AUTH-1',
      automation_id_property: 'AUTH-1',
      title: 'Login works',
      suite_path: ['Web', 'Auth'],
      dataset: {
        key: 'admin',
        name: 'Users',
        data: { user: 'admin', role: 'root' },
        source_ref: 'tests/data.py',
      },
      steps: 'open page',
      preconditions: 'logged out',
      assertions: 'dashboard shown',
    });
  });

  it('defaults: title = name, path = enclosing suites, identity = classname.name', () => {
    const result = mapTestcase(raw());
    expect(result).toMatchObject({
      title: 'test_login',
      suite_path: ['Suite'],
      automation_id: 'tests.AuthTest.test_login',
      automation_id_property: null,
      dataset: null,
      comment: null,
    });
  });
});

describe('Maven Surefire flaky and rerun elements', () => {
  it('flakyFailure/flakyError + no failure → passed, flaky, every run listed', () => {
    const result = mapTestcase(
      raw({
        time: '0.683',
        outcomes: [
          outcome('flakyFailure', { message: 'Expected: <false>', type: 'AssertionError' }),
          outcome('flakyError', { type: 'java.io.IOException', text: 'java.io.IOException: x' }),
        ],
      }),
    );
    expect(result.status).toBe('passed');
    expect(result.flaky).toBe(true);
    expect(result.message).toBeNull();
    expect(result.attempts).toEqual([
      { status: 'failure', message: 'Expected: <false>', duration_ms: null },
      { status: 'error', message: 'java.io.IOException', duration_ms: null },
      { status: 'passed', message: null, duration_ms: 683 },
    ]);
    expect(result.comment).toBe(
      [
        'Flaky: passed after 2 failed attempts (3 attempts), marked flaky',
        'Attempt 1: failure — Expected: <false>',
        'Attempt 2: error — java.io.IOException',
        'Attempt 3: passed (683 ms)',
      ].join('\n'),
    );
  });

  it('uses the first body line when a flaky element has neither message nor type', () => {
    const result = mapTestcase(
      raw({
        outcomes: [
          outcome('flakyFailure', { text: 'junit.framework.AssertionFailedError\n at x' }),
        ],
      }),
    );
    expect(result.attempts[0]?.message).toBe('junit.framework.AssertionFailedError');
  });

  it('failure + rerunFailure → failed on every rerun: failure, not flaky, runs listed', () => {
    const result = mapTestcase(
      raw({
        outcomes: [
          outcome('failure', { message: 'run 1', text: 'trace 1' }),
          outcome('rerunFailure', { message: 'run 2', time: '0.25' }),
          outcome('rerunFailure', { message: 'run 3' }),
        ],
      }),
    );
    expect(result.status).toBe('failure');
    expect(result.flaky).toBe(false);
    expect(result.message).toBe('run 1');
    expect(result.details).toBe('trace 1');
    expect(result.attempts.map((a) => [a.status, a.message, a.duration_ms])).toEqual([
      ['failure', 'run 1', 1500],
      ['failure', 'run 2', 250],
      ['failure', 'run 3', null],
    ]);
    expect(result.comment).toBe(
      [
        '3 attempts, final status: failure',
        'Attempt 1: failure (1500 ms) — run 1',
        'Attempt 2: failure (250 ms) — run 2',
        'Attempt 3: failure — run 3',
        '',
        'run 1',
        '',
        'trace 1',
      ].join('\n'),
    );
  });

  it('error + rerunError → error', () => {
    const result = mapTestcase(
      raw({
        outcomes: [
          outcome('error', { message: 'boom' }),
          outcome('rerunError', { message: 'boom again' }),
        ],
      }),
    );
    expect(result.status).toBe('error');
    expect(result.attempts.map((a) => a.status)).toEqual(['error', 'error']);
  });

  it('rerun elements without a primary element: the last rerun decides', () => {
    const result = mapTestcase(
      raw({
        outcomes: [
          outcome('rerunFailure', { message: 'a' }),
          outcome('rerunError', { message: 'b', text: 'trace b' }),
        ],
      }),
    );
    expect(result).toMatchObject({
      status: 'error',
      message: 'b',
      details: 'trace b',
      flaky: false,
    });
    expect(result.attempts).toHaveLength(2);
  });
});

describe('retries: repeated testcases in one file', () => {
  it('fail, error, pass → one passed result, flaky, attempts in order, first position kept', () => {
    const first = raw({ time: '1', outcomes: [outcome('failure', { message: 'it failed' })] });
    const other = raw({ name: 'test_other' });
    const second = raw({ time: '2', outcomes: [outcome('error', { message: 'it broke' })] });
    const third = raw({ time: '3', system_out: 'final output' });
    const results = foldRetries([first, other, second, third]);
    expect(results.map((r) => r.name)).toEqual(['test_login', 'test_other']);
    const [folded] = results;
    expect(folded).toMatchObject({
      status: 'passed',
      flaky: true,
      elements: 3,
      duration_ms: 3000,
      system_out: 'final output',
      message: null,
      index: first.index,
    });
    expect(folded?.attempts.map((a) => a.status)).toEqual(['failure', 'error', 'passed']);
    expect(folded?.comment).toBe(
      [
        'Flaky: passed after 2 failed attempts (3 attempts), marked flaky',
        'Attempt 1: failure (1000 ms) — it failed',
        'Attempt 2: error (2000 ms) — it broke',
        'Attempt 3: passed (3000 ms)',
      ].join('\n'),
    );
  });

  it('every attempt failing → the last attempt decides, not flaky', () => {
    const [folded] = foldRetries([
      raw({ outcomes: [outcome('failure', { message: 'first failure' })] }),
      raw({ outcomes: [outcome('failure', { message: 'second failure' })] }),
      raw({
        outcomes: [outcome('error', { message: 'third error', text: 'Third attempt errored' })],
      }),
    ]);
    expect(folded).toMatchObject({
      status: 'error',
      flaky: false,
      message: 'third error',
      details: 'Third attempt errored',
    });
    expect(folded?.comment).toContain('3 attempts, final status: error');
    expect(folded?.comment).toMatch(/third error\n\nThird attempt errored$/);
  });

  it('passing first and failing later → failure, not flaky', () => {
    const [folded] = foldRetries([raw(), raw({ outcomes: [outcome('failure')] })]);
    expect(folded).toMatchObject({ status: 'failure', flaky: false });
  });

  it('an identical repetition of a passing test stays one passed result', () => {
    const results = foldRetries([raw(), raw()]);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'passed', flaky: false, elements: 2 });
  });

  it('same name with another classname is another test', () => {
    expect(foldRetries([raw(), raw({ classname: 'tests.OtherTest' })])).toHaveLength(2);
  });

  it('same name in another suite is another test', () => {
    expect(foldRetries([raw(), raw({ suite_path: ['Other'] })])).toHaveLength(2);
  });

  it('same automation_id but different dataset key or name are different tests', () => {
    const base = { properties: { automation_id: 'A-1' } };
    expect(
      foldRetries([
        raw({ ...base, properties: { automation_id: 'A-1', dataset_key: 'x' } }),
        raw({ ...base, properties: { automation_id: 'A-1', dataset_key: 'y' } }),
        raw({ ...base, name: 'test_login[z]' }),
      ]),
    ).toHaveLength(3);
  });

  it('same automation_id, classname and name are retries', () => {
    const props = { properties: { automation_id: 'A-1' } };
    const results = foldRetries([raw({ ...props, outcomes: [outcome('failure')] }), raw(props)]);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ automation_id: 'A-1', status: 'passed', flaky: true });
  });

  it('Surefire flaky elements inside repeated testcases are concatenated', () => {
    const folded = foldAttempts([
      mapTestcase(raw({ outcomes: [outcome('failure', { message: 'a' })] })),
      mapTestcase(raw({ outcomes: [outcome('flakyFailure', { message: 'b' })] })),
    ]);
    expect(folded.attempts.map((a) => [a.status, a.message])).toEqual([
      ['failure', 'a'],
      ['failure', 'b'],
      ['passed', null],
    ]);
    expect(folded.flaky).toBe(true);
  });

  it('retryKey ignores title and status but not identity parts', () => {
    const a = mapTestcase(raw({ properties: { tms_test_title: 'A' } }));
    const b = mapTestcase(raw({ outcomes: [outcome('failure')] }));
    expect(retryKey(a)).toBe(retryKey(b));
  });

  it.each([
    ['a shared path array', ['Suite', 'sub "quoted"'], ['Suite', 'sub "quoted"']],
    ['equal paths in two arrays', ['A'], ['A']],
    ['different paths', ['A'], ['B']],
    ['no path', [], []],
  ])('retryKey is the JSON of the identity parts (%s)', (_label, first, second) => {
    // The suite path's JSON is memoised per array: the key must stay what it was without it.
    const shared = first === second;
    const a = mapTestcase(raw({ suite_path: first, properties: { automation_id: 'x' } }));
    const b = mapTestcase(raw({ suite_path: shared ? first : second, name: 'test_other' }));
    for (const r of [a, b, a]) {
      expect(retryKey(r)).toBe(
        JSON.stringify([
          r.suite_path,
          r.automation_id_property ?? '',
          r.classname ?? '',
          r.name,
          '',
        ]),
      );
    }
  });

  it('foldAttempts refuses an empty list', () => {
    expect(() => foldAttempts([])).toThrow();
  });
});

describe('describeAttempts', () => {
  it('is null for one attempt and caps long lists', () => {
    expect(
      describeAttempts([{ status: 'passed', message: null, duration_ms: 1 }], false),
    ).toBeNull();
    const many = Array.from({ length: 60 }, () => ({
      status: 'failure' as const,
      message: `x${'y'.repeat(300)}\nsecond line`,
      duration_ms: null,
    }));
    const text = describeAttempts(many, false) ?? '';
    const lines = text.split('\n');
    expect(lines[0]).toBe('60 attempts, final status: failure');
    expect(lines).toHaveLength(1 + 50 + 1);
    expect(lines[lines.length - 1]).toBe('… 10 more attempts');
    expect(lines[1]?.length).toBeLessThan(250);
    expect(text).not.toContain('second line');
  });
});

describe('normalizeTitle (reference §4.6)', () => {
  it.each([
    ['test_login_works', 'login works'],
    ['Login works', 'login works'],
    ['shouldAuthenticateWithValid', 'should authenticate with valid'],
    ['testLoginWorks', 'login works'],
    ['TEST-login--works', 'login works'],
    ['  Login   works  ', 'login works'],
    ['contest attest testing', 'contest attest testing'],
    ['test', ''],
    ['user2Login', 'user2 login'],
    ['HTTPServer', 'httpserver'],
    ['Straße', 'strasse'],
    ['Tést_Ünïcode', 'tést ünïcode'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeTitle(input)).toBe(expected);
  });

  it('makes the reference examples equivalent', () => {
    expect(normalizeTitle('test_login_works')).toBe(normalizeTitle('Login works'));
  });

  it.each([
    ['myTestCase', 'my case'],
    ['test test', ''],
    ['testtest Test', 'testtest'],
    ['(test).TEST', '().'],
    ['a\tb\u000bc\fd\re\nf', 'a b c d e f'],
    ['x\u001fy', 'x\u001fy'],
    ['test9', 'test9'],
    ['9test', '9test'],
    ['aTest', 'a'],
    ['a1Test_b-test', 'a1 b'],
  ])('ASCII fast path: %j → %j, as the rules say', (input, expected) => {
    expect(normalizeAsciiTitle(input)).toBe(expected);
    expect(normalizeTitleByRules(input)).toBe(expected);
  });

  it('normalises every ASCII title exactly as the rules do (property)', () => {
    const piece = fc.oneof(
      fc.constantFrom('test', 'Test', 'TEST', 'tEsT', 'tes', 'est', 'testing', 'contest'),
      fc.constantFrom(
        ' ',
        '  ',
        '_',
        '-',
        '\t',
        '\n',
        '\r',
        '\u000b',
        '\f',
        '\u001f',
        '.',
        '(',
        '9',
      ),
      fc.constantFrom('a', 'B', 'aB', 'Ab', '1', '1A', 'xY', 'HTTP', 'z'),
      fc.string({ unit: 'binary-ascii', maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const title = pieces.join('');
        expect(normalizeAsciiTitle(title)).toBe(normalizeTitleByRules(title));
        expect(normalizeTitle(title)).toBe(normalizeTitleByRules(title));
      }),
      { numRuns: 5000 },
    );
  });

  it('normalises long ASCII titles (past the scratch space and one fromCharCode call) as the rules do', () => {
    for (const length of [2047, 2048, 2049, 5000, 9000, 20000]) {
      const title = 'aTest_b-testC '.repeat(Math.ceil(length / 14)).slice(0, length);
      expect(normalizeAsciiTitle(title)).toBe(normalizeTitleByRules(title));
      // The title after a long one gets nothing of it.
      expect(normalizeAsciiTitle('shortTitle')).toBe('short title');
    }
  });

  it('takes the rules for a title with any character beyond ASCII', () => {
    expect(normalizeTitle('Tést_Ünïcode testÄ')).toBe(normalizeTitleByRules('Tést_Ünïcode testÄ'));
    expect(normalizeTitle('test\u00a0Straße')).toBe('strasse');
  });

  it('normalizes suite paths segment by segment and drops empty segments', () => {
    expect(normalizeSuitePath(['Web UI', 'test', 'AuthTests'])).toEqual(['web ui', 'auth tests']);
  });
});

describe('caseIdentity (CONTRACT §6)', () => {
  it.each([
    ['automation_id property wins', { automation_id: ' X-1 ' }, 'a.B', 'n', 'X-1'],
    ['else classname.name', {}, 'a.B', 'n', 'a.B.n'],
    ['blank property falls back', { automation_id: '  ' }, 'a.B', 'n', 'a.B.n'],
    ['no classname → null', {}, null, 'n', null],
    ['blank classname → null', {}, '  ', 'n', null],
  ])('%s', (_label, properties, classname, name, expected) => {
    expect(caseIdentity({ properties, classname, name })).toBe(expected);
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['1.5', 1500],
    ['0.0005', 0],
    ['1.005', 1005],
    ['0.29', 290],
    ['10', 10000],
    ['.5', 500],
    ['1e-3', 1],
    ['1,234.5', 1234500],
    [' 2 ', 2000],
    ['', null],
    ['abc', null],
    ['-1', null],
    ['<<computed>>', null],
    ['Infinity', null],
    ['9999999999', null],
    [null, null],
  ])('%j → %j', (input, expected) => {
    expect(parseDurationMs(input)).toBe(expected);
  });
});

describe('buildComment', () => {
  it.each([
    ['m', 'd', 'm\n\nd'],
    ['m', null, 'm'],
    [null, 'd', 'd'],
    [null, null, null],
    ['same', 'same', 'same'],
  ])('%j + %j', (message, details, expected) => {
    expect(buildComment(message, details)).toBe(expected);
  });
});

describe('parseSuitePathProperty', () => {
  it.each([
    ['["A", " B ", ""]', ['A', 'B']],
    ['A / B/C', ['A', 'B', 'C']],
    ['/A//B/', ['A', 'B']],
    ['[not json', ['[not json']],
    ['[1, 2]', ['[1, 2]']],
    ['   ', null],
    ['[]', null],
  ])('%j → %j', (input, expected) => {
    expect(parseSuitePathProperty(input)).toEqual(expected);
  });
});

describe('readDatasetHint (reference §4.9)', () => {
  it('needs a key or a name (a name alone names the row, reference §4.10)', () => {
    expect(readDatasetHint({})).toBeNull();
    expect(readDatasetHint({ tms_dataset_name: 'Users' })).toEqual({
      key: null,
      name: 'Users',
      data: null,
      source_ref: null,
    });
  });

  it('accepts dataset_key and the unprefixed spellings', () => {
    expect(
      readDatasetHint({ dataset_key: 'k', dataset_name: 'n', dataset_data: '{"a":1}' }),
    ).toEqual({ key: 'k', name: 'n', data: { a: 1 }, source_ref: null });
  });

  it('prefers tms_ properties', () => {
    expect(readDatasetHint({ tms_dataset_key: 't', dataset_key: 'k' })?.key).toBe('t');
  });

  it.each(['not json', '[1,2]', '"text"', 'null'])(
    'data %j that is not an object → null',
    (data) => {
      expect(readDatasetHint({ dataset_key: 'k', tms_dataset_data: data })?.data).toBeNull();
    },
  );
});

describe('countStatuses', () => {
  it('counts final statuses', () => {
    const results = [
      mapTestcase(raw()),
      mapTestcase(raw({ outcomes: [outcome('failure')] })),
      mapTestcase(raw({ outcomes: [outcome('skipped', { type: 'pytest.xfail' })] })),
    ];
    expect(countStatuses(results)).toEqual({
      passed: 1,
      failure: 1,
      error: 0,
      skipped: 0,
      xfailed: 1,
      xpassed: 0,
    });
  });
});
