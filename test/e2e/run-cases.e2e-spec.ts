import { statementsDuring } from '../support/query-count';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { waitUntilBlockedOrDone } from '../support/wait-for';

type Json = Record<string, unknown>;

const RUN_CASE_FIELDS = [
  'id',
  'project_id',
  'test_run_id',
  'test_case_id',
  'test_run_name',
  'test_run_status',
  'test_run_environment_name',
  'test_run_environment_revision_number',
  'test_run_build',
  'assignee_id',
  'assignee_name',
  'status',
  'rows_total',
  'rows_passed',
  'rows_failed',
  'comment',
  'test_case_key',
  'test_case_title',
  'test_case_priority',
  'test_case_tags',
  'suite_id',
  'suite_name',
  'external_issues',
  'last_executed_at',
  'created_at',
  'updated_at',
].sort();

const HISTORY_FIELDS = [
  'id',
  'run_case_id',
  'run_case_row_id',
  'from_status',
  'to_status',
  'time',
  'comment',
  'defect_ids',
  'actual_result',
  'system_out',
  'system_err',
  'executed_by_id',
  'started_at',
  'finished_at',
  'duration_ms',
  'changed_by_id',
  'changed_at',
].sort();

const ROW_FIELDS = [
  'id',
  'run_case_id',
  'parent_row_id',
  'row_order',
  'scenario_label',
  'row_snapshot',
  'status',
  'comment',
  'defect_ids',
  'actual_result',
  'system_out',
  'system_err',
  'executed_by_id',
  'execution_count',
  'last_executed_at',
  'started_at',
  'finished_at',
  'duration_ms',
  'created_at',
  'updated_at',
].sort();

describe('run cases, rows and history', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  const api = (path: string) => `/api/v1${path}`;

  async function ok(res: { status: number; body: unknown }, status: number): Promise<Json> {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function createRun(body: Json = {}, projectId = f.projectId): Promise<Json> {
    return ok(
      await t
        .req('post', api('/test-runs'), f.tester.token)
        .send({ project_id: projectId, name: t.unique('Run '), ...body }),
      201,
    );
  }

  async function createCase(body: Json = {}, projectId = f.projectId): Promise<Json> {
    return ok(
      await t
        .req('post', api('/test-cases'), f.tester.token)
        .send({ project_id: projectId, title: t.unique('Case '), ...body }),
      201,
    );
  }

  async function createSuite(body: Json = {}): Promise<Json> {
    return ok(
      await t
        .req('post', api('/suites'), f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Suite '), ...body }),
      201,
    );
  }

  async function addCase(runId: unknown, caseId: unknown, extra: Json = {}) {
    return t
      .req('post', api('/run-cases'), f.tester.token)
      .send({ test_run_id: runId, test_case_id: caseId, ...extra });
  }

  async function runWithCases(
    n: number,
    runBody: Json = {},
  ): Promise<{ run: Json; items: Json[] }> {
    const run = await createRun(runBody);
    const cases = [];
    for (let i = 0; i < n; i++) cases.push(await createCase());
    const res = await ok(
      await t
        .req('post', api('/run-cases/bulk'), f.tester.token)
        .send({ test_run_id: run.id, test_case_ids: cases.map((c) => c.id) }),
      201,
    );
    return { run, items: res.items as Json[] };
  }

  async function rowsOf(itemId: unknown): Promise<Json[]> {
    const res = await ok(
      await t.req('get', api(`/run-cases/${String(itemId)}/rows`), f.viewer.token),
      200,
    );
    return res.items as Json[];
  }

  async function patchRow(rowId: unknown, body: Json, token = f.tester.token) {
    return t.req('patch', api(`/run-cases/rows/${String(rowId)}`), token).send(body);
  }

  async function getRun(id: unknown): Promise<Json> {
    return ok(await t.req('get', api(`/test-runs/${String(id)}`), f.viewer.token), 200);
  }

  async function patchRun(id: unknown, body: Json) {
    return t.req('patch', api(`/test-runs/${String(id)}`), f.lead.token).send(body);
  }

  /** A dataset of the project named `prefix…` with these rows (one column `v` unless given). */
  async function createDataset(
    prefix: string,
    rows: Json[],
    columns: Json[] = [{ column_key: 'v' }],
  ): Promise<Json> {
    return ok(
      await t
        .req('post', api('/datasets'), f.tester.token)
        .send({ project_id: f.projectId, name: t.unique(prefix), columns, rows }),
      201,
    );
  }

  /** Binds the dataset to the case under `alias`, with the binding's other fields in `extra`. */
  async function bindDataset(
    caseId: unknown,
    datasetId: unknown,
    alias = 'd',
    extra: Json = {},
  ): Promise<void> {
    await ok(
      await t
        .req('post', api(`/test-cases/${String(caseId)}/dataset-bindings`), f.tester.token)
        .send({ dataset_id: datasetId, dataset_alias: alias, ...extra }),
      201,
    );
  }

  /** Replaces the dataset's rows (a new revision). */
  async function replaceRows(datasetId: unknown, rows: Json[]): Promise<void> {
    await ok(
      await t.req('patch', api(`/datasets/${String(datasetId)}`), f.tester.token).send({ rows }),
      200,
    );
  }

  describe('role matrix', () => {
    it('GET /run-cases?test_run_id needs viewer', async () => {
      const { run } = await runWithCases(1);
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/run-cases?test_run_id=${String(run.id)}`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_run_not_found',
      });
      expect(res.body).toMatchObject({ total: 1, page: 1, page_size: 50 });
    });

    it('GET /run-cases?project_id&test_case_id needs viewer', async () => {
      const { items } = await runWithCases(1);
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(
          `/run-cases?project_id=${f.projectId}&test_case_id=${String(items[0].test_case_id)}`,
        ),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(res.body.total).toBe(1);
    });

    it('POST /run-cases needs tester', async () => {
      const run = await createRun();
      const c = await createCase();
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: api('/run-cases'),
        body: () => ({ test_run_id: run.id, test_case_id: c.id }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'test_run_not_found',
      });
      expect(res.body.test_case_id).toBe(c.id);
    });

    it('POST /run-cases/bulk needs tester', async () => {
      const run = await createRun();
      const c = await createCase();
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: api('/run-cases/bulk'),
        body: () => ({ test_run_id: run.id, test_case_ids: [c.id] }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'test_run_not_found',
      });
      expect(res.body.created_count).toBe(1);
    });

    it('GET /run-cases/{id} needs viewer', async () => {
      const { items } = await runWithCases(1);
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/run-cases/${String(items[0].id)}`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'run_case_not_found',
      });
    });

    it('PATCH /run-cases/{id} needs tester', async () => {
      const { items } = await runWithCases(1);
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: api(`/run-cases/${String(items[0].id)}`),
        body: () => ({ comment: 'looked at it' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'run_case_not_found',
      });
      expect(res.body.comment).toBe('looked at it');
    });

    it('DELETE /run-cases/{id} needs lead', async () => {
      const { run, items } = await runWithCases(2);
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: api(`/run-cases/${String(items[0].id)}`),
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'run_case_not_found',
      });
      const after = await getRun(run.id);
      expect(after.summary).toMatchObject({ total: 1, untested: 1 });
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM run_item_rows WHERE run_item_id = $1`,
        [items[0].id],
      );
      expect(rows[0].n).toBe(0);
    });

    it('GET /run-cases/{id}/rows needs viewer', async () => {
      const { items } = await runWithCases(1);
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/run-cases/${String(items[0].id)}/rows`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'run_case_not_found',
      });
      expect(res.body.items).toHaveLength(1);
    });

    it('PATCH /run-cases/rows/{row_id} needs tester', async () => {
      const { items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: api(`/run-cases/rows/${String(row.id)}`),
        body: () => ({ status: 'passed' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'run_case_row_not_found',
      });
      expect(res.body.status).toBe('passed');
    });

    it('POST /run-cases/{id}/rerun needs tester', async () => {
      const { items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      await ok(await patchRow(row.id, { status: 'failure' }), 200);
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: api(`/run-cases/${String(items[0].id)}/rerun`),
        body: () => ({ mode: 'failed' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'run_case_not_found',
      });
      expect(res.body.items).toHaveLength(1);
    });
  });

  describe('adding cases', () => {
    it('an explicit null or blank assignee_id takes the run’s assignee (reference §3.5: the body’s or the run’s)', async () => {
      const run = await createRun({ assignee: f.viewer.id });
      for (const assignee_id of [null, '']) {
        const item = await ok(await addCase(run.id, (await createCase()).id, { assignee_id }), 201);
        expect(item.assignee_id).toBe(f.viewer.id);
      }
      const own = await ok(
        await addCase(run.id, (await createCase()).id, { assignee_id: f.tester.id }),
        201,
      );
      expect(own.assignee_id).toBe(f.tester.id);
    });

    it('a run case addressed with an upper-case id is the same run case (GET, PATCH, rows, DELETE)', async () => {
      const { items } = await runWithCases(1);
      const id = String(items[0].id);
      const upper = id.toUpperCase();
      expect(upper).not.toBe(id);
      const got = await ok(await t.req('get', api(`/run-cases/${upper}`), f.viewer.token), 200);
      expect(got.id).toBe(id);
      const patched = await ok(
        await t.req('patch', api(`/run-cases/${upper}`), f.tester.token).send({ comment: 'upper' }),
        200,
      );
      expect(patched).toMatchObject({ id, comment: 'upper' });
      expect(await rowsOf(upper)).toHaveLength(1);
      await ok(await t.req('delete', api(`/run-cases/${upper}`), f.lead.token), 204);
      expect((await t.req('get', api(`/run-cases/${id}`), f.viewer.token)).status).toBe(404);
    });

    it('adds one case with a default row, snapshots and the run’s assignee', async () => {
      const suite = await createSuite();
      const c = await createCase({
        priority: 'high',
        tags: ['smoke', 'login'],
        suite_id: suite.id,
      });
      const run = await createRun({ assignee: f.viewer.id, build: 'b7' });
      const res = await addCase(run.id, c.id);
      const item = await ok(res, 201);
      expect(Object.keys(item).sort()).toEqual(RUN_CASE_FIELDS);
      expect(item).toMatchObject({
        project_id: f.projectId,
        test_run_id: run.id,
        test_case_id: c.id,
        test_run_name: run.name,
        test_run_status: 'not_started',
        test_run_build: 'b7',
        assignee_id: f.viewer.id,
        // The assignee's username, as in the reference (not the display name).
        assignee_name: f.viewer.username,
        status: 'untested',
        rows_total: 1,
        rows_passed: 0,
        rows_failed: 0,
        comment: null,
        test_case_key: c.key,
        test_case_title: c.title,
        test_case_priority: 'high',
        test_case_tags: ['smoke', 'login'],
        suite_id: suite.id,
        suite_name: suite.name,
        external_issues: [],
        last_executed_at: null,
      });
      const rows = await rowsOf(item.id);
      expect(rows).toHaveLength(1);
      expect(Object.keys(rows[0]).sort()).toEqual(ROW_FIELDS);
      expect(rows[0]).toMatchObject({
        run_case_id: item.id,
        parent_row_id: null,
        row_order: 1,
        scenario_label: 'Default scenario',
        row_snapshot: { datasets: [] },
        status: 'untested',
        execution_count: 0,
        defect_ids: [],
      });
      const after = await getRun(run.id);
      expect(after.summary).toMatchObject({ total: 1, untested: 1, pass_rate: 0 });
      expect(after.status_breakdown).toEqual({ items: [{ status: 'untested', count: 1 }] });
    });

    it('an explicit assignee must have access to the project', async () => {
      const run = await createRun();
      const c = await createCase();
      expectProblem(
        await addCase(run.id, c.id, { assignee_id: f.outsider.id }),
        422,
        'invalid_assignee',
      );
      const item = await ok(await addCase(run.id, c.id, { assignee_id: f.lead.id }), 201);
      expect(item.assignee_id).toBe(f.lead.id);
    });

    it('a PATCH re-sending the current assignee keeps them after they left the project (as a run PATCH does); a new one must have access', async () => {
      const g = await t.roleFixture();
      const run = await ok(
        await t
          .req('post', api('/test-runs'), g.lead.token)
          .send({ project_id: g.projectId, name: 'R', assignee: g.tester.id }),
        201,
      );
      const c = await ok(
        await t
          .req('post', api('/test-cases'), g.lead.token)
          .send({ project_id: g.projectId, title: 'C' }),
        201,
      );
      const item = await ok(
        await t
          .req('post', api('/run-cases'), g.lead.token)
          .send({ test_run_id: run.id, test_case_id: c.id }),
        201,
      );
      expect(item.assignee_id).toBe(g.tester.id);
      await t
        .req('delete', api(`/projects/${g.projectId}/members/${g.tester.id}`), g.lead.token)
        .expect(204);
      const kept = await ok(
        await t
          .req('patch', api(`/run-cases/${String(item.id)}`), g.lead.token)
          .send({ assignee_id: g.tester.id.toUpperCase(), comment: 'x' }),
        200,
      );
      expect(kept).toMatchObject({ assignee_id: g.tester.id, comment: 'x' });
      expectProblem(
        await t
          .req('patch', api(`/run-cases/${String(item.id)}`), g.lead.token)
          .send({ assignee_id: g.outsider.id }),
        422,
        'invalid_assignee',
      );
    });

    it('a case already in the run is answered with its item unchanged, single or bulk', async () => {
      const run = await createRun();
      const [a, b] = [await createCase(), await createCase()];
      const first = await ok(await addCase(run.id, a.id), 201);
      // Create-or-get (reference §3.5): 201 with the existing item; the assignee is not updated.
      const again = await ok(await addCase(run.id, a.id, { assignee_id: f.lead.id }), 201);
      expect(again).toEqual(first);
      expect(again.assignee_id).toBeNull();
      expect(await rowsOf(first.id)).toHaveLength(1);
      const bulk = await ok(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, test_case_ids: [a.id, b.id, a.id] }),
        201,
      );
      expect(bulk).toMatchObject({ created_count: 1, existing_count: 1 });
      const items = bulk.items as Json[];
      expect(items.map((i) => i.test_case_id)).toEqual([a.id, b.id]);
      expect(items[0].id).toBe(first.id);
      expect((await getRun(run.id)).summary).toMatchObject({ total: 2 });
    });

    it('rejects draft, archived, foreign and unknown cases (nothing is added)', async () => {
      const run = await createRun();
      const good = await createCase();
      const draft = await createCase({ status: 'draft' });
      const archived = await createCase({ status: 'archived' });
      const otherProject = await t.createProject(f.lead.token);
      await t.addMember(otherProject, f.tester.id, 'tester', f.lead.token);
      const foreign = await createCase({}, otherProject);
      expectProblem(await addCase(run.id, draft.id), 422, 'test_case_status_not_allowed');
      expectProblem(await addCase(run.id, archived.id), 422, 'test_case_status_not_allowed');
      let p = expectProblem(await addCase(run.id, foreign.id), 422, 'test_case_project_mismatch');
      expect(p.errors).toHaveProperty('test_case_id');
      p = expectProblem(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, test_case_ids: [good.id, foreign.id] }),
        422,
        'test_case_project_mismatch',
      );
      expect(p.errors).toHaveProperty('test_case_ids');
      // Unknown, malformed or deleted ids do not resolve in the project: 422 naming the ids.
      const unknownId = '0190d9a6-0000-7000-8000-000000000000';
      p = expectProblem(await addCase(run.id, unknownId), 422, 'test_case_project_mismatch');
      expect(JSON.stringify(p.errors)).toContain(unknownId);
      expectProblem(await addCase(run.id, 'not-a-uuid'), 422, 'test_case_project_mismatch');
      const deleted = await createCase();
      await ok(await t.req('delete', api(`/test-cases/${String(deleted.id)}`), f.lead.token), 204);
      p = expectProblem(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, test_case_ids: [good.id, deleted.id] }),
        422,
        'test_case_project_mismatch',
      );
      expect(JSON.stringify(p.errors)).toContain(String(deleted.id));
      expectProblem(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, test_case_ids: [good.id, draft.id] }),
        422,
        'test_case_status_not_allowed',
      );
      expect((await getRun(run.id)).summary).toMatchObject({ total: 0 });
    });

    it('bulk needs exactly one of test_case_ids and suite_id', async () => {
      const run = await createRun();
      const c = await createCase();
      const suite = await createSuite();
      const bulk = (body: Json) =>
        t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, ...body });
      expectProblem(await bulk({}), 422, 'validation_error');
      expectProblem(await bulk({ test_case_ids: [] }), 422, 'validation_error');
      // An empty list counts as absent: the suite decides (reference §3.5).
      await ok(await bulk({ test_case_ids: [], suite_id: suite.id }), 201);
      expectProblem(
        await bulk({ test_case_ids: [c.id], suite_id: suite.id }),
        422,
        'validation_error',
      );
      const p = expectProblem(await bulk({ suite_id: 5 }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('suite_id');
      // A suite_id that is no uuid at all, or null, is a malformed request (issue #22: it was a
      // 201 with nothing); test_case_ids null was a 500.
      for (const body of [{ suite_id: 'nope' }, { suite_id: null }, { test_case_ids: null }]) {
        const bad = expectProblem(await bulk(body), 422, 'validation_error');
        expect(Object.keys(bad.errors as object)).toEqual(Object.keys(body));
      }
      // As in the reference, the suite itself is not checked: unknown or foreign suites have no
      // cases of this project, so nothing is added.
      const otherProject = await t.createProject(f.lead.token);
      const foreignSuite = await ok(
        await t
          .req('post', api('/suites'), f.lead.token)
          .send({ project_id: otherProject, name: 'Foreign' }),
        201,
      );
      await ok(
        await t
          .req('post', api('/test-cases'), f.lead.token)
          .send({ project_id: otherProject, title: 'Foreign case', suite_id: foreignSuite.id }),
        201,
      );
      for (const suiteId of ['0190d9a6-0000-7000-8000-000000000000', foreignSuite.id]) {
        const res = await ok(await bulk({ suite_id: suiteId }), 201);
        expect(res).toEqual({ items: [], created_count: 0, existing_count: 0 });
      }
      expect((await getRun(run.id)).summary).toMatchObject({ total: 0 });
    });

    it('bulk by suite adds the active cases of the whole suite tree', async () => {
      const root = await createSuite();
      const child = await createSuite({ parent_id: root.id });
      const grandchild = await createSuite({ parent_id: child.id });
      const other = await createSuite();
      const inRoot = await createCase({ suite_id: root.id });
      const inChild = await createCase({ suite_id: child.id });
      const inGrandchild = await createCase({ suite_id: grandchild.id });
      await createCase({ suite_id: grandchild.id, status: 'draft' });
      await createCase({ suite_id: other.id });
      const run = await createRun();
      const res = await ok(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, suite_id: root.id }),
        201,
      );
      const ids = (res.items as Json[]).map((i) => i.test_case_id).sort();
      expect(ids).toEqual([inRoot.id, inChild.id, inGrandchild.id].sort());
      expect(res.created_count).toBe(3);
      const again = await ok(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, suite_id: child.id }),
        201,
      );
      expect(again).toMatchObject({ created_count: 0, existing_count: 2 });
    });

    it('adds 1,000 cases in a handful of statements', async () => {
      // A project of its own: the cases are inserted directly (with their key counter) for speed.
      const projectId = await t.createProject(f.lead.token);
      await t.addMember(projectId, f.tester.id, 'tester', f.lead.token);
      const run = await createRun({}, projectId);
      const created = await t.db.query<Array<{ id: string }>>(
        `INSERT INTO test_cases (id, project_id, key, key_number, title, created_by)
         SELECT gen_random_uuid(), $1, 'TC-' || g, g, 'Bulk case ' || g, $2
           FROM generate_series(1, 1000) g
         RETURNING id`,
        [projectId, f.tester.id],
      );
      await t.db.query(
        `INSERT INTO project_counters (project_id, name, value) VALUES ($1, 'test_case_key', 1000)`,
        [projectId],
      );
      const { result: res, statements } = await statementsDuring(async () =>
        ok(
          await t
            .req('post', api('/run-cases/bulk'), f.tester.token)
            .send({ test_run_id: run.id, test_case_ids: created.map((c) => c.id) }),
          201,
        ),
      );
      expect(res.created_count).toBe(1000);
      expect(res.items as Json[]).toHaveLength(1000);
      expect(statements.length).toBeLessThanOrEqual(20);
      const after = await ok(
        await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token),
        200,
      );
      expect(after.summary).toMatchObject({ total: 1000, untested: 1000 });
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id WHERE ri.test_run_id = $1`,
        [run.id],
      );
      expect(rows[0].n).toBe(1000);
    });

    it('expands rows from dataset bindings as a cartesian product', async () => {
      const users = await createDataset(
        'users ',
        [
          { row_key: 'admin', values: { user: 'admin' } },
          { row_key: 'guest', values: { user: 'guest' } },
        ],
        [{ column_key: 'user' }],
      );
      const browsers = await createDataset(
        'browsers ',
        [
          { row_key: 'ff', scenario_label: 'Firefox', values: { name: 'firefox' } },
          { row_key: 'ch', scenario_label: 'Chrome', values: { name: 'chrome' } },
          { row_key: 'sf', values: { name: 'safari' }, is_active: false },
        ],
        [{ column_key: 'name' }],
      );
      const c = await createCase();
      for (const [ds, alias, order] of [
        [users, 'u', 1],
        [browsers, 'b', 2],
      ] as const) {
        await bindDataset(c.id, ds.id, alias, { sort_order: order });
      }
      const run = await createRun();
      const item = await ok(await addCase(run.id, c.id), 201);
      expect(item.rows_total).toBe(4);
      const rows = await rowsOf(item.id);
      expect(rows.map((r) => r.row_order)).toEqual([1, 2, 3, 4]);
      expect(rows.map((r) => r.scenario_label)).toHaveLength(4);
      expect(new Set(rows.map((r) => r.scenario_label)).size).toBe(4);
      const snapshot = rows[0].row_snapshot as { datasets: Array<Json> };
      expect(snapshot.datasets).toHaveLength(2);
      expect(snapshot.datasets.map((d) => d.dataset_alias)).toEqual(['u', 'b']);
    });
  });

  describe('row results, roll-up, history and run summary', () => {
    it('records results, rolls the item up, writes history and updates the run summary', async () => {
      const { run, items } = await runWithCases(3);
      const [r1] = await rowsOf(items[0].id);
      const [r2] = await rowsOf(items[1].id);
      const before = Date.now();
      const passed = await ok(
        await patchRow(r1.id, { status: 'passed', comment: 'fine', defect_ids: ['BUG-1'] }),
        200,
      );
      expect(Object.keys(passed).sort()).toEqual(ROW_FIELDS);
      expect(passed).toMatchObject({
        status: 'passed',
        execution_count: 1,
        executed_by_id: f.tester.id,
        comment: 'fine',
        defect_ids: ['BUG-1'],
      });
      expect(Date.parse(String(passed.finished_at))).toBeGreaterThanOrEqual(before - 1000);
      expect(passed.last_executed_at).toBe(passed.finished_at);
      await ok(await patchRow(r2.id, { status: 'failure', actual_result: 'boom' }), 200);

      const summary = await getRun(run.id);
      expect(summary.summary).toEqual({
        total: 3,
        untested: 1,
        in_progress: 0,
        passed: 1,
        error: 0,
        failure: 1,
        blocked: 0,
        skipped: 0,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 33.33,
      });
      expect(summary.status_breakdown).toEqual({
        items: [
          { status: 'untested', count: 1 },
          { status: 'passed', count: 1 },
          { status: 'failure', count: 1 },
        ],
      });

      const detail = await ok(
        await t.req('get', api(`/run-cases/${String(items[1].id)}`), f.viewer.token),
        200,
      );
      expect(detail).toMatchObject({
        status: 'failure',
        rows_total: 1,
        rows_failed: 1,
        rows_passed: 0,
      });
      expect(detail.last_executed_at).not.toBeNull();
      const history = detail.history as Json;
      expect(history).toMatchObject({ page: 1, page_size: 50, total: 1, has_next: false });
      expect(Object.keys((history.items as Json[])[0]).sort()).toEqual(HISTORY_FIELDS);
      expect((history.items as Json[])[0]).toMatchObject({
        time: null,
        run_case_id: items[1].id,
        run_case_row_id: r2.id,
        from_status: 'untested',
        to_status: 'failure',
        actual_result: 'boom',
        changed_by_id: f.tester.id,
        executed_by_id: f.tester.id,
      });

      // Same status again: no new execution, no history.
      const again = await ok(await patchRow(r2.id, { status: 'failure', comment: 'still' }), 200);
      expect(again.execution_count).toBe(1);
      const detail2 = await ok(
        await t.req('get', api(`/run-cases/${String(items[1].id)}`), f.viewer.token),
        200,
      );
      expect((detail2.history as Json).total).toBe(1);
    });

    it('execution_count grows only when entering a final status; explicit finished_at is kept', async () => {
      const { items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      const r1 = await ok(
        await patchRow(row.id, { status: 'in_progress', started_at: '2026-01-01T10:00:00Z' }),
        200,
      );
      expect(r1).toMatchObject({ execution_count: 0, finished_at: null });
      const r2 = await ok(
        await patchRow(row.id, { status: 'passed', finished_at: '2026-01-01T10:00:05Z' }),
        200,
      );
      expect(r2).toMatchObject({
        execution_count: 1,
        finished_at: '2026-01-01T10:00:05.000Z',
        duration_ms: 5000,
        last_executed_at: '2026-01-01T10:00:05.000Z',
      });
      const r3 = await ok(await patchRow(row.id, { status: 'untested' }), 200);
      expect(r3.execution_count).toBe(1);
      const r4 = await ok(await patchRow(row.id, { status: 'blocked' }), 200);
      expect(r4.execution_count).toBe(2);
      expectProblem(
        await patchRow(row.id, { finished_at: '2025-12-31T00:00:00Z' }),
        422,
        'validation_error',
      );
      expectProblem(await patchRow(row.id, { duration_ms: -1 }), 422, 'validation_error');
      expectProblem(await patchRow(row.id, { status: 'done' }), 422, 'validation_error');
      expectProblem(await patchRow(row.id, { status: null }), 422, 'validation_error');
      expectProblem(await patchRow(row.id, { executed_by: f.outsider.id }), 422, 'invalid_user');
      const byLead = await ok(await patchRow(row.id, { executed_by_id: f.lead.id }), 200);
      expect(byLead.executed_by_id).toBe(f.lead.id);
    });

    // Found by an audit: the earlier execution's finished_at was compared with the new start.
    it('a finished row executed again takes a new started_at; finishing it again gives a new duration', async () => {
      const { items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      await ok(
        await patchRow(row.id, {
          status: 'failure',
          started_at: '2026-01-01T10:00:00Z',
          finished_at: '2026-01-01T10:00:05Z',
        }),
        200,
      );
      const again = await ok(
        await patchRow(row.id, { status: 'in_progress', started_at: '2026-01-02T08:00:00Z' }),
        200,
      );
      expect(again).toMatchObject({
        status: 'in_progress',
        started_at: '2026-01-02T08:00:00.000Z',
        // The earlier execution's finish, until the row finishes again.
        finished_at: '2026-01-01T10:00:05.000Z',
      });
      const done = await ok(
        await patchRow(row.id, { status: 'passed', finished_at: '2026-01-02T08:00:03Z' }),
        200,
      );
      expect(done).toMatchObject({ finished_at: '2026-01-02T08:00:03.000Z', duration_ms: 3000 });
      // Still refused: a finish before the start, given, or on a finished row.
      expectProblem(
        await patchRow(row.id, { status: 'in_progress', finished_at: '2026-01-02T07:00:00Z' }),
        422,
        'validation_error',
      );
      expectProblem(
        await patchRow(row.id, { started_at: '2026-01-03T00:00:00Z' }),
        422,
        'validation_error',
      );
    });

    it('takes test case ids in upper case (uuids are case-insensitive)', async () => {
      const run = await createRun();
      const [one, two, three] = [await createCase(), await createCase(), await createCase()];
      const single = await ok(await addCase(run.id, String(one.id).toUpperCase()), 201);
      expect(single.test_case_id).toBe(one.id);
      const bulk = await ok(
        await t.req('post', api('/run-cases/bulk'), f.tester.token).send({
          test_run_id: run.id,
          test_case_ids: [String(two.id).toUpperCase(), String(three.id), String(two.id)],
        }),
        201,
      );
      expect((bulk.items as Json[]).map((i) => i.test_case_id)).toEqual([two.id, three.id]);
      expect(bulk).toMatchObject({ created_count: 2, existing_count: 0 });
      // The same case again in upper case: the existing item, not a second one.
      const again = await ok(await addCase(run.id, String(one.id).toUpperCase()), 201);
      expect(again.id).toBe(single.id);
    });

    it('roll-up follows the precedence over several rows and counts rows', async () => {
      const c = await createCase();
      const ds = await createDataset(
        'three ',
        ['a', 'b', 'c'].map((k) => ({ row_key: k, values: { v: k } })),
      );
      await bindDataset(c.id, ds.id);
      const run = await createRun();
      const item = await ok(await addCase(run.id, c.id), 201);
      const rows = await rowsOf(item.id);
      expect(rows).toHaveLength(3);
      const itemStatus = async () =>
        ok(await t.req('get', api(`/run-cases/${String(item.id)}`), f.viewer.token), 200);
      await ok(await patchRow(rows[0].id, { status: 'passed' }), 200);
      expect((await itemStatus()).status).toBe('untested');
      await ok(await patchRow(rows[1].id, { status: 'passed' }), 200);
      await ok(await patchRow(rows[2].id, { status: 'xfailed' }), 200);
      let it = await itemStatus();
      expect(it).toMatchObject({ status: 'passed', rows_total: 3, rows_passed: 2, rows_failed: 0 });
      await ok(await patchRow(rows[2].id, { status: 'in_progress' }), 200);
      expect((await itemStatus()).status).toBe('in_progress');
      await ok(await patchRow(rows[1].id, { status: 'blocked' }), 200);
      it = await itemStatus();
      expect(it).toMatchObject({ status: 'blocked', rows_failed: 1 });
      await ok(await patchRow(rows[0].id, { status: 'error' }), 200);
      expect((await itemStatus()).status).toBe('error');
      const history = ((await itemStatus()).history as Json).items as Json[];
      expect(history.map((h) => `${String(h.from_status)}>${String(h.to_status)}`)).toEqual([
        'blocked>error',
        'in_progress>blocked',
        'passed>in_progress',
        'untested>passed',
      ]);
      expect((await getRun(run.id)).status_breakdown).toEqual({
        items: [{ status: 'error', count: 1 }],
      });
    });

    it('completion is blocked while a row is in progress (run_items_in_progress)', async () => {
      const { run, items } = await runWithCases(2);
      await ok(await patchRun(run.id, { status: 'in_progress' }), 200);
      const [r1] = await rowsOf(items[0].id);
      const [r2] = await rowsOf(items[1].id);
      await ok(await patchRow(r1.id, { status: 'in_progress' }), 200);
      let p = expectProblem(
        await patchRun(run.id, { status: 'completed' }),
        409,
        'run_items_in_progress',
      );
      expect(p.detail).toContain('1 run item');
      // A failure row elsewhere in the same item hides the in_progress row from the item status.
      await ok(await patchRow(r2.id, { status: 'in_progress' }), 200);
      p = expectProblem(
        await patchRun(run.id, { status: 'completed' }),
        409,
        'run_items_in_progress',
      );
      expect(p.detail).toContain('2 run items');
      await ok(await patchRow(r1.id, { status: 'passed' }), 200);
      await ok(await patchRow(r2.id, { status: 'failure' }), 200);
      const done = await ok(await patchRun(run.id, { status: 'completed' }), 200);
      expect(done.status).toBe('completed');
    });

    it('an in_progress row under a failed item still blocks completion', async () => {
      const c = await createCase();
      const ds = await createDataset(
        'two ',
        ['a', 'b'].map((k) => ({ row_key: k, values: { v: k } })),
      );
      await bindDataset(c.id, ds.id);
      const run = await createRun();
      const item = await ok(await addCase(run.id, c.id), 201);
      await ok(await patchRun(run.id, { status: 'in_progress' }), 200);
      const rows = await rowsOf(item.id);
      await ok(await patchRow(rows[0].id, { status: 'failure' }), 200);
      await ok(await patchRow(rows[1].id, { status: 'in_progress' }), 200);
      expect((await getRun(run.id)).summary).toMatchObject({ failure: 1, in_progress: 0 });
      expectProblem(await patchRun(run.id, { status: 'completed' }), 409, 'run_items_in_progress');
    });
  });

  describe('concurrency', () => {
    it('changes of a run case deleted meanwhile are 404, never an empty answer', async () => {
      for (const change of ['patch', 'rerun', 'row'] as const) {
        const { run, items } = await runWithCases(1);
        const [row] = await rowsOf(items[0].id);
        await ok(await patchRow(row.id, { status: 'failure' }), 200);
        // Another transaction holds the run lock and deletes the item, as DELETE /run-cases does.
        const qr = t.db.createQueryRunner();
        await qr.connect();
        await qr.startTransaction();
        try {
          await qr.query(`SELECT id FROM test_runs WHERE id = $1 FOR UPDATE`, [run.id]);
          await qr.query(`DELETE FROM run_items WHERE id = $1`, [items[0].id]);
          const request =
            change === 'patch'
              ? t
                  .req('patch', api(`/run-cases/${String(items[0].id)}`), f.tester.token)
                  .send({ comment: 'late' })
              : change === 'rerun'
                ? t
                    .req('post', api(`/run-cases/${String(items[0].id)}/rerun`), f.tester.token)
                    .send({})
                : patchRow(row.id, { status: 'passed' });
          const pending = request.then((r) => r);
          await waitUntilBlockedOrDone(t.db, qr, pending);
          await qr.commitTransaction();
          const res = await pending;
          expect([change, res.status]).toEqual([change, 404]);
          expect(['run_case_not_found', 'run_case_row_not_found']).toContain(res.body.code);
        } finally {
          if (qr.isTransactionActive) await qr.rollbackTransaction();
          await qr.release();
        }
      }
    });

    it('a test case deleted while it is being added is a 404, never a foreign-key 500', async () => {
      const run = await createRun();
      const c = await createCase();
      const suite = await createSuite();
      const inSuite = await createCase({ suite_id: suite.id });
      for (const [body, id] of [
        [{ test_case_id: c.id }, c.id],
        [{ suite_id: suite.id }, inSuite.id],
      ] as Array<[Json, unknown]>) {
        // Another transaction deletes the case and holds it uncommitted while the add runs.
        const qr = t.db.createQueryRunner();
        await qr.connect();
        await qr.startTransaction();
        try {
          await qr.query(`DELETE FROM test_cases WHERE id = $1`, [id]);
          const path = 'suite_id' in body ? '/run-cases/bulk' : '/run-cases';
          const pending = t
            .req('post', api(path), f.tester.token)
            .send({ test_run_id: run.id, ...body })
            .then((r) => r);
          await waitUntilBlockedOrDone(t.db, qr, pending);
          await qr.commitTransaction();
          const res = await pending;
          if ('suite_id' in body) {
            expect(await ok(res, 201)).toMatchObject({ items: [], created_count: 0 });
          } else {
            expectProblem(res, 422, 'test_case_project_mismatch');
          }
        } finally {
          if (qr.isTransactionActive) await qr.rollbackTransaction();
          await qr.release();
        }
      }
      expect((await getRun(run.id)).summary).toMatchObject({ total: 0 });
    });

    it('concurrent results on one run keep the counters exact', async () => {
      const { run, items } = await runWithCases(12);
      const rows = await Promise.all(items.map((i) => rowsOf(i.id)));
      const statuses = ['passed', 'failure', 'blocked'];
      const results = await Promise.all(
        rows.map(([row], i) => patchRow(row.id, { status: statuses[i % 3] })),
      );
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
      const after = await getRun(run.id);
      expect(after.summary).toMatchObject({
        total: 12,
        passed: 4,
        failure: 4,
        blocked: 4,
        untested: 0,
      });
      const history = await t.db.query(
        `SELECT count(*)::int AS n FROM run_item_history h JOIN run_items ri ON ri.id = h.run_item_id
          WHERE ri.test_run_id = $1`,
        [run.id],
      );
      expect(history[0].n).toBe(12);
    });

    it('concurrent bulk adds of the same cases add each case once', async () => {
      const run = await createRun();
      const cases = [];
      for (let i = 0; i < 5; i++) cases.push(await createCase());
      const ids = cases.map((c) => c.id);
      const results = await Promise.all(
        [0, 1, 2].map(() =>
          t
            .req('post', api('/run-cases/bulk'), f.tester.token)
            .send({ test_run_id: run.id, test_case_ids: ids }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
      expect(results.reduce((n, r) => n + Number(r.body.created_count), 0)).toBe(5);
      expect((await getRun(run.id)).summary).toMatchObject({ total: 5, untested: 5 });
    });
  });

  describe('request validation', () => {
    it.each<[string, string, Json, string]>([
      ['post', '/run-cases', { test_case_id: 'CASE' }, 'test_run_id'],
      ['post', '/run-cases', { test_run_id: 'RUN' }, 'test_case_id'],
      ['post', '/run-cases', { test_run_id: 'RUN', test_case_id: 'CASE', status: 'x' }, 'status'],
      ['post', '/run-cases', { test_run_id: null, test_case_id: 'CASE' }, 'test_run_id'],
      ['post', '/run-cases/bulk', { test_run_id: 'RUN', test_case_ids: [1] }, 'test_case_ids'],
      ['post', '/run-cases/bulk', { test_run_id: 'RUN', test_case_ids: 'CASE' }, 'test_case_ids'],
      ['post', '/run-cases/bulk', { test_run_id: 'RUN', suite_id: 'S', x: 1 }, 'x'],
      ['patch', '/run-cases/ITEM', { status: 'passed' }, 'status'],
      ['patch', '/run-cases/ITEM', { test_case_id: 'CASE' }, 'test_case_id'],
      ['patch', '/run-cases/ITEM', { comment: 5 }, 'comment'],
      ['patch', '/run-cases/rows/ROW', { defect_ids: null }, 'defect_ids'],
      ['patch', '/run-cases/rows/ROW', { defect_ids: [1] }, 'defect_ids'],
      ['patch', '/run-cases/rows/ROW', { execution_count: 3 }, 'execution_count'],
      ['patch', '/run-cases/rows/ROW', { row_order: 3 }, 'row_order'],
      ['patch', '/run-cases/rows/ROW', { started_at: 'yesterday' }, 'started_at'],
      ['patch', '/run-cases/rows/ROW', { duration_ms: 1.5 }, 'duration_ms'],
      ['post', '/run-cases/ITEM/rerun', { use_latest_revisions: 'yes' }, 'use_latest_revisions'],
      ['post', '/run-cases/ITEM/rerun', { run_case_row_ids: null }, 'run_case_row_ids'],
      ['post', '/run-cases/ITEM/rerun', { mode: null }, 'mode'],
      ['post', '/run-cases/ITEM/rerun', { rows: [] }, 'rows'],
    ])('%s %s %j → 422 naming %s', async (method, path, body, field) => {
      const { run, items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      const fill = (v: string) =>
        v
          .replace('RUN', String(run.id))
          .replace('CASE', String(items[0].test_case_id))
          .replace('ITEM', String(items[0].id))
          .replace('ROW', String(row.id));
      const payload = Object.fromEntries(
        Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? fill(v) : v]),
      );
      const res = await t
        .req(method as 'post' | 'patch', api(fill(path)), f.tester.token)
        .send(payload);
      const p = expectProblem(res, 422, 'validation_error');
      expect(p.errors).toHaveProperty([field]);
      // Nothing changed.
      expect(await rowsOf(items[0].id)).toEqual([row]);
      expect((await getRun(run.id)).summary).toMatchObject({ total: 1, untested: 1 });
    });

    it('body rules between fields come before 404, 403 and 409 (CONTRACT §3 check order)', async () => {
      const { run, items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      const missing = '0190d9a6-0000-7000-8000-000000000000';
      const subset = { mode: 'subset', run_case_row_ids: [] };
      const aliases = { executed_by: f.tester.id, executed_by_id: f.lead.id };
      const refused = [
        // A viewer (403 otherwise) and an item that does not exist (404 otherwise).
        await t
          .req('post', api(`/run-cases/${String(items[0].id)}/rerun`), f.viewer.token)
          .send(subset),
        await t
          .req('post', api(`/run-cases/${missing}/rerun`), f.tester.token)
          .send({ mode: 'subset' }),
        await patchRow(row.id, aliases, f.viewer.token),
      ];
      // A completed run (409 run_closed otherwise).
      await ok(await patchRun(run.id, { status: 'in_progress' }), 200);
      await ok(await patchRun(run.id, { status: 'completed' }), 200);
      refused.push(await patchRow(row.id, aliases));
      const fields = refused.map((res) =>
        Object.keys(expectProblem(res, 422, 'validation_error').errors as object).sort(),
      );
      expect(fields).toEqual([
        ['run_case_row_ids'],
        ['run_case_row_ids'],
        ['executed_by', 'executed_by_id'],
        ['executed_by', 'executed_by_id'],
      ]);
      expect(await rowsOf(items[0].id)).toEqual([row]);
    });

    it('query limits of the item detail and of the rows list', async () => {
      const { items } = await runWithCases(1);
      const id = String(items[0].id);
      for (const [qs, key] of [
        ['?history_page_size=201', 'query.history_page_size'],
        ['?history_page=0', 'query.history_page'],
      ]) {
        const p = expectProblem(
          await t.req('get', api(`/run-cases/${id}${qs}`), f.viewer.token),
          422,
          'validation_error',
        );
        expect(p.errors).toHaveProperty([key]);
      }
      for (const [qs, key] of [
        ['?page_size=501', 'query.page_size'],
        ['?status=done', 'query.status'],
      ]) {
        const p = expectProblem(
          await t.req('get', api(`/run-cases/${id}/rows${qs}`), f.viewer.token),
          422,
          'validation_error',
        );
        expect(p.errors).toHaveProperty([key]);
      }
      const rows = await ok(
        await t.req('get', api(`/run-cases/${id}/rows?page_size=500`), f.viewer.token),
        200,
      );
      expect(rows).toMatchObject({ page: 1, page_size: 500, total: 1, has_next: false });
      const fresh = await ok(await t.req('get', api(`/run-cases/${id}/rows`), f.viewer.token), 200);
      expect(fresh).toMatchObject({ page_size: 100 });
    });

    it('unknown ids are 404 with the entity code', async () => {
      const unknown = '0190d9a6-0000-7000-8000-000000000000';
      expectProblem(
        await t.req('get', api(`/run-cases/${unknown}`), f.viewer.token),
        404,
        'run_case_not_found',
      );
      expectProblem(
        await t.req('get', api('/run-cases/nope/rows'), f.viewer.token),
        404,
        'run_case_not_found',
      );
      expectProblem(await patchRow(unknown, { status: 'passed' }), 404, 'run_case_row_not_found');
      expectProblem(
        await t
          .req('post', api('/run-cases'), f.tester.token)
          .send({ test_run_id: unknown, test_case_id: unknown }),
        404,
        'test_run_not_found',
      );
      expectProblem(
        await t.req('get', api(`/run-cases?test_run_id=${unknown}`), f.viewer.token),
        404,
        'test_run_not_found',
      );
    });
  });

  describe('closed runs', () => {
    it.each(['completed', 'archived'])(
      'a %s run refuses every change of items and rows (run_closed)',
      async (status) => {
        const { run, items } = await runWithCases(2);
        const [row] = await rowsOf(items[0].id);
        await ok(await patchRow(row.id, { status: 'failure' }), 200);
        await ok(await patchRun(run.id, { status: 'in_progress' }), 200);
        await ok(await patchRun(run.id, { status: 'completed' }), 200);
        if (status === 'archived') await ok(await patchRun(run.id, { status: 'archived' }), 200);
        const c = await createCase();
        expectProblem(await addCase(run.id, c.id), 409, 'run_closed');
        expectProblem(
          await t
            .req('post', api('/run-cases/bulk'), f.tester.token)
            .send({ test_run_id: run.id, test_case_ids: [c.id] }),
          409,
          'run_closed',
        );
        expectProblem(
          await t
            .req('patch', api(`/run-cases/${String(items[0].id)}`), f.tester.token)
            .send({ comment: 'x' }),
          409,
          'run_closed',
        );
        expectProblem(await patchRow(row.id, { status: 'passed' }), 409, 'run_closed');
        expectProblem(
          await t
            .req('post', api(`/run-cases/${String(items[0].id)}/rerun`), f.tester.token)
            .send({}),
          409,
          'run_closed',
        );
        expectProblem(
          await t.req('delete', api(`/run-cases/${String(items[1].id)}`), f.lead.token),
          409,
          'run_closed',
        );
        // Reads still work.
        await ok(await t.req('get', api(`/run-cases/${String(items[0].id)}`), f.viewer.token), 200);
        await ok(
          await t.req('get', api(`/run-cases?test_run_id=${String(run.id)}`), f.viewer.token),
          200,
        );
      },
    );

    it('a not_started run accepts results without starting', async () => {
      const { run, items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      await ok(await patchRow(row.id, { status: 'passed' }), 200);
      expect((await getRun(run.id)).status).toBe('not_started');
    });
  });

  describe('rerun', () => {
    it('reruns failed rows with new untested rows that point at them', async () => {
      const { run, items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      await ok(await patchRow(row.id, { status: 'error' }), 200);
      const res = await ok(
        await t
          .req('post', api(`/run-cases/${String(items[0].id)}/rerun`), f.tester.token)
          .send({}),
        201,
      );
      const fresh = (res.items as Json[])[0];
      expect(res).toMatchObject({ total: 1, has_next: false });
      expect(fresh).toMatchObject({
        parent_row_id: row.id,
        row_order: 2,
        status: 'untested',
        scenario_label: 'Default scenario',
        execution_count: 0,
      });
      expect(await rowsOf(items[0].id)).toHaveLength(2);
      // The old failed row is kept, so the item stays error until it is re-recorded.
      await ok(await patchRow(fresh.id, { status: 'passed' }), 200);
      const item = await ok(
        await t.req('get', api(`/run-cases/${String(items[0].id)}`), f.viewer.token),
        200,
      );
      expect(item).toMatchObject({
        status: 'error',
        rows_total: 2,
        rows_passed: 1,
        rows_failed: 1,
      });
      expect((await getRun(run.id)).summary).toMatchObject({ error: 1 });
    });

    it('reruns selected rows; nothing failed gives an empty page; foreign row ids are ignored', async () => {
      const { items } = await runWithCases(2);
      const [row] = await rowsOf(items[0].id);
      const [otherRow] = await rowsOf(items[1].id);
      const rerun = (body: Json) =>
        t.req('post', api(`/run-cases/${String(items[0].id)}/rerun`), f.tester.token).send(body);
      const empty = await ok(await rerun({ mode: 'failed' }), 201);
      expect(empty).toEqual({ items: [], page: 1, page_size: 50, has_next: false, total: 0 });
      let p = expectProblem(await rerun({ mode: 'subset' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('run_case_row_ids');
      p = expectProblem(
        await rerun({ mode: 'subset', run_case_row_ids: [] }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('run_case_row_ids');
      p = expectProblem(await rerun({ mode: 'everything' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('mode');
      // Ids that are not rows of this item are ignored (reference §3.8).
      const ignored = await ok(
        await rerun({ mode: 'subset', run_case_row_ids: [otherRow.id, 'nope'] }),
        201,
      );
      expect(ignored).toMatchObject({ items: [], total: 0 });
      expect(await rowsOf(items[1].id)).toHaveLength(1);
      await ok(await patchRow(row.id, { status: 'passed' }), 200);
      const res = await ok(await rerun({ mode: 'subset', run_case_row_ids: [row.id] }), 201);
      expect((res.items as Json[])[0]).toMatchObject({ parent_row_id: row.id, status: 'untested' });
      // The new untested row turns the passed item back to untested, recorded in history.
      const item = await ok(
        await t.req('get', api(`/run-cases/${String(items[0].id)}`), f.viewer.token),
        200,
      );
      expect(item.status).toBe('untested');
      expect(((item.history as Json).items as Json[])[0]).toMatchObject({
        from_status: 'passed',
        to_status: 'untested',
      });
    });

    it('use_latest_revisions rebuilds rows from the current revision, ignoring a pin', async () => {
      const c = await createCase();
      const ds = await createDataset('pinned ', [
        { row_key: 'a', scenario_label: 'A', values: { v: 'old a' } },
        { row_key: 'b', scenario_label: 'B', values: { v: 'old b' } },
      ]);
      await bindDataset(c.id, ds.id, 'd', { mode: 'pin_revision', pinned_revision_number: 1 });
      const run = await createRun();
      const item = await ok(await addCase(run.id, c.id), 201);
      const [rowA, rowB] = await rowsOf(item.id);
      // Revision 2 changes both rows; the binding stays pinned to revision 1.
      await replaceRows(ds.id, [
        { row_key: 'a', scenario_label: 'A', values: { v: 'new a' } },
        { row_key: 'b', scenario_label: 'B', values: { v: 'new b' } },
      ]);
      await ok(await patchRow(rowA.id, { status: 'failure' }), 200);
      await ok(await patchRow(rowB.id, { status: 'passed' }), 200);
      type Snapshot = { datasets: Array<{ revision_number: number; values: Json }> };
      const rerun = (body: Json) =>
        t.req('post', api(`/run-cases/${String(item.id)}/rerun`), f.tester.token).send(body);

      const copied = ((await ok(await rerun({}), 201)).items as Json[])[0];
      expect(copied).toMatchObject({ parent_row_id: rowA.id, scenario_label: 'd:A' });
      expect(copied.row_snapshot).toEqual(rowA.row_snapshot);

      const latest = (await ok(await rerun({ use_latest_revisions: true }), 201)).items as Json[];
      // Only the failed row's label is rerun, from revision 2 although the binding pins revision 1.
      expect(latest).toHaveLength(1);
      expect(latest[0]).toMatchObject({ parent_row_id: rowA.id, scenario_label: 'd:A' });
      const snapshot = latest[0].row_snapshot as Snapshot;
      expect(snapshot.datasets).toHaveLength(1);
      expect(snapshot.datasets[0]).toMatchObject({ revision_number: 2, values: { v: 'new a' } });
      expect((rowA.row_snapshot as Snapshot).datasets[0]).toMatchObject({
        revision_number: 1,
        values: { v: 'old a' },
      });
      // Adding the case to a new run still uses the pinned revision.
      const other = await ok(await addCase((await createRun()).id, c.id), 201);
      const [pinned] = await rowsOf(other.id);
      expect((pinned.row_snapshot as Snapshot).datasets[0]).toMatchObject({ revision_number: 1 });
    });

    // Found by an audit: the rebuilt rows were matched by label, so rerunning one of two dataset
    // rows sharing a label reran both, each pointing at the selected row.
    it('use_latest_revisions reruns the same dataset rows: a shared label, a label changed since', async () => {
      const c = await createCase();
      const ds = await createDataset('labels ', [
        { row_key: 'a', scenario_label: 'X', values: { v: 1 } },
        { row_key: 'b', scenario_label: 'X', values: { v: 2 } },
        { row_key: 'c', scenario_label: 'C', values: { v: 3 } },
      ]);
      await bindDataset(c.id, ds.id);
      const item = await ok(await addCase((await createRun()).id, c.id), 201);
      const [rowA, rowB, rowC] = await rowsOf(item.id);
      type Snapshot = { datasets: Array<{ row_key: string; scenario_label: string }> };
      const keyOf = (r: Json) => (r.row_snapshot as Snapshot).datasets[0].row_key;
      expect([rowA, rowB, rowC].map(keyOf)).toEqual(['a', 'b', 'c']);
      // Revision 2 renames c's label.
      await replaceRows(ds.id, [
        { row_key: 'a', scenario_label: 'X', values: { v: 1 } },
        { row_key: 'b', scenario_label: 'X', values: { v: 2 } },
        { row_key: 'c', scenario_label: 'C renamed', values: { v: 3 } },
      ]);
      const rerun = async (ids: string[]) =>
        (
          await ok(
            await t
              .req('post', api(`/run-cases/${String(item.id)}/rerun`), f.tester.token)
              .send({ mode: 'subset', run_case_row_ids: ids, use_latest_revisions: true }),
            201,
          )
        ).items as Json[];
      const shared = await rerun([String(rowA.id)]);
      expect(shared.map((r) => [keyOf(r), r.parent_row_id])).toEqual([['a', rowA.id]]);
      const renamed = await rerun([String(rowC.id), String(rowB.id)]);
      expect(renamed.map((r) => [keyOf(r), r.parent_row_id, r.scenario_label])).toEqual([
        ['b', rowB.id, 'd:X'],
        ['c', rowC.id, 'd:C renamed'],
      ]);
    });
  });

  describe('listing', () => {
    it('lists a run’s items with filters, sorting and paging in constant queries', async () => {
      const { run, items } = await runWithCases(5);
      const [r0] = await rowsOf(items[0].id);
      const [r1] = await rowsOf(items[1].id);
      await ok(
        await patchRow(r0.id, { status: 'passed', finished_at: '2026-01-01T00:00:00Z' }),
        200,
      );
      await ok(
        await patchRow(r1.id, { status: 'failure', finished_at: '2026-01-02T00:00:00Z' }),
        200,
      );
      await ok(
        await t
          .req('patch', api(`/run-cases/${String(items[2].id)}`), f.tester.token)
          .send({ assignee_id: f.lead.id }),
        200,
      );
      const list = (qs: string) =>
        t.req('get', api(`/run-cases?test_run_id=${String(run.id)}${qs}`), f.viewer.token);

      const all = await ok(await list(''), 200);
      expect(all).toMatchObject({ total: 5, page: 1, page_size: 50, has_next: false });
      const order = (all.items as Json[]).map((i) => i.id);
      expect(order.slice(0, 2)).toEqual([items[1].id, items[0].id]);

      const failed = await ok(await list('&status=failure&status=passed'), 200);
      expect((failed.items as Json[]).map((i) => i.id).sort()).toEqual(
        [items[0].id, items[1].id].sort(),
      );
      const assigned = await ok(await list(`&assignee_id=${f.lead.id}`), 200);
      expect((assigned.items as Json[]).map((i) => i.id)).toEqual([items[2].id]);
      const search = await ok(
        await list(`&search=${encodeURIComponent(String(items[3].test_case_title))}`),
        200,
      );
      expect((search.items as Json[]).map((i) => i.id)).toEqual([items[3].id]);
      const byKey = await ok(await list('&sort_by=test_case_key&sort_order=asc'), 200);
      expect((byKey.items as Json[]).map((i) => i.id)).toEqual(items.map((i) => i.id));

      const page2 = await ok(
        await list('&page=2&page_size=2&sort_by=created_at&sort_order=asc'),
        200,
      );
      expect(page2).toMatchObject({ total: 5, page: 2, page_size: 2, has_next: true });
      expect((page2.items as Json[]).map((i) => i.id)).toEqual([items[2].id, items[3].id]);
      const past = await ok(await list('&page=9&page_size=2'), 200);
      expect(past).toMatchObject({ items: [], total: 5, has_next: false });

      // A list of run items, not of rows: page_size 1..200 (CONTRACT §2).
      expect(await ok(await list('&page_size=200'), 200)).toMatchObject({ page_size: 200 });
      let bad = expectProblem(await list('&page_size=201'), 422, 'validation_error');
      expect(bad.errors).toHaveProperty(['query.page_size']);
      bad = expectProblem(await list('&page_size=0'), 422, 'validation_error');
      expect(bad.errors).toHaveProperty(['query.page_size']);
      expectProblem(await list('&sort_by=nope'), 422, 'validation_error');
      bad = expectProblem(await list('&search=a%00b'), 422, 'validation_error');
      expect(bad.errors).toHaveProperty(['query.search']);
      expectProblem(await list('&status=nope'), 422, 'validation_error');

      const small = await statementsDuring(async () => ok(await list('&page_size=1'), 200));
      const large = await statementsDuring(async () => ok(await list('&page_size=200'), 200));
      expect(large.statements.length).toBe(small.statements.length);
    });

    it('lists one test case across runs; needs test_run_id or project_id + test_case_id', async () => {
      const c = await createCase();
      const runA = await createRun({ build: 'alpha-build' });
      const runB = await createRun({ build: 'beta-build' });
      await ok(await addCase(runA.id, c.id), 201);
      await ok(await addCase(runB.id, c.id), 201);
      const res = await ok(
        await t.req(
          'get',
          api(`/run-cases?project_id=${f.projectId}&test_case_id=${String(c.id)}`),
          f.viewer.token,
        ),
        200,
      );
      expect((res.items as Json[]).map((i) => i.test_run_id).sort()).toEqual(
        [runA.id, runB.id].sort(),
      );
      const searched = await ok(
        await t.req(
          'get',
          api(`/run-cases?project_id=${f.projectId}&test_case_id=${String(c.id)}&search=beta`),
          f.viewer.token,
        ),
        200,
      );
      expect((searched.items as Json[]).map((i) => i.test_run_id)).toEqual([runB.id]);
      let p = expectProblem(
        await t.req('get', api('/run-cases'), f.viewer.token),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty(['query.project_id']);
      p = expectProblem(
        await t.req('get', api(`/run-cases?project_id=${f.projectId}`), f.viewer.token),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty(['query.test_case_id']);
      expectProblem(
        await t.req(
          'get',
          api(
            `/run-cases?project_id=${f.projectId}&test_case_id=0190d9a6-0000-7000-8000-000000000000`,
          ),
          f.viewer.token,
        ),
        404,
        'test_case_not_found',
      );
    });

    it('rows list filters by status and pages', async () => {
      const c = await createCase();
      const ds = await createDataset(
        'five ',
        ['a', 'b', 'c', 'd', 'e'].map((k) => ({ row_key: k, values: { v: k } })),
      );
      await bindDataset(c.id, ds.id);
      const run = await createRun();
      const item = await ok(await addCase(run.id, c.id), 201);
      const rows = await rowsOf(item.id);
      await ok(await patchRow(rows[3].id, { status: 'skipped' }), 200);
      const skipped = await ok(
        await t.req(
          'get',
          api(`/run-cases/${String(item.id)}/rows?status=skipped`),
          f.viewer.token,
        ),
        200,
      );
      expect((skipped.items as Json[]).map((r) => r.id)).toEqual([rows[3].id]);
      const page = await ok(
        await t.req(
          'get',
          api(`/run-cases/${String(item.id)}/rows?page=2&page_size=2`),
          f.viewer.token,
        ),
        200,
      );
      expect(page).toMatchObject({ total: 5, has_next: true });
      expect((page.items as Json[]).map((r) => r.row_order)).toEqual([3, 4]);
    });

    it('an item keeps its snapshots after its test case is deleted', async () => {
      const c = await createCase({ priority: 'low' });
      const run = await createRun();
      const item = await ok(await addCase(run.id, c.id), 201);
      await ok(await t.req('delete', api(`/test-cases/${String(c.id)}`), f.lead.token), 204);
      const got = await ok(
        await t.req('get', api(`/run-cases/${String(item.id)}`), f.viewer.token),
        200,
      );
      expect(got).toMatchObject({
        test_case_id: null,
        test_case_key: c.key,
        test_case_title: c.title,
        test_case_priority: 'low',
      });
      expect((await getRun(run.id)).summary).toMatchObject({ total: 1 });
    });

    it('live case values win over snapshots; the suite is the snapshot, else the live one', async () => {
      const s1 = await createSuite();
      const s2 = await createSuite();
      const inSuite = await createCase({ suite_id: s1.id, title: 'Old title' });
      const noSuite = await createCase();
      const run = await createRun();
      const a = await ok(await addCase(run.id, inSuite.id), 201);
      const b = await ok(await addCase(run.id, noSuite.id), 201);
      expect(b).toMatchObject({ suite_id: null, suite_name: null });
      for (const [c, body] of [
        [inSuite, { suite_id: s2.id, title: 'New title' }],
        [noSuite, { suite_id: s2.id }],
      ] as Array<[Json, Json]>) {
        await ok(
          await t.req('patch', api(`/test-cases/${String(c.id)}`), f.tester.token).send(body),
          200,
        );
      }
      const [gotA, gotB] = await Promise.all(
        [a, b].map(async (i) =>
          ok(await t.req('get', api(`/run-cases/${String(i.id)}`), f.viewer.token), 200),
        ),
      );
      expect(gotA).toMatchObject({
        test_case_title: 'New title',
        suite_id: s1.id,
        suite_name: s1.name,
      });
      expect(gotB).toMatchObject({ suite_id: s2.id, suite_name: s2.name });
      const sorted = await ok(
        await t.req(
          'get',
          api(`/run-cases?test_run_id=${String(run.id)}&sort_by=suite_name&sort_order=asc`),
          f.viewer.token,
        ),
        200,
      );
      const byName: Array<[unknown, string]> = [
        [a.id, String(s1.name).toLowerCase()],
        [b.id, String(s2.name).toLowerCase()],
      ];
      const expected = byName
        .sort((x, y) => (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0))
        .map((x) => x[0]);
      expect((sorted.items as Json[]).map((i) => i.id)).toEqual(expected);
    });

    it('a run deletion removes its items, rows and history', async () => {
      const { run, items } = await runWithCases(1);
      const [row] = await rowsOf(items[0].id);
      await ok(await patchRow(row.id, { status: 'failure' }), 200);
      await ok(await t.req('delete', api(`/test-runs/${String(run.id)}`), f.lead.token), 204);
      const left = await t.db.query(
        `SELECT (SELECT count(*) FROM run_items WHERE id = $1)::int AS items,
                (SELECT count(*) FROM run_item_rows WHERE id = $2)::int AS rows,
                (SELECT count(*) FROM run_item_history WHERE run_item_id = $1)::int AS history`,
        [items[0].id, row.id],
      );
      expect(left[0]).toEqual({ items: 0, rows: 0, history: 0 });
    });
  });
});
