import { MAX_JUNIT_TESTCASES, parseJunit, type ParsedReport } from '../junit/junit-parser';
import {
  mapResultsJson,
  MAX_LISTED_PROBLEMS,
  NOT_UTF8_REASON,
  parseResultsJson,
  ResultsJsonError,
  Utf8Text,
  JSON_DEPTH_REASON,
  JSON_VALUES_REASON,
  MAX_RESULTS_JSON_DEPTH,
  MAX_RESULTS_JSON_FIELD_CHARS,
  MAX_RESULTS_JSON_VALUES,
} from './results-json';

/** A whole report held in memory, decoded as the upload decodes it. */
function parseResultsJsonBytes(bytes: Uint8Array): ParsedReport {
  const text = new Utf8Text();
  text.push(bytes);
  return parseResultsJson(text.end());
}

function refusal(run: () => unknown): ResultsJsonError {
  try {
    run();
  } catch (error) {
    if (error instanceof ResultsJsonError) return error;
    throw error;
  }
  throw new Error('expected the report to be refused');
}

const reasonsOf = (doc: unknown): string[] => refusal(() => mapResultsJson(doc)).reasons;

function only(report: ParsedReport): ParsedReport['results'][number] {
  expect(report.results).toHaveLength(1);
  const [result] = report.results;
  if (result === undefined) throw new Error('no result');
  return result;
}

describe('mapResultsJson: fields (reference §4.5)', () => {
  it('maps a full case onto the parsed-report structure of the XML path', () => {
    const report = mapResultsJson({
      format: 'karvio-results',
      version: 1,
      run_name: '  Nightly  ',
      timestamp: '2026-05-01T10:00:00Z',
      unknown_key: { ignored: true },
      cases: [
        {
          name: ' test_login ',
          classname: 'tests.auth.LoginTest',
          title: 'Login works',
          suite_path: ['auth', ' ', ' login '],
          automation_id: ' AUTH-1 ',
          preconditions: 'a user',
          steps: 'log in',
          assertions: 'logged in',
          dataset_key: 'users:admin',
          dataset_name: 'Admin',
          dataset_data: { user: 'admin' },
          dataset_source_ref: 'ref',
          duration_ms: 1500,
          message: 'assert failed',
          details: 'Traceback: boom',
          system_out: ' out ',
          system_err: 'err',
          status: 'failure',
          extra: 'ignored',
        },
      ],
    });
    expect(report).toMatchObject({
      name: 'Nightly',
      timestamp: new Date('2026-05-01T10:00:00Z'),
      root: 'results_json',
      testcase_elements: 1,
      ignored_testcases: 0,
      nameless_testcases: [],
      truncated: false,
    });
    expect(only(report)).toEqual({
      name: 'test_login',
      classname: 'tests.auth.LoginTest',
      title: 'Login works',
      suite_path: ['auth', 'login'],
      automation_id: 'AUTH-1',
      automation_id_property: 'AUTH-1',
      file: null,
      line: null,
      properties: {
        automation_id: 'AUTH-1',
        tms_test_title: 'Login works',
        tms_suite_path: '["auth","login"]',
        tms_steps: 'log in',
        tms_preconditions: 'a user',
        tms_assertions: 'logged in',
        tms_dataset_key: 'users:admin',
        tms_dataset_name: 'Admin',
        tms_dataset_data: '{"user":"admin"}',
        tms_dataset_source_ref: 'ref',
      },
      status: 'failure',
      message: 'assert failed',
      details: 'Traceback: boom',
      comment: 'assert failed\n\nTraceback: boom',
      duration_ms: 1500,
      system_out: 'out',
      system_err: 'err',
      flaky: false,
      attempts: [{ status: 'failure', message: 'assert failed', duration_ms: 1500 }],
      elements: 1,
      dataset: { key: 'users:admin', name: 'Admin', data: { user: 'admin' }, source_ref: 'ref' },
      steps: 'log in',
      preconditions: 'a user',
      assertions: 'logged in',
      truncated: false,
      index: 0,
    });
  });

  it('takes each of the six statuses as written, xfailed and xpassed included, and counts them', () => {
    const statuses = ['passed', 'failure', 'error', 'skipped', 'xfailed', 'xpassed'];
    const report = mapResultsJson({
      cases: statuses.map((status, i) => ({ name: `t${i}`, status })),
    });
    expect(report.results.map((r) => r.status)).toEqual(statuses);
    expect(report.totals).toEqual({
      passed: 1,
      failure: 1,
      error: 1,
      skipped: 1,
      xfailed: 1,
      xpassed: 1,
      total: 6,
      flaky: 0,
    });
    expect(report.results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('stable identity: automation_id, else <classname>.<name>, else none; title defaults to the name', () => {
    const report = mapResultsJson({
      cases: [
        { name: 'a', classname: 'pkg.A', automation_id: 'ID-1', status: 'passed' },
        { name: 'b', classname: 'pkg.A', automation_id: '  ', status: 'passed' },
        { name: 'c', status: 'passed', title: ' ' },
      ],
    });
    expect(report.results.map((r) => [r.automation_id, r.automation_id_property, r.title])).toEqual(
      [
        ['ID-1', 'ID-1', 'a'],
        ['pkg.A.b', null, 'b'],
        [null, null, 'c'],
      ],
    );
  });

  it('comment: message and details joined like the XML path, or whichever exists', () => {
    const report = mapResultsJson({
      cases: [
        { name: 'a', status: 'failure', message: 'm' },
        { name: 'b', status: 'failure', details: 'line 1\nline 2' },
        { name: 'c', status: 'passed' },
      ],
    });
    expect(report.results.map((r) => r.comment)).toEqual(['m', 'line 1\nline 2', null]);
    expect(report.results[1]?.attempts[0]?.message).toBe('line 1');
  });

  it('blank strings and nulls are absent; run name and timestamp are optional', () => {
    const report = mapResultsJson({
      run_name: '   ',
      timestamp: null,
      cases: [
        {
          name: 'a',
          status: 'passed',
          classname: null,
          message: '',
          system_out: '  \n ',
          suite_path: null,
          duration_ms: null,
          dataset_data: null,
        },
      ],
    });
    expect(report.name).toBeNull();
    expect(report.timestamp).toBeNull();
    expect(only(report)).toMatchObject({
      classname: null,
      message: null,
      system_out: null,
      suite_path: [],
      duration_ms: null,
      dataset: null,
      properties: {},
    });
  });

  it('a dataset name without a key names the row (reference §4.10), as tms_dataset_* properties do', () => {
    const report = mapResultsJson({
      cases: [{ name: 'a', status: 'passed', dataset_name: 'Row', dataset_data: { x: 1 } }],
    });
    expect(only(report).dataset).toEqual({
      key: null,
      name: 'Row',
      data: { x: 1 },
      source_ref: null,
    });
    const two = mapResultsJson({
      cases: [
        { name: 'a', status: 'failure', dataset_name: 'Chrome' },
        { name: 'a', status: 'passed', dataset_name: 'Firefox' },
      ],
    });
    // Two parametrisations, not a retry folded into one result.
    expect(two.results.map((r) => [r.dataset?.name, r.status])).toEqual([
      ['Chrome', 'failure'],
      ['Firefox', 'passed'],
    ]);
  });

  it('folds repeated cases of one test like repeated testcases: last status, flaky when it passed last', () => {
    const report = mapResultsJson({
      cases: [
        { name: 'retry', classname: 'k', status: 'failure', message: 'first' },
        { name: 'other', classname: 'k', status: 'passed' },
        { name: 'retry', classname: 'k', status: 'passed', duration_ms: 5 },
      ],
    });
    expect(report.testcase_elements).toBe(3);
    expect(report.results.map((r) => [r.name, r.status, r.flaky, r.elements])).toEqual([
      ['retry', 'passed', true, 2],
      ['other', 'passed', false, 1],
    ]);
    expect(report.results[0]?.comment).toMatch(/^Flaky: passed after 1 failed attempt/);
    expect(report.totals).toMatchObject({ passed: 2, total: 2, flaky: 1 });
  });

  it('cuts long text fields at the cap, like the XML parser, and flags the report', () => {
    const report = mapResultsJson(
      { cases: [{ name: 'a', status: 'failure', system_out: 'x'.repeat(30), message: 'short' }] },
      { maxTextChars: 10 },
    );
    const result = only(report);
    expect(result.system_out).toBe('xxxxxxxxxx\n[truncated: 20 more characters not stored]');
    expect(result.message).toBe('short');
    expect(result.truncated).toBe(true);
    expect(report.truncated).toBe(true);
  });

  it('replaces control characters that cannot be stored', () => {
    const result = only(
      mapResultsJson({ cases: [{ name: 'a\u0000b', status: 'passed', system_out: 'x\u0001y' }] }),
    );
    expect(result.name).toBe('a\uFFFDb');
    expect(result.system_out).toBe('x\uFFFDy');
  });

  it('reads a timestamp with an offset, or a naive one as UTC', () => {
    expect(
      mapResultsJson({
        timestamp: '2026-05-01T12:00:00+02:00',
        cases: [{ name: 'a', status: 'passed' }],
      }).timestamp,
    ).toEqual(new Date('2026-05-01T10:00:00Z'));
    expect(
      mapResultsJson({ timestamp: '2026-05-01T10:00:00', cases: [{ name: 'a', status: 'passed' }] })
        .timestamp,
    ).toEqual(new Date('2026-05-01T10:00:00Z'));
  });
});

describe('mapResultsJson: refusals (422 invalid_tms_results_json)', () => {
  it.each([
    [
      'a top-level array',
      [{ name: 'a', status: 'passed' }],
      /must be a JSON object .* not an array/,
    ],
    ['a top-level string', 'cases', /must be a JSON object .* not a string/],
    ['null', null, /not null/],
    ['missing cases', { run_name: 'x' }, /^cases: is required/],
    ['null cases', { cases: null }, /^cases: is required/],
    ['empty cases', { cases: [] }, /^cases: must contain at least one case$/],
    ['cases not an array', { cases: { name: 'a' } }, /^cases: must be an array, not an object$/],
    ['a case that is not an object', { cases: ['a'] }, /^cases\.0: must be an object/],
    ['a missing name', { cases: [{ status: 'passed' }] }, /^cases\.0\.name: is required/],
    [
      'a blank name',
      { cases: [{ name: '   ', status: 'passed' }] },
      /^cases\.0\.name: is required and must not be blank$/,
    ],
    [
      'a name that is not a string',
      { cases: [{ name: 7, status: 'passed' }] },
      /^cases\.0\.name: must be a string, not a number$/,
    ],
    ['a missing status', { cases: [{ name: 'a' }] }, /^cases\.0\.status: is required/],
    [
      'an unknown status',
      { cases: [{ name: 'a', status: 'failed' }] },
      /^cases\.0\.status: must be one of passed, failure, error, skipped, xfailed, xpassed, not "failed"$/,
    ],
    [
      'a status in capitals',
      { cases: [{ name: 'a', status: 'PASSED' }] },
      /^cases\.0\.status: must be one of/,
    ],
    [
      'a status that is not a string',
      { cases: [{ name: 'a', status: true }] },
      /^cases\.0\.status: .* not a boolean$/,
    ],
    [
      'a fractional duration',
      { cases: [{ name: 'a', status: 'passed', duration_ms: 1.5 }] },
      /^cases\.0\.duration_ms: must be a whole number/,
    ],
    [
      'a negative duration',
      { cases: [{ name: 'a', status: 'passed', duration_ms: -1 }] },
      /^cases\.0\.duration_ms/,
    ],
    [
      'a duration as text',
      { cases: [{ name: 'a', status: 'passed', duration_ms: '15' }] },
      /^cases\.0\.duration_ms: .* not a string$/,
    ],
    [
      'a huge duration',
      { cases: [{ name: 'a', status: 'passed', duration_ms: 2 ** 31 }] },
      /^cases\.0\.duration_ms/,
    ],
    [
      'a suite path that is a string',
      { cases: [{ name: 'a', status: 'passed', suite_path: 'a/b' }] },
      /^cases\.0\.suite_path: must be an array of strings/,
    ],
    [
      'a suite path with a number',
      { cases: [{ name: 'a', status: 'passed', suite_path: ['a', 1] }] },
      /^cases\.0\.suite_path\.1: must be a string/,
    ],
    [
      'dataset_data that is an array',
      { cases: [{ name: 'a', status: 'passed', dataset_data: [1] }] },
      /^cases\.0\.dataset_data: must be an object, not an array$/,
    ],
    [
      'a classname that is a number',
      { cases: [{ name: 'a', status: 'passed', classname: 3 }] },
      /^cases\.0\.classname: must be a string/,
    ],
    [
      'a run name that is a number',
      { run_name: 1, cases: [{ name: 'a', status: 'passed' }] },
      /^run_name: must be a string/,
    ],
    [
      'an unparsable timestamp',
      { timestamp: 'yesterday', cases: [{ name: 'a', status: 'passed' }] },
      /^timestamp: must be an ISO 8601 date-time/,
    ],
    [
      'a numeric timestamp',
      { timestamp: 1700000000, cases: [{ name: 'a', status: 'passed' }] },
      /^timestamp: .* not a number$/,
    ],
  ])('%s', (_label, doc, reason) => {
    const reasons = reasonsOf(doc);
    expect(reasons[0]).toMatch(reason);
  });

  it('lists every problem with its path, at most MAX_LISTED_PROBLEMS', () => {
    expect(
      reasonsOf({
        cases: [
          { name: 'ok', status: 'passed' },
          { name: '', status: 'bad' },
        ],
      }),
    ).toEqual([
      'cases.1.name: is required and must not be blank',
      'cases.1.status: must be one of passed, failure, error, skipped, xfailed, xpassed, not "bad"',
    ]);
    const many = reasonsOf({ cases: Array.from({ length: 30 }, () => ({ name: 'a' })) });
    expect(many).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(many.at(-1)).toBe('… and 10 more problems');
  });

  it('format and version are not checked', () => {
    expect(
      mapResultsJson({ format: 42, version: { x: 1 }, cases: [{ name: 'a', status: 'passed' }] })
        .results,
    ).toHaveLength(1);
  });
});

describe('parseResultsJson / parseResultsJsonBytes', () => {
  it('refuses malformed JSON', () => {
    expect(refusal(() => parseResultsJson('{"cases": [')).reason).toMatch(/^malformed JSON: /);
    expect(refusal(() => parseResultsJson('{} trailing')).reason).toMatch(/^malformed JSON: /);
  });

  it('accepts a UTF-8 byte order mark and surrounding whitespace', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(' \n\t{"cases":[{"name":"é","status":"passed"}]}\n'),
    ]);
    expect(only(parseResultsJsonBytes(bytes)).name).toBe('é');
    expect(only(parseResultsJson('\uFEFF{"cases":[{"name":"a","status":"passed"}]}')).name).toBe(
      'a',
    );
  });

  it('refuses bytes that are not UTF-8 (Latin-1, UTF-16)', () => {
    const latin1 = Buffer.from('{"cases":[{"name":"caf\xe9","status":"passed"}]}', 'latin1');
    expect(refusal(() => parseResultsJsonBytes(latin1)).reasons).toEqual([NOT_UTF8_REASON]);
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('{"cases":[{"name":"a","status":"passed"}]}', 'utf16le'),
    ]);
    expect(refusal(() => parseResultsJsonBytes(utf16)).reasons).toEqual([NOT_UTF8_REASON]);
  });

  it('Utf8Text decodes characters split across chunks, and refuses a truncated one at the end', () => {
    const bytes = Buffer.from('{"cases":[{"name":"日本","status":"passed"}]}');
    const text = new Utf8Text();
    for (const byte of bytes) expect(text.push(Uint8Array.of(byte))).toBe(true);
    expect(text.end()).toBe(bytes.toString('utf8'));
    const cut = new Utf8Text();
    cut.push(Buffer.from('日').subarray(0, 2));
    expect(() => cut.end()).toThrow(ResultsJsonError);
  });
});

describe('the same report as XML and as JSON', () => {
  it('gives the same results for matching and applying', async () => {
    const xml = await parseJunit(`<testsuites name="Nightly" timestamp="2026-05-01T10:00:00Z">
      <testsuite name="auth">
        <testcase classname="tests.auth.LoginTest" name="test_login" time="1.5">
          <properties>
            <property name="automation_id" value="AUTH-1"/>
            <property name="tms_test_title" value="Login works"/>
            <property name="tms_steps" value="log in"/>
            <property name="tms_dataset_key" value="users:admin"/>
            <property name="tms_dataset_name" value="Admin"/>
          </properties>
          <system-out>logged in</system-out>
        </testcase>
        <testcase classname="tests.auth.LogoutTest" name="test_logout" time="0.5">
          <failure message="logout failed">Traceback</failure>
          <system-err>warn</system-err>
        </testcase>
        <testcase classname="tests.auth.SkipTest" name="test_skip"><skipped message="later"/></testcase>
      </testsuite>
    </testsuites>`);
    const json = mapResultsJson({
      run_name: 'Nightly',
      timestamp: '2026-05-01T10:00:00Z',
      cases: [
        {
          name: 'test_login',
          classname: 'tests.auth.LoginTest',
          suite_path: ['Nightly', 'auth'],
          automation_id: 'AUTH-1',
          title: 'Login works',
          steps: 'log in',
          dataset_key: 'users:admin',
          dataset_name: 'Admin',
          duration_ms: 1500,
          system_out: 'logged in',
          status: 'passed',
        },
        {
          name: 'test_logout',
          classname: 'tests.auth.LogoutTest',
          suite_path: ['Nightly', 'auth'],
          duration_ms: 500,
          message: 'logout failed',
          details: 'Traceback',
          system_err: 'warn',
          status: 'failure',
        },
        {
          name: 'test_skip',
          classname: 'tests.auth.SkipTest',
          suite_path: ['Nightly', 'auth'],
          message: 'later',
          status: 'skipped',
        },
      ],
    });
    const shared = (report: ParsedReport) => ({
      name: report.name,
      timestamp: report.timestamp,
      totals: report.totals,
      results: report.results.map(({ properties: _p, file: _f, line: _l, ...rest }) => rest),
    });
    expect(shared(json)).toEqual(shared(xml));
  });
});

describe('parseResultsJson: limits (issue #22)', () => {
  const refusal = (text: string): string[] => {
    try {
      parseResultsJson(text);
    } catch (error) {
      if (error instanceof ResultsJsonError) return error.reasons;
      throw error;
    }
    throw new Error('expected a refusal');
  };
  const caseWith = (extra: string): string => `{"cases":[{"name":"a","status":"passed"${extra}}]}`;

  it.each([
    ['arrays', '['],
    ['objects', '{"k":'],
  ])('refuses %s nested deeper than the limit before parsing', (_label, open) => {
    const close = open === '[' ? ']' : '}';
    const deep = (depth: number): string =>
      caseWith(`,"dataset_data":{"x":${open.repeat(depth)}1${close.repeat(depth)}}`);
    // the document, the cases array, the case and dataset_data take 4 levels
    expect(parseResultsJson(deep(MAX_RESULTS_JSON_DEPTH - 4)).results).toHaveLength(1);
    expect(refusal(deep(MAX_RESULTS_JSON_DEPTH - 3))).toEqual([JSON_DEPTH_REASON]);
    expect(refusal(deep(100_000))).toEqual([JSON_DEPTH_REASON]);
  });

  it('is not fooled by brackets and quotes inside strings', () => {
    const text = caseWith(`,"message":"${'[{\\\\\\"'.repeat(100)}"`);
    expect(parseResultsJson(text).results).toHaveLength(1);
  });

  it('refuses more values than the limit before parsing', () => {
    expect(refusal(`{"cases":[${'0,'.repeat(MAX_RESULTS_JSON_VALUES)}0]}`)).toEqual([
      JSON_VALUES_REASON,
    ]);
  });

  it('refuses more cases than the testcase limit', () => {
    const one = '{"name":"a","status":"passed"}';
    const reasons = refusal(`{"cases":[${`${one},`.repeat(MAX_JUNIT_TESTCASES)}${one}]}`);
    expect(reasons).toEqual([
      `cases: must contain at most ${MAX_JUNIT_TESTCASES} cases, not ${MAX_JUNIT_TESTCASES + 1}`,
    ]);
  });

  it('refuses a long string field, cuts a long text field', () => {
    const long = 'n'.repeat(MAX_RESULTS_JSON_FIELD_CHARS + 1);
    expect(refusal(`{"cases":[{"name":"${long}","status":"passed"}]}`)).toEqual([
      `cases.0.name: must be at most ${MAX_RESULTS_JSON_FIELD_CHARS} characters, not ${long.length}`,
    ]);
    expect(refusal(caseWith(`,"suite_path":["${long}"]`))).toEqual([
      `cases.0.suite_path.0: must be at most ${MAX_RESULTS_JSON_FIELD_CHARS} characters, not ${long.length}`,
    ]);
    const report = parseResultsJson(caseWith(`,"details":"${long}"`));
    expect(report.results[0]?.truncated).toBe(true);
  });
});
