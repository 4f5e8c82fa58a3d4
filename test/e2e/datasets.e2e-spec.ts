import { randomUUID } from 'node:crypto';
import { statementsDuring } from '../support/query-count';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';

const COLUMNS = [
  { column_key: 'username', display_name: 'User name' },
  { column_key: 'password' },
  { column_key: 'label', is_scenario_label: true },
];
const ROWS = [
  {
    row_key: 'admin',
    scenario_label: 'Administrator',
    values: { username: 'admin', password: 'a' },
  },
  { row_key: 'guest', values: { username: 'guest' }, is_active: false },
];

describe('datasets with revisions (CONTRACT §10)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let other: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    [f, other] = await Promise.all([t.roleFixture(), t.roleFixture()]);
  });
  afterAll(async () => {
    await t.close();
  });

  const createDataset = async (body: Record<string, unknown> = {}, fx: RoleFixture = f) => {
    const res = await t.req('post', `${API}/datasets`, fx.tester.token).send({
      project_id: fx.projectId,
      name: t.unique('Dataset '),
      columns: COLUMNS,
      rows: ROWS,
      ...body,
    });
    if (res.status !== 201)
      throw new Error(`create dataset: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as {
      id: string;
      name: string;
      current_revision_number: number;
      [k: string]: unknown;
    };
  };
  const patch = (id: string, body: Record<string, unknown>, token = f.tester.token) =>
    t.req('patch', `${API}/datasets/${id}`, token).send(body);

  describe('role matrix', () => {
    it('GET /datasets needs viewer', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/datasets?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });
    it('POST /datasets needs tester', async () => {
      let i = 0;
      await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/datasets`,
        body: () => ({ project_id: f.projectId, name: `matrix ${i++}` }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
    });
    it('GET /datasets/{id} needs viewer', async () => {
      const d = await createDataset();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/datasets/${d.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'dataset_not_found',
      });
    });
    it('PATCH /datasets/{id} needs tester', async () => {
      const d = await createDataset();
      await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/datasets/${d.id}`,
        body: () => ({ description: 'x' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'dataset_not_found',
      });
    });
    it('DELETE /datasets/{id} needs lead', async () => {
      const d = await createDataset();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/datasets/${d.id}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'dataset_not_found',
      });
      expectProblem(
        await t.req('get', `${API}/datasets/${d.id}`, f.lead.token),
        404,
        'dataset_not_found',
      );
    });
    it('POST /datasets/bulk needs lead (project from the body)', async () => {
      const d = await createDataset();
      const ok = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/datasets/bulk`,
        body: () => ({ project_id: f.projectId, dataset_ids: [d.id], action: 'delete' }),
        minRole: 'lead',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(ok.body).toEqual({ affected_count: 1 });
      expectProblem(
        await t.req('get', `${API}/datasets/${d.id}`, f.lead.token),
        404,
        'dataset_not_found',
      );
    });
    it('GET /datasets/{id}/revisions needs viewer', async () => {
      const d = await createDataset();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/datasets/${d.id}/revisions`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'dataset_not_found',
      });
    });
    it('GET /datasets/{id}/revisions/{n} needs viewer', async () => {
      const d = await createDataset();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/datasets/${d.id}/revisions/1`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'dataset_not_found',
      });
    });
  });

  it('create writes revision 1 with the table; reads return it', async () => {
    const d = await createDataset({
      description: 'logins',
      source_type: 'pytest_parametrize',
      source_ref: 'tests/x.py',
      change_summary: 'first',
    });
    expect(d).toMatchObject({
      project_id: f.projectId,
      description: 'logins',
      status: 'active',
      source_type: 'pytest_parametrize',
      source_ref: 'tests/x.py',
      current_revision_number: 1,
      test_case_ids: [],
      test_cases_count: 0,
      created_by: f.tester.id,
      archived_at: null,
    });
    const rev = d.current_revision as Record<string, unknown>;
    expect(rev).toMatchObject({
      revision_number: 1,
      rows_count: 2,
      change_summary: 'first',
      is_current: true,
      dataset_id: d.id,
    });
    expect(d.current_revision_id).toBe(rev.id);
    expect(rev.columns).toEqual([
      {
        column_key: 'username',
        display_name: 'User name',
        data_type: 'string',
        required: false,
        default_value: null,
        order_index: 0,
        is_scenario_label: false,
      },
      {
        column_key: 'password',
        display_name: 'password',
        data_type: 'string',
        required: false,
        default_value: null,
        order_index: 1,
        is_scenario_label: false,
      },
      {
        column_key: 'label',
        display_name: 'label',
        data_type: 'string',
        required: false,
        default_value: null,
        order_index: 2,
        is_scenario_label: true,
      },
    ]);
    expect(rev.rows).toEqual([
      {
        row_key: 'admin',
        scenario_label: 'Administrator',
        order_index: 0,
        values: { username: 'admin', password: 'a' },
        is_active: true,
      },
      {
        row_key: 'guest',
        scenario_label: null,
        order_index: 1,
        values: { username: 'guest' },
        is_active: false,
      },
    ]);
    const got = await t.req('get', `${API}/datasets/${d.id}`, f.viewer.token);
    expect(got.body).toEqual(d);
    const empty = await createDataset({ columns: undefined, rows: undefined });
    expect(empty.current_revision).toMatchObject({
      revision_number: 1,
      rows_count: 0,
      columns: [],
      rows: [],
    });
  });

  it('validates the table: unique columns, one scenario label, unique rows, values only for defined columns', async () => {
    const post = (body: Record<string, unknown>) =>
      t
        .req('post', `${API}/datasets`, f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('bad '), ...body });
    const e1 = expectProblem(
      await post({ columns: [{ column_key: 'a' }, { column_key: 'a' }] }),
      422,
      'validation_error',
    );
    expect(e1.errors).toHaveProperty(['columns.1.column_key']);
    expect(e1.errors).toHaveProperty('columns'); // the reference's key for table rules
    const e2 = expectProblem(
      await post({
        columns: [
          { column_key: 'a', is_scenario_label: true },
          { column_key: 'b', is_scenario_label: true },
        ],
      }),
      422,
      'validation_error',
    );
    expect(e2.errors).toHaveProperty(['columns.1.is_scenario_label']);
    const e3 = expectProblem(
      await post({ columns: [{ column_key: 'a' }], rows: [{ row_key: 'r' }, { row_key: 'r' }] }),
      422,
      'validation_error',
    );
    expect(e3.errors).toHaveProperty(['rows.1.row_key']);
    const e4 = expectProblem(
      await post({
        columns: [{ column_key: 'a' }],
        rows: [{ row_key: 'r', values: { a: 1, zz: 2 } }],
      }),
      422,
      'validation_error',
    );
    expect(e4.errors).toHaveProperty(['rows.0.values']);
    expect((e4.errors as Record<string, string[]>).rows[0]).toContain('zz');
    // Shape errors
    expect(
      expectProblem(await post({ columns: [{ column_key: '  ' }] }), 422, 'validation_error')
        .errors,
    ).toHaveProperty(['columns.0.column_key']);
    expect(
      expectProblem(await post({ rows: [{ row_key: 'r', values: 'x' }] }), 422, 'validation_error')
        .errors,
    ).toHaveProperty(['rows.0.values']);
    expect(
      expectProblem(await post({ rows: [{ row_key: 'r', colour: 1 }] }), 422, 'validation_error')
        .errors,
    ).toHaveProperty(['rows.0.colour']);
    expect(
      expectProblem(await post({ name: null }), 422, 'validation_error').errors,
    ).toHaveProperty('name');
    expect(
      expectProblem(await post({ columns: null }), 422, 'validation_error').errors,
    ).toHaveProperty('columns');
    expect(
      expectProblem(await post({ source_type: 'csv' }), 422, 'validation_error').errors,
    ).toHaveProperty('source_type');
    const count = await t.db.query(
      `SELECT count(*)::int AS n FROM datasets WHERE name LIKE 'bad %'`,
    );
    expect(count[0].n).toBe(0);
  });

  it('a table with more than 100 invalid fields lists the first 100 and says how many there were (README "Fields")', async () => {
    const created = await t.req('post', `${API}/datasets`, f.tester.token).send({
      project_id: f.projectId,
      name: t.unique('many errors '),
      columns: Array.from({ length: 10 }, () => ({ column_key: 'c' })),
      rows: Array.from({ length: 150 }, () => ({ row_key: 'dup' })),
    });
    const p1 = expectProblem(created, 422, 'validation_error');
    expect(Object.keys(p1.errors as object)).toHaveLength(100);
    // `columns` + 9 duplicate column paths, `rows` + 149 duplicate row paths.
    expect(p1.detail).toContain('the first 100 of 160');
    expect(p1.errors).toHaveProperty(['columns.9.column_key']);

    const ds = await t.req('post', `${API}/datasets`, f.tester.token).send({
      project_id: f.projectId,
      name: t.unique('many errors '),
      columns: [{ column_key: 'c' }],
    });
    expect(ds.status).toBe(201);
    const patched = await t
      .req('patch', `${API}/datasets/${ds.body.id}`, f.tester.token)
      .send({ rows: Array.from({ length: 150 }, () => ({ row_key: 'dup', values: { zz: 1 } })) });
    const p2 = expectProblem(patched, 422, 'validation_error');
    expect(Object.keys(p2.errors as object)).toHaveLength(100);
    // `rows` + 149 duplicate keys + 150 rows with values for an undefined column.
    expect(p2.detail).toContain('the first 100 of 300');
    const revisions = await t.req('get', `${API}/datasets/${ds.body.id}/revisions`, f.tester.token);
    expect(revisions.body.total).toBe(1);
  });

  it('names are unique per project (409 dataset_already_exists), compared exactly after trimming; other projects may reuse them', async () => {
    const d = await createDataset({ name: 'Unique Name' });
    const dup = await t
      .req('post', `${API}/datasets`, f.tester.token)
      .send({ project_id: f.projectId, name: '  Unique Name ' });
    // A conflict carries no `errors` (CONTRACT §3: only validation failures do).
    expect(expectProblem(dup, 409, 'dataset_already_exists')).not.toHaveProperty('errors');
    await createDataset({ name: 'Unique Name' }, other);
    // Reference §4.1: the (project_id, name) uniqueness is exact, so names differing in case coexist.
    const lower = await createDataset({ name: 'unique name' });
    expect(lower.name).toBe('unique name');
    const d2 = await createDataset();
    expectProblem(await patch(d2.id, { name: 'Unique Name' }), 409, 'dataset_already_exists');
    expect((await patch(d.id, { name: 'Unique Name' })).status).toBe(200);
    const concurrent = await Promise.all(
      [1, 2, 3].map(() =>
        t
          .req('post', `${API}/datasets`, f.tester.token)
          .send({ project_id: f.projectId, name: 'Raced name' }),
      ),
    );
    expect(concurrent.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });

  describe('revisions', () => {
    it('a new revision only when columns or rows change; metadata edits change nothing else', async () => {
      const d = await createDataset();
      const meta = await patch(d.id, {
        name: t.unique('Renamed '),
        description: 'new',
        source_type: 'imported',
        change_summary: 'ignored',
      });
      expect(meta.status).toBe(200);
      expect(meta.body).toMatchObject({
        current_revision_number: 1,
        description: 'new',
        source_type: 'imported',
      });
      const same = await patch(d.id, { rows: ROWS, columns: COLUMNS });
      expect(same.body.current_revision_number).toBe(1);
      const empty = await patch(d.id, {});
      expect(empty.body.current_revision_number).toBe(1);
      const rows2 = [...ROWS, { row_key: 'ops', values: { username: 'ops' } }];
      const changed = await patch(d.id, { rows: rows2, change_summary: 'add ops' });
      expect(changed.body).toMatchObject({ current_revision_number: 2 });
      expect(changed.body.current_revision).toMatchObject({
        revision_number: 2,
        rows_count: 3,
        change_summary: 'add ops',
        is_current: true,
      });
      expect(changed.body.current_revision.columns).toHaveLength(3); // columns kept from revision 1
      const cols2 = await patch(d.id, { columns: [...COLUMNS, { column_key: 'otp' }] });
      expect(cols2.body.current_revision_number).toBe(3);
      expect(cols2.body.current_revision.rows).toHaveLength(3); // rows kept from revision 2
      // Revision 1 is immutable.
      const r1 = await t.req('get', `${API}/datasets/${d.id}/revisions/1`, f.viewer.token);
      expect(r1.body).toMatchObject({ revision_number: 1, rows_count: 2, is_current: false });
      expect(r1.body.rows.map((r: { row_key: string }) => r.row_key)).toEqual(['admin', 'guest']);
      const list = await t.req('get', `${API}/datasets/${d.id}/revisions`, f.viewer.token);
      expect(list.body).toMatchObject({ total: 3, page: 1, has_next: false });
      expect(list.body.items.map((r: { revision_number: number }) => r.revision_number)).toEqual([
        3, 2, 1,
      ]);
      // Reference §4.6: revision list items carry their columns and rows.
      expect(list.body.items[0].columns).toHaveLength(4);
      expect(list.body.items[2].rows.map((r: { row_key: string }) => r.row_key)).toEqual([
        'admin',
        'guest',
      ]);
      const withoutRows = await t.req(
        'get',
        `${API}/datasets/${d.id}/revisions?include_rows=false&page_size=1&page=2`,
        f.viewer.token,
      );
      expect(withoutRows.body).toMatchObject({ total: 3, has_next: true });
      expect(withoutRows.body.items[0]).toMatchObject({ revision_number: 2 });
      expect(withoutRows.body.items[0]).not.toHaveProperty('rows');
    });

    it('a table change that breaks existing rows is rejected and writes nothing', async () => {
      const d = await createDataset();
      const res = await patch(d.id, { columns: [{ column_key: 'username' }] });
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(['rows.0.values']);
      const after = await t.req('get', `${API}/datasets/${d.id}`, f.viewer.token);
      expect(after.body.current_revision_number).toBe(1);
      const revs = await t.db.query(
        `SELECT count(*)::int AS n FROM dataset_revisions WHERE dataset_id = $1`,
        [d.id],
      );
      expect(revs[0].n).toBe(1);
    });

    it('unknown revision numbers are 404; malformed ones 422', async () => {
      const d = await createDataset();
      expectProblem(
        await t.req('get', `${API}/datasets/${d.id}/revisions/7`, f.viewer.token),
        404,
        'dataset_revision_not_found',
      );
      expectProblem(
        await t.req('get', `${API}/datasets/${d.id}/revisions/99999999999`, f.viewer.token),
        422,
        'validation_error',
      );
      const bad = await t.req('get', `${API}/datasets/${d.id}/revisions/abc`, f.viewer.token);
      expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty([
        'path.revision_number',
      ]);
      // The request shape comes before the resource: 422 even for a non-member or an unknown id.
      expectProblem(await t.req('get', `${API}/datasets/${d.id}/revisions/abc`), 401, 'unauthorized');
      expectProblem(
        await t.req('get', `${API}/datasets/${d.id}/revisions/abc`, f.outsider.token),
        422,
        'validation_error',
      );
      expectProblem(
        await t.req('get', `${API}/datasets/${randomUUID()}/revisions/2147483648`, f.viewer.token),
        422,
        'validation_error',
      );
      expectProblem(
        await t.req('get', `${API}/datasets/${d.id}/revisions/0`, f.viewer.token),
        422,
        'validation_error',
      );
      expectProblem(
        await t.req('get', `${API}/datasets/${randomUUID()}/revisions/1`, f.viewer.token),
        404,
        'dataset_not_found',
      );
    });

    it('concurrent table changes get contiguous revision numbers', async () => {
      const d = await createDataset();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          patch(d.id, { rows: [{ row_key: `r${i}`, values: { username: String(i) } }] }),
        ),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const revs = await t.db.query(
        `SELECT revision_number FROM dataset_revisions WHERE dataset_id = $1 ORDER BY 1`,
        [d.id],
      );
      expect(revs.map((r: { revision_number: number }) => r.revision_number)).toEqual([
        1, 2, 3, 4, 5, 6, 7,
      ]);
    });

    it('writes and reads a 10,000-row revision', async () => {
      const rows = Array.from({ length: 10000 }, (_, i) => ({
        row_key: `row-${i}`,
        values: { username: `user${i}`, password: `p${i}` },
      }));
      const created = await statementsDuring(() => createDataset({ rows }));
      const d = created.result;
      // Bulk statements, never one per row (speed is the bench's business, not a timed test).
      expect(created.statements.length).toBeLessThanOrEqual(20);
      expect(d.current_revision).toMatchObject({ rows_count: 10000 });
      const got = await t.req('get', `${API}/datasets/${d.id}/revisions/1`, f.viewer.token);
      expect(got.body.rows).toHaveLength(10000);
      expect(got.body.rows[9999]).toMatchObject({ row_key: 'row-9999', order_index: 9999 });
      const tooMany = await t
        .req('post', `${API}/datasets`, f.tester.token)
        .send({ project_id: f.projectId, name: 'too many', rows: [...rows, { row_key: 'x' }] });
      expect(expectProblem(tooMany, 422, 'validation_error').errors).toHaveProperty('rows');
    });
  });

  it('a NUL character anywhere (name, keys, cell values, search) is 422 validation_error, never 500', async () => {
    const post = (body: Record<string, unknown>) =>
      t
        .req('post', `${API}/datasets`, f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('nul '), ...body });
    for (const body of [
      { name: 'a\u0000b' },
      { columns: [{ column_key: 'k\u0000' }] },
      { columns: [{ column_key: 'k' }], rows: [{ row_key: 'r', values: { k: 'x\u0000y' } }] },
      {
        columns: [{ column_key: 'k' }],
        rows: [{ row_key: 'r', values: { k: { deep: ['\u0000'] } } }],
      },
    ]) {
      expectProblem(await post(body), 422, 'validation_error');
    }
    const d = await createDataset();
    expectProblem(await patch(d.id, { description: '\u0000' }), 422, 'validation_error');
    expectProblem(
      await t.req('get', `${API}/datasets?project_id=${f.projectId}&search=a%00b`, f.viewer.token),
      422,
      'validation_error',
    );
    const after = await t.req('get', `${API}/datasets/${d.id}`, f.viewer.token);
    expect(after.body.description).toBeNull();
  });

  it('status archived sets archived_at; active clears it', async () => {
    const d = await createDataset();
    const a = await patch(d.id, { status: 'archived' });
    expect(a.body.status).toBe('archived');
    expect(a.body.archived_at).toMatch(/Z$/);
    const b = await patch(d.id, { status: 'active' });
    expect(b.body.archived_at).toBeNull();
    expectProblem(await patch(d.id, { status: null }), 422, 'validation_error');
  });

  it('lists with search, source_type, status, test-case filters, sorting and paging', async () => {
    const fx = await t.roleFixture();
    const a = await createDataset({ name: 'Alpha users', source_type: 'manual' }, fx);
    const b = await createDataset(
      { name: 'beta_browsers', description: 'browser matrix', source_type: 'imported' },
      fx,
    );
    const c = await createDataset({ name: 'Gamma', status: 'archived' }, fx);
    const tc = await t
      .req('post', `${API}/test-cases`, fx.tester.token)
      .send({ project_id: fx.projectId, title: 'case' });
    await t
      .req('post', `${API}/test-cases/${tc.body.id}/dataset-bindings`, fx.tester.token)
      .send({ dataset_id: b.id, dataset_alias: 'b' })
      .expect(201);
    const names = async (q: string) => {
      const res = await t.req(
        'get',
        `${API}/datasets?project_id=${fx.projectId}&${q}`,
        fx.viewer.token,
      );
      expect(res.status).toBe(200);
      return res.body.items.map((i: { name: string }) => i.name) as string[];
    };
    expect(await names('')).toEqual(['Gamma', 'beta_browsers', 'Alpha users']); // updated_at desc (binding does not touch datasets)
    expect(await names('sort_by=name')).toEqual(['Alpha users', 'beta_browsers', 'Gamma']);
    expect(await names('sort_by=created_at&sort_order=asc')).toEqual([
      'Alpha users',
      'beta_browsers',
      'Gamma',
    ]);
    expect(await names('search=MATRIX')).toEqual(['beta_browsers']);
    expect(await names('search=a_b')).toEqual(['beta_browsers']);
    expect(await names('source_type=imported&source_type=pytest_parametrize')).toEqual([
      'beta_browsers',
    ]);
    expect(await names('status=archived')).toEqual(['Gamma']);
    expect(await names(`test_case_id=${tc.body.id}`)).toEqual(['beta_browsers']);
    expect(await names(`exclude_test_case_id=${tc.body.id}&sort_by=name`)).toEqual([
      'Alpha users',
      'Gamma',
    ]);
    const page = await t.req(
      'get',
      `${API}/datasets?project_id=${fx.projectId}&page_size=2&sort_by=name`,
      fx.viewer.token,
    );
    expect(page.body).toMatchObject({ total: 3, has_next: true, page_size: 2 });
    const item = page.body.items[1];
    expect(item).toMatchObject({ id: b.id, test_case_ids: [tc.body.id], test_cases_count: 1 });
    expect(item.current_revision).toMatchObject({ revision_number: 1, rows_count: 2 });
    expect(item.current_revision.rows).toHaveLength(2);
    const lean = await t.req(
      'get',
      `${API}/datasets?project_id=${fx.projectId}&include_rows=false`,
      fx.viewer.token,
    );
    expect(lean.body.items[0].current_revision.columns).toEqual(expect.any(Array));
    expect(lean.body.items[0].current_revision).not.toHaveProperty('rows');
    expect([a.id, c.id]).toHaveLength(2);
    const bad = await t.req(
      'get',
      `${API}/datasets?project_id=${fx.projectId}&source_type=csv`,
      fx.viewer.token,
    );
    expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty([
      'query.source_type',
    ]);
  });

  it('delete removes revisions and bindings', async () => {
    const d = await createDataset();
    const tc = await t
      .req('post', `${API}/test-cases`, f.tester.token)
      .send({ project_id: f.projectId, title: 'bound' });
    await t
      .req('post', `${API}/test-cases/${tc.body.id}/dataset-bindings`, f.tester.token)
      .send({ dataset_id: d.id, dataset_alias: 'd' })
      .expect(201);
    await t.req('delete', `${API}/datasets/${d.id}`, f.lead.token).expect(204);
    const revs = await t.db.query(
      `SELECT count(*)::int AS n FROM dataset_revisions WHERE dataset_id = $1`,
      [d.id],
    );
    expect(revs[0].n).toBe(0);
    const bindings = await t.req(
      'get',
      `${API}/test-cases/${tc.body.id}/dataset-bindings`,
      f.viewer.token,
    );
    expect(bindings.body.items).toEqual([]);
  });

  describe('bulk delete (POST /datasets/bulk)', () => {
    const bulk = (body: Record<string, unknown>, token = f.lead.token) =>
      t.req('post', `${API}/datasets/bulk`, token).send(body);
    const exists = async (id: string) => {
      const res = await t.req('get', `${API}/datasets/${id}`, f.lead.token);
      if (res.status === 200) return true;
      expectProblem(res, 404, 'dataset_not_found');
      return false;
    };
    const bindTo = async (datasetIds: string[]) => {
      const tc = await t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, title: t.unique('bulk case ') });
      expect(tc.status).toBe(201);
      for (const [i, id] of datasetIds.entries()) {
        await t
          .req('post', `${API}/test-cases/${tc.body.id}/dataset-bindings`, f.tester.token)
          .send({ dataset_id: id, dataset_alias: `d${i}` })
          .expect(201);
      }
      return tc.body.id as string;
    };
    const boundDatasets = async (caseId: string) => {
      const res = await t.req(
        'get',
        `${API}/test-cases/${caseId}/dataset-bindings`,
        f.viewer.token,
      );
      expect(res.status).toBe(200);
      return res.body.items.map((b: { dataset_id: string }) => b.dataset_id) as string[];
    };
    const revisionCount = async (ids: string[]) =>
      (
        await t.db.query(
          `SELECT count(*)::int AS n FROM dataset_revisions WHERE dataset_id = ANY($1::uuid[])`,
          [ids],
        )
      )[0].n as number;

    it('deletes every listed dataset with its revisions and bindings; others stay', async () => {
      const [a, b, keep] = await Promise.all([createDataset(), createDataset(), createDataset()]);
      expect((await patch(a.id, { rows: [{ row_key: 'r2' }] })).body.current_revision_number).toBe(
        2,
      );
      const caseId = await bindTo([a.id, b.id, keep.id]);
      expect(await revisionCount([a.id, b.id])).toBe(3);

      const res = await bulk({
        project_id: f.projectId,
        dataset_ids: [a.id, b.id],
        action: 'delete',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ affected_count: 2 });

      expect(await exists(a.id)).toBe(false);
      expect(await exists(b.id)).toBe(false);
      expect(await exists(keep.id)).toBe(true);
      expectProblem(
        await t.req('get', `${API}/datasets/${a.id}/revisions`, f.viewer.token),
        404,
        'dataset_not_found',
      );
      expect(await revisionCount([a.id, b.id])).toBe(0);
      expect(await revisionCount([keep.id])).toBe(1);
      expect(await boundDatasets(caseId)).toEqual([keep.id]);
    });

    it('uses the same number of statements for 2 ids as for 8 (no per-id round trips)', async () => {
      const two = await Promise.all(Array.from({ length: 2 }, () => createDataset()));
      const eight = await Promise.all(Array.from({ length: 8 }, () => createDataset()));
      const run = (ds: Array<{ id: string }>) =>
        statementsDuring(() =>
          bulk({ project_id: f.projectId, dataset_ids: ds.map((d) => d.id), action: 'delete' }),
        );
      const small = await run(two);
      const large = await run(eight);
      expect(small.result.body).toEqual({ affected_count: 2 });
      expect(large.result.body).toEqual({ affected_count: 8 });
      expect(large.statements.length).toBe(small.statements.length);
    });

    it('duplicate ids, in any letter case, count once', async () => {
      const [a, b] = await Promise.all([createDataset(), createDataset()]);
      const res = await bulk({
        project_id: f.projectId,
        dataset_ids: [a.id, a.id, a.id.toUpperCase(), b.id, ` ${b.id.toUpperCase()} `],
        action: 'delete',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ affected_count: 2 });
      expect(await exists(a.id)).toBe(false);
      expect(await exists(b.id)).toBe(false);
    });

    it('any unknown id (a non-uuid one included) is 404 dataset_not_found, its detail listing them; nothing is deleted', async () => {
      const a = await createDataset();
      const caseId = await bindTo([a.id]);
      const missing = randomUUID();
      const res = await bulk({
        project_id: f.projectId,
        dataset_ids: [a.id, missing, 'not-a-uuid', missing.toUpperCase()],
        action: 'delete',
      });
      // A 404 carries no `errors` (CONTRACT §3): the detail lists the unknown ids.
      const listed = String(expectProblem(res, 404, 'dataset_not_found').detail);
      expect(listed).toContain(missing);
      expect(listed).toContain('not-a-uuid');
      expect(listed).not.toContain(a.id);
      expect(await exists(a.id)).toBe(true);
      expect(await revisionCount([a.id])).toBe(1);
      expect(await boundDatasets(caseId)).toEqual([a.id]);
      // Unknown ids are reported before datasets of another project.
      const foreign = await createDataset({}, other);
      expectProblem(
        await bulk({
          project_id: f.projectId,
          dataset_ids: [foreign.id, missing],
          action: 'delete',
        }),
        404,
        'dataset_not_found',
      );
    });

    it('a dataset of another project is 422 dataset_project_mismatch listing it; nothing is deleted', async () => {
      const [mine, foreign] = await Promise.all([createDataset(), createDataset({}, other)]);
      const res = await bulk({
        project_id: f.projectId,
        dataset_ids: [mine.id, foreign.id],
        action: 'delete',
      });
      const body = expectProblem(res, 422, 'dataset_project_mismatch');
      const listed = (body.errors as Record<string, string[]>).dataset_ids.join(' ');
      expect(listed).toContain(foreign.id);
      expect(listed).not.toContain(mine.id);
      expect(await exists(mine.id)).toBe(true);
      const theirs = await t.req('get', `${API}/datasets/${foreign.id}`, other.viewer.token);
      expect(theirs.status).toBe(200);
      expect(await revisionCount([mine.id, foreign.id])).toBe(2);
    });

    it('the request shape is checked first: bad action, empty or oversized list, unknown or missing fields → 422', async () => {
      const d = await createDataset();
      const base = { project_id: f.projectId, dataset_ids: [d.id], action: 'delete' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...base, action: 'archive' }, 'action'],
        [{ ...base, action: null }, 'action'],
        [{ project_id: f.projectId, dataset_ids: [d.id] }, 'action'],
        [{ ...base, dataset_ids: [] }, 'dataset_ids'],
        [{ ...base, dataset_ids: d.id }, 'dataset_ids'],
        [{ ...base, dataset_ids: [d.id, 7] }, 'dataset_ids'],
        [{ ...base, dataset_ids: Array.from({ length: 1001 }, () => d.id) }, 'dataset_ids'],
        [{ ...base, dataset_ids: ['x'.repeat(101)] }, 'dataset_ids'],
        [{ project_id: f.projectId, action: 'delete' }, 'dataset_ids'],
        [{ ...base, force: true }, 'force'],
        [{ ...base, project_id: 'nope' }, 'project_id'],
      ];
      for (const [body, key] of cases) {
        const res = await bulk(body);
        const problem = expectProblem(res, 422, 'validation_error');
        expect(Object.keys(problem.errors as object).some((k) => k.split('.')[0] === key)).toBe(
          true,
        );
      }
      // Before the project (non-member) and the role (tester) checks.
      expectProblem(
        await bulk({ ...base, action: 'archive' }, f.outsider.token),
        422,
        'validation_error',
      );
      expectProblem(
        await bulk({ ...base, action: 'archive' }, f.tester.token),
        422,
        'validation_error',
      );
      expect(await exists(d.id)).toBe(true);
      // 1,000 ids are accepted.
      const ok = await bulk({ ...base, dataset_ids: Array.from({ length: 1000 }, () => d.id) });
      expect(ok.body).toEqual({ affected_count: 1 });
    });
  });
});
