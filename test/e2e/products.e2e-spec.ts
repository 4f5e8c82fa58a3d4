import { statementsDuring, withStepAfterStatement } from '../support/query-count';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';

interface CaseSpec {
  status?: 'draft' | 'active' | 'archived';
  type?: 'manual' | 'automated';
  priority?: 'low' | 'medium' | 'high' | 'critical';
  coverages: Array<{
    component_id: string;
    coverage_strength: 'smoke' | 'regression' | 'deep';
    is_mandatory_for_release?: boolean;
  }>;
}

/** A test case with component coverages, through POST /test-cases; returns its id. */
async function createCase(t: TestApp, projectId: string, spec: CaseSpec): Promise<string> {
  const res = await t.req('post', `${API}/test-cases`, t.adminToken).send({
    project_id: projectId,
    title: t.unique('Case '),
    status: spec.status ?? 'active',
    test_case_type: spec.type ?? 'manual',
    priority: spec.priority ?? null,
    component_coverages: spec.coverages.map((c) => ({ coverage_type: 'direct', ...c })),
  });
  if (res.status !== 201) throw new Error(`create case: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

type Factors = [number, number, number, number, number, number];
const LOW: Factors = [0, 0, 0, 0, 0, 5]; // 0, low
const MEDIUM: Factors = [4, 0, 0, 0, 4, 5]; // 37, medium
const HIGH: Factors = [4, 2, 2, 2, 3, 5]; // 51, high
const CRITICAL: Factors = [5, 4, 4, 4, 5, 1]; // 89, critical

describe('products', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function createProduct(body: Record<string, unknown> = {}, projectId = f.projectId) {
    const res = await t
      .req('post', `${API}/products`, t.adminToken)
      .send({ project_id: projectId, name: t.unique('Product '), ...body });
    if (res.status !== 201)
      throw new Error(`create product: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown> & { id: string; key: string };
  }

  async function createComponent(name: string, factors: Factors = LOW, projectId = f.projectId) {
    const [bc, cf, ic, dd, pis, ac] = factors;
    const res = await t.req('post', `${API}/components`, t.adminToken).send({
      project_id: projectId,
      name,
      business_criticality: bc,
      change_frequency: cf,
      integration_complexity: ic,
      defect_density: dd,
      production_incident_score: pis,
      automation_confidence: ac,
    });
    if (res.status !== 201)
      throw new Error(`create component: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as {
      id: string;
      key: string;
      name: string;
      risk_score: number;
      risk_level: string;
    };
  }

  async function link(productId: string, links: Array<Record<string, unknown>>) {
    const res = await t
      .req('put', `${API}/products/${productId}/components`, t.adminToken)
      .send({ links });
    if (res.status !== 200) throw new Error(`link: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { items: Array<Record<string, unknown>> };
  }

  const kase = (spec: CaseSpec, projectId = f.projectId) => createCase(t, projectId, spec);

  describe('role matrix', () => {
    it('GET /products (viewer)', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/products?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });

    it('POST /products (tester)', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/products`,
        body: () => ({ project_id: f.projectId, name: 'Matrix product' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
      expect(res.body).toMatchObject({ name: 'Matrix product', key: 'matrix-product' });
    });

    it('GET /products/{id} (viewer)', async () => {
      const p = await createProduct();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/products/${p.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'product_not_found',
      });
    });

    it('PATCH /products/{id} (tester)', async () => {
      const p = await createProduct();
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/products/${p.id}`,
        body: () => ({ status: 'archived' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'product_not_found',
      });
      expect(res.body.status).toBe('archived');
    });

    it('DELETE /products/{id} (lead)', async () => {
      const p = await createProduct();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/products/${p.id}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'product_not_found',
      });
      expectProblem(
        await t.req('get', `${API}/products/${p.id}`, f.lead.token),
        404,
        'product_not_found',
      );
    });

    it('GET /products/{id}/components (viewer)', async () => {
      const p = await createProduct();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/products/${p.id}/components`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'product_not_found',
      });
    });

    it('PUT /products/{id}/components (tester)', async () => {
      const p = await createProduct();
      const c = await createComponent(t.unique('Linked '));
      const res = await expectRoleMatrix(t, f, {
        method: 'put',
        url: `${API}/products/${p.id}/components`,
        body: () => ({ links: [{ component_id: c.id, is_core: true }] }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'product_not_found',
      });
      expect(res.body.items).toHaveLength(1);
    });

    it('GET /products/{id}/summary (viewer)', async () => {
      const p = await createProduct();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/products/${p.id}/summary`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'product_not_found',
      });
    });
  });

  describe('create, get, patch, delete', () => {
    it('creates with defaults and a zero summary_snapshot', async () => {
      const res = await t
        .req('post', `${API}/products`, f.tester.token)
        .send({ project_id: f.projectId, name: '  Web Shop  ', tags: ['B2C', 'b2c', ' Retail '] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        project_id: f.projectId,
        name: 'Web Shop',
        key: 'web-shop',
        description: null,
        owner_id: null,
        status: 'active',
        tags: ['B2C', 'Retail'],
        summary_snapshot: {
          total_components: 0,
          adequately_covered_components: 0,
          uncovered_components: 0,
          high_risk_uncovered_components: 0,
          mandatory_release_cases: 0,
        },
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      const get = await t.req('get', `${API}/products/${res.body.id}`, f.viewer.token);
      expect(get.body).toEqual(res.body);
    });

    it('patches only the fields present; null clears nullable fields', async () => {
      const p = await createProduct({ description: 'Desc', owner_id: f.viewer.id, tags: ['a'] });
      let res = await t
        .req('patch', `${API}/products/${p.id}`, f.tester.token)
        .send({ name: 'New name' });
      expect(res.body).toMatchObject({
        name: 'New name',
        key: p.key,
        description: 'Desc',
        owner_id: f.viewer.id,
        tags: ['a'],
      });
      res = await t
        .req('patch', `${API}/products/${p.id}`, f.tester.token)
        .send({ description: null, owner_id: null, tags: [] });
      expect(res.body).toMatchObject({ description: null, owner_id: null, tags: [] });
      for (const field of ['name', 'status', 'tags']) {
        const bad = await t
          .req('patch', `${API}/products/${p.id}`, f.tester.token)
          .send({ [field]: null });
        expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty([field]);
      }
      const unknown = await t
        .req('patch', `${API}/products/${p.id}`, f.tester.token)
        .send({ project_id: f.projectId });
      expect(expectProblem(unknown, 422, 'validation_error').errors).toHaveProperty(['project_id']);
      const summary = await t
        .req('patch', `${API}/products/${p.id}`, f.tester.token)
        .send({ summary_snapshot: {} });
      expect(expectProblem(summary, 422, 'validation_error').errors).toHaveProperty([
        'summary_snapshot',
      ]);
    });

    it.each([
      [{}, ['project_id', 'name']],
      [{ project_id: 'nope', name: 'x' }, ['project_id']],
      [{ name: '' }, ['name']],
      [{ name: 'x', status: 'deleted' }, ['status']],
      [{ name: 'x', tags: 'a' }, ['tags']],
      [{ name: 'x', id: 'x' }, ['id']],
      [{ name: null }, ['name']],
      [{ name: 'x'.repeat(256) }, ['name']],
      [{ name: 'x', key: 'k'.repeat(101) }, ['key']],
      [{ name: 'x', status: null }, ['status']],
      [{ name: 'x', tags: null }, ['tags']],
      [{ name: 'x', tags: [1] }, ['tags']],
      [{ name: 'x', owner_id: 5 }, ['owner_id']],
      [{ name: 'x', summary_snapshot: {} }, ['summary_snapshot']],
      [{ name: 'x\u0000' }, ['name']],
      [{ name: 'x', tags: ['\u0000'] }, ['tags']],
    ])('create %j → 422 on %j', async (body, fields) => {
      const payload = Object.keys(body).length ? { project_id: f.projectId, ...body } : {};
      const res = await t.req('post', `${API}/products`, f.tester.token).send(payload);
      expect(
        Object.keys(expectProblem(res, 422, 'validation_error').errors as object).sort(),
      ).toEqual([...fields].sort());
    });

    it('keys: generated and suffixed, explicit ones slugified, an explicit duplicate is 409', async () => {
      const project = await t.createProject(t.adminToken);
      const a = await createProduct({ name: 'Mobile App' }, project);
      const b = await createProduct({ name: 'Mobile app' }, project);
      const c = await createProduct({ name: 'Mobile-App' }, project);
      expect([a.key, b.key, c.key]).toEqual(['mobile-app', 'mobile-app-2', 'mobile-app-3']);
      const explicit = await createProduct({ name: 'Any', key: 'WEB' }, project);
      expect(explicit.key).toBe('web');
      // A taken explicit key is suffixed like a generated one (reference §7.3), never refused.
      const dup = await createProduct({ name: 'Other', key: 'Web' }, project);
      expect(dup.key).toBe('web-2');
      expect((await createProduct({ name: 'My Key!', key: 'My Key!' }, project)).key).toBe(
        'my-key',
      );
      expect((await createProduct({ name: '!!!' }, project)).key).toBe('item');
      const own = await t
        .req('patch', `${API}/products/${a.id}`, t.adminToken)
        .send({ key: 'Mobile App' });
      expect(own.body.key).toBe('mobile-app');
      const patchDup = await t
        .req('patch', `${API}/products/${a.id}`, t.adminToken)
        .send({ key: 'web' });
      expect(patchDup.status).toBe(200);
      expect(patchDup.body.key).toBe('web-3');
      const regen = await t
        .req('patch', `${API}/products/${a.id}`, t.adminToken)
        .send({ name: 'Mobile App', key: null });
      expect(regen.body.key).toBe('mobile-app');
      const rename = await t
        .req('patch', `${API}/products/${a.id}`, t.adminToken)
        .send({ name: 'Renamed' });
      expect(rename.body).toMatchObject({ name: 'Renamed', key: 'mobile-app' });
    });

    it('owner must be an active member of the project', async () => {
      const ok = await createProduct({ owner_id: f.tester.id });
      expect(ok.owner_id).toBe(f.tester.id);
      for (const owner of [
        f.outsider.id,
        t.adminId,
        '00000000-0000-7000-8000-0000000000ff',
        'no-such-user',
      ]) {
        const res = await t
          .req('post', `${API}/products`, f.tester.token)
          .send({ project_id: f.projectId, name: 'Owned', owner_id: owner });
        expect(expectProblem(res, 422, 'invalid_owner').errors).toHaveProperty(['owner_id']);
        const patch = await t
          .req('patch', `${API}/products/${ok.id}`, f.tester.token)
          .send({ owner_id: owner });
        expectProblem(patch, 422, 'invalid_owner');
      }
      const after = await t.req('get', `${API}/products/${ok.id}`, f.viewer.token);
      expect(after.body.owner_id).toBe(f.tester.id);
    });

    it('delete removes the links but keeps the components, and test cases lose it as primary product', async () => {
      const p = await createProduct();
      const c = await createComponent(t.unique('Kept '));
      await link(p.id, [{ component_id: c.id }]);
      const tc = await t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, title: t.unique('Case '), primary_product_id: p.id });
      expect(tc.body.primary_product_id).toBe(p.id);
      expect((await t.req('delete', `${API}/products/${p.id}`, f.lead.token)).status).toBe(204);
      const kept = await t.req('get', `${API}/test-cases/${tc.body.id}`, f.viewer.token);
      expect(kept.status).toBe(200);
      expect(kept.body.primary_product_id).toBeNull();
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM product_components WHERE component_id = $1`,
        [c.id],
      );
      expect(rows[0].n).toBe(0);
      expect((await t.req('get', `${API}/components/${c.id}`, f.viewer.token)).status).toBe(200);
      expectProblem(
        await t.req('delete', `${API}/products/${p.id}`, f.lead.token),
        404,
        'product_not_found',
      );
    });
  });

  describe('list', () => {
    let project: string;

    beforeAll(async () => {
      project = await t.createProject(f.lead.token);
      await t.addMember(project, f.viewer.id, 'viewer', f.lead.token);
      await createProduct({ name: 'Alpha', tags: ['Web'], description: 'The storefront' }, project);
      await createProduct(
        { name: 'Beta 50%', tags: ['mobile', 'web'], status: 'archived' },
        project,
      );
      await createProduct({ name: 'Gamma', key: 'gm', tags: ['internal'] }, project);
    });

    const list = async (qs: string) => {
      const res = await t.req('get', `${API}/products?project_id=${project}&${qs}`, f.viewer.token);
      expect(res.status).toBe(200);
      return res.body as {
        items: Array<{ name: string; summary_snapshot: object }>;
        total: number;
        has_next: boolean;
        page: number;
        page_size: number;
      };
    };

    it('sorts by updated_at desc, pages with total, carries summary_snapshot', async () => {
      const all = await list('');
      expect(all.items.map((p) => p.name)).toEqual(['Gamma', 'Beta 50%', 'Alpha']);
      expect(all.total).toBe(3);
      for (const item of all.items)
        expect(item.summary_snapshot).toMatchObject({ total_components: 0 });
      expect(await list('page=1&page_size=2')).toMatchObject({
        has_next: true,
        total: 3,
        page: 1,
        page_size: 2,
      });
      const p2 = await list('page=2&page_size=2');
      expect(p2.items.map((p) => p.name)).toEqual(['Alpha']);
      expect(p2.has_next).toBe(false);
      expect(await list('page=5')).toMatchObject({ items: [], total: 3 });
    });

    it('filters by status, tag (any, case-insensitive) and search over name, key, description', async () => {
      expect((await list('status=archived')).items.map((p) => p.name)).toEqual(['Beta 50%']);
      expect((await list('status=active&status=archived')).total).toBe(3);
      expect((await list('tag=WEB')).items.map((p) => p.name)).toEqual(['Beta 50%', 'Alpha']);
      expect((await list('tag=internal&tag=mobile')).items.map((p) => p.name)).toEqual([
        'Gamma',
        'Beta 50%',
      ]);
      expect((await list('search=storefront')).items.map((p) => p.name)).toEqual(['Alpha']);
      expect((await list('search=GM')).items.map((p) => p.name)).toEqual(['Gamma']);
      expect((await list('search=50%25')).items.map((p) => p.name)).toEqual(['Beta 50%']);
      expect((await list('search=%25')).items.map((p) => p.name)).toEqual(['Beta 50%']);
      expect((await list('search=alpha&status=archived')).total).toBe(0);
    });

    it('validates the query', async () => {
      expect(
        expectProblem(
          await t.req('get', `${API}/products`, f.viewer.token),
          422,
          'validation_error',
        ).errors,
      ).toHaveProperty(['query.project_id']);
      for (const bad of [
        'page_size=0',
        'page_size=201',
        'status=gone',
        'page=x',
        'search=a%00b',
        'tag=%00',
      ]) {
        expectProblem(
          await t.req('get', `${API}/products?project_id=${project}&${bad}`, f.viewer.token),
          422,
          'validation_error',
        );
      }
    });
  });

  describe('component links', () => {
    it('replaces the links and lists them with component names, ordered by sort_order', async () => {
      const p = await createProduct();
      const [a, b, c] = [
        await createComponent('Links A'),
        await createComponent('Links B', CRITICAL),
        await createComponent('Links C'),
      ];
      const put = await link(p.id, [
        { component_id: a.id, sort_order: 2 },
        { component_id: b.id, is_core: true, sort_order: 1 },
        { component_id: c.id },
      ]);
      expect(put.items).toEqual([
        {
          id: expect.any(String),
          product_id: p.id,
          component_id: c.id,
          component_key: c.key,
          component_name: 'Links C',
          component_status: 'active',
          risk_level: 'low',
          risk_score: 0,
          is_core: false,
          sort_order: 0,
        },
        {
          id: expect.any(String),
          product_id: p.id,
          component_id: b.id,
          component_key: b.key,
          component_name: 'Links B',
          component_status: 'active',
          risk_level: 'critical',
          risk_score: 89,
          is_core: true,
          sort_order: 1,
        },
        {
          id: expect.any(String),
          product_id: p.id,
          component_id: a.id,
          component_key: a.key,
          component_name: 'Links A',
          component_status: 'active',
          risk_level: 'low',
          risk_score: 0,
          is_core: false,
          sort_order: 2,
        },
      ]);
      const get = await t.req('get', `${API}/products/${p.id}/components`, f.viewer.token);
      expect(get.body).toEqual(put);
      const replaced = await link(p.id, [{ component_id: a.id, is_core: true }]);
      expect(replaced.items.map((l) => [l.component_id, l.is_core])).toEqual([[a.id, true]]);
      expect(await link(p.id, [])).toEqual({ items: [] });
    });

    it('ties in sort_order keep the order of the body; ids are case-insensitive; {} clears', async () => {
      const p = await createProduct();
      const [z, y, x] = [
        await createComponent(t.unique('Zulu ')),
        await createComponent(t.unique('Yankee ')),
        await createComponent(t.unique('Xray ')),
      ];
      const put = await link(p.id, [
        { component_id: z.id },
        { component_id: y.id.toUpperCase(), sort_order: -5 },
        { component_id: x.id },
      ]);
      expect(put.items.map((l) => l.component_id)).toEqual([y.id, z.id, x.id]);
      const ids = put.items.map((l) => l.id);
      expect(new Set(ids).size).toBe(3);
      const get = await t.req('get', `${API}/products/${p.id}/components`, f.viewer.token);
      expect(get.body).toEqual(put);
      const reversed = await link(p.id, [{ component_id: x.id }, { component_id: z.id }]);
      expect(reversed.items.map((l) => l.component_id)).toEqual([x.id, z.id]);
      const cleared = await t
        .req('put', `${API}/products/${p.id}/components`, f.tester.token)
        .send({});
      expect(cleared.status).toBe(200);
      expect(cleared.body).toEqual({ items: [] });
    });

    it('replacing links does not touch the product', async () => {
      const p = await createProduct();
      const c = await createComponent(t.unique('Touch '));
      await link(p.id, [{ component_id: c.id }]);
      const after = await t.req('get', `${API}/products/${p.id}`, f.viewer.token);
      expect(after.body.updated_at).toBe(p.updated_at);
      expect(after.body.summary_snapshot).toMatchObject({ total_components: 1 });
    });

    it('rejects duplicates, foreign and unknown components without changing anything', async () => {
      const p = await createProduct();
      const a = await createComponent(t.unique('Keep '));
      await link(p.id, [{ component_id: a.id }]);
      const other = await t.createProject(t.adminToken);
      const foreign = await createComponent('Foreign', LOW, other);
      const put = (links: unknown) =>
        t.req('put', `${API}/products/${p.id}/components`, f.tester.token).send({ links });

      let body = expectProblem(
        await put([{ component_id: a.id }, { component_id: a.id }]),
        422,
        'validation_error',
      );
      expect(Object.keys(body.errors as object)).toEqual(['links.1.component_id']);
      body = expectProblem(
        await put([{ component_id: a.id }, { component_id: foreign.id }]),
        422,
        'component_project_mismatch',
      );
      expect(Object.keys(body.errors as object)).toEqual(['links.1.component_id']);
      body = expectProblem(
        await put([{ component_id: '00000000-0000-7000-8000-000000000abc' }]),
        422,
        'component_project_mismatch',
      );
      expect(Object.keys(body.errors as object)).toEqual(['links.0.component_id']);
      body = expectProblem(
        await put([{ component_id: a.id }, { component_id: 'no-such-component' }]),
        422,
        'component_project_mismatch',
      );
      expect(body.errors).toEqual({
        'links.1.component_id': ['invalid component_id: no-such-component'],
      });
      body = expectProblem(
        await put([{ component_id: a.id }, { component_id: a.id.toUpperCase() }]),
        422,
        'validation_error',
      );
      expect(Object.keys(body.errors as object)).toEqual(['links.1.component_id']);
      for (const [links, key] of [
        [[{ component_id: 7 }], 'links.0.component_id'],
        [[{ component_id: '\u0000' }], 'links.0.component_id'],
        [[{}], 'links.0.component_id'],
        [[null], 'links.0'],
        [[{ component_id: a.id, is_core: null }], 'links.0.is_core'],
        [[{ component_id: a.id, sort_order: 2 ** 31 }], 'links.0.sort_order'],
        [[{ component_id: a.id, is_core: 'yes' }], 'links.0.is_core'],
        [[{ component_id: a.id, sort_order: 1.5 }], 'links.0.sort_order'],
        [[{ component_id: a.id, extra: 1 }], 'links.0.extra'],
        [null, 'links'],
      ] as Array<[unknown, string]>) {
        expect(expectProblem(await put(links), 422, 'validation_error').errors).toHaveProperty([
          key,
        ]);
      }
      const get = await t.req('get', `${API}/products/${p.id}/components`, f.viewer.token);
      expect(get.body.items.map((l: { component_id: string }) => l.component_id)).toEqual([a.id]);
    });
  });

  describe('summary', () => {
    it('reference example: one low component and one active smoke mandatory case', async () => {
      const p = await createProduct();
      const c = await createComponent(t.unique('Low '), LOW);
      await link(p.id, [{ component_id: c.id }]);
      await kase({
        coverages: [
          { component_id: c.id, coverage_strength: 'smoke', is_mandatory_for_release: true },
        ],
      });
      const res = await t.req('get', `${API}/products/${p.id}/summary`, f.viewer.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        product_id: p.id,
        total_components: 1,
        components_with_cases: 1,
        adequately_covered_components: 1,
        inadequately_covered_components: 0,
        uncovered_components: 0,
        mandatory_release_cases: 1,
      });
    });

    it('reference example: one critical component (89) and one active smoke case', async () => {
      const p = await createProduct();
      const c = await createComponent(t.unique('Critical '), CRITICAL);
      expect(c.risk_score).toBe(89);
      await link(p.id, [{ component_id: c.id }]);
      await kase({ coverages: [{ component_id: c.id, coverage_strength: 'smoke' }] });
      const res = await t.req('get', `${API}/products/${p.id}/summary`, f.viewer.token);
      expect(res.body).toMatchObject({
        adequately_covered_components: 0,
        inadequately_covered_components: 1,
        uncovered_components: 1,
        high_risk_uncovered_components: 1,
        coverage_score_total: 1,
        required_coverage_score_total: 6,
      });
      expect(res.body.per_component_breakdown).toEqual([
        expect.objectContaining({
          component_id: c.id,
          coverage_score: 1,
          required_coverage_score: 6,
          adequately_covered: false,
          uncovered: true,
        }),
      ]);
    });

    it('computes every figure; only active cases count; the snapshot agrees on list and GET', async () => {
      const project = await t.createProject(t.adminToken);
      const p = await createProduct({ name: 'Full' }, project);
      const other = await createProduct({ name: 'Other' }, project);
      const empty = await createProduct({ name: 'Empty' }, project);
      const low = await createComponent('Delta low', LOW, project);
      const medium = await createComponent('alpha medium', MEDIUM, project);
      const high = await createComponent('Charlie high', HIGH, project);
      const critical = await createComponent('bravo critical', CRITICAL, project);
      const unlinked = await createComponent('Unlinked', LOW, project);
      await link(p.id, [
        { component_id: low.id, is_core: true },
        { component_id: medium.id },
        { component_id: high.id, is_core: true },
        { component_id: critical.id },
      ]);
      await link(other.id, [{ component_id: critical.id }]);

      // case 1: automated; smoke on low (mandatory), deep on high
      const c1 = await kase(
        {
          type: 'automated',
          coverages: [
            { component_id: low.id, coverage_strength: 'smoke', is_mandatory_for_release: true },
            { component_id: high.id, coverage_strength: 'deep' },
          ],
        },
        project,
      );
      // case 2: manual; regression on medium, regression on high
      const c2 = await kase(
        {
          coverages: [
            { component_id: medium.id, coverage_strength: 'regression' },
            { component_id: high.id, coverage_strength: 'regression' },
          ],
        },
        project,
      );
      // case 3: manual; deep on critical (mandatory), smoke on unlinked
      const c3 = await kase(
        {
          coverages: [
            {
              component_id: critical.id,
              coverage_strength: 'deep',
              is_mandatory_for_release: true,
            },
            {
              component_id: unlinked.id,
              coverage_strength: 'smoke',
              is_mandatory_for_release: true,
            },
          ],
        },
        project,
      );
      // draft and archived cases never count
      await kase(
        {
          status: 'draft',
          coverages: [
            {
              component_id: critical.id,
              coverage_strength: 'deep',
              is_mandatory_for_release: true,
            },
          ],
        },
        project,
      );
      await kase(
        {
          status: 'archived',
          coverages: [
            { component_id: medium.id, coverage_strength: 'smoke', is_mandatory_for_release: true },
          ],
        },
        project,
      );

      const res = await t.req('get', `${API}/products/${p.id}/summary`, t.adminToken);
      expect(res.status).toBe(200);
      const s = res.body;
      expect(s).toMatchObject({
        product_id: p.id,
        total_components: 4,
        core_components: 2,
        components_with_cases: 4,
        // low 1 ≥ 1 ✓; medium 2 ≥ 2 ✓; high 3+2 = 5 ≥ 4 ✓; critical 3 < 6 ✗
        adequately_covered_components: 3,
        inadequately_covered_components: 1,
        uncovered_components: 1,
        high_risk_uncovered_components: 1,
        coverage_score_total: 1 + 2 + 5 + 3,
        required_coverage_score_total: 1 + 2 + 4 + 6,
        total_cases: 3,
        mandatory_release_cases: 2,
        smoke_cases: 1,
        regression_cases: 2,
        deep_cases: 3,
        manual_cases: 2,
        automated_cases: 1,
      });
      expect(
        s.per_component_breakdown.map((e: { component_name: string }) => e.component_name),
      ).toEqual(['alpha medium', 'bravo critical', 'Charlie high', 'Delta low']);
      const byId = Object.fromEntries(
        s.per_component_breakdown.map((e: { component_id: string }) => [e.component_id, e]),
      );
      expect(byId[high.id]).toEqual({
        component_id: high.id,
        component_key: high.key,
        component_name: 'Charlie high',
        risk_level: 'high',
        risk_score: 51,
        coverage_score: 5,
        required_coverage_score: 4,
        adequately_covered: true,
        uncovered: false,
        smoke_case_count: 0,
        regression_case_count: 1,
        deep_case_count: 1,
        covered_case_ids: [c1, c2].sort(),
      });
      expect(byId[critical.id]).toMatchObject({
        coverage_score: 3,
        required_coverage_score: 6,
        uncovered: true,
        deep_case_count: 1,
        covered_case_ids: [c3],
      });
      expect(byId[low.id]).toMatchObject({
        smoke_case_count: 1,
        covered_case_ids: [c1],
        adequately_covered: true,
      });

      const snapshot = {
        total_components: 4,
        adequately_covered_components: 3,
        uncovered_components: 1,
        high_risk_uncovered_components: 1,
        mandatory_release_cases: 2,
      };
      const get = await t.req('get', `${API}/products/${p.id}`, t.adminToken);
      expect(get.body.summary_snapshot).toEqual(snapshot);
      const listed = await t.req('get', `${API}/products?project_id=${project}`, t.adminToken);
      const snapshots = Object.fromEntries(
        listed.body.items.map((i: { name: string; summary_snapshot: object }) => [
          i.name,
          i.summary_snapshot,
        ]),
      );
      expect(snapshots).toEqual({
        Full: snapshot,
        Other: {
          total_components: 1,
          adequately_covered_components: 0,
          uncovered_components: 1,
          high_risk_uncovered_components: 1,
          mandatory_release_cases: 1,
        },
        Empty: {
          total_components: 0,
          adequately_covered_components: 0,
          uncovered_components: 0,
          high_risk_uncovered_components: 0,
          mandatory_release_cases: 0,
        },
      });

      const emptySummary = await t.req('get', `${API}/products/${empty.id}/summary`, t.adminToken);
      expect(emptySummary.body).toMatchObject({
        total_components: 0,
        total_cases: 0,
        per_component_breakdown: [],
      });
    });

    it('a product without components summarises to zeros', async () => {
      const p = await createProduct();
      const res = await t.req('get', `${API}/products/${p.id}/summary`, f.viewer.token);
      expect(res.body).toEqual({
        product_id: p.id,
        total_components: 0,
        core_components: 0,
        components_with_cases: 0,
        adequately_covered_components: 0,
        inadequately_covered_components: 0,
        uncovered_components: 0,
        high_risk_uncovered_components: 0,
        coverage_score_total: 0,
        required_coverage_score_total: 0,
        total_cases: 0,
        mandatory_release_cases: 0,
        smoke_cases: 0,
        regression_cases: 0,
        deep_cases: 0,
        manual_cases: 0,
        automated_cases: 0,
        per_component_breakdown: [],
      });
    });

    it('deleting a component removes its coverages and its links from the summary', async () => {
      const p = await createProduct();
      const a = await createComponent(t.unique('Gone '));
      const b = await createComponent(t.unique('Stays '));
      await link(p.id, [{ component_id: a.id }, { component_id: b.id }]);
      await kase({
        coverages: [
          { component_id: a.id, coverage_strength: 'deep' },
          { component_id: b.id, coverage_strength: 'smoke' },
        ],
      });
      expect((await t.req('delete', `${API}/components/${a.id}`, f.lead.token)).status).toBe(204);
      const cov = await t.db.query(
        `SELECT count(*)::int AS n FROM test_case_component_coverages WHERE component_id = $1`,
        [a.id],
      );
      expect(cov[0].n).toBe(0);
      const res = await t.req('get', `${API}/products/${p.id}/summary`, f.viewer.token);
      expect(res.body).toMatchObject({
        total_components: 1,
        coverage_score_total: 1,
        total_cases: 1,
      });
    });

    it('answers one state when a link is removed while the summary is read', async () => {
      const p = await createProduct();
      const a = await createComponent(t.unique('Unlinked '));
      await link(p.id, [{ component_id: a.id }]);
      await kase({ coverages: [{ component_id: a.id, coverage_strength: 'smoke' }] });
      // Right after the linked components are read, the link is removed and committed: read
      // separately, the coverages then came from the state after it and the component was
      // answered linked but uncovered, a state that never existed.
      const { result: during, between: unlinked } = await withStepAfterStatement(
        /FROM product_components pc JOIN components c ON c\.id = pc\.component_id/,
        () => t.req('put', `${API}/products/${p.id}/components`, t.adminToken).send({ links: [] }),
        () => t.req('get', `${API}/products/${p.id}/summary`, f.viewer.token),
      );
      expect(unlinked?.status).toBe(200);
      // The state before the change, whole: the component linked and covered by its smoke case.
      expect(during.status).toBe(200);
      expect(during.body).toMatchObject({
        total_components: 1,
        adequately_covered_components: 1,
        uncovered_components: 0,
        total_cases: 1,
      });
      const after = await t.req('get', `${API}/products/${p.id}/summary`, f.viewer.token);
      expect(after.body).toMatchObject({ total_components: 0, total_cases: 0 });
    });
  });
  describe('query counts', () => {
    /** Number of SQL statements one request runs. */
    async function queriesOf(run: () => Promise<{ status: number }>): Promise<number> {
      const { result, statements } = await statementsDuring(run);
      expect(result.status).toBe(200);
      expect(statements.length).toBeGreaterThan(1);
      return statements.length;
    }

    it('summary and list are a fixed number of queries, whatever the number of components and cases', async () => {
      const project = await t.createProject(t.adminToken);
      const small = await createProduct({ name: 'Small' }, project);
      const big = await createProduct({ name: 'Big' }, project);
      const one = await createComponent('One', LOW, project);
      await link(small.id, [{ component_id: one.id }]);
      await kase({ coverages: [{ component_id: one.id, coverage_strength: 'smoke' }] }, project);
      const many = [];
      for (let i = 0; i < 12; i++) {
        many.push(await createComponent(`Many ${i}`, i % 2 ? CRITICAL : MEDIUM, project));
      }
      await link(
        big.id,
        many.map((m) => ({ component_id: m.id })),
      );
      for (let i = 0; i < 6; i++) {
        await kase(
          {
            coverages: many.slice(i, i + 4).map((m) => ({
              component_id: m.id,
              coverage_strength: 'regression' as const,
              is_mandatory_for_release: i % 2 === 0,
            })),
          },
          project,
        );
      }
      const summary = (id: string) => () =>
        t.req('get', `${API}/products/${id}/summary`, t.adminToken);
      expect(await queriesOf(summary(big.id))).toBe(await queriesOf(summary(small.id)));
      const get = (id: string) => () => t.req('get', `${API}/products/${id}`, t.adminToken);
      expect(await queriesOf(get(big.id))).toBe(await queriesOf(get(small.id)));

      const list = (qs: string) => () =>
        t.req('get', `${API}/products?project_id=${project}&${qs}`, t.adminToken);
      const fewer = await queriesOf(list('page_size=1'));
      for (let i = 0; i < 8; i++) await createProduct({ name: `Filler ${i}` }, project);
      expect(await queriesOf(list('page_size=200'))).toBe(fewer);

      const graph = () =>
        t.req('get', `${API}/components/graph?project_id=${project}`, t.adminToken);
      const emptyProject = await t.createProject(t.adminToken);
      const emptyGraph = () =>
        t.req('get', `${API}/components/graph?project_id=${emptyProject}`, t.adminToken);
      expect(await queriesOf(graph)).toBe(await queriesOf(emptyGraph));
    });
  });
});
