import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixture, importHelpers } from '../support/import-fixture';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { APPLY_BATCH } from '../../src/modules/imports/imports.service';

interface Summary {
  total_cases: number;
  matched_by_automation_id: number;
  matched_by_name: number;
  created_test_cases: number;
  updated: number;
  unmatched: number;
  ambiguous: number;
  errors: number;
  ignored: number;
  warnings: number;
}

describe('JUnit import (CONTRACT §6)', () => {
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

  async function setRunStatus(
    runId: string,
    status: string,
    token = f.tester.token,
  ): Promise<void> {
    const res = await t.req('patch', `/api/v1/test-runs/${runId}`, token).send({ status });
    expect(res.status).toBe(200);
  }

  function importInto(runId: string, file: Buffer, name = 'report.xml', query = '') {
    return t
      .req('post', `/api/v1/test-runs/${runId}/imports/junit${query}`, f.tester.token)
      .attach('file', file, name);
  }

  /**
   * Runs `fn` while inserting an import record fails. The record is the import's last write, so
   * this fails an import once suites, cases, items and rows are written.
   */
  async function withFailingImportRecord<T>(fn: () => PromiseLike<T>): Promise<T> {
    await t.db.query(`
      CREATE FUNCTION fail_junit_import() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated failure'; END $$`);
    await t.db.query(
      `CREATE TRIGGER fail_junit_import BEFORE INSERT ON junit_imports FOR EACH ROW EXECUTE FUNCTION fail_junit_import()`,
    );
    try {
      return await fn();
    } finally {
      await t.db.query(`DROP TRIGGER fail_junit_import ON junit_imports`);
      await t.db.query(`DROP FUNCTION fail_junit_import()`);
    }
  }

  describe('access', () => {
    it('POST /test-runs/{id}/imports/junit: tester and above', async () => {
      const runId = await createRun(f.projectId);
      const ok = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `/api/v1/test-runs/${runId}/imports/junit?dry_run=true`,
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'test_run_not_found',
        attach: { field: 'file', content: fixture('basic.xml'), filename: 'basic.xml' },
      });
      expect(ok.body.status).toBe('preview');
      expectProblem(
        await importInto('01a1fddf-0000-7000-8000-000000000000', fixture('basic.xml')),
        404,
        'test_run_not_found',
      );
    });

    it('POST /projects/{id}/imports/junit: tester and above', async () => {
      const ok = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `/api/v1/projects/${f.projectId}/imports/junit?dry_run=true`,
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
        attach: { field: 'file', content: fixture('basic.xml'), filename: 'basic.xml' },
      });
      expect(ok.body.target_run).toEqual({ id: null, name: 'Nightly', match_mode: 'created' });
    });

    it('GET /test-runs/{id}/imports: viewer and above', async () => {
      const runId = await createRun(f.projectId);
      const ok = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `/api/v1/test-runs/${runId}/imports`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_run_not_found',
      });
      expect(ok.body).toEqual({ items: [], page: 1, page_size: 50, has_next: false, total: 0 });
    });
  });

  describe('creating missing cases', () => {
    let projectId: string;
    let runId: string;
    let first: { body: Record<string, unknown> & { summary: Summary } };

    beforeAll(async () => {
      projectId = await newProject();
      runId = await createRun(projectId);
      first = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?create_missing_cases=true',
      );
    });

    it('answers 201 with the summary and the created cases', () => {
      expect(first.body).toMatchObject({
        id: expect.any(String),
        test_run_id: runId,
        target_run: { id: runId, match_mode: 'existing' },
        source_filename: 'basic.xml',
        dry_run: false,
        status: 'completed',
        size_bytes: fixture('basic.xml').length,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        summary: {
          total_cases: 4,
          // each case counted once, under the way it was found or made (issue #24 §8)
          matched_by_automation_id: 0,
          matched_by_name: 0,
          created_test_cases: 4,
          updated: 4,
          unmatched: 0,
          ambiguous: 0,
          errors: 0,
          ignored: 0,
        },
        statuses: { passed: 1, failure: 1, error: 1, skipped: 1, xfailed: 0, xpassed: 0, flaky: 0 },
        unmatched_cases: [],
        ambiguous_cases: [],
        error_cases: [],
      });
      const created = first.body.created_cases as Array<Record<string, unknown>>;
      expect(created.map((c) => [c.key, c.automation_id, c.suite_path])).toEqual([
        ['TC-1', 'AUTH-LOGIN-1', ['Nightly', 'auth', 'login']],
        ['TC-2', 'tests.auth.LoginTest.test_logout_works', ['Nightly', 'auth', 'login']],
        ['TC-3', 'tests.auth.TokenTest.test_token_refresh', ['Nightly', 'auth']],
        ['TC-4', 'tests.billing.InvoiceTest.test_invoice_pdf', ['Nightly', 'billing']],
      ]);
    });

    it('creates active automated cases with the stable identity, in suites from the suite path', async () => {
      const cases = await t.db.query(
        `SELECT tc.key, tc.title, tc.automation_id, tc.status, tc.test_case_type, tc.tags, tc.created_by,
                s.name AS suite, p.name AS parent, g.name AS grandparent
           FROM test_cases tc LEFT JOIN suites s ON s.id = tc.suite_id
           LEFT JOIN suites p ON p.id = s.parent_id LEFT JOIN suites g ON g.id = p.parent_id
          WHERE tc.project_id = $1 ORDER BY tc.key_number`,
        [projectId],
      );
      expect(cases).toEqual([
        expect.objectContaining({
          key: 'TC-1',
          title: 'test_login_works',
          automation_id: 'AUTH-LOGIN-1',
          suite: 'login',
          parent: 'auth',
          grandparent: 'Nightly',
        }),
        expect.objectContaining({
          key: 'TC-2',
          automation_id: 'tests.auth.LoginTest.test_logout_works',
          suite: 'login',
        }),
        expect.objectContaining({
          key: 'TC-3',
          automation_id: 'tests.auth.TokenTest.test_token_refresh',
          suite: 'auth',
          parent: 'Nightly',
        }),
        expect.objectContaining({
          key: 'TC-4',
          suite: 'billing',
          parent: 'Nightly',
          grandparent: null,
        }),
      ]);
      for (const c of cases) {
        expect(c).toMatchObject({
          status: 'active',
          test_case_type: 'automated',
          tags: ['auto-imported'],
          created_by: f.tester.id,
        });
      }
      const suites = await t.db.query(
        `SELECT count(*)::int AS n FROM suites WHERE project_id = $1`,
        [projectId],
      );
      expect(suites[0].n).toBe(4); // Nightly, auth, login, billing — created once each
    });

    it('applies results to run items and rows, and starts the run', async () => {
      const rows = await rowsOfRun(runId);
      expect(
        rows.map((r) => [
          r.title,
          r.item_status,
          r.scenario_label,
          r.status,
          r.duration_ms,
          r.execution_count,
        ]),
      ).toEqual([
        ['test_login_works', 'passed', 'test_login_works', 'passed', 1500, 1],
        ['test_logout_works', 'failure', 'test_logout_works', 'failure', 500, 1],
        ['test_token_refresh', 'error', 'test_token_refresh', 'error', 250, 1],
        ['test_invoice_pdf', 'skipped', 'test_invoice_pdf', 'skipped', null, 1],
      ]);
      expect(rows[0]).toMatchObject({
        system_out: 'logged in',
        executed_by_id: f.tester.id,
        finished_at: expect.any(Date),
      });
      expect(rows[1]).toMatchObject({
        comment: 'logout failed\n\nTraceback: boom',
        item_comment: 'logout failed\n\nTraceback: boom',
      });
      expect(rows[2]).toMatchObject({
        system_err: 'warning: retry',
        comment: 'connection reset\n\nstack',
      });
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      expect(run.body).toMatchObject({
        status: 'in_progress',
        started_at: expect.any(String),
        summary: { total: 4, passed: 1, failure: 1, error: 1, skipped: 1, pass_rate: 25 },
      });
      const history = await t.db.query(
        `SELECT h.from_status, h.to_status, h.changed_by_id FROM run_item_history h
           JOIN run_items ri ON ri.id = h.run_item_id WHERE ri.test_run_id = $1 ORDER BY h.to_status`,
        [runId],
      );
      // Imports write no run-case history (reference §4.10): the rows and items hold the results.
      expect(history).toEqual([]);
    });

    it('a second import of the same report creates no case and updates the same rows', async () => {
      const before = await snapshot(projectId, runId);
      const again = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?create_missing_cases=true',
      );
      expect(again.status).toBe(201);
      expect(again.body.summary).toMatchObject({
        created_test_cases: 0,
        matched_by_automation_id: 4,
        updated: 4,
      });
      expect(again.body.created_cases).toEqual([]);
      const after = await snapshot(projectId, runId);
      expect(after).toMatchObject({
        cases: before.cases,
        suites: before.suites,
        items: before.items,
        rows: before.rows,
      });
      const rows = await rowsOfRun(runId);
      expect(rows.map((r) => r.execution_count)).toEqual([2, 2, 2, 2]);
    });

    // Found by an audit: a result without automation id did not find the case an earlier result of
    // the same import had created with one under the same suite and title, so the import created
    // two cases and its re-import found them ambiguous (reference §4.7: the created case is reused).
    it('a result without automation id takes the case created earlier in the import under its suite and title', async () => {
      const xml = (...cases: string[]) =>
        Buffer.from(`<testsuites><testsuite name="S">${cases.join('')}</testsuite></testsuites>`);
      const mixed = xml(
        '<testcase name="foo"><properties><property name="automation_id" value="A1"/></properties></testcase>',
        '<testcase name="foo"><failure message="x"/></testcase>',
      );
      // The reverse order gives the same one case, which takes the automation id.
      const reversed = xml(
        '<testcase name="foo"><failure message="x"/></testcase>',
        '<testcase name="foo"><properties><property name="automation_id" value="A1"/></properties></testcase>',
      );
      // Results with automation ids keep a case each under one suite and title (pytest's one
      // `pytest` suite holds every module's test_create).
      const twoModules = xml(
        '<testcase classname="tests.test_a" name="test_create"/>',
        '<testcase classname="tests.test_b" name="test_create"/>',
      );
      for (const [report, created, automationIds] of [
        [mixed, 1, ['A1']],
        [reversed, 1, ['A1']],
        [twoModules, 2, ['tests.test_a.test_create', 'tests.test_b.test_create']],
      ] as const) {
        const projectId = await newProject();
        const run = await createRun(projectId);
        const first = await importInto(run, report, 'r.xml', '?create_missing_cases=true');
        expect(first.status).toBe(201);
        expect(first.body.summary).toMatchObject({ created_test_cases: created, ambiguous: 0 });
        const cases = await t.db.query<Array<{ automation_id: string | null }>>(
          `SELECT automation_id FROM test_cases WHERE project_id = $1 ORDER BY automation_id`,
          [projectId],
        );
        expect(cases.map((c) => c.automation_id)).toEqual(automationIds);
        const again = await importInto(run, report, 'r.xml', '?create_missing_cases=true');
        expect(again.status).toBe(201);
        expect(again.body.summary).toMatchObject({
          created_test_cases: 0,
          ambiguous: 0,
          unmatched: 0,
          updated: 2,
        });
      }
    });

    // Found by an audit: the item copied the comment of its last inserted row, not of its case's
    // last result in the report (reference §4.10: results are applied in report order).
    it("copies the comment of the case's last result in report order onto the item", async () => {
      const projectId = await newProject();
      const run = await createRun(projectId);
      const caseId = await createCase(projectId, { title: 'Login', automation_id: 'AUTH-LOGIN' });
      await addToRun(run, [caseId]);
      const testcase = (name: string, message: string) =>
        `<testcase name="${name}"><properties><property name="automation_id" value="AUTH-LOGIN"/></properties>` +
        `<failure message="${message}"/></testcase>`;
      const report = (...cases: string[]) =>
        Buffer.from(`<testsuite name="s">${cases.join('')}</testsuite>`);
      expect((await importInto(run, report(testcase('login[a]', 'first-a')))).status).toBe(201);
      // login[c] is a new row (inserted), login[a] an existing one (updated), in that report order.
      const second = await importInto(
        run,
        report(testcase('login[c]', 'new-c'), testcase('login[a]', 'second-a')),
      );
      expect(second.status).toBe(201);
      const rows = await rowsOfRun(run);
      expect(rows.map((r) => [r.scenario_label, r.comment])).toEqual([
        ['login[a]', 'second-a'],
        ['login[c]', 'new-c'],
      ]);
      expect(rows.map((r) => r.item_comment)).toEqual(['second-a', 'second-a']);
    });

    it('counts each case once: found cases as matched, the ones it creates as created only', async () => {
      const ownRun = await createRun(await newProject());
      await importInto(ownRun, fixture('basic.xml'), 'basic.xml', '?create_missing_cases=true');
      const extra = fixture('basic.xml')
        .toString('utf8')
        .replace(
          '</testsuites>',
          '<testsuite name="new"><testcase classname="tests.NewTest" name="test_new"/></testsuite></testsuites>',
        );
      const res = await importInto(
        ownRun,
        Buffer.from(extra),
        'basic.xml',
        '?create_missing_cases=true',
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 5,
        matched_by_automation_id: 4,
        matched_by_name: 0,
        created_test_cases: 1,
        updated: 5,
      });
    });

    it('lists the real imports of the run, newest first, paged', async () => {
      const page = await t.req(
        'get',
        `/api/v1/test-runs/${runId}/imports?page_size=1`,
        f.viewer.token,
      );
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ page: 1, page_size: 1, has_next: true, total: 2 });
      expect(page.body.items[0]).toMatchObject({
        project_id: projectId,
        test_run_id: runId,
        file_name: 'basic.xml',
        content_type: expect.any(String),
        size_bytes: fixture('basic.xml').length,
        sha256: first.body.sha256,
        status: 'completed',
        match_mode: 'existing',
        summary: { created_test_cases: 0, total_cases: 4 },
        statuses: { passed: 1 },
        created_by: f.tester.id,
        created_by_name: expect.any(String),
        created_at: expect.any(String),
      });
      const second = await t.req(
        'get',
        `/api/v1/test-runs/${runId}/imports?page=2&page_size=1`,
        f.viewer.token,
      );
      expect(second.body.items[0]).toMatchObject({
        id: first.body.id,
        summary: { created_test_cases: 4 },
      });
      expectProblem(
        await t.req('get', `/api/v1/test-runs/${runId}/imports?page_size=500`, f.viewer.token),
        422,
        'validation_error',
      );
    });
  });

  describe('matching existing cases (reference §4.6, §4.8)', () => {
    it('matches by automation_id, then by name; without create_missing_cases only run items count', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const login = await createCase(projectId, {
        title: 'Login works',
        automation_id: 'AUTH-LOGIN-1',
      });
      const logout = await createCase(projectId, { title: 'Logout works' });
      await createCase(projectId, { title: 'Token refresh' }); // not in the run
      await addToRun(runId, [login, logout]);
      const res = await importInto(runId, fixture('basic.xml'));
      expect(res.status).toBe(201);
      expect(res.body.summary).toEqual({
        total_cases: 4,
        matched_by_automation_id: 1,
        matched_by_name: 1,
        created_test_cases: 0,
        updated: 2,
        unmatched: 2,
        ambiguous: 0,
        errors: 0,
        ignored: 0,
        warnings: 0,
        files: [{ name: 'report.xml', testcases: 4, passed: 1, failed: 2, skipped: 1 }],
      });
      expect(res.body.unmatched_cases).toEqual([
        {
          testcase_name: 'test_token_refresh',
          testcase_classname: 'tests.auth.TokenTest',
          automation_id: 'tests.auth.TokenTest.test_token_refresh',
          reason: 'matching test case is not part of the target run',
        },
        {
          testcase_name: 'test_invoice_pdf',
          testcase_classname: 'tests.billing.InvoiceTest',
          automation_id: 'tests.billing.InvoiceTest.test_invoice_pdf',
          reason: 'no matching run item found',
        },
      ]);
      const rows = await rowsOfRun(runId);
      expect(rows.map((r) => [r.title, r.status, r.scenario_label])).toEqual([
        ['Login works', 'passed', 'test_login_works'],
        ['Logout works', 'failure', 'test_logout_works'],
      ]);
      const cases = await t.db.query(
        `SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1`,
        [projectId],
      );
      expect(cases[0].n).toBe(3);
    });

    it('reports ambiguous titles and does not create them', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const a = await createCase(projectId, { title: 'Logout works' });
      const b = await createCase(projectId, { title: 'logout_works' });
      await addToRun(runId, [a, b]);
      const res = await importInto(runId, fixture('basic.xml'));
      expect(res.body.ambiguous_cases).toEqual([
        expect.objectContaining({
          testcase_name: 'test_logout_works',
          reason: 'multiple run items matched by name',
        }),
      ]);
      const created = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?create_missing_cases=true',
      );
      expect(created.body.summary).toMatchObject({ ambiguous: 1, created_test_cases: 3 });
      expect(created.body.ambiguous_cases[0].reason).toBe('multiple test cases matched by name');
    });

    it('adds matched cases that are not in the run when create_missing_cases is set', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const token = await createCase(projectId, { title: 'Token refresh' });
      const res = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?create_missing_cases=true',
      );
      expect(res.body.summary).toMatchObject({
        matched_by_name: 1,
        created_test_cases: 3,
        updated: 4,
      });
      const items = await t.db.query(`SELECT test_case_id FROM run_items WHERE test_run_id = $1`, [
        runId,
      ]);
      expect(items.map((i: { test_case_id: string }) => i.test_case_id)).toContain(token);
    });

    it('never reuses the automation id of a draft case: the result stays unmatched', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      await createCase(projectId, {
        title: 'Old login',
        automation_id: 'AUTH-LOGIN-1',
        status: 'draft',
      });
      const res = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?create_missing_cases=true',
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({ created_test_cases: 3, unmatched: 1 });
      expect(res.body.unmatched_cases[0]).toMatchObject({
        automation_id: 'AUTH-LOGIN-1',
        reason: expect.stringContaining('draft or archived'),
      });
    });
  });

  describe('rows of data-driven cases', () => {
    it('dataset properties only name rows: no dataset or binding is created, nothing is unmatched', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const report = Buffer.from(`<testsuite name="s">
        <testcase classname="x" name="pay[visa]"><properties>
          <property name="automation_id" value="pay.param"/><property name="tms_dataset_key" value="visa"/>
          <property name="tms_dataset_data" value='{"card":"visa"}'/>
        </properties></testcase>
        <testcase classname="x" name="pay[amex]"><properties>
          <property name="automation_id" value="pay.param"/><property name="tms_dataset_key" value="amex"/>
          <property name="tms_dataset_name" value="Amex card"/>
        </properties><failure message="declined"/></testcase>
      </testsuite>`);
      const res = await importInto(runId, report, 'pay.xml', '?create_missing_cases=true');
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 2,
        created_test_cases: 1,
        updated: 2,
        unmatched: 0,
      });
      const [counts] = await t.db.query(
        `SELECT (SELECT count(*) FROM datasets WHERE project_id = $1)::int AS datasets,
                (SELECT count(*) FROM test_case_dataset_bindings b JOIN test_cases tc ON tc.id = b.test_case_id
                  WHERE tc.project_id = $1)::int AS bindings`,
        [projectId],
      );
      expect(counts).toEqual({ datasets: 0, bindings: 0 });
      const rows = await rowsOfRun(runId);
      expect(rows.map((r) => [r.scenario_label, r.status, r.item_status])).toEqual([
        ['visa', 'passed', 'failure'],
        ['Amex card', 'failure', 'failure'],
      ]);
    });

    it('writes results to the rows named by the dataset key, and takes over untouched rows otherwise', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const dataset = await t.req('post', '/api/v1/datasets', f.tester.token).send({
        project_id: projectId,
        name: 'Users',
        columns: [{ column_key: 'user' }],
        rows: [
          { row_key: 'admin', values: { user: 'admin' } },
          { row_key: 'guest', values: { user: 'guest' } },
        ],
      });
      expect(dataset.status).toBe(201);
      const param = await createCase(projectId, {
        title: 'Login as user',
        automation_id: 'login.param',
      });
      const whole = await createCase(projectId, {
        title: 'Logout as user',
        automation_id: 'logout.param',
      });
      for (const caseId of [param, whole]) {
        const bound = await t
          .req('post', `/api/v1/test-cases/${caseId}/dataset-bindings`, f.tester.token)
          .send({ dataset_id: dataset.body.id, dataset_alias: 'users' });
        expect(bound.status).toBe(201);
      }
      await addToRun(runId, [param, whole]);
      const labels = await t.db.query(
        `SELECT w.scenario_label FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
          WHERE ri.test_case_id = $1 ORDER BY w.row_order`,
        [param],
      );
      expect(labels.map((l: { scenario_label: string }) => l.scenario_label)).toEqual([
        'users:admin',
        'users:guest',
      ]);
      const report = Buffer.from(`<testsuite name="s">
        <testcase classname="x" name="login[admin]"><properties>
          <property name="automation_id" value="login.param"/><property name="tms_dataset_key" value="users:admin"/>
        </properties></testcase>
        <testcase classname="x" name="login[guest]"><properties>
          <property name="automation_id" value="login.param"/><property name="tms_dataset_key" value="users:guest"/>
        </properties><failure message="guest cannot log in"/></testcase>
        <testcase classname="x" name="logout"><properties>
          <property name="automation_id" value="logout.param"/>
        </properties></testcase>
      </testsuite>`);
      const res = await importInto(runId, report, 'data.xml');
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 3,
        matched_by_automation_id: 3,
        updated: 3,
      });
      const rows = await rowsOfRun(runId);
      expect(rows.map((r) => [r.title, r.scenario_label, r.status, r.item_status])).toEqual([
        ['Login as user', 'users:admin', 'passed', 'failure'],
        ['Login as user', 'users:guest', 'failure', 'failure'],
        ['Logout as user', 'logout', 'passed', 'passed'],
      ]);
    });
  });

  it('after a rerun, the next result goes to the rerun row; the row it reran keeps its failure (§3.8)', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const caseId = await createCase(projectId, { title: 'Rerun me', automation_id: 'k.rerun' });
    await addToRun(runId, [caseId]);
    const report = (outcome: string) =>
      Buffer.from(
        `<testsuite name="s"><testcase classname="k" name="rerun">${outcome}</testcase></testsuite>`,
      );
    expect((await importInto(runId, report('<failure message="boom"/>'))).status).toBe(201);
    const [item] = await t.db.query(`SELECT id FROM run_items WHERE test_run_id = $1`, [runId]);
    const rerun = await t
      .req('post', `/api/v1/run-cases/${String(item.id)}/rerun`, f.tester.token)
      .send({});
    expect(rerun.status).toBe(201);
    expect((await importInto(runId, report(''))).status).toBe(201);
    const rows = await rowsOfRun(runId);
    expect(rows.map((r) => [r.scenario_label, r.status, r.execution_count, r.item_status])).toEqual(
      [
        ['rerun', 'failure', 1, 'failure'],
        ['rerun', 'passed', 1, 'failure'],
      ],
    );
  });

  describe('items the import adds to the run', () => {
    /** Everything an import stores for a run, without ids and times (they differ between runs). */
    async function stored(runId: string): Promise<Record<string, unknown>> {
      const rows = await t.db.query(
        `SELECT tc.title, w.row_order, w.scenario_label, w.row_snapshot, w.status, w.comment,
                w.system_out, w.system_err, w.duration_ms::int AS duration_ms, w.execution_count,
                w.executed_by_id, w.defect_ids, w.actual_result,
                w.last_executed_at IS NOT NULL AS executed, w.finished_at IS NOT NULL AS finished,
                w.started_at IS NOT NULL AS started
           FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
           JOIN test_cases tc ON tc.id = ri.test_case_id
          WHERE ri.test_run_id = $1 ORDER BY tc.key_number, w.row_order`,
        [runId],
      );
      const items = await t.db.query(
        `SELECT tc.title, ri.status, ri.rows_total, ri.rows_passed, ri.rows_failed, ri.comment,
                ri.last_executed_at IS NOT NULL AS executed, ri.dataset_snapshot,
                ri.test_case_key, ri.assignee_id
           FROM run_items ri JOIN test_cases tc ON tc.id = ri.test_case_id
          WHERE ri.test_run_id = $1 ORDER BY tc.key_number`,
        [runId],
      );
      const history = await t.db.query(
        `SELECT tc.title, h.from_status, h.to_status, h.comment, h.system_out, h.system_err,
                h.duration_ms::int AS duration_ms, h.executed_by_id, h.changed_by_id,
                w.scenario_label AS row_label, h.finished_at IS NOT NULL AS finished
           FROM run_item_history h JOIN run_items ri ON ri.id = h.run_item_id
           JOIN test_cases tc ON tc.id = ri.test_case_id
           LEFT JOIN run_item_rows w ON w.id = h.run_item_row_id
          WHERE ri.test_run_id = $1 ORDER BY tc.key_number, h.id`,
        [runId],
      );
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      return {
        rows,
        items,
        history,
        summary: run.body.summary,
        breakdown: run.body.status_breakdown,
      };
    }

    it('are stored exactly as when the cases were in the run before the import', async () => {
      const projectId = await newProject();
      const dataset = await t.req('post', '/api/v1/datasets', f.tester.token).send({
        project_id: projectId,
        name: 'Accounts',
        columns: [{ column_key: 'user' }],
        rows: [
          { row_key: 'admin', values: { user: 'admin' } },
          { row_key: 'guest', values: { user: 'guest' } },
          { row_key: 'bot', values: { user: 'bot' } },
        ],
      });
      expect(dataset.status).toBe(201);
      const bound: string[] = [];
      for (const [title, id] of [
        ['Keyed rows', 'rows.keyed'],
        ['Taken over', 'rows.taken'],
        ['Keyed and new', 'rows.mixed'],
      ]) {
        const caseId = await createCase(projectId, { title, automation_id: id });
        const binding = await t
          .req('post', `/api/v1/test-cases/${caseId}/dataset-bindings`, f.tester.token)
          .send({ dataset_id: dataset.body.id, dataset_alias: 'acc' });
        expect(binding.status).toBe(201);
        bound.push(caseId);
      }
      const plain = await createCase(projectId, { title: 'Plain', automation_id: 'rows.plain' });
      const property = (id: string, key?: string) =>
        `<properties><property name="automation_id" value="${id}"/>` +
        (key ? `<property name="tms_dataset_key" value="${key}"/>` : '') +
        '</properties>';
      const report = Buffer.from(`<testsuite name="s">
        <testcase classname="k" name="admin" time="0.5">${property('rows.keyed', 'acc:admin')}</testcase>
        <testcase classname="k" name="bot" time="1">${property('rows.keyed', 'acc:bot')}
          <failure message="bot refused">trace</failure><system-out>bot out</system-out></testcase>
        <testcase classname="t" name="one">${property('rows.taken')}<skipped message="later"/></testcase>
        <testcase classname="t" name="two" time="2">${property('rows.taken')}</testcase>
        <testcase classname="m" name="guest">${property('rows.mixed', 'acc:guest')}
          <error message="first">x</error></testcase>
        <testcase classname="m" name="guest again" time="0.25">${property('rows.mixed', 'acc:guest')}</testcase>
        <testcase classname="m" name="extra">${property('rows.mixed', 'acc:extra')}
          <system-err>err text</system-err></testcase>
        <testcase classname="p" name="plain" time="0.1">${property('rows.plain')}
          <failure message="plain failed"/></testcase>
      </testsuite>`);

      // The cases are added by the import (items and rows inserted with their results) …
      const fresh = await createRun(projectId);
      const first = await importInto(fresh, report, 'rows.xml', '?create_missing_cases=true');
      expect(first.status).toBe(201);
      // … or were in the run already (rows planned against the stored ones and updated).
      const prepared = await createRun(projectId);
      await addToRun(prepared, [...bound, plain]);
      const second = await importInto(prepared, report, 'rows.xml', '?create_missing_cases=true');
      expect(second.status).toBe(201);
      expect(second.body.summary).toEqual(first.body.summary);

      const a = await stored(fresh);
      const b = await stored(prepared);
      expect(a).toEqual(b);
      // And what both store is the reference's row rule (§4.10), not merely the same mistake.
      expect(
        (a.rows as Array<Record<string, unknown>>).map((r) => [
          r.title,
          r.row_order,
          r.scenario_label,
          r.status,
          r.execution_count,
        ]),
      ).toEqual([
        ['Keyed rows', 1, 'acc:admin', 'passed', 1],
        ['Keyed rows', 2, 'acc:guest', 'untested', 0],
        ['Keyed rows', 3, 'acc:bot', 'failure', 1],
        ['Taken over', 1, 'one', 'skipped', 1],
        ['Taken over', 2, 'two', 'passed', 1],
        ['Keyed and new', 1, 'acc:admin', 'untested', 0],
        ['Keyed and new', 2, 'acc:guest', 'passed', 1],
        ['Keyed and new', 3, 'acc:bot', 'untested', 0],
        ['Keyed and new', 4, 'acc:extra', 'passed', 1],
        ['Plain', 1, 'plain', 'failure', 1],
      ]);
      expect(a.items).toEqual([
        expect.objectContaining({
          title: 'Keyed rows',
          status: 'failure',
          rows_total: 3,
          rows_passed: 1,
          rows_failed: 1,
          comment: 'bot refused\n\ntrace',
          executed: true,
        }),
        expect.objectContaining({
          title: 'Taken over',
          status: 'passed',
          rows_total: 2,
          rows_passed: 1,
          comment: null,
        }),
        expect.objectContaining({
          title: 'Keyed and new',
          status: 'untested', // rows still untested keep the item untested (roll-up precedence)
          rows_total: 4,
          rows_passed: 2,
          comment: null,
        }),
        expect.objectContaining({
          title: 'Plain',
          status: 'failure',
          rows_total: 1,
          rows_failed: 1,
          comment: 'plain failed',
        }),
      ]);
      // No history records from an import (reference §4.10), whatever the items' statuses became.
      expect(a.history).toEqual([]);
    });

    it('of cases the import creates copy the cases as stored, as for cases added before', async () => {
      // The writer adds the cases an import creates without reading them back: their items must
      // hold what adding the stored cases to a run holds (key, title, priority, tags, suite, dataset
      // snapshot, assignee), for cases in suites that existed before the import and in new ones.
      const projectId = await newProject();
      const first = Buffer.from(`<testsuites name="Root"><testsuite name="old">
        <testcase classname="c.Old" name="test_kept" time="0.1"/></testsuite></testsuites>`);
      const second = Buffer.from(`<testsuites name="Root">
        <testsuite name="old"><testcase classname="c.Old" name="test_added" time="0.2">
          <failure message="nope">trace</failure></testcase></testsuite>
        <testsuite name="new"><testcase classname="c.New" name="test_fresh"/>
          <testcase classname="c.New" name="test_skipped"><skipped/></testcase></testsuite>
        </testsuites>`);
      const bare = Buffer.from(`<testsuite><testcase name="no suite at all"/></testsuite>`);
      const fresh = await createRun(projectId);
      for (const [i, report] of [first, second, bare].entries()) {
        const res = await importInto(fresh, report, `r${i}.xml`, '?create_missing_cases=true');
        expect(res.status).toBe(201);
        expect(res.body.summary.created_test_cases).toBeGreaterThan(0);
      }
      const cases: Array<{ id: string }> = await t.db.query(
        `SELECT id FROM test_cases WHERE project_id = $1 ORDER BY key_number`,
        [projectId],
      );
      expect(cases).toHaveLength(5);
      const prepared = await createRun(projectId);
      await addToRun(
        prepared,
        cases.map((c) => c.id),
      );
      for (const [i, report] of [first, second, bare].entries()) {
        const res = await importInto(prepared, report, `r${i}.xml`, '?create_missing_cases=true');
        expect(res.status).toBe(201);
        expect(res.body.summary.created_test_cases).toBe(0);
      }
      const copies = (runId: string): Promise<Array<Record<string, unknown>>> =>
        t.db.query(
          `SELECT tc.key_number, coalesce(tc.key, ri.test_case_key) AS test_case_key,
                  coalesce(tc.title, ri.test_case_title) AS test_case_title,
                  ri.test_case_key IS NULL AND ri.test_case_title IS NULL
                    AND ri.test_case_priority IS NULL AND ri.test_case_tags IS NULL AS no_copies,
                  coalesce(tc.tags, ri.test_case_tags) AS test_case_tags, ri.suite_id, ri.suite_name,
                  ri.dataset_snapshot, ri.assignee_id, ri.project_id
             FROM run_items ri JOIN test_cases tc ON tc.id = ri.test_case_id
            WHERE ri.test_run_id = $1 ORDER BY tc.key_number`,
          [runId],
        );
      const created = await copies(fresh);
      expect(created).toEqual(await copies(prepared));
      expect(created.map((c) => [c.test_case_key, c.suite_name, c.test_case_tags])).toEqual([
        ['TC-1', 'old', ['auto-imported']],
        ['TC-2', 'old', ['auto-imported']],
        ['TC-3', 'new', ['auto-imported']],
        ['TC-4', 'new', ['auto-imported']],
        ['TC-5', null, ['auto-imported']],
      ]);
      // Items of live, unchanged cases store no copies of them (migration RunItemCaseCopiesOnDemand).
      expect(created.map((c) => c.no_copies)).toEqual([true, true, true, true, true]);
      expect(await stored(fresh)).toEqual(await stored(prepared));
    });
  });

  describe('dry run', () => {
    it('writes nothing at all (query parameter or form field) and previews the same summary', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const viaQuery = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?dry_run=true&create_missing_cases=1',
      );
      expect(viaQuery.status).toBe(201);
      expect(viaQuery.body).toMatchObject({
        id: null,
        dry_run: true,
        status: 'preview',
        summary: { total_cases: 4, created_test_cases: 4, updated: 0, matched_by_automation_id: 0 },
      });
      expect(viaQuery.body.created_cases[0]).toEqual({
        id: null,
        key: null,
        title: 'test_login_works',
        automation_id: 'AUTH-LOGIN-1',
        suite_path: ['Nightly', 'auth', 'login'],
      });
      const viaForm = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
        .field('dry_run', 'true')
        .field('create_missing_cases', 'true')
        .attach('file', fixture('basic.xml'), 'basic.xml');
      expect(viaForm.status).toBe(201);
      expect(viaForm.body).toMatchObject({
        dry_run: true,
        status: 'preview',
        summary: { created_test_cases: 4 },
      });
      expect(await snapshot(projectId, runId)).toEqual(before);
      const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
      expect(list.body.total).toBe(0);
    });
  });

  describe('form fields and query parameters', () => {
    it('takes create_missing_cases from a form field', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
        .field('create_missing_cases', '1')
        .attach('file', fixture('basic.xml'), 'basic.xml');
      expect(res.status).toBe(201);
      expect(res.body.summary.created_test_cases).toBe(4);
    });

    it('refuses bad booleans, conflicting values, unknown fields and parameters (422, nothing changes)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const url = `/api/v1/test-runs/${runId}/imports/junit`;
      const badQuery = await t
        .req('post', `${url}?dry_run=maybe`, f.tester.token)
        .attach('file', fixture('basic.xml'), 'a.xml');
      expect(expectProblem(badQuery, 422, 'validation_error').errors).toHaveProperty([
        'query.dry_run',
      ]);
      // Unknown query parameters are ignored (a dry run, so nothing changes).
      const unknownQuery = await t
        .req('post', `${url}?force=true&dry_run=true`, f.tester.token)
        .attach('file', fixture('basic.xml'), 'a.xml');
      expect(unknownQuery.status).toBe(201);
      const badForm = await t
        .req('post', url, f.tester.token)
        .field('dry_run', 'yes')
        .attach('file', fixture('basic.xml'), 'a.xml');
      expect(expectProblem(badForm, 422, 'validation_error').errors).toHaveProperty(['dry_run']);
      const conflict = await t
        .req('post', `${url}?create_missing_cases=false`, f.tester.token)
        .field('create_missing_cases', 'true')
        .attach('file', fixture('basic.xml'), 'a.xml');
      expect(expectProblem(conflict, 422, 'validation_error').errors).toHaveProperty([
        'create_missing_cases',
      ]);
      const unknownField = await t
        .req('post', url, f.tester.token)
        .field('mode', 'x')
        .attach('file', fixture('basic.xml'), 'a.xml');
      expect(expectProblem(unknownField, 422, 'validation_error').errors).toHaveProperty(['mode']);
      // Found by an audit: the field named __proto__ set the error list's prototype instead of an
      // entry, so it was imported without a word.
      for (const name of ['__proto__', '__proto__[dry_run]', 'constructor']) {
        const special = await t
          .req('post', url, f.tester.token)
          .field(name, 'true')
          .attach('file', fixture('basic.xml'), 'a.xml');
        const errors = expectProblem(special, 422, 'validation_error').errors as object;
        // A bracketed name is a path (multer's append-field): the error is on its first segment.
        expect(Object.keys(errors)).toEqual([name.split('[')[0]]);
      }
      const otherFile = await t
        .req('post', url, f.tester.token)
        .attach('report', fixture('basic.xml'), 'a.xml');
      expect(expectProblem(otherFile, 422, 'validation_error').errors).toHaveProperty(['report']);
      // Several `file` parts form one import (issue #18 §2): imports-many-files.e2e-spec.ts.
      expect(await snapshot(projectId, runId)).toEqual(before);
    });
  });

  describe('refusals: nothing changes', () => {
    let projectId: string;
    let runId: string;
    let before: Record<string, unknown>;

    beforeAll(async () => {
      projectId = await newProject();
      runId = await createRun(projectId);
      before = await snapshot(projectId, runId);
    });
    afterEach(async () => {
      expect(await snapshot(projectId, runId)).toEqual(before);
    });

    it('no file part → 422 validation_error (errors.file)', async () => {
      const res = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
        .field('create_missing_cases', 'true');
      expect(expectProblem(res, 422, 'validation_error').errors).toEqual({
        file: [expect.any(String)],
      });
    });

    it('a malformed multipart body → 422 validation_error', async () => {
      const noBoundary = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
        .set('Content-Type', 'multipart/form-data')
        .send('garbage');
      expectProblem(noBoundary, 422, 'validation_error');
      const truncated = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
        .set('Content-Type', 'multipart/form-data; boundary=xyz')
        .send(
          '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.xml"\r\n\r\n<testsuite/>',
        );
      expectProblem(truncated, 422, 'validation_error');
    });

    it('a body that is not multipart → 415', async () => {
      const res = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
        .set('Content-Type', 'application/xml')
        .send(fixture('basic.xml').toString());
      expectProblem(res, 415, 'unsupported_media_type');
    });

    it.each([
      ['an empty file', Buffer.alloc(0)],
      ['a whitespace-only file', fixture('whitespace.xml')],
    ])('%s → 422 empty_upload', async (_label, content) => {
      const res = await importInto(runId, content, 'empty.xml', '?create_missing_cases=true');
      expect(expectProblem(res, 422, 'empty_upload').errors).toEqual({ file: ['empty file'] });
    });

    it.each([
      ['malformed XML', 'malformed.xml', /malformed XML/],
      ['a root that is not a test suite', 'wrong-root.xml', /unsupported JUnit XML root element/],
      [
        'a billion-laughs DTD',
        'billion-laughs.xml',
        /DTD, DOCTYPE and entity declarations are not allowed/,
      ],
      [
        'an external entity',
        'external-entity.xml',
        /DTD, DOCTYPE and entity declarations are not allowed/,
      ],
    ])(
      '%s → 422 invalid_junit_xml with the reason in errors.file',
      async (_label, name, reason) => {
        const res = await importInto(runId, fixture(name), name, '?create_missing_cases=true');
        const body = expectProblem(res, 422, 'invalid_junit_xml');
        expect((body.errors as { file: string[] }).file[0]).toMatch(reason);
        expect(JSON.stringify(body)).not.toContain('root:');
      },
    );

    it('content that is neither XML nor JSON → 422 unsupported_report_format (reference §4.1)', async () => {
      const res = await importInto(
        runId,
        fixture('not-xml.txt'),
        'not-xml.txt',
        '?create_missing_cases=true',
      );
      const body = expectProblem(res, 422, 'unsupported_report_format');
      expect((body.errors as { file: string[] }).file[0]).toMatch(/unsupported report format/);
    });

    it('a completed or archived run → 409 run_import_not_allowed', async () => {
      const closed = await createRun(projectId);
      await setRunStatus(closed, 'in_progress');
      await setRunStatus(closed, 'completed');
      const closedBefore = await snapshot(projectId, closed);
      expectProblem(
        await importInto(closed, fixture('basic.xml'), 'a.xml', '?create_missing_cases=true'),
        409,
        'run_import_not_allowed',
      );
      expectProblem(
        await importInto(closed, fixture('basic.xml'), 'a.xml', '?dry_run=true'),
        409,
        'run_import_not_allowed',
      );
      await setRunStatus(closed, 'archived', f.lead.token);
      expectProblem(
        await importInto(closed, fixture('basic.xml'), 'a.xml'),
        409,
        'run_import_not_allowed',
      );
      const after = await snapshot(projectId, closed);
      expect({ ...after, run: null }).toEqual({ ...closedBefore, run: null });
      before = await snapshot(projectId, runId);
    });
  });

  describe('upload limit (MAX_UPLOAD_BYTES=2048)', () => {
    let small: TestApp;
    let g: RoleFixture;
    beforeAll(async () => {
      small = await createTestApp({ MAX_UPLOAD_BYTES: '2048' });
      g = await small.roleFixture();
    });
    afterAll(async () => {
      await small.close();
    });

    it('refuses a file over the limit with 413 (streamed or declared), and accepts one under it', async () => {
      const run = await small
        .req('post', '/api/v1/test-runs', g.tester.token)
        .send({ project_id: g.projectId, name: 'r' });
      const url = `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`;
      const pad = (n: number) =>
        Buffer.from(
          `<testsuite name="s"><testcase classname="c" name="t"/>${' '.repeat(n)}</testsuite>`,
        );
      const ok = await small.req('post', url, g.tester.token).attach('file', pad(1000), 'ok.xml');
      expect(ok.status).toBe(201);
      const justOver = await small
        .req('post', url, g.tester.token)
        .attach('file', pad(2100), 'over.xml');
      expectProblem(justOver, 413, 'payload_too_large');
      const huge = await small
        .req('post', url, g.tester.token)
        .attach('file', pad(512 * 1024), 'huge.xml');
      expectProblem(huge, 413, 'payload_too_large');
      // Chunked upload that never ends: the 413 must come while the body is still being sent.
      const early = await new Promise<number>((resolve, reject) => {
        const address = small.server.address() as AddressInfo | string | null;
        const port = typeof address === 'object' && address !== null ? address.port : 0;
        const boundary = 'limit-boundary';
        const request = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: url,
          headers: {
            Authorization: `Bearer ${g.tester.token}`,
            'Content-Type': `multipart/form-data; boundary=${boundary}`,
            'Transfer-Encoding': 'chunked',
          },
        });
        request.on('response', (response) => {
          resolve(response.statusCode ?? 0);
          response.resume();
          request.destroy();
        });
        request.on('error', (error) => reject(error));
        request.write(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.xml"\r\n` +
            'Content-Type: application/xml\r\n\r\n<testsuite name="s">',
        );
        request.write(' '.repeat(4096)); // past the limit; the body is never finished
      });
      expect(early).toBe(413);
      const counts = await small.db.query(
        `SELECT (SELECT count(*) FROM test_cases)::int AS cases, (SELECT count(*) FROM junit_imports)::int AS imports`,
      );
      expect(counts[0]).toEqual({ cases: 1, imports: 1 });
    });

    it('refuses a results JSON report over the limit with 413 too, and accepts one under it', async () => {
      const run = await small
        .req('post', '/api/v1/test-runs', g.tester.token)
        .send({ project_id: g.projectId, name: 'r' });
      const url = `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`;
      const pad = (n: number) =>
        Buffer.from(
          JSON.stringify({
            padding: 'x'.repeat(n),
            cases: [{ name: 'json', classname: 'c', status: 'passed' }],
          }),
        );
      const count = async () =>
        (
          await small.db.query(
            `SELECT (SELECT count(*) FROM test_cases)::int AS cases, (SELECT count(*) FROM junit_imports)::int AS imports`,
          )
        )[0] as { cases: number; imports: number };
      const before = await count();
      expectProblem(
        await small.req('post', url, g.tester.token).attach('file', pad(2100), 'over.json'),
        413,
        'payload_too_large',
      );
      expect(await count()).toEqual(before);
      const ok = await small.req('post', url, g.tester.token).attach('file', pad(1000), 'ok.json');
      expect(ok.status).toBe(201);
      expect(await count()).toEqual({ cases: before.cases + 1, imports: before.imports + 1 });
    });
  });

  describe('dialects end to end', () => {
    it('flaky, rerun, xfail/xpass and retries', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await importInto(
        runId,
        fixture('dialects.xml'),
        'dialects.xml',
        '?create_missing_cases=true',
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({ total_cases: 6, created_test_cases: 6, updated: 6 });
      expect(res.body.statuses).toEqual({
        passed: 2,
        failure: 2,
        error: 0,
        skipped: 0,
        xfailed: 1,
        xpassed: 1,
        flaky: 2,
      });
      expect(res.body.flaky_cases).toEqual([
        {
          testcase_name: 'eventuallyPasses',
          testcase_classname: 'com.example.FlakyTest',
          automation_id: 'com.example.FlakyTest.eventuallyPasses',
          reason: 'flaky: passed after 2 failed attempts (3 attempts)',
        },
        {
          testcase_name: 'test_retried',
          testcase_classname: 'tests.test_retry',
          automation_id: 'tests.test_retry.test_retried',
          reason: 'flaky: passed after 1 failed attempt (2 attempts)',
        },
      ]);
      const rows = await rowsOfRun(runId);
      const byTitle = new Map(rows.map((r) => [r.title, r]));
      expect(byTitle.get('eventuallyPasses')).toMatchObject({
        status: 'passed',
        item_status: 'passed',
      });
      expect(byTitle.get('eventuallyPasses')?.comment).toMatch(
        /^Flaky: passed after 2 failed attempts \(3 attempts\), marked flaky\nAttempt 1: failure \(100 ms\) — first attempt failed\nAttempt 2: error \(100 ms\) — second attempt errored\nAttempt 3: passed \(300 ms\)$/,
      );
      expect(byTitle.get('alwaysFails')).toMatchObject({ status: 'failure' });
      expect(byTitle.get('alwaysFails')?.comment).toMatch(/boom 2/);
      expect(byTitle.get('test_expected_to_fail')).toMatchObject({
        status: 'xfailed',
        item_status: 'xfailed',
      });
      expect(byTitle.get('test_unexpected_pass')).toMatchObject({
        status: 'xpassed',
        item_status: 'xpassed',
      });
      expect(byTitle.get('test_retried')).toMatchObject({ status: 'passed', duration_ms: 200 });
      expect(byTitle.get('test_retried')?.comment).toMatch(/^Flaky: passed after 1 failed attempt/);
      expect(byTitle.get('test_retried_fails')).toMatchObject({ status: 'failure' });
      expect(rows).toHaveLength(6); // retries fold into one row per test
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      expect(run.body.summary).toMatchObject({
        total: 6,
        passed: 2,
        failure: 2,
        xfailed: 1,
        xpassed: 1,
      });
    });

    // Issue #22 defect 7: placeholders used to be ignored (and a classname without a name refused
    // the report); a testcase without a usable name is now imported under a generated name.
    it('imports placeholder testcases without a name under generated names, with warnings', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await importInto(
        runId,
        fixture('placeholder.xml'),
        'p.xml',
        '?create_missing_cases=true',
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 3,
        created_test_cases: 3,
        updated: 3,
        ignored: 0,
        warnings: 2,
      });
      expect(res.body.ignored_cases).toEqual([]);
      expect(res.body.warnings).toEqual([
        {
          testcase_name: '(unnamed testcase 1)',
          testcase_classname: null,
          automation_id: null,
          reason: 'testcase without a name: imported under a generated name (line 5)',
        },
        {
          testcase_name: '(unnamed testcase 2)',
          testcase_classname: null,
          automation_id: null,
          reason: 'testcase without a name: imported under a generated name (line 6)',
        },
      ]);
      expect(
        (res.body.created_cases as Array<{ title: string }>).map((c) => c.title).sort(),
      ).toEqual(['(unnamed testcase 1)', '(unnamed testcase 2)', 'test_real']);
    });

    it('imports a testcase with a classname but no name under its classname', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await importInto(
        runId,
        fixture('nameless-with-classname.xml'),
        'n.xml',
        '?create_missing_cases=true',
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 2,
        created_test_cases: 2,
        warnings: 1,
      });
      expect(res.body.warnings).toEqual([
        {
          testcase_name: 'tests.broken.Test',
          testcase_classname: 'tests.broken.Test',
          automation_id: null,
          reason: 'testcase without a name: imported under a generated name (line 4)',
        },
      ]);
      expect(res.body.created_cases).toContainEqual(
        expect.objectContaining({
          title: 'tests.broken.Test',
          automation_id: null,
          suite_path: ['broken'],
        }),
      );
    });
  });

  describe('a report larger than one write batch', () => {
    // The import writes cases and applies results in batches of APPLY_BATCH testcases inside one
    // transaction; all results of one case stay in one batch. 2,300 testcases span three batches.
    const n = APPLY_BATCH * 2 + 300;
    /** Testcase i fails when i % 7 = 3; the first and the last share an automation id (two dataset rows). */
    function bigReport(): Buffer {
      const parts = ['<testsuite name="big">'];
      for (let i = 0; i < n; i++) {
        const shared = i === 0 || i === n - 1;
        const props = shared
          ? `<properties><property name="automation_id" value="big.shared"/><property name="tms_dataset_key" value="row-${i}"/></properties>`
          : '';
        const outcome = i % 7 === 3 ? `<failure message="boom ${i}">trace ${i}</failure>` : '';
        parts.push(
          `<testcase classname="big.Suite${i % 13}" name="test_${i}" time="0.01">${props}${outcome}</testcase>`,
        );
      }
      parts.push('</testsuite>');
      return Buffer.from(parts.join('\n'));
    }
    const failures = Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 === 3).length;

    it('creates every case once in report order and applies every result', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await importInto(runId, bigReport(), 'big.xml', '?create_missing_cases=true');
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: n,
        created_test_cases: n - 1,
        updated: n,
        unmatched: 0,
      });
      const created = res.body.created_cases as Array<{ key: string; automation_id: string }>;
      expect(created.map((c) => c.key)).toEqual(
        Array.from({ length: n - 1 }, (_, i) => `TC-${i + 1}`),
      );
      expect(created[0]?.automation_id).toBe('big.shared');
      expect(created[1]?.automation_id).toBe('big.Suite1.test_1');

      const [counts] = await t.db.query(
        `SELECT (SELECT count(*) FROM run_items WHERE test_run_id = $1)::int AS items,
                (SELECT count(*) FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
                  WHERE ri.test_run_id = $1 AND w.execution_count = 1)::int AS executed_rows,
                (SELECT count(*) FROM run_item_history h JOIN run_items ri ON ri.id = h.run_item_id
                  WHERE ri.test_run_id = $1)::int AS history,
                (SELECT count(*) FROM run_items WHERE test_run_id = $1 AND status = 'failure')::int AS failed,
                (SELECT count(*) FROM run_items ri JOIN test_cases tc ON tc.id = ri.test_case_id
                  WHERE ri.test_run_id = $1
                  AND ri.comment = 'boom ' || substring(tc.title from 6) || E'\n\ntrace '
                                || substring(tc.title from 6))::int AS commented`,
        [runId],
      );
      // The shared case's two results land on two rows of one item; every other case has one
      // executed row. Each failed item carries its failure as comment; the shared item (titled
      // after testcase 0) fails through its last row, testcase n - 1.
      expect((n - 1) % 7).toBe(3);
      expect(counts).toEqual({
        items: n - 1,
        executed_rows: n,
        history: 0, // imports write no run-case history (reference §4.10)
        failed: failures,
        commented: failures - 1,
      });
      const shared = await t.db.query(
        `SELECT w.scenario_label, w.status, ri.status AS item_status, ri.comment AS item_comment
           FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
           JOIN test_cases tc ON tc.id = ri.test_case_id
          WHERE ri.test_run_id = $1 AND tc.automation_id = 'big.shared' ORDER BY w.row_order`,
        [runId],
      );
      const lastComment = `boom ${n - 1}\n\ntrace ${n - 1}`;
      expect(shared).toEqual([
        {
          scenario_label: 'row-0',
          status: 'passed',
          item_status: 'failure',
          item_comment: lastComment,
        },
        {
          scenario_label: `row-${n - 1}`,
          status: 'failure',
          item_status: 'failure',
          item_comment: lastComment,
        },
      ]);
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      expect(run.body.summary).toMatchObject({
        total: n - 1,
        failure: failures,
        passed: n - 1 - failures,
        untested: 0,
      });
    });

    it('a failure after the batches are written leaves nothing behind', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const res = await withFailingImportRecord(() =>
        importInto(runId, bigReport(), 'big.xml', '?create_missing_cases=true'),
      );
      expectProblem(res, 500, 'internal_error');
      expect(await snapshot(projectId, runId)).toEqual(before);
    });

    it('a row refused in the middle of a streamed COPY leaves nothing behind; the next import works', async () => {
      // Rows are made while their COPY runs: a refusal half-way through a batch (here the rows of the
      // second batch) must fail the import as a whole and leave the connection usable.
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const refused = `test_${APPLY_BATCH + 500}`;
      await t.db.query(`
        CREATE FUNCTION refuse_import_row() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.scenario_label = '${refused}' THEN RAISE EXCEPTION 'simulated refusal'; END IF;
          RETURN NEW;
        END $$`);
      await t.db.query(
        `CREATE TRIGGER refuse_import_row BEFORE INSERT ON run_item_rows FOR EACH ROW EXECUTE FUNCTION refuse_import_row()`,
      );
      try {
        const res = await importInto(runId, bigReport(), 'big.xml', '?create_missing_cases=true');
        expectProblem(res, 500, 'internal_error');
        expect(await snapshot(projectId, runId)).toEqual(before);
      } finally {
        await t.db.query(`DROP TRIGGER refuse_import_row ON run_item_rows`);
        await t.db.query(`DROP FUNCTION refuse_import_row()`);
      }
      for (let i = 0; i < 3; i++) {
        const again = await importInto(runId, bigReport(), 'big.xml', '?create_missing_cases=true');
        expect(again.status).toBe(201);
        expect(again.body.summary.created_test_cases).toBe(i === 0 ? n - 1 : 0);
      }
    });
  });

  describe('atomicity', () => {
    it('a failure in the middle of an import leaves no partial writes', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const res = await withFailingImportRecord(() =>
        importInto(runId, fixture('basic.xml'), 'basic.xml', '?create_missing_cases=true'),
      );
      expectProblem(res, 500, 'internal_error');
      expect(await snapshot(projectId, runId)).toEqual(before);
      const ok = await importInto(
        runId,
        fixture('basic.xml'),
        'basic.xml',
        '?create_missing_cases=true',
      );
      expect(ok.status).toBe(201);
      expect(ok.body.created_cases[0].key).toBe('TC-1'); // the failed import consumed no key either
    });
  });

  describe('concurrency', () => {
    it('two imports creating the same cases at once serialise: each case once, keys contiguous', async () => {
      const projectId = await newProject();
      const [runA, runB] = await Promise.all([createRun(projectId), createRun(projectId)]);
      const [a, b] = await Promise.all([
        importInto(runA, fixture('basic.xml'), 'basic.xml', '?create_missing_cases=true'),
        importInto(runB, fixture('basic.xml'), 'basic.xml', '?create_missing_cases=true'),
      ]);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(a.body.summary.created_test_cases + b.body.summary.created_test_cases).toBe(4);
      const cases = await t.db.query(
        `SELECT key FROM test_cases WHERE project_id = $1 ORDER BY key_number`,
        [projectId],
      );
      expect(cases.map((c: { key: string }) => c.key)).toEqual(['TC-1', 'TC-2', 'TC-3', 'TC-4']);
      const items = await t.db.query(
        `SELECT test_run_id, count(*)::int AS n FROM run_items WHERE project_id = $1 GROUP BY 1`,
        [projectId],
      );
      expect(items.map((i: { n: number }) => i.n)).toEqual([4, 4]);
    });
  });

  describe('OpenAPI', () => {
    it('documents the multipart body, the flags, the summary and the list', async () => {
      const doc = (await t.req('get', '/openapi.json')).body;
      const runImport = doc.paths['/api/v1/test-runs/{id}/imports/junit'].post;
      const body = runImport.requestBody.content['multipart/form-data'].schema;
      expect(body.required).toEqual(['file']);
      expect(body.properties.file).toMatchObject({
        type: 'array',
        items: { type: 'string', format: 'binary' },
      });
      expect(Object.keys(body.properties)).toEqual([
        'file',
        'dry_run',
        'create_missing_cases',
        // the run's CI metadata (issue #24 §5)
        'build',
        'ci_provider',
        'branch',
        'commit_sha',
        'job_url',
        'pipeline_id',
        'attribute',
      ]);
      expect(runImport.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining(['id', 'dry_run', 'create_missing_cases']),
      );
      expect(runImport.description).toMatch(/Testcases without a name/);
      expect(runImport.description).toMatch(/nesting 64 levels/);
      expect(runImport.responses['201'].content['application/json'].schema.$ref).toBe(
        '#/components/schemas/JunitImportDto',
      );
      for (const code of [
        'payload_too_large',
        'empty_upload',
        'unsupported_report_format',
        'invalid_junit_xml',
        'invalid_tms_results_json',
        'run_import_not_allowed',
      ]) {
        expect(JSON.stringify(runImport.responses)).toContain(code);
      }
      expect(
        doc.paths['/api/v1/projects/{id}/imports/junit'].post.requestBody.content,
      ).toHaveProperty(['multipart/form-data']);
      expect(doc.paths['/api/v1/test-runs/{id}/imports'].get.responses['200']).toBeDefined();
      expect(Object.keys(doc.components.schemas.ImportSummaryDto.properties)).toEqual([
        'total_cases',
        'matched_by_automation_id',
        'matched_by_name',
        'created_test_cases',
        'updated',
        'unmatched',
        'ambiguous',
        'errors',
        'ignored',
        'warnings',
        'files',
      ]);
      expect(doc.paths['/api/v1/imports/{id}'].get.responses['200']).toBeDefined();
      expect(runImport.responses['202']).toBeDefined();
      const exportOp = doc.paths['/api/v1/test-runs/{id}/export'].get;
      const format = exportOp.parameters.find((p: { name: string }) => p.name === 'format');
      expect(format.schema.enum).toEqual(['json', 'xml', 'junit', 'csv', 'pdf']);
    });
  });

  describe('project-level import (reference §4.12)', () => {
    it('creates the target run from the report name, then reuses it; closed runs are not targets', async () => {
      const projectId = await newProject();
      const url = `/api/v1/projects/${projectId}/imports/junit?create_missing_cases=true`;
      const first = await t
        .req('post', url, f.tester.token)
        .attach('file', fixture('basic.xml'), 'basic.xml');
      expect(first.status).toBe(201);
      expect(first.body.target_run).toMatchObject({
        name: 'Nightly',
        match_mode: 'created',
        id: expect.any(String),
      });
      const runId = first.body.target_run.id as string;
      expect(first.body.test_run_id).toBe(runId);
      expect(first.body.summary).toMatchObject({ created_test_cases: 4, updated: 4 });
      const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
      expect(run.body).toMatchObject({
        name: 'Nightly',
        status: 'in_progress',
        created_by: f.tester.id,
        summary: { total: 4 },
      });

      const second = await t
        .req('post', url, f.tester.token)
        .attach('file', fixture('basic.xml'), 'basic.xml');
      expect(second.body.target_run).toEqual({
        id: runId,
        name: 'Nightly',
        match_mode: 'existing',
      });
      expect(second.body.summary).toMatchObject({
        created_test_cases: 0,
        matched_by_automation_id: 4,
      });
      const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
      expect(list.body.items.map((i: { match_mode: string }) => i.match_mode)).toEqual([
        'existing',
        'created',
      ]);

      await setRunStatus(runId, 'completed');
      const third = await t
        .req('post', url, f.tester.token)
        .attach('file', fixture('basic.xml'), 'basic.xml');
      expect(third.body.target_run).toMatchObject({ name: 'Nightly', match_mode: 'created' });
      expect(third.body.target_run.id).not.toBe(runId);
    });

    it('names the run after the file when the report has no name; a dry run creates nothing', async () => {
      const projectId = await newProject();
      const url = `/api/v1/projects/${projectId}/imports/junit`;
      const before = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1`,
        [projectId],
      );
      const dry = await t
        .req('post', `${url}?dry_run=true&create_missing_cases=true`, f.tester.token)
        .attach('file', fixture('placeholder.xml'), 'smoke-suite.xml');
      expect(dry.status).toBe(201);
      expect(dry.body).toMatchObject({
        id: null,
        test_run_id: null,
        target_run: { id: null, name: 'placeholders', match_mode: 'created' },
        status: 'preview',
      });
      const nameless = Buffer.from(
        '<testsuites><testsuite><testcase classname="a" name="b"/></testsuite></testsuites>',
      );
      const real = await t
        .req('post', url, f.tester.token)
        .attach('file', nameless, 'smoke-suite.xml');
      expect(real.body.target_run).toMatchObject({ name: 'smoke-suite', match_mode: 'created' });
      expect(real.body.summary).toMatchObject({ unmatched: 1, updated: 0 });
      const after = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1`,
        [projectId],
      );
      expect(after[0].n).toBe(before[0].n + 1);
    });

    it('picks the open run of that name (any case) created closest to the report timestamp, else the newest', async () => {
      const projectId = await newProject();
      const at = async (name: string, createdAt: string): Promise<string> => {
        const id = await createRun(projectId, name);
        await t.db.query(`UPDATE test_runs SET created_at = $2 WHERE id = $1`, [id, createdAt]);
        return id;
      };
      await at('nightly', '2026-04-28T10:00:00Z');
      const near = await at('NIGHTLY', '2026-05-01T09:00:00Z');
      const newest = await at('Nightly', '2026-05-03T10:00:00Z');
      const closed = await at('Nightly', '2026-05-01T10:00:00Z');
      await setRunStatus(closed, 'in_progress');
      await setRunStatus(closed, 'completed');
      const before = await t.db.query(
        `SELECT id, status, updated_at::text FROM test_runs WHERE project_id = $1 ORDER BY id`,
        [projectId],
      );
      const preview = (report: Buffer) =>
        t
          .req('post', `/api/v1/projects/${projectId}/imports/junit?dry_run=true`, f.tester.token)
          .attach('file', report, 'report.xml');
      // basic.xml: <testsuites name="Nightly" timestamp="2026-05-01T10:00:00Z">
      const timed = await preview(fixture('basic.xml'));
      expect(timed.status).toBe(201);
      expect(timed.body.target_run).toEqual({ id: near, name: 'NIGHTLY', match_mode: 'existing' });
      const untimed = await preview(
        Buffer.from('<testsuite name=" nightly "><testcase classname="a" name="b"/></testsuite>'),
      );
      expect(untimed.body.target_run).toEqual({
        id: newest,
        name: 'Nightly',
        match_mode: 'existing',
      });
      const far = await preview(
        Buffer.from(
          '<testsuite name="Nightly" timestamp="2027-01-01T00:00:00Z"><testcase name="b"/></testsuite>',
        ),
      );
      expect(far.body.target_run.id).toBe(newest);
      const other = await preview(
        Buffer.from('<testsuite name="Weekly"><testcase name="b"/></testsuite>'),
      );
      expect(other.body.target_run).toEqual({ id: null, name: 'Weekly', match_mode: 'created' });
      const after = await t.db.query(
        `SELECT id, status, updated_at::text FROM test_runs WHERE project_id = $1 ORDER BY id`,
        [projectId],
      );
      expect(after).toEqual(before);
    });

    it('refuses invalid reports before creating any run', async () => {
      const projectId = await newProject();
      const res = await t
        .req('post', `/api/v1/projects/${projectId}/imports/junit`, f.tester.token)
        .attach('file', fixture('billion-laughs.xml'), 'x.xml');
      expectProblem(res, 422, 'invalid_junit_xml');
      const runs = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1`,
        [projectId],
      );
      expect(runs[0].n).toBe(0);
    });
  });
});
