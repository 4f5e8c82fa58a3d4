import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import {
  ATTRIBUTES_REASON,
  DECLARATION_REASON,
  ELEMENTS_REASON,
  ELEMENT_DEPTH_REASON,
  JunitParseError,
  MAX_JUNIT_ATTRIBUTE_CHARS,
  MAX_JUNIT_ELEMENTS,
  MAX_JUNIT_ELEMENT_DEPTH,
  MAX_JUNIT_PROPERTY_CHARS,
  MAX_JUNIT_SUITE_DEPTH,
  MAX_JUNIT_TESTCASES,
  SUITE_DEPTH_REASON,
  TESTCASES_REASON,
  tooLongReason,
  NAMELESS_TESTCASE_REASON,
  NO_ROOT_REASON,
  ParseJunitOptions,
  ParsedReport,
  UNSUPPORTED_ROOT_REASON,
  isBlank,
  parseJunit,
  parseTimestamp,
} from './junit-parser';

const XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';

async function refusal(
  input: Readable | Buffer | string,
  options?: ParseJunitOptions,
): Promise<JunitParseError> {
  try {
    await parseJunit(input, options);
  } catch (error) {
    if (error instanceof JunitParseError) return error;
    throw error;
  }
  throw new Error('expected the document to be refused');
}

function only(report: ParsedReport): ParsedReport['results'][number] {
  expect(report.results).toHaveLength(1);
  const [result] = report.results;
  if (result === undefined) throw new Error('no result');
  return result;
}

/** A stream that hands the text over in chunks of `size` bytes (splitting multi-byte characters). */
function chunked(text: string | Buffer, size: number): Readable {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

describe('parseJunit: document shapes', () => {
  it('reads a <testsuites> root: suites, names, path, report name and timestamp', async () => {
    const report = await parseJunit(
      `${XML_DECL}<testsuites name="All" timestamp="2024-05-01T10:00:00Z">
        <testsuite name="Auth" timestamp="2020-01-01T00:00:00">
          <testcase classname="a.AuthTest" name="login" time="0.5" file="auth.py" line="12"/>
        </testsuite>
        <testsuite name="  ">
          <testcase name="anonymous suite case"/>
        </testsuite>
      </testsuites>`,
    );
    expect(report).toMatchObject({
      root: 'testsuites',
      name: 'All',
      suites: 2,
      testcase_elements: 2,
      ignored_testcases: 0,
    });
    expect(report.timestamp?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(report.results.map((r) => [r.name, r.suite_path])).toEqual([
      ['login', ['All', 'Auth']],
      ['anonymous suite case', ['All']],
    ]);
    expect(report.results[0]).toMatchObject({
      classname: 'a.AuthTest',
      file: 'auth.py',
      line: 12,
      duration_ms: 500,
      status: 'passed',
      automation_id: 'a.AuthTest.login',
    });
  });

  it('reads a bare <testsuite> root: its own name starts the path', async () => {
    const report = await parseJunit(
      `<testsuite name="pytest" timestamp="2020-09-04T16:18:04.966371">
         <testcase classname="t.T" name="a"/>
       </testsuite>`,
    );
    expect(report).toMatchObject({ root: 'testsuite', name: 'pytest', suites: 1 });
    expect(report.timestamp?.toISOString()).toBe('2020-09-04T16:18:04.966Z');
    expect(only(report).suite_path).toEqual(['pytest']);
  });

  it('takes the run name and timestamp from the first suite when the root has none', async () => {
    const report = await parseJunit(
      `<testsuites>
         <testsuite name="first"><testcase name="a"/></testsuite>
         <testsuite name="second" timestamp="2021-01-24T19:21:45"><testcase name="b"/></testsuite>
       </testsuites>`,
    );
    expect(report.name).toBe('first');
    expect(report.timestamp?.toISOString()).toBe('2021-01-24T19:21:45.000Z');
  });

  it('builds the suite path from nested suites (blank names skipped)', async () => {
    const report = await parseJunit(
      `<testsuites>
         <testsuite name="Project">
           <testcase name="top"/>
           <testsuite name="Module">
             <testsuite name="">
               <testsuite name="Feature"><testcase name="deep"/></testsuite>
             </testsuite>
             <testcase name="middle"/>
           </testsuite>
         </testsuite>
       </testsuites>`,
    );
    expect(report.suites).toBe(4);
    expect(report.results.map((r) => [r.name, r.suite_path])).toEqual([
      ['top', ['Project']],
      ['deep', ['Project', 'Module', 'Feature']],
      ['middle', ['Project', 'Module']],
    ]);
  });

  it('ignores testcases directly under <testsuites> (reference) but counts them', async () => {
    const report = await parseJunit(
      `<testsuites>
         <testcase name="stray"/>
         <testsuites><testsuite name="inner"><testcase name="nested root"/></testsuite></testsuites>
         <testsuite name="S"><testcase name="kept"/></testsuite>
       </testsuites>`,
    );
    expect(report.results.map((r) => r.name)).toEqual(['kept']);
    expect(report.testcase_elements).toBe(3);
    expect(report.ignored_testcases).toBe(2);
    expect(report.suites).toBe(1);
  });

  it('accepts zero testcases', async () => {
    const report = await parseJunit('<testsuites name="jest tests"/>');
    expect(report).toMatchObject({
      suites: 0,
      testcase_elements: 0,
      results: [],
      name: 'jest tests',
    });
    expect(report.totals.total).toBe(0);
  });

  it('accepts namespace prefixes on element names', async () => {
    const report = await parseJunit(
      '<j:testsuite xmlns:j="urn:x" name="S"><j:testcase name="a"><j:failure/></j:testcase></j:testsuite>',
    );
    expect(only(report).status).toBe('failure');
  });
});

describe('parseJunit: outcomes and captured text', () => {
  it('maps failure, error, skipped, passed with message, details and comment', async () => {
    const report = await parseJunit(
      `<testsuite name="S">
         <testcase name="f" time="1.5"><failure message="logout failed" type="AssertionError">Traceback</failure></testcase>
         <testcase name="e"><error message="boom"><![CDATA[stack <with> & markup]]></error></testcase>
         <testcase name="s"><skipped message="not today"/></testcase>
         <testcase name="p" time="0.25"/>
       </testsuite>`,
    );
    expect(report.results.map((r) => [r.name, r.status, r.message, r.details, r.comment])).toEqual([
      ['f', 'failure', 'logout failed', 'Traceback', 'logout failed\n\nTraceback'],
      ['e', 'error', 'boom', 'stack <with> & markup', 'boom\n\nstack <with> & markup'],
      ['s', 'skipped', 'not today', null, 'not today'],
      ['p', 'passed', null, null, null],
    ]);
    expect(report.totals).toEqual({
      passed: 1,
      failure: 1,
      error: 1,
      skipped: 1,
      xfailed: 0,
      xpassed: 0,
      total: 4,
      flaky: 0,
    });
  });

  it('maps pytest xfail and strict xpass', async () => {
    const report = await parseJunit(
      `<testsuites name="pytest tests"><testsuite name="pytest">
         <testcase classname="t" name="xf"><skipped type="pytest.xfail" message="bug 7"/></testcase>
         <testcase classname="t" name="xp"><failure message="[XPASS(strict)] unexpectedly passing">[XPASS(strict)] unexpectedly passing</failure></testcase>
       </testsuite></testsuites>`,
    );
    expect(report.results.map((r) => r.status)).toEqual(['xfailed', 'xpassed']);
    expect(report.totals).toMatchObject({ xfailed: 1, xpassed: 1 });
  });

  it('captures system-out/system-err of testcases and of suites separately', async () => {
    const report = await parseJunit(
      `<testsuites name="R">
         <testsuite name="S">
           <testcase name="a">
             <system-out>  case out  </system-out>
             <system-err><![CDATA[case err]]></system-err>
           </testcase>
           <testcase name="b"><system-out>   </system-out></testcase>
           <system-out>suite out</system-out>
           <system-err>suite err</system-err>
         </testsuite>
       </testsuites>`,
    );
    expect(report.results.map((r) => [r.name, r.system_out, r.system_err])).toEqual([
      ['a', 'case out', 'case err'],
      ['b', null, null],
    ]);
    expect(report.suite_logs).toEqual([
      { suite_path: ['R', 'S'], system_out: 'suite out', system_err: 'suite err' },
    ]);
  });

  it('reads Surefire flakyFailure with stackTrace; its nested output stays out of the case output', async () => {
    const report = await parseJunit(
      `<testsuite name="io.x.CrudTest">
         <testcase name="createWebhook" classname="io.x.CrudTest" time="0.683">
           <flakyFailure message="&#10;Expected: &lt;false&gt;" type="java.lang.AssertionError">
             <stackTrace>java.lang.AssertionError: Expected</stackTrace>
             <system-err>flaky run output</system-err>
           </flakyFailure>
           <system-out>final run output</system-out>
         </testcase>
       </testsuite>`,
    );
    const result = only(report);
    expect(result).toMatchObject({
      status: 'passed',
      flaky: true,
      system_out: 'final run output',
      system_err: null,
      duration_ms: 683,
    });
    expect(result.attempts).toEqual([
      { status: 'failure', message: 'Expected: <false>', duration_ms: null },
      { status: 'passed', message: null, duration_ms: 683 },
    ]);
    expect(result.comment).toContain(
      'Flaky: passed after 1 failed attempt (2 attempts), marked flaky',
    );
    expect(report.totals.flaky).toBe(1);
  });

  it('reads Surefire rerunFailure next to failure as failed on every rerun', async () => {
    const report = await parseJunit(
      `<testsuite name="S"><testcase classname="C" name="t">
         <failure message="first" type="AssertionError">trace 1</failure>
         <rerunFailure message="second" type="AssertionError"><stackTrace>trace 2</stackTrace></rerunFailure>
         <rerunFailure message="third" type="AssertionError"><stackTrace>trace 3</stackTrace></rerunFailure>
       </testcase></testsuite>`,
    );
    const result = only(report);
    expect(result).toMatchObject({
      status: 'failure',
      flaky: false,
      message: 'first',
      details: 'trace 1',
    });
    expect(result.attempts.map((a) => a.message)).toEqual(['first', 'second', 'third']);
    expect(result.comment).toMatch(/^3 attempts, final status: failure\nAttempt 1: failure/);
  });

  it('folds repeated testcases (retries) and keeps the raw element count', async () => {
    const report = await parseJunit(
      `<testsuite name="Flaky">
         <testcase classname="t.Foo" name="test_foo" time="1"><failure message="it failed"/></testcase>
         <testcase classname="t.Foo" name="test_foo" time="1"><error message="it broke"/></testcase>
         <testcase classname="t.Foo" name="test_foo" time="1"/>
         <testcase classname="t.Bar" name="test_foo" time="0.5"/>
       </testsuite>`,
    );
    expect(report.testcase_elements).toBe(4);
    expect(report.results.map((r) => [r.classname, r.status, r.flaky, r.attempts.length])).toEqual([
      ['t.Foo', 'passed', true, 3],
      ['t.Bar', 'passed', false, 1],
    ]);
    expect(report.totals).toMatchObject({ total: 2, passed: 2, flaky: 1 });
  });

  it('maps status="disabled" (tst) to skipped', async () => {
    const report = await parseJunit(
      `<testsuites><testsuite name="f"><testcase name="d" status="disabled"/></testsuite></testsuites>`,
    );
    expect(only(report).status).toBe('skipped');
  });

  it('decodes the XML built-in entities and numeric references', async () => {
    const report = await parseJunit(
      `<testsuite name="S"><testcase name="a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#233;&#x263A; &#60;">` +
        `<failure message="x &#x3C; y">1 &lt; 2 &#60; 3</failure></testcase></testsuite>`,
    );
    const result = only(report);
    expect(result.name).toBe('a <b> & "c" \'d\' é☺ <');
    expect(result.message).toBe('x < y');
    expect(result.details).toBe('1 < 2 < 3');
  });

  it('caps each captured text, notes the truncation and marks the result', async () => {
    const long = 'x'.repeat(5000);
    const report = await parseJunit(
      `<testsuite name="S"><testcase name="a"><failure message="m">${long}</failure>` +
        `<system-out>${long}</system-out><system-err>short</system-err></testcase>` +
        `<testcase name="b"><system-out>ok</system-out></testcase></testsuite>`,
      { maxTextChars: 1000 },
    );
    const [a, b] = report.results;
    expect(a?.details).toBe(`${'x'.repeat(1000)}\n[truncated: 4000 more characters not stored]`);
    expect(a?.system_out?.startsWith('x'.repeat(1000))).toBe(true);
    expect(a?.system_err).toBe('short');
    expect(a?.truncated).toBe(true);
    expect(b?.truncated).toBe(false);
    expect(report.truncated).toBe(true);
  });

  it('caps a long message attribute the same way', async () => {
    const report = await parseJunit(
      `<testsuite><testcase name="a"><failure message="${'m'.repeat(1500)}"/></testcase></testsuite>`,
      { maxTextChars: 1000 },
    );
    expect(only(report).message).toBe(
      `${'m'.repeat(1000)}\n[truncated: 500 more characters not stored]`,
    );
    expect(only(report).truncated).toBe(true);
  });

  it('stops storing text once the document budget is spent', async () => {
    const report = await parseJunit(
      `<testsuite name="S"><testcase name="a"><system-out>${'a'.repeat(300)}</system-out></testcase>` +
        `<testcase name="b"><system-out>${'b'.repeat(300)}</system-out></testcase></testsuite>`,
      { maxTotalTextChars: 400 },
    );
    const [a, b] = report.results;
    expect(a?.system_out).toBe('a'.repeat(300));
    expect(b?.system_out).toBe(`${'b'.repeat(100)}\n[truncated: 200 more characters not stored]`);
  });
});

describe('parseJunit: properties', () => {
  const doc = `<testsuites name="Root">
      <properties><property name="tms_preconditions" value="root"/><property name="automation_id" value="ROOT-ID"/><property name="java.class.path" value="not read"/></properties>
      <testsuite name="Outer">
        <properties>
          <property name="tms_preconditions" value="outer"/>
          <property name="tms_dataset_key" value="k1"/>
          <property name="   " value="nameless, skipped"/>
        </properties>
        <testcase classname="c" name="inherits">
        </testcase>
        <testsuite name="Inner">
          <properties><property name="tms_preconditions">  from text  </property></properties>
          <testcase classname="c" name="overrides">
            <properties>
              <property name="automation_id" value=" CASE-1 "/>
              <property name="tms_test_title" value="Nice title"/>
              <property name="tms_suite_path" value="Web/Auth"/>
              <property name="dataset_key" value="ignored: tms_dataset_key is inherited"/>
              <property name="tms_dataset_data" value='{"user":"bob"}'/>
            </properties>
          </testcase>
        </testsuite>
      </testsuite>
      <testsuite name="Late">
        <testcase classname="c" name="sees late properties"/>
        <properties><property name="tms_preconditions" value="late"/></properties>
      </testsuite>
    </testsuites>`;

  it('inherits root and suite properties; nested suites and testcases override; only recognised ones are kept', async () => {
    const report = await parseJunit(doc);
    const [inherits, overrides, late] = report.results;
    expect(inherits?.properties).toEqual({
      tms_preconditions: 'outer',
      automation_id: 'ROOT-ID',
      tms_dataset_key: 'k1',
    });
    expect(inherits).toMatchObject({ automation_id: 'ROOT-ID', title: 'inherits' });
    expect(inherits?.dataset).toEqual({ key: 'k1', name: null, data: null, source_ref: null });
    expect(overrides?.properties['tms_preconditions']).toBe('from text');
    expect(overrides).toMatchObject({
      automation_id: 'CASE-1',
      automation_id_property: 'CASE-1',
      title: 'Nice title',
      name: 'overrides',
      suite_path: ['Web', 'Auth'],
      dataset: { key: 'k1', data: { user: 'bob' } },
    });
    expect(late?.properties['tms_preconditions']).toBe('late');
    expect(late?.suite_path).toEqual(['Root', 'Late']);
  });

  it('shares one frozen properties object between the cases of a suite', async () => {
    const report = await parseJunit(
      `<testsuite name="S"><properties><property name="tms_steps" value="1"/></properties>` +
        `<testcase name="a"/><testcase name="b"/></testsuite>`,
    );
    const [a, b] = report.results;
    expect(a?.properties).toBe(b?.properties);
    expect(Object.isFrozen(a?.properties)).toBe(true);
  });
});

describe('parseJunit: nameless testcases (issue #22 defect 7: never dropped)', () => {
  const doc = `<testsuites><testsuite name="S">
      <testcase/><testcase name=""/><testcase name="   " classname="C"/><testcase name="ok"/>
    </testsuite></testsuites>`;

  it('keeps them under generated names and lists them', async () => {
    const report = await parseJunit(doc);
    expect(report.results.map((r) => [r.name, r.title, r.automation_id])).toEqual([
      ['(unnamed testcase 1)', '(unnamed testcase 1)', null],
      ['(unnamed testcase 2)', '(unnamed testcase 2)', null],
      ['C', 'C', null],
      ['ok', 'ok', null],
    ]);
    expect(report.testcase_elements).toBe(4);
    expect(report.ignored_testcases).toBe(0);
    expect(report.nameless_testcases).toEqual([
      {
        element_index: 0,
        name: '(unnamed testcase 1)',
        classname: null,
        suite_path: ['S'],
        line: 2,
        reason: NAMELESS_TESTCASE_REASON,
      },
      {
        element_index: 1,
        name: '(unnamed testcase 2)',
        classname: null,
        suite_path: ['S'],
        line: 2,
        reason: NAMELESS_TESTCASE_REASON,
      },
      {
        element_index: 2,
        name: 'C',
        classname: 'C',
        suite_path: ['S'],
        line: 2,
        reason: NAMELESS_TESTCASE_REASON,
      },
    ]);
  });

  it('counts them like any result: no-attributes.xml (pass, skip, failure, error)', async () => {
    const report = await parseJunit(
      `<testsuites><testsuite><testcase/><testcase><skipped/></testcase>` +
        `<testcase><failure/></testcase><testcase><error/></testcase></testsuite></testsuites>`,
    );
    expect(report.results.map((r) => [r.name, r.status, r.suite_path])).toEqual([
      ['(unnamed testcase 1)', 'passed', []],
      ['(unnamed testcase 2)', 'skipped', []],
      ['(unnamed testcase 3)', 'failure', []],
      ['(unnamed testcase 4)', 'error', []],
    ]);
    expect(report.totals).toMatchObject({ total: 4, passed: 1, skipped: 1, failure: 1, error: 1 });
  });

  it('numbers them per suite path and per classname, so that none folds into another', async () => {
    const report = await parseJunit(
      `<testsuites>
         <testsuite><testcase/></testsuite>
         <testsuite><testcase/></testsuite>
         <testsuite name="A"><testcase/><testcase name="" classname="k.C"><error/></testcase>
           <testcase name="" classname="k.C"/><testcase name="x" classname="k.C"/></testsuite>
         <testsuite name="B"><testcase/></testsuite>
       </testsuites>`,
    );
    expect(report.results.map((r) => [r.suite_path, r.name])).toEqual([
      [[], '(unnamed testcase 1)'],
      [[], '(unnamed testcase 2)'],
      [['A'], '(unnamed testcase 1)'],
      [['A'], 'k.C'],
      [['A'], 'k.C (unnamed testcase 2)'],
      [['A'], 'x'],
      [['B'], '(unnamed testcase 1)'],
    ]);
  });

  it('gives the same names to the same report (stable identity)', async () => {
    const [a, b] = await Promise.all([parseJunit(doc), parseJunit(Buffer.from(doc))]);
    expect(b.results.map((r) => r.name)).toEqual(a.results.map((r) => r.name));
  });

  it('takes tms_test_title and automation_id properties as for any testcase', async () => {
    const report = await parseJunit(
      `<testsuite name="S"><testcase classname="k.C"><properties>` +
        `<property name="automation_id" value="ID-1"/><property name="tms_test_title" value="Setup"/>` +
        `</properties><error message="@BeforeAll failed"/></testcase></testsuite>`,
    );
    expect(only(report)).toMatchObject({
      name: 'k.C',
      title: 'Setup',
      automation_id: 'ID-1',
      status: 'error',
    });
  });

  it.each(['<testcase/>', '<testcase name=""/>', '<testcase name="  "/>'])(
    'refuses %s with namelessTestcases: reject',
    async (testcase) => {
      const error = await refusal(`<testsuite name="S">${testcase}</testsuite>`, {
        namelessTestcases: 'reject',
      });
      expect(error.reason).toBe(NAMELESS_TESTCASE_REASON);
      expect(error.line).toBe(1);
    },
  );
});

describe('parseJunit: limits (issue #22 defect 1)', () => {
  const nested = (depth: number, inner = '<testcase name="deep"/>'): string =>
    `<testsuites>${'<testsuite name="s">'.repeat(depth)}${inner}${'</testsuite>'.repeat(depth)}</testsuites>`;

  it(`reads suites nested ${MAX_JUNIT_SUITE_DEPTH} deep, the path folded into 4 stored levels`, async () => {
    const report = await parseJunit(nested(MAX_JUNIT_SUITE_DEPTH));
    const path = only(report).suite_path;
    expect(path).toHaveLength(4);
    expect(path.slice(0, 3)).toEqual(['s', 's', 's']);
    expect(path[3]).toBe(
      Array(MAX_JUNIT_SUITE_DEPTH - 3)
        .fill('s')
        .join(' / '),
    );
  });

  it('folds deep paths exactly as they are stored', async () => {
    const report = await parseJunit(
      `<testsuite name="a"><testsuite name="b"><testsuite name="c"><testsuite name="d">` +
        `<testsuite name=" "><testsuite name="e"><testcase name="t"/></testsuite></testsuite>` +
        `</testsuite></testsuite></testsuite></testsuite>`,
    );
    expect(only(report).suite_path).toEqual(['a', 'b', 'c', 'd / e']);
  });

  it.each([MAX_JUNIT_SUITE_DEPTH + 1, 20_000])(
    'refuses suites nested %i deep quickly, naming the limit',
    async (depth) => {
      const started = Date.now();
      const error = await refusal(nested(depth));
      expect(error.reason).toBe(SUITE_DEPTH_REASON);
      expect(error.reason).toContain(String(MAX_JUNIT_SUITE_DEPTH));
      expect(Date.now() - started).toBeLessThan(2000);
    },
  );

  it('refuses any markup nested deeper than the element limit', async () => {
    const depth = MAX_JUNIT_ELEMENT_DEPTH;
    const error = await refusal(
      `<testsuite><testcase name="a"><failure>${'<b>'.repeat(depth)}${'</b>'.repeat(depth)}</failure></testcase></testsuite>`,
    );
    expect(error.reason).toBe(ELEMENT_DEPTH_REASON);
  });

  it('refuses an attribute value longer than the limit, however long', async () => {
    for (const length of [MAX_JUNIT_ATTRIBUTE_CHARS + 1, 3 * MAX_JUNIT_ATTRIBUTE_CHARS]) {
      const error = await refusal(
        `<testsuite><testcase name="${'n'.repeat(length)}"/></testsuite>`,
      );
      expect(error.reason).toBe(tooLongReason('attribute value'));
    }
    const report = await parseJunit(
      `<testsuite><testcase name="${'n'.repeat(MAX_JUNIT_ATTRIBUTE_CHARS)}"/></testsuite>`,
    );
    expect(only(report).name).toHaveLength(MAX_JUNIT_ATTRIBUTE_CHARS);
  });

  it('refuses an element with too many attributes', async () => {
    const attrs = Array.from({ length: 300 }, (_, i) => `a${i}="x"`).join(' ');
    const error = await refusal(`<testsuite><testcase name="a" ${attrs}/></testsuite>`);
    expect(error.reason).toBe(ATTRIBUTES_REASON);
  });

  it('refuses more testcases than the limit', async () => {
    const error = await refusal(
      `<testsuite>${'<testcase name="a"/>'.repeat(MAX_JUNIT_TESTCASES + 1)}</testsuite>`,
    );
    expect(error.reason).toBe(TESTCASES_REASON);
  });

  it('refuses more elements than the limit', async () => {
    const error = await refusal(`<testsuite>${'<x/>'.repeat(MAX_JUNIT_ELEMENTS)}</testsuite>`);
    expect(error.reason).toBe(ELEMENTS_REASON);
  });

  it('cuts a recognised property value at its limit and marks the report truncated', async () => {
    const report = await parseJunit(
      `<testsuite><properties><property name="automation_id" value="${'i'.repeat(5000)}"/>` +
        `<property name="tms_steps">${'s'.repeat(5000)}</property></properties>` +
        `<testcase name="a"/></testsuite>`,
    );
    const result = only(report);
    expect(result.automation_id_property).toBe('i'.repeat(MAX_JUNIT_PROPERTY_CHARS));
    expect(result.steps).toBe('s'.repeat(MAX_JUNIT_PROPERTY_CHARS));
    expect(report.truncated).toBe(true);
  });

  it('stores a 10 MB failure text cut at 64 Ki characters, with a note', async () => {
    const huge = 'f'.repeat(10 * 1024 * 1024);
    const report = await parseJunit(
      Buffer.from(
        `<testsuite><testcase name="a"><failure message="m">${huge}</failure></testcase></testsuite>`,
      ),
    );
    const result = only(report);
    expect(result.details).toBe(
      `${'f'.repeat(65_536)}\n[truncated: ${huge.length - 65_536} more characters not stored]`,
    );
    expect(result.truncated).toBe(true);
    expect(report.truncated).toBe(true);
  });
});

describe('parseJunit: refusals', () => {
  it.each([
    ['plain text', 'hello world'],
    ['JSON', '{"cases": []}'],
    ['unclosed root', '<testsuite name="S"><testcase name="a"/>'],
    ['mismatched tags', '<testsuite><testcase name="a"></testsuite></testcase>'],
    ['unquoted attribute', '<testsuite name=S/>'],
    [
      'unescaped & in text',
      '<testsuite><testcase name="a"><failure>a & b</failure></testcase></testsuite>',
    ],
    [
      'raw < in an attribute value',
      '<testsuite><testcase name="a" time="<<computed>>"/></testsuite>',
    ],
    ['two roots', '<testsuite/><testsuite/>'],
    ['text after the root', '<testsuite/>trailing'],
    ['bad comment', '<testsuite><!-- a -- b --></testsuite>'],
  ])('refuses malformed XML: %s', async (_label, doc) => {
    const error = await refusal(doc);
    expect(error.reason).not.toBe(UNSUPPORTED_ROOT_REASON);
    expect(error.reason.length).toBeGreaterThan(0);
  });

  it('gives the position of a syntax error', async () => {
    const error = await refusal('<testsuite>\n  <testcase name="a">\n</testsuite>');
    expect(error.reason).toMatch(/^malformed XML: /);
    expect(error.line).toBe(3);
  });

  it.each([
    ['<html><body/></html>'],
    ['<testcase name="a"/>'],
    ['<TestSuites/>'],
    ['<?xml version="1.0"?><!-- comment --><report/>'],
  ])('refuses an unsupported root: %s', async (doc) => {
    expect((await refusal(doc)).reason).toBe(UNSUPPORTED_ROOT_REASON);
  });

  it.each([[''], ['   \n\t '], ['<?xml version="1.0"?>'], ['<!-- only a comment -->']])(
    'refuses a document without root element: %j',
    async (doc) => {
      expect((await refusal(doc)).reason).toBe(NO_ROOT_REASON);
    },
  );

  it('refuses a plain DOCTYPE', async () => {
    const error = await refusal('<?xml version="1.0"?>\n<!DOCTYPE testsuite>\n<testsuite/>');
    expect(error.reason).toBe(DECLARATION_REASON);
  });

  it('refuses the billion laughs without expanding anything', async () => {
    const laughs = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE lolz [',
      ' <!ENTITY lol "lol">',
      ...Array.from(
        { length: 9 },
        (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
      ),
      ']>',
      '<testsuite name="&lol9;"><testcase name="&lol9;"/></testsuite>',
    ].join('\n');
    const error = await refusal(laughs);
    expect(error.reason).toBe(DECLARATION_REASON);
  });

  it('refuses an external entity (XXE)', async () => {
    const xxe = `<?xml version="1.0"?>
      <!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
      <testsuite name="S"><testcase name="&xxe;"/></testsuite>`;
    expect((await refusal(xxe)).reason).toBe(DECLARATION_REASON);
  });

  it('refuses an external DTD', async () => {
    const doc = '<!DOCTYPE testsuite SYSTEM "http://example.com/junit.dtd"><testsuite/>';
    expect((await refusal(doc)).reason).toBe(DECLARATION_REASON);
  });

  it('refuses <!ENTITY> and other declarations outside a DOCTYPE', async () => {
    expect((await refusal('<testsuite><!ENTITY x "y"></testsuite>')).reason).toBe(
      DECLARATION_REASON,
    );
    expect((await refusal('<!ELEMENT testsuite ANY><testsuite/>')).reason).toBe(DECLARATION_REASON);
  });

  it('accepts declaration-like text inside CDATA, comments and attribute values', async () => {
    const report = await parseJunit(
      `<!-- <!DOCTYPE x> <!ENTITY y "z"> --><testsuite name="&lt;!DOCTYPE">` +
        `<testcase name="html"><system-out><![CDATA[<!DOCTYPE html><!ENTITY a "b">]]></system-out>` +
        `</testcase></testsuite>`,
    );
    expect(report.name).toBe('<!DOCTYPE');
    expect(only(report).system_out).toBe('<!DOCTYPE html><!ENTITY a "b">');
  });

  it('refuses a DOCTYPE inside the root', async () => {
    await expect(parseJunit('<testsuite><!DOCTYPE x></testsuite>')).rejects.toBeInstanceOf(
      JunitParseError,
    );
  });

  it('refuses a DOCTYPE as soon as it starts, without reading the rest of the stream', async () => {
    let pulled = 0;
    function* endlessDtd(): Generator<Buffer> {
      yield Buffer.from('<?xml version="1.0"?>\n<!DOCTYPE testsuite [\n');
      for (;;) {
        pulled += 1;
        yield Buffer.from(`<!ENTITY e${pulled} "${'x'.repeat(1000)}">\n`.repeat(100));
      }
    }
    const error = await refusal(Readable.from(endlessDtd()));
    expect(error.reason).toBe(DECLARATION_REASON);
    expect(pulled).toBeLessThan(5);
  });

  it('refuses a DOCTYPE split over one-byte chunks', async () => {
    const doc = '<!DOCTYPE testsuite [<!ENTITY a "b">]><testsuite name="&a;"/>';
    expect((await refusal(chunked(doc, 1))).reason).toBe(DECLARATION_REASON);
  });

  it.each([
    ['an HTML entity', '<testsuite name="a&nbsp;b"/>'],
    [
      'an undeclared entity in text',
      '<testsuite><testcase name="a"><failure>&lol;</failure></testcase></testsuite>',
    ],
    ['&xxe; without declaration', '<testsuite><testcase name="&xxe;"/></testsuite>'],
    ['a reference to a forbidden character', '<testsuite name="&#0;"/>'],
    ['a reference to a control character', '<testsuite name="&#x1b;"/>'],
  ])('refuses %s', async (_label, doc) => {
    expect((await refusal(doc)).reason).toMatch(/^malformed XML: Invalid character entity/);
  });

  it('refuses bytes that are not valid UTF-8', async () => {
    const bytes = Buffer.concat([
      Buffer.from('<testsuite name="'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"/>'),
    ]);
    expect((await refusal(bytes)).reason).toMatch(/^invalid byte sequence for encoding utf-8/);
  });

  it('refuses an encoding it cannot decode', async () => {
    const doc = Buffer.from('<?xml version="1.0" encoding="klingon-8"?><testsuite/>');
    expect((await refusal(doc)).reason).toBe('unsupported encoding "klingon-8"');
  });

  it('JunitParseError carries reason and position', async () => {
    const error = await refusal('<html/>');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('JunitParseError');
    expect(error.reason).toBe(UNSUPPORTED_ROOT_REASON);
    expect(error.line).toBe(1);
    expect(error.message).toBe(`${UNSUPPORTED_ROOT_REASON} (line 1, column 7)`);
  });
});

describe('parseJunit: input forms and encodings', () => {
  const doc = `${XML_DECL}<testsuite name="Ünïcödé ☺"><testcase name="日本語テスト 𠀋"><system-out>ok</system-out></testcase></testsuite>`;

  it('gives the same result for a string, a Buffer and a stream split inside characters', async () => {
    const fromString = await parseJunit(doc);
    const fromBuffer = await parseJunit(Buffer.from(doc, 'utf8'));
    const fromStream = await parseJunit(chunked(doc, 1));
    const fromUtf8Stream = await parseJunit(Readable.from([doc]));
    for (const report of [fromBuffer, fromStream, fromUtf8Stream]) {
      expect(report.results).toEqual(fromString.results);
      expect(report.name).toBe('Ünïcödé ☺');
    }
    expect(only(fromString).name).toBe('日本語テスト 𠀋');
  });

  it('skips a UTF-8 byte order mark (buffer, stream and string)', async () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(doc, 'utf8')]);
    expect(only(await parseJunit(withBom)).name).toBe('日本語テスト 𠀋');
    expect(only(await parseJunit(chunked(withBom, 2))).name).toBe('日本語テスト 𠀋');
    expect(only(await parseJunit(`\uFEFF${doc}`)).name).toBe('日本語テスト 𠀋');
  });

  it('decodes UTF-16 with a byte order mark', async () => {
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(doc.replace('UTF-8', 'UTF-16'), 'utf16le'),
    ]);
    expect(only(await parseJunit(chunked(utf16, 7))).name).toBe('日本語テスト 𠀋');
  });

  it('decodes a declared single-byte encoding', async () => {
    const latin1 = Buffer.from(
      '<?xml version="1.0" encoding="ISO-8859-1"?><testsuite name="caf\u00e9"><testcase name="\u00fcber"/></testsuite>',
      'latin1',
    );
    const report = await parseJunit(latin1);
    expect(report.name).toBe('café');
    expect(only(report).name).toBe('über');
  });

  it('handles CDATA split over chunks and CDATA mixed with text', async () => {
    const text = `<testsuite><testcase name="a"><failure>before <![CDATA[<b>&amp;</b> ]]]]><![CDATA[> ]]>after</failure></testcase></testsuite>`;
    expect(only(await parseJunit(chunked(text, 3))).details).toBe('before <b>&amp;</b> ]]> after');
  });

  it('replaces characters XML forbids (raw control characters) instead of storing them', async () => {
    const report = await parseJunit(
      '<testsuite><testcase name="a"><system-out>\u001b[31mred\u0000</system-out></testcase></testsuite>',
    );
    expect(only(report).system_out).toBe('\uFFFD[31mred\uFFFD');
  });

  it('rethrows stream errors as they are', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('disk on fire'));
      },
    });
    await expect(parseJunit(broken)).rejects.toThrow('disk on fire');
  });
});

describe('parseJunit: a large streamed document', () => {
  it('parses 20,000 testcases from a stream with the expected counts', async () => {
    const suites = 200;
    const perSuite = 100;
    function* generate(): Generator<Buffer> {
      yield Buffer.from(`${XML_DECL}<testsuites name="big">\n`);
      for (let s = 0; s < suites; s++) {
        let chunk = `<testsuite name="suite.${s}"><properties><property name="tms_preconditions" value="${s}"/></properties>\n`;
        for (let i = 0; i < perSuite; i++) {
          const n = s * perSuite + i;
          chunk += `<testcase classname="pkg.Suite${s}" name="test_${n}" time="0.01">`;
          if (n % 10 === 0)
            chunk += `<failure message="boom ${n}"><![CDATA[trace ${n}]]></failure>`;
          else if (n % 25 === 1) chunk += '<skipped/>';
          chunk += `<system-out>out ${n}</system-out></testcase>\n`;
        }
        yield Buffer.from(`${chunk}</testsuite>\n`);
      }
      // a retry of the first testcase that passes
      yield Buffer.from(
        '<testsuite name="suite.0"><testcase classname="pkg.Suite0" name="test_0"/></testsuite>\n</testsuites>\n',
      );
    }
    const report = await parseJunit(Readable.from(generate()));
    expect(report.testcase_elements).toBe(20_001);
    expect(report.suites).toBe(201);
    expect(report.results).toHaveLength(20_000);
    expect(report.totals).toEqual({
      passed: 20_000 - 2_000 - 800 + 1,
      failure: 1_999,
      error: 0,
      skipped: 800,
      xfailed: 0,
      xpassed: 0,
      total: 20_000,
      flaky: 1,
    });
    expect(report.results[0]).toMatchObject({ name: 'test_0', status: 'passed', flaky: true });
    expect(report.results[19_999]).toMatchObject({
      name: 'test_19999',
      suite_path: ['big', 'suite.199'],
      system_out: 'out 19999',
      properties: { tms_preconditions: '199' },
    });
  });
});

describe('parseJunit: what a parsed report keeps alive', () => {
  /**
   * Parses the report `generate` streams, and measures the heap its result keeps reachable (the
   * collector run before and after, `--expose-gc` given at run time).
   */
  async function parseAndMeasure(
    generate: () => Generator<Buffer>,
  ): Promise<{ report: ParsedReport; kept: number }> {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    const report = await parseJunit(Readable.from(generate()));
    gc();
    return { report, kept: process.memoryUsage().heapUsed - before };
  }

  it('keeps the texts it stores, not the chunks of the report they were read from', async () => {
    const testcases = 2_000;
    // Each testcase arrives in a chunk of its own with 8 KB of comment the parser skips: the
    // report is about 16 MB of text, what a result stores well under 1 KB of it. A stored text that
    // were a view of its chunk (V8 keeps a substring of 13 or more characters as one) would keep
    // all the chunks, the whole report, reachable.
    const padding = `<!-- ${'x'.repeat(8192)} -->\n`;
    let chars = 0;
    const { report, kept } = await parseAndMeasure(function* () {
      yield Buffer.from(`${XML_DECL}<testsuite name="s">\n`);
      for (let i = 0; i < testcases; i++) {
        const chunk =
          `<testcase classname="pkg.Memory" name="test_${i}"><failure message="boom ${i}">` +
          `stack trace of test ${i}, long enough to be a view</failure>` +
          `<system-out>output of test ${i}, long enough as well</system-out></testcase>${padding}`;
        chars += chunk.length;
        yield Buffer.from(chunk);
      }
      yield Buffer.from('</testsuite>\n');
    });

    expect(report.results).toHaveLength(testcases);
    expect(report.results[testcases - 1]).toMatchObject({
      details: `stack trace of test ${testcases - 1}, long enough to be a view`,
      system_out: `output of test ${testcases - 1}, long enough as well`,
    });
    expect(chars).toBeGreaterThan(16_000_000);
    // The results themselves take about 2 MB; the chunks would add their 16 MB (19 MB measured).
    expect(kept).toBeLessThan(chars / 2);
  });

  it('keeps one string for a classname or a file that many testcases repeat', async () => {
    const testcases = 5_000;
    // Long values, so that a string per testcase would show: 5,000 × 2 × 2,000 characters.
    const classname = `pkg.${'Deep'.repeat(499)}`;
    const file = `src/${'dir/'.repeat(499)}`;
    const { report, kept } = await parseAndMeasure(function* () {
      yield Buffer.from(`${XML_DECL}<testsuite name="s">\n`);
      for (let i = 0; i < testcases; i++) {
        yield Buffer.from(`<testcase classname="${classname}" file="${file}" name="test_${i}"/>\n`);
      }
      yield Buffer.from('</testsuite>\n');
    });

    expect(report.results).toHaveLength(testcases);
    expect(report.results[testcases - 1]).toMatchObject({ classname, file, name: 'test_4999' });
    expect(report.results[0].automation_id).toBe(`${classname}.test_0`);
    // A string per testcase would be 20 MB (one-byte characters; 22.5 MB measured).
    expect(kept).toBeLessThan(5_000_000);
  });
});

describe('isBlank', () => {
  it.each([
    ['', true],
    ['  \n\t\r ', true],
    ['\uFEFF  ', true],
    [' <', false],
  ])('string %j → %s', (input, expected) => {
    expect(isBlank(input)).toBe(expected);
    expect(isBlank(Buffer.from(input, 'utf8'))).toBe(expected);
  });

  it('treats a lone BOM as blank and other bytes as content', () => {
    expect(isBlank(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(true);
    expect(isBlank(Buffer.from([0x00]))).toBe(false);
  });
});

describe('parseTimestamp', () => {
  it.each([
    ['2024-01-21T08:17:32', '2024-01-21T08:17:32.000Z'],
    ['2020-09-04T16:18:04.966371', '2020-09-04T16:18:04.966Z'],
    ['2024-01-21T08:17:32Z', '2024-01-21T08:17:32.000Z'],
    ['2025-11-15T11:51:49.548396-05:00', '2025-11-15T16:51:49.548Z'],
    ['2024-01-21T08:17:32+0130', '2024-01-21T06:47:32.000Z'],
    ['2024-01-21 08:17', '2024-01-21T08:17:00.000Z'],
    ['2024-01-21', '2024-01-21T00:00:00.000Z'],
    // Years below 100 are years below 100 (Date.UTC would read 0050 as 1950).
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
    ['9999-12-31T23:00:00+05:00', '9999-12-31T18:00:00.000Z'],
  ])('%j → %s', (input, expected) => {
    expect(parseTimestamp(input)?.toISOString()).toBe(expected);
  });

  it.each([
    '',
    'yesterday',
    '2024-02-31T00:00:00',
    '2024-13-01',
    '2024-01-01T25:00:00',
    null,
    // Outside years 1..9999 once the offset is applied.
    '0000-06-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:00:00-05:00',
  ])('%j → null', (input) => {
    expect(parseTimestamp(input)).toBeNull();
  });
});
