import { createHash } from 'node:crypto';
import { fixture, importHelpers } from '../support/import-fixture';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

/**
 * Karvio results JSON through the JUnit import endpoints (CONTRACT §6, reference
 * runs-imports-plans.md §4.1 and §4.5): sniffed from the content, then matched, created and applied
 * exactly like a JUnit XML report.
 */
const json = (doc: unknown): Buffer => Buffer.from(JSON.stringify(doc));
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe('JUnit import endpoints: Karvio results JSON (reference §4.5)', () => {
  let t: TestApp;
  let f: RoleFixture;
  const { newProject, createRun, createCase, addToRun, snapshot, rowsOfRun } = importHelpers(
    () => ({ t, f }),
  );

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  function importInto(runId: string, file: Buffer, name = 'report.json', query = '') {
    return t
      .req('post', `/api/v1/test-runs/${runId}/imports/junit${query}`, f.tester.token)
      .attach('file', file, name);
  }

  async function casesOf(projectId: string): Promise<Array<Record<string, unknown>>> {
    return t.db.query(
      `SELECT tc.key, tc.title, tc.automation_id, tc.status, tc.test_case_type, tc.tags, tc.steps,
              tc.preconditions, s.name AS suite, p.name AS parent
         FROM test_cases tc LEFT JOIN suites s ON s.id = tc.suite_id LEFT JOIN suites p ON p.id = s.parent_id
        WHERE tc.project_id = $1 ORDER BY tc.key_number`,
      [projectId],
    );
  }

  describe('matching existing cases', () => {
    let projectId: string;
    let runId: string;
    let body: Buffer;
    let res: { status: number; body: Record<string, unknown> };

    beforeAll(async () => {
      projectId = await newProject();
      runId = await createRun(projectId);
      const ids = [
        await createCase(projectId, { title: 'Login works', automation_id: 'AUTH-LOGIN-1' }),
        await createCase(projectId, { title: 'Logout works' }),
        await createCase(projectId, { title: 'Token refresh' }),
        await createCase(projectId, { title: 'Invoice pdf' }),
        await createCase(projectId, { title: 'Known bug' }),
        await createCase(projectId, { title: 'Fixed bug' }),
      ];
      await addToRun(runId, ids);
      body = json({
        format: 'karvio-results',
        version: 1,
        run_name: 'Ignored at run level',
        cases: [
          {
            name: 'test_login_works',
            classname: 'tests.auth.LoginTest',
            automation_id: 'AUTH-LOGIN-1',
            status: 'passed',
            duration_ms: 1500,
            system_out: '  logged in  ',
          },
          {
            name: 'test_logout_works',
            status: 'failure',
            duration_ms: 500,
            message: 'logout failed',
            details: 'Traceback: boom',
          },
          {
            name: 'test_token_refresh',
            status: 'error',
            message: 'connection reset',
            system_err: 'warning: retry',
          },
          { name: 'test_invoice_pdf', status: 'skipped', message: 'later' },
          { name: 'known_bug', status: 'xfailed', details: 'expected to fail' },
          {
            name: 'fixed_bug',
            title: 'Fixed bug',
            status: 'xpassed',
            dataset_key: 'env:prod',
            dataset_name: 'Production',
          },
        ],
      });
      res = await importInto(runId, body, 'results.json');
    });

    it('answers 201 with the summary, the six statuses counted, and the file recorded as sent', () => {
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        test_run_id: runId,
        target_run: { id: runId, match_mode: 'existing' },
        source_filename: 'results.json',
        size_bytes: body.length,
        sha256: createHash('sha256').update(body).digest('hex'),
        dry_run: false,
        status: 'completed',
        summary: {
          total_cases: 6,
          matched_by_automation_id: 1,
          matched_by_name: 5,
          created_test_cases: 0,
          updated: 6,
          unmatched: 0,
          ambiguous: 0,
          errors: 0,
          ignored: 0,
        },
        statuses: { passed: 1, failure: 1, error: 1, skipped: 1, xfailed: 1, xpassed: 1, flaky: 0 },
        created_cases: [],
        unmatched_cases: [],
        ambiguous_cases: [],
      });
    });

    it('writes each status, comment, duration and output to the rows, and starts the run', async () => {
      const rows = await rowsOfRun(runId);
      expect(
        rows.map((r) => [
          r.title,
          r.scenario_label,
          r.status,
          r.item_status,
          r.comment,
          r.duration_ms,
          r.system_out,
          r.system_err,
          r.execution_count,
        ]),
      ).toEqual([
        ['Login works', 'test_login_works', 'passed', 'passed', null, 1500, 'logged in', null, 1],
        [
          'Logout works',
          'test_logout_works',
          'failure',
          'failure',
          'logout failed\n\nTraceback: boom',
          500,
          null,
          null,
          1,
        ],
        [
          'Token refresh',
          'test_token_refresh',
          'error',
          'error',
          'connection reset',
          null,
          null,
          'warning: retry',
          1,
        ],
        ['Invoice pdf', 'test_invoice_pdf', 'skipped', 'skipped', 'later', null, null, null, 1],
        ['Known bug', 'known_bug', 'xfailed', 'xfailed', 'expected to fail', null, null, null, 1],
        ['Fixed bug', 'Production', 'xpassed', 'xpassed', null, null, null, null, 1],
      ]);
      expect(rows[1]).toMatchObject({
        item_comment: 'logout failed\n\nTraceback: boom',
        executed_by_id: f.tester.id,
      });
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      expect(run.body).toMatchObject({ status: 'in_progress', started_at: expect.any(String) });
    });

    it('records the import with its file name, size and SHA-256', async () => {
      const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
      expect(list.body.total).toBe(1);
      expect(list.body.items[0]).toMatchObject({
        id: res.body.id,
        file_name: 'results.json',
        size_bytes: body.length,
        sha256: res.body.sha256,
        statuses: { xfailed: 1, xpassed: 1 },
      });
    });
  });

  it('a dataset name without a key names the row: two parametrisations are two rows, not a folded retry (reference §4.10)', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    await addToRun(runId, [await createCase(projectId, { title: 'Checkout' })]);
    const json = {
      cases: [
        { name: 'checkout', status: 'failure', dataset_name: 'Chrome', message: 'boom' },
        { name: 'checkout', status: 'passed', dataset_name: 'Firefox' },
      ],
    };
    const res = await importInto(runId, Buffer.from(JSON.stringify(json)));
    expect(res.status).toBe(201);
    expect(res.body.flaky_cases).toEqual([]);
    const rows = await rowsOfRun(runId);
    expect(rows.map((r) => [r.scenario_label, r.status])).toEqual([
      ['Chrome', 'failure'],
      ['Firefox', 'passed'],
    ]);
    // The JUnit property alone labels the row too.
    const xml = `<testsuite name="s"><testcase name="checkout"><properties><property name="tms_dataset_name" value="Safari"/></properties></testcase></testsuite>`;
    expect((await importInto(runId, Buffer.from(xml), 'r.xml')).status).toBe(201);
    expect((await rowsOfRun(runId)).map((r) => r.scenario_label)).toContain('Safari');
  });

  it("a created case's step holds at most 10,000 characters of steps and assertions, so it can be sent back", async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const doc = {
      cases: [
        {
          name: 'long steps',
          status: 'passed',
          steps: 's'.repeat(20_000),
          assertions: 'a'.repeat(20_000),
        },
      ],
    };
    const res = await importInto(
      runId,
      Buffer.from(JSON.stringify(doc)),
      'r.json',
      '?create_missing_cases=true',
    );
    expect(res.status).toBe(201);
    const created = (res.body.created_cases as Array<{ id: string }>)[0];
    const got = await t.req('get', `/api/v1/test-cases/${created.id}`, f.viewer.token);
    const steps = got.body.steps as Array<{ action: string; expected: string }>;
    expect([steps[0].action.length, steps[0].expected.length]).toEqual([10_000, 10_000]);
    const again = await t
      .req('patch', `/api/v1/test-cases/${created.id}`, f.tester.token)
      .send({ steps: got.body.steps });
    expect(again.status).toBe(200);
  });

  describe('creating missing cases', () => {
    let projectId: string;
    let runId: string;
    const report = json({
      cases: [
        {
          name: 'test_login',
          classname: 'tests.auth.LoginTest',
          suite_path: ['Nightly', 'auth'],
          steps: 'open the login page',
          preconditions: 'a user exists',
          status: 'passed',
        },
        {
          name: 'test_pay',
          classname: 'tests.billing.PayTest',
          automation_id: 'PAY-1',
          title: 'Pay by card',
          suite_path: ['Nightly', 'billing'],
          status: 'failure',
          message: 'declined',
        },
        { name: 'lonely check', status: 'skipped' },
      ],
    });
    let first: { status: number; body: Record<string, unknown> };

    beforeAll(async () => {
      projectId = await newProject();
      runId = await createRun(projectId);
      first = await importInto(runId, report, 'r.json', '?create_missing_cases=true');
    });

    it('creates the cases with the stable identity (automation_id, else <classname>.<name>)', async () => {
      expect(first.status).toBe(201);
      expect(first.body.summary).toMatchObject({
        total_cases: 3,
        created_test_cases: 3,
        // created cases are counted once, as created (issue #24 §8)
        matched_by_automation_id: 0,
        matched_by_name: 0,
        updated: 3,
      });
      const created = first.body.created_cases as Array<Record<string, unknown>>;
      expect(created.map((c) => [c.key, c.title, c.automation_id, c.suite_path])).toEqual([
        ['TC-1', 'test_login', 'tests.auth.LoginTest.test_login', ['Nightly', 'auth']],
        ['TC-2', 'Pay by card', 'PAY-1', ['Nightly', 'billing']],
        ['TC-3', 'lonely check', null, []],
      ]);
      const cases = await casesOf(projectId);
      expect(cases).toEqual([
        expect.objectContaining({
          key: 'TC-1',
          automation_id: 'tests.auth.LoginTest.test_login',
          suite: 'auth',
          parent: 'Nightly',
          preconditions: 'a user exists',
          steps: [expect.objectContaining({ action: 'open the login page' })],
          status: 'active',
          test_case_type: 'automated',
          tags: ['auto-imported'],
        }),
        expect.objectContaining({ key: 'TC-2', automation_id: 'PAY-1', suite: 'billing' }),
        expect.objectContaining({ key: 'TC-3', automation_id: null, suite: null }),
      ]);
      const rows = await rowsOfRun(runId);
      expect(rows.map((r) => [r.title, r.status, r.comment])).toEqual([
        ['test_login', 'passed', null],
        ['Pay by card', 'failure', 'declined'],
        ['lonely check', 'skipped', null],
      ]);
    });

    it('importing it again matches instead of duplicating', async () => {
      const before = await snapshot(projectId, runId);
      const again = await importInto(runId, report, 'r.json', '?create_missing_cases=true');
      expect(again.status).toBe(201);
      expect(again.body.summary).toMatchObject({
        created_test_cases: 0,
        matched_by_automation_id: 2,
        matched_by_name: 1,
        updated: 3,
      });
      expect(again.body.created_cases).toEqual([]);
      const after = await snapshot(projectId, runId);
      expect(after).toMatchObject({
        cases: before.cases,
        suites: before.suites,
        items: before.items,
        rows: before.rows,
      });
      expect((await rowsOfRun(runId)).map((r) => r.execution_count)).toEqual([2, 2, 2]);
    });
  });

  describe('dry run', () => {
    it('writes nothing at all and previews the summary', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      await createCase(projectId, { title: 'Existing one' });
      const before = await snapshot(projectId, runId);
      const res = await importInto(
        runId,
        json({
          cases: [
            { name: 'existing_one', status: 'failure', message: 'x' },
            { name: 'brand new', classname: 'pkg.New', suite_path: ['S'], status: 'passed' },
          ],
        }),
        'r.json',
        '?dry_run=true&create_missing_cases=true',
      );
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: null,
        dry_run: true,
        status: 'preview',
        summary: { total_cases: 2, matched_by_name: 1, created_test_cases: 1, updated: 0 },
        created_cases: [
          {
            id: null,
            key: null,
            title: 'brand new',
            automation_id: 'pkg.New.brand new',
            suite_path: ['S'],
          },
        ],
      });
      expect(await snapshot(projectId, runId)).toEqual(before);
    });
  });

  describe('project-level import', () => {
    it('names the target run from run_name and picks it by timestamp', async () => {
      const projectId = await newProject();
      const url = `/api/v1/projects/${projectId}/imports/junit?create_missing_cases=true`;
      const report = (extra: Record<string, unknown>) =>
        json({ ...extra, cases: [{ name: 'a', classname: 'k', status: 'passed' }] });
      const first = await t
        .req('post', url, f.tester.token)
        .attach('file', report({ run_name: '  JSON nightly ' }), 'ignored-name.json');
      expect(first.status).toBe(201);
      expect(first.body.target_run).toMatchObject({
        name: 'JSON nightly',
        match_mode: 'created',
        id: expect.any(String),
      });
      const created = first.body.target_run.id as string;
      const run = await t.req('get', `/api/v1/test-runs/${created}`, f.viewer.token);
      expect(run.body).toMatchObject({ name: 'JSON nightly', status: 'in_progress' });

      // Two more open runs of that name: the timestamp picks the one created closest to it.
      await t.db.query(`UPDATE test_runs SET created_at = '2026-05-01T09:00:00Z' WHERE id = $1`, [
        created,
      ]);
      const newer = await createRun(projectId, 'json NIGHTLY');
      await t.db.query(`UPDATE test_runs SET created_at = '2026-05-05T09:00:00Z' WHERE id = $1`, [
        newer,
      ]);
      const timed = await t
        .req('post', url, f.tester.token)
        .attach(
          'file',
          report({ run_name: 'JSON nightly', timestamp: '2026-05-01T10:00:00Z' }),
          'x.json',
        );
      expect(timed.body.target_run).toEqual({
        id: created,
        name: 'JSON nightly',
        match_mode: 'existing',
      });
      const untimed = await t
        .req('post', url, f.tester.token)
        .attach('file', report({ run_name: 'JSON nightly' }), 'x.json');
      expect(untimed.body.target_run.id).toBe(newer);
      expect(untimed.body.summary).toMatchObject({ created_test_cases: 0 });
    });

    it('without run_name: the run is named after the file, else `JUnit Import` (reference §4.12)', async () => {
      const projectId = await newProject();
      const url = `/api/v1/projects/${projectId}/imports/junit?dry_run=true`;
      const report = json({ cases: [{ name: 'a', status: 'passed' }] });
      const named = await t.req('post', url, f.tester.token).attach('file', report, 'smoke.json');
      expect(named.body).toMatchObject({
        source_filename: 'smoke.json',
        target_run: { name: 'smoke', match_mode: 'created' },
      });
      const nameless = await t.req('post', url, f.tester.token).attach('file', report);
      expect(nameless.status).toBe(201);
      expect(nameless.body).toMatchObject({
        source_filename: 'report.json',
        target_run: { name: 'JUnit Import', match_mode: 'created' },
      });
      const field = await t.req('post', url, f.tester.token).field('file', report.toString());
      expect(field.status).toBe(201);
      expect(field.body).toMatchObject({
        source_filename: 'report.json',
        target_run: { name: 'JUnit Import' },
      });
      const xmlNameless = await t
        .req('post', url, f.tester.token)
        .attach('file', Buffer.from('<testsuite><testcase name="a"/></testsuite>'));
      expect(xmlNameless.body).toMatchObject({
        source_filename: 'junit.xml',
        target_run: { name: 'JUnit Import' },
      });
    });

    it('refuses an invalid JSON report before creating any run', async () => {
      const projectId = await newProject();
      const res = await t
        .req('post', `/api/v1/projects/${projectId}/imports/junit`, f.tester.token)
        .attach('file', json({ run_name: 'Never', cases: [] }), 'x.json');
      expectProblem(res, 422, 'invalid_tms_results_json');
      const runs = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1`,
        [projectId],
      );
      expect(runs[0].n).toBe(0);
    });
  });

  describe('format sniffing (reference §4.1)', () => {
    it('accepts a BOM and whitespace before "{", whatever the file name and content type', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const content = Buffer.concat([
        BOM,
        Buffer.from(' \r\n\t '),
        json({ cases: [{ name: 'a', classname: 'k', status: 'xfailed' }] }),
      ]);
      const res = await t
        .req(
          'post',
          `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
          f.tester.token,
        )
        .attach('file', content, { filename: 'report.xml', contentType: 'application/xml' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        source_filename: 'report.xml',
        size_bytes: content.length,
        summary: { total_cases: 1, created_test_cases: 1, updated: 1 },
        statuses: { xfailed: 1 },
      });
    });

    it('still reads JUnit XML sent as report.json', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await importInto(runId, fixture('basic.xml'), 'basic.json', '?dry_run=true');
      expect(res.status).toBe(201);
      expect(res.body.summary.total_cases).toBe(4);
    });
  });

  describe('refusals: nothing changes', () => {
    let projectId: string;
    let runId: string;
    let before: Record<string, unknown>;

    beforeAll(async () => {
      projectId = await newProject();
      runId = await createRun(projectId);
      await addToRun(runId, [await createCase(projectId, { title: 'a' })]);
      before = await snapshot(projectId, runId);
    });
    afterEach(async () => {
      expect(await snapshot(projectId, runId)).toEqual(before);
    });

    it.each([
      ['plain text', fixture('not-xml.txt')],
      ['a BOM then text', Buffer.concat([BOM, Buffer.from('name,status\na,passed\n')])],
      ['YAML', Buffer.from('cases:\n  - name: a\n    status: passed\n')],
    ])('%s → 422 unsupported_report_format', async (_label, content) => {
      const res = await importInto(runId, content, 'report.json', '?create_missing_cases=true');
      const problem = expectProblem(res, 422, 'unsupported_report_format');
      expect((problem.errors as { file: string[] }).file[0]).toMatch(/unsupported report format/);
    });

    it('whitespace and a BOM only → 422 empty_upload, as before', async () => {
      const res = await importInto(runId, Buffer.concat([BOM, Buffer.from('  \n ')]), 'r.json');
      expect(expectProblem(res, 422, 'empty_upload').errors).toEqual({ file: ['empty file'] });
    });

    const valid = { name: 'a', status: 'passed' };
    it.each([
      [
        'malformed JSON',
        Buffer.from('{"cases": [{"name": "a", "status": "passed"}'),
        /^malformed JSON/,
      ],
      ['a top-level array', json([valid]), /must be a JSON object .* not an array/],
      ['missing cases', json({ run_name: 'x' }), /^cases: is required/],
      ['empty cases', json({ cases: [] }), /^cases: must contain at least one case/],
      [
        'a bad status',
        json({ cases: [valid, { name: 'b', status: 'broken' }] }),
        /^cases\.1\.status: must be one of/,
      ],
      [
        'a blank name',
        json({ cases: [{ name: '  ', status: 'passed' }] }),
        /^cases\.0\.name: is required and must not be blank/,
      ],
      ['a missing name', json({ cases: [{ status: 'passed' }] }), /^cases\.0\.name: is required/],
      [
        'bytes that are not UTF-8',
        Buffer.from('{"cases":[{"name":"caf\xe9","status":"passed"}]}', 'latin1'),
        /not valid UTF-8/,
      ],
      [
        'a field of the wrong type',
        json({ cases: [{ ...valid, duration_ms: '12' }] }),
        /^cases\.0\.duration_ms/,
      ],
    ])(
      '%s → 422 invalid_tms_results_json with the reason in errors.file',
      async (_l, content, reason) => {
        const res = await importInto(runId, content, 'r.json', '?create_missing_cases=true');
        const problem = expectProblem(res, 422, 'invalid_tms_results_json');
        const file = (problem.errors as { file: string[] }).file;
        expect(file[0]).toMatch(reason);
        expect(problem.detail).toMatch(/Karvio results JSON/);
      },
    );

    it('a completed run is refused (409) before the report is looked at', async () => {
      const closed = await createRun(projectId);
      for (const status of ['in_progress', 'completed']) {
        const patched = await t
          .req('patch', `/api/v1/test-runs/${closed}`, f.tester.token)
          .send({ status });
        expect(patched.status).toBe(200);
      }
      expectProblem(await importInto(closed, json({ cases: [] })), 409, 'run_import_not_allowed');
      before = await snapshot(projectId, runId);
    });
  });

  describe('OpenAPI', () => {
    it('lists the new codes for both endpoints and in the catalogue, and documents the JSON format', async () => {
      const doc = (await t.req('get', '/openapi.json')).body;
      for (const path of [
        '/api/v1/test-runs/{id}/imports/junit',
        '/api/v1/projects/{id}/imports/junit',
      ]) {
        const op = doc.paths[path].post;
        for (const code of ['unsupported_report_format', 'invalid_tms_results_json']) {
          expect(JSON.stringify(op.responses)).toContain(code);
        }
        expect(op.description).toMatch(/Karvio results JSON/);
        expect(op.description).toMatch(/`xfailed` or `xpassed`/);
      }
      // The catalogue has its own page, linked from the description (issue #24).
      const catalogue = (await t.req('get', '/docs/errors')).text;
      expect(catalogue).toMatch(/<td>422<\/td><td><code>unsupported_report_format<\/code>/);
      expect(catalogue).toMatch(/<td>422<\/td><td><code>invalid_tms_results_json<\/code>/);
    });
  });
});
