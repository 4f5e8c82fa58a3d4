import { statementsDuring } from '../support/query-count';
import { waitUntilBlockedOrDone } from '../support/wait-for';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';

type Json = Record<string, unknown>;

describe('components', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function createComponent(body: Record<string, unknown> = {}, projectId = f.projectId) {
    const res = await t
      .req('post', `${API}/components`, t.adminToken)
      .send({ project_id: projectId, name: t.unique('Component '), ...body });
    if (res.status !== 201)
      throw new Error(`create component: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown> & { id: string; key: string };
  }

  describe('role matrix', () => {
    it('GET /components (viewer)', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/components?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });

    it('GET /components/graph (viewer)', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/components/graph?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });

    it('POST /components (tester)', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/components`,
        body: () => ({ project_id: f.projectId, name: 'Matrix component' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
      expect(res.body).toMatchObject({ name: 'Matrix component', project_id: f.projectId });
    });

    it('GET /components/{id} (viewer)', async () => {
      const c = await createComponent();
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/components/${c.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'component_not_found',
      });
      expect(res.body.id).toBe(c.id);
    });

    it('PATCH /components/{id} (tester)', async () => {
      const c = await createComponent();
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/components/${c.id}`,
        body: () => ({ description: 'patched' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'component_not_found',
      });
      expect(res.body.description).toBe('patched');
    });

    it('DELETE /components/{id} (lead)', async () => {
      const c = await createComponent();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/components/${c.id}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'component_not_found',
      });
      expectProblem(
        await t.req('get', `${API}/components/${c.id}`, f.lead.token),
        404,
        'component_not_found',
      );
    });

    it('GET /components/{id}/dependencies (viewer)', async () => {
      const c = await createComponent();
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/components/${c.id}/dependencies`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'component_not_found',
      });
      expect(res.body).toEqual({ items: [] });
    });

    it('PUT /components/{id}/dependencies (tester)', async () => {
      const a = await createComponent();
      const b = await createComponent();
      const res = await expectRoleMatrix(t, f, {
        method: 'put',
        url: `${API}/components/${a.id}/dependencies`,
        body: () => ({ dependencies: [{ target_component_id: b.id }] }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'component_not_found',
      });
      expect(res.body.items).toHaveLength(1);
    });

    it('unknown or malformed ids are 404', async () => {
      expectProblem(
        await t.req(
          'get',
          `${API}/components/00000000-0000-7000-8000-000000000000`,
          f.viewer.token,
        ),
        404,
        'component_not_found',
      );
      expectProblem(
        await t.req('get', `${API}/components/nope`, f.viewer.token),
        404,
        'component_not_found',
      );
    });
  });

  describe('risk', () => {
    it.each([
      [[0, 0, 0, 0, 0, 5], 0, 'low'],
      [[5, 4, 4, 3, 4, 1], 82, 'critical'],
      [[4, 0, 0, 0, 4, 5], 37, 'medium'],
      [[5, 0, 0, 0, 5, 5], 46, 'medium'],
      [[5, 4, 4, 4, 5, 1], 89, 'critical'],
      [[0, 0, 0, 0, 0, 0], 8, 'low'],
      [[5, 5, 5, 5, 5, 0], 100, 'critical'],
      [[3, 2, 2, 2, 3, 5], 46, 'medium'],
      [[4, 2, 2, 2, 3, 5], 51, 'high'],
    ])('factors %j → score %i, %s', async (factors, score, level) => {
      const [bc, cf, ic, dd, pis, ac] = factors;
      const c = await createComponent({
        business_criticality: bc,
        change_frequency: cf,
        integration_complexity: ic,
        defect_density: dd,
        production_incident_score: pis,
        automation_confidence: ac,
      });
      expect(c).toMatchObject({ risk_score: score, risk_level: level });
      const stored = await t.db.query(
        `SELECT risk_score, risk_level FROM components WHERE id = $1`,
        [c.id],
      );
      expect(stored[0]).toEqual({ risk_score: score, risk_level: level });
    });

    it('defaults every factor (automation_confidence 5) and scores 0 / low', async () => {
      const c = await createComponent();
      expect(c).toMatchObject({
        business_criticality: 0,
        change_frequency: 0,
        integration_complexity: 0,
        defect_density: 0,
        production_incident_score: 0,
        automation_confidence: 5,
        risk_score: 0,
        risk_level: 'low',
        status: 'active',
        tags: [],
        description: null,
        owner_id: null,
      });
    });

    it('recomputes when one factor is patched, keeping the others', async () => {
      const c = await createComponent({
        business_criticality: 5,
        change_frequency: 4,
        integration_complexity: 4,
        defect_density: 3,
        production_incident_score: 4,
        automation_confidence: 1,
      });
      expect(c.risk_score).toBe(82);
      const res = await t
        .req('patch', `${API}/components/${c.id}`, f.tester.token)
        .send({ automation_confidence: 5 });
      expect(res.status).toBe(200);
      // weighted 53 − 4 = 49 → 75.38 → 75 (critical boundary)
      expect(res.body).toMatchObject({
        automation_confidence: 5,
        business_criticality: 5,
        risk_score: 75,
        risk_level: 'critical',
      });
      const res2 = await t
        .req('patch', `${API}/components/${c.id}`, f.tester.token)
        .send({ defect_density: 2 });
      // weighted 47 → 72.3 → 72, high
      expect(res2.body).toMatchObject({ defect_density: 2, risk_score: 72, risk_level: 'high' });
      const stored = await t.db.query(
        `SELECT risk_score, risk_level FROM components WHERE id = $1`,
        [c.id],
      );
      expect(stored[0]).toEqual({ risk_score: 72, risk_level: 'high' });
    });

    it('a patch without factors leaves the risk as it is', async () => {
      const c = await createComponent({ business_criticality: 5, production_incident_score: 5 });
      const res = await t
        .req('patch', `${API}/components/${c.id}`, f.tester.token)
        .send({ name: 'Renamed risk' });
      expect(res.body).toMatchObject({
        name: 'Renamed risk',
        risk_score: c.risk_score,
        risk_level: c.risk_level,
      });
    });

    it.each([
      ['business_criticality', 6],
      ['change_frequency', -1],
      ['integration_complexity', 2.5],
      ['defect_density', '3'],
      ['production_incident_score', true],
      ['automation_confidence', null],
      ['business_criticality', 100],
    ])('rejects %s = %j with 422 naming the field (create and patch)', async (field, value) => {
      const create = await t
        .req('post', `${API}/components`, f.tester.token)
        .send({ project_id: f.projectId, name: 'Bad factor', [field]: value });
      const body = expectProblem(create, 422, 'validation_error');
      expect(Object.keys(body.errors as object)).toEqual([field]);
      const c = await createComponent();
      const patch = await t
        .req('patch', `${API}/components/${c.id}`, f.tester.token)
        .send({ [field]: value });
      expect(Object.keys(expectProblem(patch, 422, 'validation_error').errors as object)).toEqual([
        field,
      ]);
      const stored = await t.db.query(`SELECT risk_score FROM components WHERE id = $1`, [c.id]);
      expect(stored[0].risk_score).toBe(0);
    });

    it('rejects risk_score and risk_level in a body as unknown fields', async () => {
      const create = await t
        .req('post', `${API}/components`, f.tester.token)
        .send({ project_id: f.projectId, name: 'Sneaky', risk_score: 99, risk_level: 'critical' });
      const body = expectProblem(create, 422, 'validation_error');
      expect(body.errors).toMatchObject({
        risk_score: expect.any(Array),
        risk_level: expect.any(Array),
      });
      const c = await createComponent();
      const patch = await t
        .req('patch', `${API}/components/${c.id}`, f.tester.token)
        .send({ risk_score: 50 });
      expect(expectProblem(patch, 422, 'validation_error').errors).toHaveProperty('risk_score');
    });
  });

  describe('validation', () => {
    it.each([
      [{}, ['project_id', 'name']],
      [{ project_id: 'x', name: 'a' }, ['project_id']],
      [{ name: '   ' }, ['name']],
      [{ name: null }, ['name']],
      [{ name: 'a', id: 'abc' }, ['id']],
      [{ name: 'a', status: 'deleted' }, ['status']],
      [{ name: 'a', status: null }, ['status']],
      [{ name: 'a', tags: null }, ['tags']],
      [{ name: 'a', tags: [1] }, ['tags']],
      [{ name: 'a', owner_id: 42 }, ['owner_id']],
      [{ name: 'a'.repeat(256) }, ['name']],
      [{ name: 'a', key: 'k'.repeat(101) }, ['key']],
      [{ name: 'a', description: 7 }, ['description']],
      [{ name: 'a\u0000b' }, ['name']],
      [{ name: 'a', key: 'k\u0000' }, ['key']],
      [{ name: 'a', description: '\u0000' }, ['description']],
      [{ name: 'a', tags: ['ok', 'x\u0000'] }, ['tags']],
      [{ name: 'a', owner_id: '\u0000' }, ['owner_id']],
    ])('create %j → 422 on %j', async (body, fields) => {
      const payload = { project_id: f.projectId, ...body };
      if (Object.keys(body).length === 0) delete (payload as Record<string, unknown>).project_id;
      const res = await t.req('post', `${API}/components`, f.tester.token).send(payload);
      const problem = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(problem.errors as object).sort()).toEqual([...fields].sort());
    });

    it('patch: explicit null for name/status/tags → 422; null clears description and owner', async () => {
      const c = await createComponent({ description: 'd', owner_id: f.tester.id });
      for (const field of ['name', 'status', 'tags']) {
        const res = await t
          .req('patch', `${API}/components/${c.id}`, f.tester.token)
          .send({ [field]: null });
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(field);
      }
      const res = await t
        .req('patch', `${API}/components/${c.id}`, f.tester.token)
        .send({ description: null, owner_id: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ description: null, owner_id: null });
    });

    it('trims text and normalises tags', async () => {
      const c = await createComponent({ name: '  Spaced  ', tags: [' API', 'api', '', 'Core '] });
      expect(c).toMatchObject({ name: 'Spaced', tags: ['API', 'Core'] });
    });
  });

  describe('keys', () => {
    it('generates a key from the name and makes it unique per project', async () => {
      const a = await createComponent({ name: 'Checkout Flow' });
      const b = await createComponent({ name: 'checkout flow!' });
      const c = await createComponent({ name: 'Checkout  Flow' });
      expect([a.key, b.key, c.key]).toEqual([
        'checkout-flow',
        'checkout-flow-2',
        'checkout-flow-3',
      ]);
      const other = await t.createProject(f.lead.token);
      const d = await createComponent({ name: 'Checkout Flow' }, other);
      expect(d.key).toBe('checkout-flow');
      const e = await createComponent({ name: '!!!' });
      expect(e.key).toBe('item');
    });

    it('slugifies an explicit key; a taken explicit key is suffixed, never refused', async () => {
      const a = await createComponent({ key: 'My Key!' });
      expect(a.key).toBe('my-key');
      const dup = await t
        .req('post', `${API}/components`, f.tester.token)
        .send({ project_id: f.projectId, name: 'Other', key: 'MY-KEY' });
      expect(dup.status).toBe(201);
      expect(dup.body.key).toBe('my-key-2');
      const long = await createComponent({ name: 'x'.repeat(255) });
      expect(long.key).toBe('x'.repeat(100));
      const empty = await createComponent({ name: 'From Name', key: '' });
      expect(empty.key).toBe('from-name');
      const nullKey = await createComponent({ name: 'From Null', key: null });
      expect(nullKey.key).toBe('from-null');
    });

    it('products and components have separate key namespaces', async () => {
      await createComponent({ key: 'shared-space' });
      const p = await t
        .req('post', `${API}/products`, f.tester.token)
        .send({ project_id: f.projectId, name: 'P', key: 'shared-space' });
      expect(p.status).toBe(201);
      expect(p.body.key).toBe('shared-space');
    });

    it('patch: renaming keeps the key, key null regenerates it, a taken key is suffixed', async () => {
      const a = await createComponent({ name: 'Alpha Service' });
      await createComponent({ key: 'taken-key' });
      let res = await t
        .req('patch', `${API}/components/${a.id}`, f.tester.token)
        .send({ name: 'Beta Service' });
      expect(res.body).toMatchObject({ name: 'Beta Service', key: 'alpha-service' });
      res = await t.req('patch', `${API}/components/${a.id}`, f.tester.token).send({ key: null });
      expect(res.body.key).toBe('beta-service');
      res = await t
        .req('patch', `${API}/components/${a.id}`, f.tester.token)
        .send({ key: 'Beta Service' });
      expect(res.status).toBe(200);
      expect(res.body.key).toBe('beta-service');
      res = await t
        .req('patch', `${API}/components/${a.id}`, f.tester.token)
        .send({ key: 'taken-key' });
      expect(res.status).toBe(200);
      expect(res.body.key).toBe('taken-key-2');
      res = await t
        .req('patch', `${API}/components/${a.id}`, f.tester.token)
        .send({ key: 'Taken Key 2' });
      expect(res.body.key).toBe('taken-key-2');
      res = await t
        .req('patch', `${API}/components/${a.id}`, f.tester.token)
        .send({ name: 'Gamma', key: '' });
      expect(res.body.key).toBe('gamma');
    });
  });

  describe('owner', () => {
    it('accepts a member, rejects an outsider, an admin without membership and an unknown user', async () => {
      const ok = await createComponent({ owner_id: f.viewer.id });
      expect(ok.owner_id).toBe(f.viewer.id);
      for (const owner of [
        f.outsider.id,
        t.adminId,
        '00000000-0000-7000-8000-000000000001',
        'not-a-user-id',
      ]) {
        const res = await t
          .req('post', `${API}/components`, f.tester.token)
          .send({ project_id: f.projectId, name: 'Owned', owner_id: owner });
        expect(expectProblem(res, 422, 'invalid_owner').errors).toHaveProperty('owner_id');
      }
      const patch = await t
        .req('patch', `${API}/components/${ok.id}`, f.tester.token)
        .send({ owner_id: f.outsider.id });
      expectProblem(patch, 422, 'invalid_owner');
    });
  });

  describe('list', () => {
    let project: string;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      project = await t.createProject(f.lead.token);
      await t.addMember(project, f.viewer.id, 'viewer', f.lead.token);
      const mk = async (name: string, body: Record<string, unknown>) => {
        ids[name] = (await createComponent({ name, ...body }, project)).id;
      };
      await mk('Auth', { tags: ['Backend', 'security'], description: 'Login and tokens' });
      await mk('Cart', {
        tags: ['frontend'],
        business_criticality: 5,
        production_incident_score: 5,
        change_frequency: 5,
      });
      await mk('Search 100%', { status: 'archived', tags: ['backend'] });
      await mk('Payments', {
        business_criticality: 5,
        change_frequency: 5,
        integration_complexity: 5,
        defect_density: 5,
        production_incident_score: 5,
        automation_confidence: 0,
      });
    });

    const list = async (qs: string) => {
      const res = await t.req(
        'get',
        `${API}/components?project_id=${project}&${qs}`,
        f.viewer.token,
      );
      expect(res.status).toBe(200);
      return res.body as {
        items: Array<{ name: string; id: string }>;
        total: number;
        has_next: boolean;
      };
    };

    it('sorts by risk score desc and pages with total', async () => {
      const all = await list('');
      expect(all.items.map((i) => i.name)).toEqual(['Payments', 'Cart', 'Search 100%', 'Auth']);
      expect(all.total).toBe(4);
      const p2 = await list('page=2&page_size=3');
      expect(p2).toMatchObject({ page: 2, page_size: 3, has_next: false, total: 4 });
      expect(p2.items.map((i) => i.name)).toEqual(['Auth']);
      const p1 = await list('page=1&page_size=3');
      expect(p1.has_next).toBe(true);
      const past = await list('page=9');
      expect(past).toMatchObject({ items: [], total: 4 });
    });

    it('filters by status, risk_level, tag (any, case-insensitive), search and product_id', async () => {
      expect((await list('status=archived')).items.map((i) => i.name)).toEqual(['Search 100%']);
      expect((await list('status=archived&status=active')).total).toBe(4);
      expect((await list('risk_level=critical')).items.map((i) => i.name)).toEqual(['Payments']);
      expect((await list('risk_level=critical&risk_level=high')).items.map((i) => i.name)).toEqual([
        'Payments',
        'Cart',
      ]);
      expect((await list('tag=BACKEND')).items.map((i) => i.name).sort()).toEqual([
        'Auth',
        'Search 100%',
      ]);
      expect((await list('tag=frontend&tag=security')).items.map((i) => i.name).sort()).toEqual([
        'Auth',
        'Cart',
      ]);
      expect((await list('search=TOKENS')).items.map((i) => i.name)).toEqual(['Auth']);
      expect((await list('search=100%25')).items.map((i) => i.name)).toEqual(['Search 100%']);
      expect((await list('search=%25')).items.map((i) => i.name)).toEqual(['Search 100%']);
      expect((await list('search=cart&status=archived')).total).toBe(0);

      const product = await t
        .req('post', `${API}/products`, f.lead.token)
        .send({ project_id: project, name: 'Shop' });
      const product2 = await t
        .req('post', `${API}/products`, f.lead.token)
        .send({ project_id: project, name: 'Shop 2' });
      await t
        .req('put', `${API}/products/${product.body.id}/components`, f.lead.token)
        .send({ links: [{ component_id: ids.Cart }, { component_id: ids.Auth }] });
      await t
        .req('put', `${API}/products/${product2.body.id}/components`, f.lead.token)
        .send({ links: [{ component_id: ids.Cart }, { component_id: ids.Payments }] });
      const byProduct = await list(`product_id=${product.body.id}`);
      expect(byProduct.items.map((i) => i.name)).toEqual(['Cart', 'Auth']);
      const byBoth = await list(`product_id=${product.body.id}&product_id=${product2.body.id}`);
      expect(byBoth.items.map((i) => i.name)).toEqual(['Payments', 'Cart', 'Auth']);
      expect(byBoth.total).toBe(3);
    });

    it('product_id filter: unknown and malformed product ids match nothing', async () => {
      expect(await list('product_id=00000000-0000-7000-8000-000000000009')).toMatchObject({
        items: [],
        total: 0,
      });
      expect(await list('product_id=not-a-product')).toMatchObject({ items: [], total: 0 });
    });

    it('validates the query', async () => {
      const q = async (qs: string) => t.req('get', `${API}/components?${qs}`, f.viewer.token);
      expect(expectProblem(await q(''), 422, 'validation_error').errors).toHaveProperty([
        'query.project_id',
      ]);
      for (const bad of [
        'page=0',
        'page_size=201',
        'status=deleted',
        'risk_level=huge',
        `product_id=${'x'.repeat(101)}`,
      ]) {
        expectProblem(await q(`project_id=${project}&${bad}`), 422, 'validation_error');
      }
      // Unknown query parameters are ignored.
      expect((await q(`project_id=${project}&sort_by=name`)).status).toBe(200);
      for (const [bad, key] of [
        ['search=a%00b', 'query.search'],
        ['tag=a%00b', 'query.tag'],
        ['product_id=%00', 'query.product_id'],
      ]) {
        const body = expectProblem(
          await q(`project_id=${project}&${bad}`),
          422,
          'validation_error',
        );
        expect(body.errors).toHaveProperty([key]);
      }
    });
  });

  describe('dependencies', () => {
    it('replaces the whole set and lists outgoing edges', async () => {
      const [a, b, c] = [await createComponent(), await createComponent(), await createComponent()];
      let res = await t.req('put', `${API}/components/${a.id}/dependencies`, f.tester.token).send({
        dependencies: [
          { target_component_id: b.id, dependency_type: 'depends_on' },
          { target_component_id: c.id },
        ],
      });
      expect(res.status).toBe(200);
      expect(
        res.body.items.map((d: { target_component_id: string }) => d.target_component_id),
      ).toEqual([b.id, c.id]);
      expect(res.body.items[0]).toMatchObject({
        source_component_id: a.id,
        dependency_type: 'depends_on',
        id: expect.any(String),
        created_at: expect.any(String),
      });
      res = await t
        .req('put', `${API}/components/${a.id}/dependencies`, f.tester.token)
        .send({ dependencies: [{ target_component_id: c.id }] });
      expect(
        res.body.items.map((d: { target_component_id: string }) => d.target_component_id),
      ).toEqual([c.id]);
      const get = await t.req('get', `${API}/components/${a.id}/dependencies`, f.viewer.token);
      expect(get.body).toEqual(res.body);
      res = await t
        .req('put', `${API}/components/${a.id}/dependencies`, f.tester.token)
        .send({ dependencies: [] });
      expect(res.body).toEqual({ items: [] });
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM component_dependencies WHERE source_component_id = $1`,
        [a.id],
      );
      expect(rows[0].n).toBe(0);
    });

    async function put(id: string, targets: string[]) {
      return t
        .req('put', `${API}/components/${id}/dependencies`, f.tester.token)
        .send({ dependencies: targets.map((target) => ({ target_component_id: target })) });
    }

    async function targetsOf(id: string): Promise<string[]> {
      const rows = await t.db.query(
        `SELECT target_component_id FROM component_dependencies WHERE source_component_id = $1 ORDER BY created_at, id`,
        [id],
      );
      return rows.map((r: { target_component_id: string }) => r.target_component_id);
    }

    it('rejects a self-dependency with component_dependency_cycle and changes nothing', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      await put(a.id, [b.id]);
      const body = expectProblem(await put(a.id, [b.id, a.id]), 422, 'component_dependency_cycle');
      expect(body.errors).toHaveProperty(['dependencies.1.target_component_id']);
      expect(await targetsOf(a.id)).toEqual([b.id]);
    });

    it('rejects a target of another project or an unknown one with component_project_mismatch', async () => {
      const a = await createComponent();
      const other = await t.createProject(t.adminToken);
      const foreign = await createComponent({}, other);
      let body = expectProblem(await put(a.id, [foreign.id]), 422, 'component_project_mismatch');
      expect(body.errors).toHaveProperty(['dependencies.0.target_component_id']);
      body = expectProblem(
        await put(a.id, ['00000000-0000-7000-8000-00000000abcd']),
        422,
        'component_project_mismatch',
      );
      expect(body.errors).toHaveProperty(['dependencies.0.target_component_id']);
      expect(await targetsOf(a.id)).toEqual([]);
    });

    it('rejects duplicate targets with validation_error', async () => {
      const [a, b, c] = [await createComponent(), await createComponent(), await createComponent()];
      const body = expectProblem(await put(a.id, [b.id, c.id, b.id]), 422, 'validation_error');
      expect(Object.keys(body.errors as object)).toEqual(['dependencies.2.target_component_id']);
      expect(await targetsOf(a.id)).toEqual([]);
    });

    it('rejects a two-node cycle (B→A exists, A→B)', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      expect((await put(b.id, [a.id])).status).toBe(200);
      const body = expectProblem(await put(a.id, [b.id]), 422, 'component_dependency_cycle');
      expect(body.errors).toHaveProperty(['dependencies.0.target_component_id']);
      expect(await targetsOf(a.id)).toEqual([]);
    });

    it('rejects a cycle through a longer chain, and accepts a DAG with shared targets', async () => {
      const n = await Promise.all([0, 1, 2, 3, 4].map(() => createComponent()));
      // 0 → 1 → 2 → 3 → 4, and 0 → 2 (diamond-ish, no cycle)
      for (let i = 0; i < 4; i++)
        expect((await put(n[i].id, i === 0 ? [n[1].id, n[2].id] : [n[i + 1].id])).status).toBe(200);
      const body = expectProblem(await put(n[4].id, [n[0].id]), 422, 'component_dependency_cycle');
      // The shortest cycle, spelled out with the components' ids.
      expect(body.detail).toBe(
        `Dependency replacement introduces a cycle: ${[4, 0, 2, 3, 4].map((i) => n[i].id).join(' → ')}`,
      );
      expectProblem(await put(n[3].id, [n[4].id, n[1].id]), 422, 'component_dependency_cycle');
      expect(await targetsOf(n[3].id)).toEqual([n[4].id]);
      // replacing 3's edge removes the path, so 4 → 0 becomes fine
      expect((await put(n[3].id, [])).status).toBe(200);
      expect((await put(n[4].id, [n[0].id])).status).toBe(200);
    });

    it('an omitted dependencies list clears the set', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      await put(a.id, [b.id]);
      const res = await t
        .req('put', `${API}/components/${a.id}/dependencies`, f.tester.token)
        .send({});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [] });
      expect(await targetsOf(a.id)).toEqual([]);
    });

    it('ids are opaque: a malformed target is an unknown component, never a 500', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      const body = expectProblem(
        await put(a.id, [b.id, 'no-such-component']),
        422,
        'component_project_mismatch',
      );
      expect(body.errors).toEqual({
        'dependencies.1.target_component_id': ['invalid target_component_id: no-such-component'],
      });
      expect(await targetsOf(a.id)).toEqual([]);
    });

    it('uuids are case-insensitive: self, duplicates and upper-case paths (never a 500)', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      const upper = (id: string) => id.toUpperCase();
      expectProblem(await put(a.id, [upper(a.id)]), 422, 'component_dependency_cycle');
      const dup = expectProblem(await put(a.id, [b.id, upper(b.id)]), 422, 'validation_error');
      expect(Object.keys(dup.errors as object)).toEqual(['dependencies.1.target_component_id']);
      expectProblem(await put(upper(a.id), [a.id]), 422, 'component_dependency_cycle');
      const ok = await put(upper(a.id), [upper(b.id)]);
      expect(ok.status).toBe(200);
      expect(ok.body.items).toEqual([
        expect.objectContaining({ source_component_id: a.id, target_component_id: b.id }),
      ]);
      expectProblem(await put(b.id, [upper(a.id)]), 422, 'component_dependency_cycle');
    });

    it('accepts a diamond and rejects the edge that closes it from the bottom', async () => {
      const [top, left, right, bottom] = await Promise.all(
        [0, 1, 2, 3].map(() => createComponent()),
      );
      expect((await put(top.id, [left.id, right.id])).status).toBe(200);
      expect((await put(left.id, [bottom.id])).status).toBe(200);
      expect((await put(right.id, [bottom.id])).status).toBe(200);
      const body = expectProblem(await put(bottom.id, [top.id]), 422, 'component_dependency_cycle');
      expect(body.errors).toHaveProperty(['dependencies.0.target_component_id']);
      expect(await targetsOf(bottom.id)).toEqual([]);
      const graph = await t.req(
        'get',
        `${API}/components/graph?project_id=${f.projectId}`,
        f.viewer.token,
      );
      const edges = (
        graph.body.dependencies as Array<{
          source_component_id: string;
          target_component_id: string;
        }>
      ).filter((d) => [top.id, left.id, right.id, bottom.id].includes(d.source_component_id));
      expect(edges).toHaveLength(4);
    });

    it('validates the body', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      const cases: Array<[unknown, string]> = [
        [{ dependencies: null }, 'dependencies'],
        [{ dependencies: [null] }, 'dependencies.0'],
        [{ dependencies: [{}] }, 'dependencies.0.target_component_id'],
        [{ dependencies: [{ target_component_id: 7 }] }, 'dependencies.0.target_component_id'],
        [
          { dependencies: [{ target_component_id: 'a\u0000' }] },
          'dependencies.0.target_component_id',
        ],
        [
          { dependencies: [{ target_component_id: b.id, dependency_type: null }] },
          'dependencies.0.dependency_type',
        ],
        [
          { dependencies: [{ target_component_id: b.id, dependency_type: 'blocks' }] },
          'dependencies.0.dependency_type',
        ],
        [{ dependencies: [{ target_component_id: b.id, extra: 1 }] }, 'dependencies.0.extra'],
        [{ dependencies: [], extra: true }, 'extra'],
      ];
      for (const [body, key] of cases) {
        const res = await t
          .req('put', `${API}/components/${a.id}/dependencies`, f.tester.token)
          .send(body as object);
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([key]);
      }
    });
  });

  describe('graph', () => {
    it('returns every component and edge of the project only', async () => {
      const project = await t.createProject(f.lead.token);
      await t.addMember(project, f.viewer.id, 'viewer', f.lead.token);
      const [a, b, c] = [
        await createComponent({ name: 'G-A' }, project),
        await createComponent({ name: 'G-B', business_criticality: 5 }, project),
        await createComponent({ name: 'G-C' }, project),
      ];
      await t
        .req('put', `${API}/components/${a.id}/dependencies`, f.lead.token)
        .send({ dependencies: [{ target_component_id: b.id }, { target_component_id: c.id }] });
      await t
        .req('put', `${API}/components/${b.id}/dependencies`, f.lead.token)
        .send({ dependencies: [{ target_component_id: c.id }] });
      await createComponent({ name: 'elsewhere' });
      const res = await t.req(
        'get',
        `${API}/components/graph?project_id=${project}`,
        f.viewer.token,
      );
      expect(res.status).toBe(200);
      expect(res.body.components.map((x: { name: string }) => x.name)).toEqual([
        'G-B',
        'G-C',
        'G-A',
      ]);
      expect(res.body.components[0]).toMatchObject({
        id: b.id,
        key: b.key,
        risk_score: 23,
        risk_level: 'low',
        status: 'active',
      });
      expect(
        res.body.dependencies.map(
          (d: { source_component_id: string; target_component_id: string }) => [
            d.source_component_id,
            d.target_component_id,
          ],
        ),
      ).toEqual([
        [a.id, b.id],
        [a.id, c.id],
        [b.id, c.id],
      ]);
      expectProblem(
        await t.req('get', `${API}/components/graph`, f.viewer.token),
        422,
        'validation_error',
      );
    });

    it('writes the same instants as the other component reads (rendered by SQL)', async () => {
      const project = await t.createProject(f.lead.token);
      const [a, b] = [await createComponent({}, project), await createComponent({}, project)];
      await t
        .req('put', `${API}/components/${a.id}/dependencies`, f.lead.token)
        .send({ dependencies: [{ target_component_id: b.id }] })
        .expect(200);
      // Sub-millisecond digits are truncated, like a JS Date; the session time zone does not matter.
      await t.db.query(
        `UPDATE components SET updated_at = '2026-01-02 03:04:05.123999+00', created_at = '1999-12-31 23:59:59.9999+05'
          WHERE id = $1`,
        [a.id],
      );
      const graph = (
        await t.req('get', `${API}/components/graph?project_id=${project}`, f.lead.token).expect(200)
      ).body as { components: Json[]; dependencies: Json[] };
      const one = (await t.req('get', `${API}/components/${a.id}`, f.lead.token).expect(200)).body as Json;
      const inGraph = graph.components.find((c) => c.id === a.id) as Json;
      expect(inGraph.updated_at).toBe('2026-01-02T03:04:05.123Z');
      expect(inGraph.created_at).toBe('1999-12-31T18:59:59.999Z');
      expect({ created_at: inGraph.created_at, updated_at: inGraph.updated_at }).toEqual({
        created_at: one.created_at,
        updated_at: one.updated_at,
      });
      for (const c of graph.components) {
        const single = (await t.req('get', `${API}/components/${String(c.id)}`, f.lead.token)).body as Json;
        expect([c.created_at, c.updated_at]).toEqual([single.created_at, single.updated_at]);
      }
      const deps = (await t.req('get', `${API}/components/${a.id}/dependencies`, f.lead.token).expect(200))
        .body as Json[] | { items?: Json[] };
      const list = Array.isArray(deps) ? deps : (deps.items ?? []);
      expect(graph.dependencies.map((d) => d.created_at)).toEqual(list.map((d) => d.created_at));
    });
  });

  describe('delete', () => {
    it('removes product links and dependency edges in both directions, leaving the rest', async () => {
      const [a, b, c] = [await createComponent(), await createComponent(), await createComponent()];
      await t
        .req('put', `${API}/components/${a.id}/dependencies`, f.tester.token)
        .send({ dependencies: [{ target_component_id: b.id }, { target_component_id: c.id }] });
      await t
        .req('put', `${API}/components/${b.id}/dependencies`, f.tester.token)
        .send({ dependencies: [{ target_component_id: c.id }] });
      await t
        .req('put', `${API}/components/${c.id}/dependencies`, f.tester.token)
        .send({ dependencies: [] });
      const product = await t
        .req('post', `${API}/products`, f.tester.token)
        .send({ project_id: f.projectId, name: 'Del' });
      await t
        .req('put', `${API}/products/${product.body.id}/components`, f.tester.token)
        .send({ links: [{ component_id: b.id }, { component_id: c.id }] });

      expect((await t.req('delete', `${API}/components/${b.id}`, f.lead.token)).status).toBe(204);
      const edges = await t.db.query(
        `SELECT source_component_id, target_component_id FROM component_dependencies
          WHERE $1 IN (source_component_id, target_component_id) OR source_component_id = $2`,
        [b.id, a.id],
      );
      expect(edges).toEqual([{ source_component_id: a.id, target_component_id: c.id }]);
      const links = await t.req(
        'get',
        `${API}/products/${product.body.id}/components`,
        f.viewer.token,
      );
      expect(links.body.items.map((l: { component_id: string }) => l.component_id)).toEqual([c.id]);
      expect((await t.req('delete', `${API}/components/${b.id}`, f.lead.token)).status).toBe(404);
    });
  });

  describe('concurrency', () => {
    it('concurrent creates with the same name get distinct keys', async () => {
      const project = await t.createProject(t.adminToken);
      const results = await Promise.all(
        [0, 1, 2, 3, 4].map(() =>
          t
            .req('post', `${API}/components`, t.adminToken)
            .send({ project_id: project, name: 'Same Name' }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      expect(results.map((r) => r.body.key as string).sort()).toEqual([
        'same-name',
        'same-name-2',
        'same-name-3',
        'same-name-4',
        'same-name-5',
      ]);
    });

    it('concurrent creates spelling project_id in both letter cases still get distinct keys', async () => {
      const project = await t.createProject(t.adminToken);
      for (const resource of ['components', 'products']) {
        const results = await Promise.all(
          [0, 1, 2, 3].map((i) =>
            t
              .req('post', `${API}/${resource}`, t.adminToken)
              .send({ project_id: i % 2 ? project.toUpperCase() : project, name: 'Mixed Case' }),
          ),
        );
        expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
        expect(new Set(results.map((r) => r.body.key as string)).size).toBe(4);
      }
    });

    it('a replace with If-Match on A and a replace naming A as a target do not deadlock', async () => {
      const [a, c] = [await createComponent(), await createComponent()];
      const qr = t.db.createQueryRunner();
      await qr.connect();
      try {
        // Stands in for a replacement of another component that names A: it holds the project's
        // dependency lock, then key-shares A.
        await qr.startTransaction();
        await qr.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
          `component_dependencies:${f.projectId}`,
        ]);
        const guarded = t
          .req('put', `${API}/components/${String(a.id)}/dependencies`, f.tester.token)
          .set('If-Match', '*')
          .send({ dependencies: [{ target_component_id: c.id }] })
          .then((r) => r);
        await waitUntilBlockedOrDone(t.db, qr, guarded);
        // With If-Match's FOR UPDATE on A this waited for the request, which waited for us.
        await qr.query(`SELECT id FROM components WHERE id = $1 FOR KEY SHARE`, [a.id]);
        await qr.commitTransaction();
        expect((await guarded).status).toBe(200);
      } finally {
        await qr.release();
      }
    });

    it('two concurrent replacements cannot close a cycle together', async () => {
      const [a, b] = [await createComponent(), await createComponent()];
      const results = await Promise.all([
        t
          .req('put', `${API}/components/${a.id}/dependencies`, f.tester.token)
          .send({ dependencies: [{ target_component_id: b.id }] }),
        t
          .req('put', `${API}/components/${b.id}/dependencies`, f.tester.token)
          .send({ dependencies: [{ target_component_id: a.id }] }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
      const edges = await t.db.query(
        `SELECT count(*)::int AS n FROM component_dependencies WHERE source_component_id = ANY($1::uuid[])`,
        [[a.id, b.id]],
      );
      expect(edges[0].n).toBe(1);
    });
  });

  describe('scale', () => {
    it('replaces dependencies in a project of 10,000 components and ~50,000 edges, in a fixed number of statements', async () => {
      const project = await t.createProject(t.adminToken);
      await t.db.query(
        `INSERT INTO components (id, project_id, name, key)
         SELECT gen_random_uuid(), $1, 'Bulk ' || i, 'bulk-' || i FROM generate_series(1, 10000) AS i`,
        [project],
      );
      const ids: string[] = (
        await t.db.query(
          `SELECT id FROM components WHERE project_id = $1 ORDER BY (substr(key, 6))::int`,
          [project],
        )
      ).map((r: { id: string }) => r.id);
      // Edges i → i+1 … i+5: a DAG with one long path 1 → 2 → … → 10000.
      await t.db.query(
        `INSERT INTO component_dependencies (id, source_component_id, target_component_id, project_id)
         SELECT gen_random_uuid(), s.id, d.id, $2
           FROM unnest($1::uuid[]) WITH ORDINALITY AS s(id, n)
           JOIN unnest($1::uuid[]) WITH ORDINALITY AS d(id, n) ON d.n BETWEEN s.n + 1 AND s.n + 5`,
        [ids, project],
      );
      const count = await t.db.query(
        `SELECT count(*)::int AS n FROM component_dependencies WHERE project_id = $1`,
        [project],
      );
      expect(count[0].n).toBeGreaterThan(49900);

      // Speed is measured by the bench (dependency-cycle-* scenarios on a graph of this size); here:
      // right answers, in a fixed number of statements whatever the size of the graph.
      const ok = await statementsDuring(() =>
        t
          .req('put', `${API}/components/${ids[0]}/dependencies`, t.adminToken)
          .send({ dependencies: ids.slice(9000, 9100).map((id) => ({ target_component_id: id })) }),
      );
      expect(ok.result.status).toBe(200);
      expect(ok.result.body.items).toHaveLength(100);
      expect(ok.statements.length).toBeLessThanOrEqual(12);

      const cycle = await statementsDuring(() =>
        t
          .req('put', `${API}/components/${ids[9999]}/dependencies`, t.adminToken)
          .send({ dependencies: [{ target_component_id: ids[1] }] }),
      );
      expectProblem(cycle.result, 422, 'component_dependency_cycle');
      expect(cycle.statements.length).toBeLessThanOrEqual(12);

      const graph = await statementsDuring(() =>
        t.req('get', `${API}/components/graph?project_id=${project}`, t.adminToken),
      );
      expect(graph.result.status).toBe(200);
      expect(graph.result.body.components).toHaveLength(10000);
      expect(graph.result.body.dependencies).toHaveLength(count[0].n - 5 + 100);
      // Authentication with access (one statement for a bearer token), the graph version, the
      // components, the edges, the version again (nothing written meanwhile: the answer is cached).
      expect(graph.statements).toHaveLength(5);
      const cached = await statementsDuring(() =>
        t.req('get', `${API}/components/graph?project_id=${project}`, t.adminToken),
      );
      expect(cached.result.body).toEqual(graph.result.body);
      // Authentication with access, the graph version.
      expect(cached.statements).toHaveLength(2);
    }, 120000);
  });
});
