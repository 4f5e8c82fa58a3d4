import { importHelpers } from '../support/import-fixture';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

/**
 * Issue #22, defects 1 and 7, end to end: a report past a parser limit is a 422 naming the limit
 * that leaves the process healthy; a very long failure text is stored cut with a note and a warning;
 * testcases without a usable name are imported under stable generated names, never dropped and never
 * refusing the report.
 */
describe('JUnit import: limits and nameless testcases (issue #22)', () => {
  let t: TestApp;
  let f: RoleFixture;
  const { newProject, createRun, snapshot, rowsOfRun } = importHelpers(() => ({ t, f }));

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  const runUrl = (runId: string, query = ''): string =>
    `/api/v1/test-runs/${runId}/imports/junit${query}`;
  const projectUrl = (projectId: string, query = ''): string =>
    `/api/v1/projects/${projectId}/imports/junit${query}`;
  const upload = (url: string, content: Buffer, name = 'report.xml') =>
    t.req('post', url, f.tester.token).attach('file', content, name);

  /** The 640 KB document of the issue: 20,000 nested suites. */
  const nestedSuites = (depth: number): Buffer =>
    Buffer.from(
      `<testsuites>${'<testsuite name="s">'.repeat(depth)}<testcase name="t"/>${'</testsuite>'.repeat(depth)}</testsuites>`,
    );

  describe('defect 1: a report past a limit is refused quickly and the process stays healthy', () => {
    it('refuses 20,000 nested suites (dry run and real, run and project level) naming the depth limit', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const doc = nestedSuites(20_000);
      for (const url of [
        runUrl(runId, '?dry_run=true'),
        runUrl(runId, '?create_missing_cases=true'),
        projectUrl(projectId, '?dry_run=true'),
        projectUrl(projectId, '?create_missing_cases=true'),
      ]) {
        const started = Date.now();
        const res = await upload(url, doc);
        const body = expectProblem(res, 422, 'invalid_junit_xml');
        expect((body.errors as { file: string[] }).file[0]).toMatch(
          /^testsuite elements nested more than 64 levels deep \(limit: 64\)/,
        );
        expect(Date.now() - started).toBeLessThan(5000);
      }
      expect(await snapshot(projectId, runId)).toEqual(before);
      // The process is healthy: the next requests are answered as usual.
      const health = await t.req('get', '/readyz');
      expect(health.status).toBe(200);
      const ok = await upload(
        runUrl(runId, '?create_missing_cases=true'),
        nestedSuites(64),
        'deep-ok.xml',
      );
      expect(ok.status).toBe(201);
      expect(ok.body.created_cases).toEqual([
        expect.objectContaining({
          title: 't',
          suite_path: ['s', 's', 's', Array(61).fill('s').join(' / ')],
        }),
      ]);
    });

    it.each([
      [
        'an attribute value over 65,536 characters (a 10 MB message)',
        `<testsuite><testcase name="a"><failure message="${'m'.repeat(10 * 1024 * 1024)}"/></testcase></testsuite>`,
        'attribute value longer than 65536 characters (limit: 65536)',
      ],
      [
        'markup nested deeper than 256 elements',
        `<testsuite><testcase name="a"><failure>${'<b>'.repeat(300)}${'</b>'.repeat(300)}</failure></testcase></testsuite>`,
        'elements nested more than 256 levels deep (limit: 256)',
      ],
      [
        'an element with more than 256 attributes',
        `<testsuite><testcase name="a" ${Array.from({ length: 300 }, (_, i) => `a${i}="x"`).join(' ')}/></testsuite>`,
        'more than 256 attributes on one element (limit: 256)',
      ],
    ])('refuses %s with 422 naming the limit', async (_label, doc, reason) => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const res = await upload(runUrl(runId, '?create_missing_cases=true'), Buffer.from(doc));
      const body = expectProblem(res, 422, 'invalid_junit_xml');
      expect((body.errors as { file: string[] }).file[0]).toMatch(
        new RegExp(`^${reason.replace(/[()]/g, '\\$&')}`),
      );
      expect(await snapshot(projectId, runId)).toEqual(before);
    });

    it('refuses a results JSON nested 20,000 deep naming the limit, then serves the next request', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const doc = `{"cases":[{"name":"a","status":"passed","dataset_data":${'['.repeat(20_000)}${']'.repeat(20_000)}}]}`;
      const res = await upload(runUrl(runId, '?dry_run=true'), Buffer.from(doc), 'r.json');
      const body = expectProblem(res, 422, 'invalid_tms_results_json');
      expect((body.errors as { file: string[] }).file).toEqual([
        'nesting deeper than 64 levels (limit: 64)',
      ]);
      const next = await upload(
        runUrl(runId, '?dry_run=true'),
        Buffer.from('{"cases":[{"name":"a","status":"passed"}]}'),
        'r.json',
      );
      expect(next.status).toBe(201);
    });

    it('stores a 10 MB failure text cut at 65,536 characters with a note, and warns', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const huge = 'x'.repeat(10 * 1024 * 1024);
      const doc = Buffer.from(
        `<testsuite name="S"><testcase classname="k.C" name="big"><failure message="boom">${huge}</failure></testcase>` +
          `<testcase classname="k.C" name="small"/></testsuite>`,
      );
      const res = await upload(runUrl(runId, '?create_missing_cases=true'), doc);
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({ total_cases: 2, updated: 2, warnings: 1 });
      expect(res.body.warnings).toEqual([
        {
          testcase_name: 'big',
          testcase_classname: 'k.C',
          automation_id: 'k.C.big',
          reason: expect.stringMatching(/^text cut at the size limit \(65536 characters per text/),
        },
      ]);
      const rows = await rowsOfRun(runId);
      const big = rows.find((r) => r.title === 'big');
      const note = `\n[truncated: ${huge.length - 65_536} more characters not stored]`;
      expect(big?.comment).toBe(`boom\n\n${'x'.repeat(65_536)}${note}`);
      expect(big?.item_comment).toBe(big?.comment);
      expect(big?.status).toBe('failure');
    });
  });

  describe('defect 7: a testcase without a usable name is imported, counted and listed', () => {
    /** publish-unit-test-result-action's `no-attributes.xml`: pass, skip, failure, error. */
    const noAttributes = Buffer.from(
      `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
    <testsuite>
        <testcase/>
        <testcase>
            <skipped/>
        </testcase>
        <testcase>
            <failure/>
        </testcase>
        <testcase>
            <error/>
        </testcase>
    </testsuite>
</testsuites>`,
    );

    it('imports the 4 nameless testcases of no-attributes.xml with generated names and warnings', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const url = runUrl(runId, '?create_missing_cases=true');
      const dry = await upload(
        runUrl(runId, '?create_missing_cases=true&dry_run=true'),
        noAttributes,
      );
      expect(dry.status).toBe(201);
      expect(dry.body.summary).toMatchObject({
        total_cases: 4,
        created_test_cases: 4,
        warnings: 4,
      });

      const res = await upload(url, noAttributes, 'no-attributes.xml');
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 4,
        created_test_cases: 4,
        updated: 4,
        unmatched: 0,
        ignored: 0,
        warnings: 4,
      });
      expect(res.body.statuses).toMatchObject({ passed: 1, skipped: 1, failure: 1, error: 1 });
      expect(res.body.warnings).toEqual(
        [4, 5, 8, 11].map((line, i) => ({
          testcase_name: `(unnamed testcase ${i + 1})`,
          testcase_classname: null,
          automation_id: null,
          reason: `testcase without a name: imported under a generated name (line ${line})`,
        })),
      );
      const rows = await rowsOfRun(runId);
      expect(rows.map((r) => [r.title, r.status])).toEqual([
        ['(unnamed testcase 1)', 'passed'],
        ['(unnamed testcase 2)', 'skipped'],
        ['(unnamed testcase 3)', 'failure'],
        ['(unnamed testcase 4)', 'error'],
      ]);
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      expect(run.body.summary).toMatchObject({
        total: 4,
        passed: 1,
        skipped: 1,
        failure: 1,
        error: 1,
      });

      // Stable names: the same report imported again matches the same cases, at both levels.
      const again = await upload(url, noAttributes, 'no-attributes.xml');
      expect(again.body.summary).toMatchObject({
        created_test_cases: 0,
        matched_by_name: 4,
        updated: 4,
      });
      const projectLevel = await upload(
        projectUrl(projectId, '?create_missing_cases=true'),
        noAttributes,
        'no-attributes.xml',
      );
      expect(projectLevel.status).toBe(201);
      expect(projectLevel.body.summary).toMatchObject({ created_test_cases: 0, updated: 4 });
    });

    it('imports a Surefire report whose @BeforeAll failed (name="") under the classname', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const surefire = Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" name="com.example.FooTest" time="0.012" tests="1" errors="1" skipped="0" failures="0">
  <properties><property name="java.version" value="21"/></properties>
  <testcase name="" classname="com.example.FooTest" time="0.012">
    <error message="setup failed" type="java.lang.IllegalStateException">java.lang.IllegalStateException: setup failed
	at com.example.FooTest.setUp(FooTest.java:12)</error>
  </testcase>
</testsuite>`,
      );
      for (const url of [
        runUrl(runId, '?dry_run=true'),
        projectUrl(projectId, '?dry_run=true&create_missing_cases=true'),
      ]) {
        const dry = await upload(url, surefire, 'TEST-com.example.FooTest.xml');
        expect(dry.status).toBe(201);
        expect(dry.body.summary).toMatchObject({ total_cases: 1, warnings: 1 });
      }
      const res = await upload(
        runUrl(runId, '?create_missing_cases=true'),
        surefire,
        'TEST-com.example.FooTest.xml',
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({ total_cases: 1, created_test_cases: 1, updated: 1 });
      expect(res.body.statuses).toMatchObject({ error: 1 });
      expect(res.body.warnings).toEqual([
        {
          testcase_name: 'com.example.FooTest',
          testcase_classname: 'com.example.FooTest',
          automation_id: null,
          reason: 'testcase without a name: imported under a generated name (line 4)',
        },
      ]);
      const rows = await rowsOfRun(runId);
      expect(rows).toEqual([
        expect.objectContaining({
          title: 'com.example.FooTest',
          automation_id: null,
          status: 'error',
          comment: expect.stringMatching(/^setup failed\n\njava\.lang\.IllegalStateException/),
        }),
      ]);
    });
  });
});
