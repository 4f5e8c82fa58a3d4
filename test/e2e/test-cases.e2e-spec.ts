import { randomUUID } from 'node:crypto';
import { Db } from '../../src/common/persistence/db.service';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';

describe('test cases (CONTRACT §7)', () => {
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

  const createCase = async (
    body: Record<string, unknown> = {},
    fx: RoleFixture = f,
    token = fx.tester.token,
  ) => {
    const res = await t
      .req('post', `${API}/test-cases`, token)
      .send({ project_id: fx.projectId, title: t.unique('Case '), ...body });
    if (res.status !== 201)
      throw new Error(`create case: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown> & { id: string; key: string };
  };

  const insertComponent = async (projectId: string): Promise<string> => {
    const id = randomUUID();
    await t.db.query(`INSERT INTO components (id, project_id, name, key) VALUES ($1, $2, $3, $4)`, [
      id,
      projectId,
      t.unique('Comp '),
      t.unique('C'),
    ]);
    return id;
  };

  const insertProduct = async (projectId: string): Promise<string> => {
    const id = randomUUID();
    await t.db.query(`INSERT INTO products (id, project_id, name, key) VALUES ($1, $2, $3, $4)`, [
      id,
      projectId,
      t.unique('Prod '),
      t.unique('P'),
    ]);
    return id;
  };

  describe('role matrix', () => {
    it('GET /test-cases needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-cases?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(res.body).toMatchObject({ page: 1, page_size: 50 });
    });

    it('GET /test-cases/tags needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-cases/tags?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(Array.isArray(res.body.items)).toBe(true);
    });

    it('POST /test-cases needs tester', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/test-cases`,
        body: () => ({ project_id: f.projectId, title: 'Matrix case' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
      expect(res.body.title).toBe('Matrix case');
    });

    it('GET /test-cases/{id} needs viewer', async () => {
      const c = await createCase();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-cases/${c.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_case_not_found',
      });
    });

    it('PATCH /test-cases/{id} needs tester', async () => {
      const c = await createCase();
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/test-cases/${c.id}`,
        body: () => ({ title: 'Renamed' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'test_case_not_found',
      });
      expect(res.body.title).toBe('Renamed');
    });

    it('DELETE /test-cases/{id} needs lead', async () => {
      const c = await createCase();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/test-cases/${c.id}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'test_case_not_found',
      });
      expectProblem(
        await t.req('get', `${API}/test-cases/${c.id}`, f.viewer.token),
        404,
        'test_case_not_found',
      );
    });
  });

  describe('create and read', () => {
    it('stores every field with defaults: status active, owner = creator, manual type', async () => {
      const res = await t.req('post', `${API}/test-cases`, f.tester.token).send({
        project_id: f.projectId,
        title: '  Login works  ',
        description: 'desc',
        preconditions: 'a user exists',
        steps: [{ action: 'Open page', expected: 'Form shown' }, { action: 'Submit' }],
        priority: 'high',
        tags: [' Smoke', 'smoke', '', 'Auth '],
        automation_id: 'tests.login.test_ok',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        project_id: f.projectId,
        title: 'Login works',
        description: 'desc',
        preconditions: 'a user exists',
        steps: [
          { action: 'Open page', expected: 'Form shown' },
          { action: 'Submit', expected: null },
        ],
        priority: 'high',
        status: 'active',
        test_case_type: 'manual',
        automation_id: 'tests.login.test_ok',
        suite_id: null,
        suite_name: null,
        owner_id: f.tester.id,
        owner_name: f.tester.username,
        primary_product_id: null,
        tags: ['Smoke', 'Auth'],
        component_coverages: [],
        dataset_bindings: [],
        created_by: f.tester.id,
      });
      expect(res.body.key).toMatch(/^TC-\d+$/);
      expect(res.body.created_at).toMatch(/Z$/);
      const got = await t.req('get', `${API}/test-cases/${res.body.id}`, f.viewer.token);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
    });

    it('owner null means nobody; an owner without project access is 422 invalid_owner', async () => {
      const c = await createCase({ owner_id: null });
      expect(c.owner_id).toBeNull();
      const withViewer = await createCase({ owner_id: f.viewer.id });
      expect(withViewer.owner_id).toBe(f.viewer.id);
      const bad = await t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, title: 'x', owner_id: f.outsider.id });
      expect(expectProblem(bad, 422, 'invalid_owner').errors).toHaveProperty('owner_id');
      const unknown = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ owner_id: randomUUID() });
      expectProblem(unknown, 422, 'invalid_owner');
    });

    it('rejects bad input with 422 validation_error and field paths', async () => {
      const post = (body: Record<string, unknown>) =>
        t
          .req('post', `${API}/test-cases`, f.tester.token)
          .send({ project_id: f.projectId, title: 'x', ...body });
      expect(
        expectProblem(await post({ title: '   ' }), 422, 'validation_error').errors,
      ).toHaveProperty('title');
      expect(
        expectProblem(await post({ title: null }), 422, 'validation_error').errors,
      ).toHaveProperty('title');
      expect(
        expectProblem(await post({ status: null }), 422, 'validation_error').errors,
      ).toHaveProperty('status');
      expect(
        expectProblem(await post({ status: 'done' }), 422, 'validation_error').errors,
      ).toHaveProperty('status');
      expect(
        expectProblem(await post({ priority: 'urgent' }), 422, 'validation_error').errors,
      ).toHaveProperty('priority');
      expect(
        expectProblem(await post({ tags: null }), 422, 'validation_error').errors,
      ).toHaveProperty('tags');
      expect(
        expectProblem(await post({ key: 'TC-1' }), 422, 'validation_error').errors,
      ).toHaveProperty('key');
      expect(
        expectProblem(await post({ id: randomUUID() }), 422, 'validation_error').errors,
      ).toHaveProperty('id');
      const steps = expectProblem(
        await post({ steps: [{ action: 'ok' }, { expected: 'x', extra: 1 }] }),
        422,
        'validation_error',
      );
      expect(steps.errors).toHaveProperty(['steps.1.action']);
      expect(steps.errors).toHaveProperty(['steps.1.extra']);
      const cov = expectProblem(
        await post({ component_coverages: [{ component_id: 'nope' }] }),
        422,
        'validation_error',
      );
      expect(cov.errors).toHaveProperty(['component_coverages.0.component_id']);
      const missing = await t.req('post', `${API}/test-cases`, f.tester.token).send({ title: 'x' });
      expect(expectProblem(missing, 422, 'validation_error').errors).toHaveProperty('project_id');
      const c = await createCase();
      const patchNull = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ test_case_type: null });
      expect(expectProblem(patchNull, 422, 'validation_error').errors).toHaveProperty(
        'test_case_type',
      );
      const patchUnknown = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ project_id: other.projectId });
      expectProblem(patchUnknown, 422, 'validation_error');
    });

    it('unknown or malformed ids are 404 test_case_not_found', async () => {
      expectProblem(
        await t.req('get', `${API}/test-cases/${randomUUID()}`, f.viewer.token),
        404,
        'test_case_not_found',
      );
      expectProblem(
        await t.req('get', `${API}/test-cases/not-a-uuid`, f.viewer.token),
        404,
        'test_case_not_found',
      );
      expectProblem(
        await t
          .req('patch', `${API}/test-cases/${randomUUID()}`, f.lead.token)
          .send({ title: 'x' }),
        404,
        'test_case_not_found',
      );
    });
  });

  it('a NUL character (title, tags, steps, search) is 422 validation_error, never 500', async () => {
    for (const body of [
      { title: 'a\u0000b' },
      { title: 'ok', tags: ['x\u0000'] },
      { title: 'ok', steps: [{ action: 'do \u0000' }] },
      { title: 'ok', automation_id: '\u0000' },
    ]) {
      const res = await t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, ...body });
      expectProblem(res, 422, 'validation_error');
    }
    for (const q of ['search=a%00b', 'tag=a%00b']) {
      expectProblem(
        await t.req('get', `${API}/test-cases?project_id=${f.projectId}&${q}`, f.viewer.token),
        422,
        'validation_error',
      );
    }
  });

  describe('keys', () => {
    it('are TC-<n>, sequential per project, never reused after delete', async () => {
      const fx = await t.roleFixture();
      const a = await createCase({}, fx);
      const b = await createCase({}, fx);
      expect([a.key, b.key]).toEqual(['TC-1', 'TC-2']);
      expect((await t.req('delete', `${API}/test-cases/${b.id}`, fx.lead.token)).status).toBe(204);
      const c = await createCase({}, fx);
      expect(c.key).toBe('TC-3');
      const fy = await t.roleFixture();
      expect((await createCase({}, fy)).key).toBe('TC-1');
    });

    it('stay contiguous and unique under concurrent creation', async () => {
      const fx = await t.roleFixture();
      const results = await Promise.all(Array.from({ length: 12 }, () => createCase({}, fx)));
      const numbers = results.map((r) => Number(r.key.slice(3))).sort((x, y) => x - y);
      expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    });

    it('are never reused when creates race with deletes; a refused create takes no number', async () => {
      const fx = await t.roleFixture();
      const first = await Promise.all(Array.from({ length: 3 }, () => createCase({}, fx)));
      const deleted = first.map((c) => c.key);
      const [created] = await Promise.all([
        Promise.all(Array.from({ length: 6 }, () => createCase({}, fx))),
        ...first.map((c) =>
          t.req('delete', `${API}/test-cases/${c.id}`, fx.lead.token).expect(204),
        ),
      ]);
      const keys = created.map((c) => c.key);
      expect(new Set(keys).size).toBe(6);
      expect(keys.filter((k) => deleted.includes(k))).toEqual([]);
      const refused = await t
        .req('post', `${API}/test-cases`, fx.tester.token)
        .send({ project_id: fx.projectId, title: 'x', suite_id: randomUUID() });
      expectProblem(refused, 404, 'suite_not_found');
      expect((await createCase({}, fx)).key).toBe('TC-10');
    });
  });

  describe('automation_id', () => {
    it('is unique per project (409), blank means none, other projects may reuse it', async () => {
      const id = t.unique('auto.');
      await createCase({ automation_id: id });
      const dup = await t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, title: 'x', automation_id: id });
      expectProblem(dup, 409, 'automation_id_already_exists');
      const raced = await Promise.all(
        Array.from({ length: 4 }, () =>
          t
            .req('post', `${API}/test-cases`, f.tester.token)
            .send({ project_id: f.projectId, title: 'raced', automation_id: `${id}.raced` }),
        ),
      );
      expect(raced.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      for (const r of raced.filter((x) => x.status === 409))
        expectProblem(r, 409, 'automation_id_already_exists');
      await createCase({ automation_id: id }, other);
      const blank1 = await createCase({ automation_id: '  ' });
      const blank2 = await createCase({ automation_id: '' });
      expect([blank1.automation_id, blank2.automation_id]).toEqual([null, null]);
      const c = await createCase();
      const patchDup = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ automation_id: id });
      expectProblem(patchDup, 409, 'automation_id_already_exists');
      const cleared = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ automation_id: null });
      expect(cleared.body.automation_id).toBeNull();
    });
  });

  describe('references', () => {
    it('suite must exist (404) and belong to the project (422 suite_project_mismatch)', async () => {
      const suite = await t
        .req('post', `${API}/suites`, f.tester.token)
        .send({ project_id: f.projectId, name: 'S' });
      const foreign = await t
        .req('post', `${API}/suites`, other.tester.token)
        .send({ project_id: other.projectId, name: 'F' });
      const c = await createCase({ suite_id: suite.body.id });
      expect(c).toMatchObject({ suite_id: suite.body.id, suite_name: 'S' });
      const mismatch = await t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, title: 'x', suite_id: foreign.body.id });
      expect(expectProblem(mismatch, 422, 'suite_project_mismatch').errors).toHaveProperty(
        'suite_id',
      );
      const unknown = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ suite_id: randomUUID() });
      expectProblem(unknown, 404, 'suite_not_found');
      const cleared = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ suite_id: null });
      expect(cleared.body).toMatchObject({ suite_id: null, suite_name: null });
    });

    it('primary product must belong to the project (422 product_project_mismatch)', async () => {
      const mine = await insertProduct(f.projectId);
      const theirs = await insertProduct(other.projectId);
      const c = await createCase({ primary_product_id: mine });
      expect(c.primary_product_id).toBe(mine);
      const bad = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ primary_product_id: theirs });
      expect(expectProblem(bad, 422, 'product_project_mismatch').errors).toHaveProperty(
        'primary_product_id',
      );
      const unknown = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ primary_product_id: randomUUID() });
      expectProblem(unknown, 422, 'product_project_mismatch');
    });
  });

  describe('component coverages', () => {
    it('are written on create, read back, and replaced as a whole on PATCH', async () => {
      const [c1, c2, c3] = await Promise.all([
        insertComponent(f.projectId),
        insertComponent(f.projectId),
        insertComponent(f.projectId),
      ]);
      const c = await createCase({
        component_coverages: [
          {
            component_id: c1,
            coverage_type: 'e2e',
            coverage_strength: 'smoke',
            is_mandatory_for_release: true,
            notes: 'n',
          },
          { component_id: c2 },
        ],
      });
      expect(c.component_coverages).toEqual([
        expect.objectContaining({
          test_case_id: c.id,
          component_id: c1,
          coverage_type: 'e2e',
          coverage_strength: 'smoke',
          is_mandatory_for_release: true,
          notes: 'n',
        }),
        expect.objectContaining({
          component_id: c2,
          coverage_type: 'direct',
          coverage_strength: 'regression',
          is_mandatory_for_release: false,
          notes: null,
        }),
      ]);
      const patched = await t.req('patch', `${API}/test-cases/${c.id}`, f.tester.token).send({
        component_coverages: [
          { component_id: c3, coverage_type: 'integration', coverage_strength: 'deep' },
        ],
      });
      expect(patched.status).toBe(200);
      expect(patched.body.component_coverages).toEqual([
        expect.objectContaining({ component_id: c3, coverage_strength: 'deep' }),
      ]);
      const untouched = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ title: 'Only title' });
      expect(untouched.body.component_coverages).toHaveLength(1);
      const cleared = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ component_coverages: [] });
      expect(cleared.body.component_coverages).toEqual([]);
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM test_case_component_coverages WHERE test_case_id = $1`,
        [c.id],
      );
      expect(rows[0].n).toBe(0);
    });

    it('components of another project or unknown → 422 component_project_mismatch; duplicates → 422 validation_error', async () => {
      const mine = await insertComponent(f.projectId);
      const theirs = await insertComponent(other.projectId);
      const post = (cov: unknown[]) =>
        t
          .req('post', `${API}/test-cases`, f.tester.token)
          .send({ project_id: f.projectId, title: 'x', component_coverages: cov });
      const foreign = expectProblem(
        await post([{ component_id: mine }, { component_id: theirs }]),
        422,
        'component_project_mismatch',
      );
      expect(foreign.errors).toHaveProperty(['component_coverages.1.component_id']);
      expectProblem(
        await post([{ component_id: randomUUID() }]),
        422,
        'component_project_mismatch',
      );
      const dup = expectProblem(
        await post([{ component_id: mine }, { component_id: mine }]),
        422,
        'validation_error',
      );
      expect(dup.errors).toHaveProperty(['component_coverages.1.component_id']);
      expectProblem(
        await post([{ component_id: mine, coverage_strength: 'extreme' }]),
        422,
        'validation_error',
      );
      expectProblem(
        await post([{ component_id: mine, is_mandatory_for_release: null }]),
        422,
        'validation_error',
      );
      const count = await t.db.query(
        `SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1 AND title = 'x'`,
        [f.projectId],
      );
      expect(count[0].n).toBe(0);
    });

    it('delete of the case removes its coverages', async () => {
      const comp = await insertComponent(f.projectId);
      const c = await createCase({ component_coverages: [{ component_id: comp }] });
      await t.req('delete', `${API}/test-cases/${c.id}`, f.lead.token).expect(204);
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM test_case_component_coverages WHERE component_id = $1`,
        [comp],
      );
      expect(rows[0].n).toBe(0);
    });
  });

  describe('list', () => {
    let fx: RoleFixture;
    const ids: Record<string, string> = {};
    let suiteA: string;
    let suiteB: string;
    let comp: string;
    let product: string;

    beforeAll(async () => {
      fx = await t.roleFixture();
      suiteA = (
        await t
          .req('post', `${API}/suites`, fx.tester.token)
          .send({ project_id: fx.projectId, name: 'Alpha' })
      ).body.id;
      suiteB = (
        await t
          .req('post', `${API}/suites`, fx.tester.token)
          .send({ project_id: fx.projectId, name: 'Beta' })
      ).body.id;
      comp = await insertComponent(fx.projectId);
      product = await insertProduct(fx.projectId);
      const mk = async (name: string, body: Record<string, unknown>) => {
        ids[name] = (await createCase({ title: name, ...body }, fx)).id;
      };
      await mk('banana login', {
        priority: 'low',
        tags: ['Smoke'],
        suite_id: suiteA,
        automation_id: 'auto.banana',
      });
      await mk('apple checkout', {
        priority: 'critical',
        tags: ['regression'],
        suite_id: suiteB,
        test_case_type: 'automated',
        owner_id: null,
      });
      await mk('cherry 100% done', {
        priority: 'medium',
        status: 'draft',
        primary_product_id: product,
        component_coverages: [{ component_id: comp }],
      });
      await mk('date archived', { status: 'archived', tags: ['smoke'] });
      await mk('elder_flower', { owner_id: fx.viewer.id });
    });

    const list = async (query: string) => {
      const res = await t.req(
        'get',
        `${API}/test-cases?project_id=${fx.projectId}&${query}`,
        fx.viewer.token,
      );
      if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
      return res.body as {
        items: Array<{ id: string; title: string; key: string }>;
        total: number;
        has_next: boolean;
        page: number;
        page_size: number;
      };
    };
    const titles = async (query: string) => (await list(query)).items.map((i) => i.title);

    it('hides archived cases unless a status filter is given', async () => {
      const all = await list('sort_by=key&sort_order=asc');
      expect(all.items.map((i) => i.title)).toEqual([
        'banana login',
        'apple checkout',
        'cherry 100% done',
        'elder_flower',
      ]);
      expect(all.total).toBe(4);
      expect(await titles('status=archived')).toEqual(['date archived']);
      expect((await titles('status=archived&status=draft')).sort()).toEqual([
        'cherry 100% done',
        'date archived',
      ]);
    });

    it('filters by priority, suite, tag, type, product, component, owner, exclusion', async () => {
      expect((await titles('priority=low&priority=critical')).sort()).toEqual([
        'apple checkout',
        'banana login',
      ]);
      expect(await titles(`suite_id=${suiteA}`)).toEqual(['banana login']);
      expect((await titles(`suite_id=${suiteA}&suite_id=${suiteB}`)).sort()).toEqual([
        'apple checkout',
        'banana login',
      ]);
      expect(await titles('tag=SMOKE')).toEqual(['banana login']);
      expect((await titles('tag=smoke&status=archived&status=active')).sort()).toEqual([
        'banana login',
        'date archived',
      ]);
      expect(await titles('test_case_type=automated')).toEqual(['apple checkout']);
      expect(await titles(`product_id=${product}`)).toEqual(['cherry 100% done']);
      expect(await titles(`component_id=${comp}`)).toEqual(['cherry 100% done']);
      expect(await titles(`owner_id=${fx.viewer.id}`)).toEqual(['elder_flower']);
      expect(
        (
          await titles(
            `exclude_test_case_id=${ids['banana login']}&exclude_test_case_id=${ids['elder_flower']}`,
          )
        ).sort(),
      ).toEqual(['apple checkout', 'cherry 100% done']);
    });

    it('searches key, title, automation_id and tags case-insensitively with literal % and _', async () => {
      expect(await titles('search=BANANA')).toEqual(['banana login']);
      expect(await titles('search=auto.ban')).toEqual(['banana login']);
      expect(await titles('search=100%25')).toEqual(['cherry 100% done']);
      expect(await titles('search=r_f')).toEqual(['elder_flower']);
      expect(await titles('search=REGRESS')).toEqual(['apple checkout']);
      expect(
        await titles('search=sMoKe&sort_by=key&sort_order=asc&status=active&status=archived'),
      ).toEqual(['banana login', 'date archived']);
      const key = (await list('sort_by=key&sort_order=asc')).items[1].key;
      expect(await titles(`search=${key}`)).toContain('apple checkout');
    });

    it('sorts by key, title, priority, suite_name with stable paging', async () => {
      expect(await titles('sort_by=key&sort_order=desc')).toEqual([
        'elder_flower',
        'cherry 100% done',
        'apple checkout',
        'banana login',
      ]);
      expect(await titles('sort_by=title&sort_order=asc')).toEqual([
        'apple checkout',
        'banana login',
        'cherry 100% done',
        'elder_flower',
      ]);
      // Reference §6.7: by label, no priority counting as medium (critical < high < low < medium).
      expect(await titles('sort_by=priority&sort_order=asc')).toEqual([
        'apple checkout',
        'banana login',
        'cherry 100% done',
        'elder_flower',
      ]);
      expect(await titles('sort_by=priority&sort_order=desc')).toEqual([
        'elder_flower',
        'cherry 100% done',
        'banana login',
        'apple checkout',
      ]);
      // By label: active < archived < draft.
      expect(
        await titles('sort_by=status&sort_order=asc&status=draft&status=active&status=archived'),
      ).toEqual([
        'banana login',
        'apple checkout',
        'elder_flower',
        'date archived',
        'cherry 100% done',
      ]);
      expect((await titles('sort_by=suite_name&sort_order=asc')).slice(2)).toEqual([
        'banana login',
        'apple checkout',
      ]);
      expect(await titles('sort_by=created_at')).toEqual([
        'elder_flower',
        'cherry 100% done',
        'apple checkout',
        'banana login',
      ]);
      const p1 = await list('sort_by=title&sort_order=asc&page_size=3');
      expect(p1).toMatchObject({ total: 4, has_next: true, page: 1, page_size: 3 });
      const p2 = await list('sort_by=title&sort_order=asc&page_size=3&page=2');
      expect(p2.items.map((i) => i.title)).toEqual(['elder_flower']);
      expect(p2.has_next).toBe(false);
      const past = await list('page=9');
      expect(past.items).toEqual([]);
      expect(past.total).toBe(4);
    });

    it('items carry coverages and bindings', async () => {
      const items = (await list(`component_id=${comp}`)).items as unknown as Array<
        Record<string, unknown>
      >;
      expect(items[0].component_coverages).toEqual([
        expect.objectContaining({ component_id: comp }),
      ]);
      expect(items[0].dataset_bindings).toEqual([]);
    });

    it('filters by minimum_component_risk_level of covered components', async () => {
      expect(await titles('minimum_component_risk_level=low')).toEqual(['cherry 100% done']);
      expect(await titles('minimum_component_risk_level=medium')).toEqual([]);
      await t.db.query(`UPDATE components SET risk_level = 'high' WHERE id = $1`, [comp]);
      try {
        expect(await titles('minimum_component_risk_level=high')).toEqual(['cherry 100% done']);
        expect(await titles('minimum_component_risk_level=critical')).toEqual([]);
      } finally {
        await t.db.query(`UPDATE components SET risk_level = 'low' WHERE id = $1`, [comp]);
      }
      const bad = await t.req(
        'get',
        `${API}/test-cases?project_id=${fx.projectId}&minimum_component_risk_level=huge`,
        fx.viewer.token,
      );
      expectProblem(bad, 422, 'validation_error');
    });

    it('uses a constant number of queries whatever the page size', async () => {
      const spy = jest.spyOn(t.app.get(Db), 'query');
      try {
        await list('page_size=1');
        const small = spy.mock.calls.length;
        spy.mockClear();
        await list('page_size=50&status=active&status=draft&status=archived');
        expect(spy.mock.calls.length).toBe(small);
        expect(small).toBeLessThanOrEqual(4);
      } finally {
        spy.mockRestore();
      }
    });

    it('rejects bad query parameters with 422', async () => {
      const bad = async (q: string, key: string) => {
        const res = await t.req('get', `${API}/test-cases?${q}`, fx.viewer.token);
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([key]);
      };
      await bad('', 'query.project_id');
      await bad(`project_id=${fx.projectId}&status=done`, 'query.status');
      await bad(`project_id=${fx.projectId}&sort_by=nope`, 'query.sort_by');
      await bad(`project_id=${fx.projectId}&page_size=201`, 'query.page_size');
      await bad(`project_id=${fx.projectId}&suite_id=abc`, 'query.suite_id');
    });

    it('GET /test-cases/tags lists distinct tags sorted case-insensitively', async () => {
      const res = await t.req(
        'get',
        `${API}/test-cases/tags?project_id=${fx.projectId}`,
        fx.viewer.token,
      );
      expect(res.body.items).toEqual(['regression', 'Smoke']);
    });
  });

  describe('update', () => {
    it('changes only present keys; null clears nullable fields; status may change freely', async () => {
      const c = await createCase({
        description: 'd',
        priority: 'low',
        tags: ['a'],
        steps: [{ action: 'x' }],
      });
      const res = await t.req('patch', `${API}/test-cases/${c.id}`, f.tester.token).send({
        description: null,
        priority: null,
        status: 'archived',
        steps: [{ action: 'y', expected: 'z' }],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        title: c.title,
        description: null,
        priority: null,
        status: 'archived',
        tags: ['a'],
        steps: [{ action: 'y', expected: 'z' }],
        key: c.key,
      });
      expect(new Date(res.body.updated_at).getTime()).toBeGreaterThanOrEqual(
        new Date(c.updated_at as string).getTime(),
      );
      const back = await t
        .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
        .send({ status: 'active' });
      expect(back.body.status).toBe('active');
      const empty = await t.req('patch', `${API}/test-cases/${c.id}`, f.tester.token).send({});
      expect(empty.status).toBe(200);
    });
  });
});
