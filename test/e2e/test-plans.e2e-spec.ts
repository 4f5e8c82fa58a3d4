import { randomUUID } from 'node:crypto';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { waitUntilBlockedOrDone } from '../support/wait-for';

const API = '/api/v1';

describe('test plans (CONTRACT §7; reference runs-imports-plans.md §6)', () => {
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

  const post = async (path: string, body: Record<string, unknown>, token = f.tester.token) => {
    const res = await t.req('post', `${API}${path}`, token).send(body);
    if (res.status !== 201)
      throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; [k: string]: unknown };
  };
  const suite = (name: string, parent_id: string | null = null, fx: RoleFixture = f) =>
    post('/suites', { project_id: fx.projectId, name, parent_id }, fx.tester.token);
  const testCase = (body: Record<string, unknown> = {}, fx: RoleFixture = f) =>
    post(
      '/test-cases',
      { project_id: fx.projectId, title: t.unique('Case '), ...body },
      fx.tester.token,
    );
  const milestone = (fx: RoleFixture = f, body: Record<string, unknown> = {}) =>
    post(
      '/milestones',
      { project_id: fx.projectId, name: t.unique('M '), ...body },
      fx.tester.token,
    );
  const plan = (body: Record<string, unknown> = {}, fx: RoleFixture = f) =>
    post(
      '/test-plans',
      { project_id: fx.projectId, name: t.unique('Plan '), ...body },
      fx.tester.token,
    );
  const runItems = async (runId: string) =>
    t.db.query(
      `SELECT ri.test_case_id, count(r.id)::int AS rows FROM run_items ri LEFT JOIN run_item_rows r ON r.run_item_id = ri.id
        WHERE ri.test_run_id = $1 GROUP BY ri.test_case_id, ri.created_at, ri.id ORDER BY ri.created_at, ri.id`,
      [runId],
    ) as Promise<Array<{ test_case_id: string; rows: number }>>;

  describe('role matrix', () => {
    it('GET /test-plans needs viewer', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-plans?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });
    it('GET /test-plans/tags needs viewer', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-plans/tags?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });
    it('POST /test-plans needs tester', async () => {
      await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/test-plans`,
        body: () => ({ project_id: f.projectId, name: 'matrix' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
    });
    it('GET /test-plans/{id} needs viewer', async () => {
      const p = await plan();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-plans/${p.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_plan_not_found',
      });
    });
    it('PATCH /test-plans/{id} needs tester', async () => {
      const p = await plan();
      await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/test-plans/${p.id}`,
        body: () => ({ description: 'x' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'test_plan_not_found',
      });
    });
    it('DELETE /test-plans/{id} needs lead', async () => {
      const p = await plan();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/test-plans/${p.id}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'test_plan_not_found',
      });
      expectProblem(
        await t.req('get', `${API}/test-plans/${p.id}`, f.lead.token),
        404,
        'test_plan_not_found',
      );
    });
    it('POST /test-plans/{id}/create-run needs tester', async () => {
      const c = await testCase();
      const p = await plan({ case_ids: [c.id] });
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/test-plans/${p.id}/create-run`,
        body: () => ({ name: 'From plan' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'test_plan_not_found',
      });
      expect(res.body).toMatchObject({ name: 'From plan', project_id: f.projectId });
    });
  });

  it('creates a manual plan with suites, cases and milestone; reads resolve names and keys', async () => {
    const s1 = await suite('Checkout');
    const s2 = await suite('Login');
    const c1 = await testCase();
    const c2 = await testCase({ status: 'draft' });
    const m = await milestone();
    const p = await plan({
      description: 'd',
      tags: ['Release', ' release', 'smoke'],
      suite_ids: [s2.id, s1.id],
      case_ids: [c2.id, c1.id],
      milestone_id: m.id,
    });
    expect(p).toMatchObject({
      project_id: f.projectId,
      description: 'd',
      tags: ['Release', 'smoke'],
      generation_source: 'manual',
      generation_config: {
        product_ids: [],
        component_ids: [],
        include_dependent_components: false,
        minimum_risk_level: null,
        generation_mode: 'regression',
        explicit_include_case_ids: [],
        explicit_exclude_case_ids: [],
      },
      generation_summary: {},
      milestone_id: m.id,
      milestone_name: m.name,
      suite_ids: [s2.id, s1.id],
      suite_names: ['Login', 'Checkout'],
      case_ids: [c2.id, c1.id],
      case_keys: [c2.key, c1.key],
      created_by: f.tester.id,
    });
    const got = await t.req('get', `${API}/test-plans/${p.id}`, f.viewer.token);
    expect(got.body).toEqual(p);
    const empty = await plan();
    expect(empty).toMatchObject({
      suite_ids: [],
      case_ids: [],
      milestone_id: null,
      milestone_name: null,
      tags: [],
    });
  });

  it('rejects bad scope: duplicates 422, unknown 404, other project 422, bad milestone 422', async () => {
    const s = await suite('S');
    const c = await testCase();
    const fs = await suite('Foreign', null, other);
    const fc = await testCase({}, other);
    const fm = await milestone(other);
    const bad = (body: Record<string, unknown>) =>
      t
        .req('post', `${API}/test-plans`, f.tester.token)
        .send({ project_id: f.projectId, name: 'bad', ...body });
    expect(
      expectProblem(await bad({ suite_ids: [s.id, s.id] }), 422, 'validation_error').errors,
    ).toHaveProperty(['suite_ids.1']);
    expect(
      expectProblem(await bad({ case_ids: [c.id, c.id] }), 422, 'validation_error').errors,
    ).toHaveProperty(['case_ids.1']);
    expectProblem(await bad({ suite_ids: [randomUUID()] }), 404, 'suite_not_found');
    expectProblem(await bad({ case_ids: [randomUUID()] }), 404, 'test_case_not_found');
    expect(
      expectProblem(await bad({ suite_ids: [fs.id] }), 422, 'suite_project_mismatch').errors,
    ).toHaveProperty('suite_ids');
    expect(
      expectProblem(await bad({ case_ids: [fc.id] }), 422, 'test_case_project_mismatch').errors,
    ).toHaveProperty('case_ids');
    expect(
      expectProblem(await bad({ milestone_id: fm.id }), 422, 'invalid_milestone').errors,
    ).toHaveProperty('milestone_id');
    expectProblem(await bad({ milestone_id: randomUUID() }), 422, 'invalid_milestone');
    expect(expectProblem(await bad({ name: null }), 422, 'validation_error').errors).toHaveProperty(
      'name',
    );
    expect(
      expectProblem(await bad({ suite_ids: null }), 422, 'validation_error').errors,
    ).toHaveProperty('suite_ids');
    expect(
      expectProblem(await bad({ case_ids: ['x'] }), 422, 'validation_error').errors,
    ).toHaveProperty('case_ids');
    expect(
      expectProblem(await bad({ generation_source: 'magic' }), 422, 'validation_error').errors,
    ).toHaveProperty('generation_source');
    expect(
      expectProblem(await bad({ owner: 'me' }), 422, 'validation_error').errors,
    ).toHaveProperty('owner');
    const n = await t.db.query(`SELECT count(*)::int AS n FROM test_plans WHERE name = 'bad'`);
    expect(n[0].n).toBe(0);
  });

  it('explicit nulls on non-nullable fields, unknown fields and NUL characters are 422, never 500', async () => {
    const p = await plan();
    for (const body of [
      { name: null },
      { tags: null },
      { suite_ids: null },
      { case_ids: null },
      { generation_source: null },
      { case_ids: [null] },
      { suite_ids: ['nope'] },
      { id: randomUUID() },
      { name: 'a\u0000' },
      { tags: ['\u0000'] },
    ]) {
      const created = await t
        .req('post', `${API}/test-plans`, f.tester.token)
        .send({ project_id: f.projectId, name: 'x', ...body });
      expectProblem(created, 422, 'validation_error');
      const patched = await t.req('patch', `${API}/test-plans/${p.id}`, f.tester.token).send(body);
      expectProblem(patched, 422, 'validation_error');
    }
    const withCase = await plan({ case_ids: [(await testCase()).id] });
    const nulName = await t
      .req('post', `${API}/test-plans/${withCase.id}/create-run`, f.tester.token)
      .send({ name: 'run\u0000' });
    expectProblem(nulName, 422, 'validation_error');
    const unchanged = await t.req('get', `${API}/test-plans/${p.id}`, f.viewer.token);
    expect(unchanged.body).toMatchObject({ name: p.name, tags: [], suite_ids: [], case_ids: [] });
  });

  it('a blank milestone_id means no milestone, on create and PATCH (reference: blank is null)', async () => {
    const m = await milestone();
    const created = await plan({ milestone_id: '  ' });
    expect(created).toMatchObject({ milestone_id: null, milestone_name: null });
    const linked = await t
      .req('patch', `${API}/test-plans/${created.id}`, f.tester.token)
      .send({ milestone_id: m.id });
    expect(linked.body).toMatchObject({ milestone_id: m.id });
    const cleared = await t
      .req('patch', `${API}/test-plans/${created.id}`, f.tester.token)
      .send({ milestone_id: '' });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ milestone_id: null, milestone_name: null });
    // Anything else still has to be a uuid.
    expect(
      expectProblem(
        await t
          .req('patch', `${API}/test-plans/${created.id}`, f.tester.token)
          .send({ milestone_id: 'M-1' }),
        422,
        'validation_error',
      ).errors,
    ).toHaveProperty('milestone_id');
  });

  it('PATCH replaces lists, clears the milestone, keeps what is absent', async () => {
    const s1 = await suite('A');
    const s2 = await suite('B');
    const c1 = await testCase();
    const m = await milestone();
    const p = await plan({
      suite_ids: [s1.id],
      case_ids: [c1.id],
      milestone_id: m.id,
      tags: ['x'],
    });
    const r1 = await t
      .req('patch', `${API}/test-plans/${p.id}`, f.tester.token)
      .send({ suite_ids: [s2.id, s1.id], name: 'Renamed' });
    expect(r1.body).toMatchObject({
      name: 'Renamed',
      suite_ids: [s2.id, s1.id],
      case_ids: [c1.id],
      milestone_id: m.id,
      tags: ['x'],
    });
    const r2 = await t
      .req('patch', `${API}/test-plans/${p.id}`, f.tester.token)
      .send({ case_ids: [], milestone_id: null, description: null });
    expect(r2.body).toMatchObject({
      case_ids: [],
      case_keys: [],
      milestone_id: null,
      milestone_name: null,
      suite_ids: [s2.id, s1.id],
    });
    expectProblem(
      await t.req('patch', `${API}/test-plans/${p.id}`, f.tester.token).send({ name: null }),
      422,
      'validation_error',
    );
    expectProblem(
      await t
        .req('patch', `${API}/test-plans/${p.id}`, f.tester.token)
        .send({ case_ids: [c1.id, c1.id] }),
      422,
      'validation_error',
    );
    expectProblem(
      await t.req('patch', `${API}/test-plans/${randomUUID()}`, f.tester.token).send({ name: 'x' }),
      404,
      'test_plan_not_found',
    );
  });

  it('deleting a suite or a case removes it from plans; deleting a plan keeps its runs', async () => {
    const s = await suite('Gone');
    const c = await testCase();
    const keep = await testCase();
    const p = await plan({ suite_ids: [s.id], case_ids: [c.id, keep.id] });
    await t.req('delete', `${API}/suites/${s.id}`, f.lead.token).expect(204);
    await t.req('delete', `${API}/test-cases/${c.id}`, f.lead.token).expect(204);
    const got = await t.req('get', `${API}/test-plans/${p.id}`, f.viewer.token);
    expect(got.body).toMatchObject({ suite_ids: [], case_ids: [keep.id] });
    const run = await post(`/test-plans/${p.id}/create-run`, { name: 'r' });
    await t.req('delete', `${API}/test-plans/${p.id}`, f.lead.token).expect(204);
    expect((await t.req('get', `${API}/test-runs/${run.id}`, f.viewer.token)).status).toBe(200);
  });

  it('product_generated plans need a config and take their cases from the generation', async () => {
    const compId = randomUUID();
    await t.db.query(
      `INSERT INTO components (id, project_id, name, key) VALUES ($1, $2, 'Pay', $3)`,
      [compId, f.projectId, t.unique('K')],
    );
    const covered = await testCase({
      component_coverages: [{ component_id: compId, coverage_strength: 'smoke' }],
    });
    const other1 = await testCase();
    const missing = await t
      .req('post', `${API}/test-plans`, f.tester.token)
      .send({ project_id: f.projectId, name: 'gen', generation_source: 'product_generated' });
    expect(expectProblem(missing, 422, 'validation_error').errors).toHaveProperty(
      'generation_config',
    );
    const p = await plan({
      generation_source: 'product_generated',
      generation_config: { component_ids: [compId] },
      case_ids: [other1.id],
    });
    expect(p).toMatchObject({ generation_source: 'product_generated', case_ids: [covered.id] });
    expect((p.generation_config as Record<string, unknown>).component_ids).toEqual([compId]);
    const summary = p.generation_summary as Record<string, unknown>;
    expect(summary.resolved_case_ids).toEqual([covered.id]);
    expect(summary.reason_map).toHaveProperty([covered.id]);
    const foreignComp = randomUUID();
    await t.db.query(
      `INSERT INTO components (id, project_id, name, key) VALUES ($1, $2, 'X', $3)`,
      [foreignComp, other.projectId, t.unique('K')],
    );
    const bad = await t.req('post', `${API}/test-plans`, f.tester.token).send({
      project_id: f.projectId,
      name: 'gen2',
      generation_source: 'product_generated',
      generation_config: { component_ids: [foreignComp] },
    });
    expectProblem(bad, 422, 'component_project_mismatch');
    const manual = await t
      .req('patch', `${API}/test-plans/${p.id}`, f.tester.token)
      .send({ generation_source: 'manual' });
    expect(manual.body).toMatchObject({
      generation_source: 'manual',
      generation_summary: {},
      case_ids: [covered.id],
    });
    expect(manual.body.generation_config.component_ids).toEqual([]);
    // Back to product_generated: a manual plan has no config to reuse, so the body needs one.
    const noConfig = await t
      .req('patch', `${API}/test-plans/${p.id}`, f.tester.token)
      .send({ generation_source: 'product_generated', case_ids: [other1.id] });
    expect(expectProblem(noConfig, 422, 'validation_error').errors).toHaveProperty(
      'generation_config',
    );
    const unchanged = await t.req('get', `${API}/test-plans/${p.id}`, f.viewer.token);
    expect(unchanged.body).toMatchObject({ generation_source: 'manual', case_ids: [covered.id] });
    const regenerated = await t.req('patch', `${API}/test-plans/${p.id}`, f.tester.token).send({
      generation_source: 'product_generated',
      generation_config: { component_ids: [compId] },
    });
    expect(regenerated.body).toMatchObject({
      generation_source: 'product_generated',
      case_ids: [covered.id],
    });
  });

  it('generation_config sent as a huge array is a 422 naming the field, its items unchecked', async () => {
    const p = await plan();
    // Invalid items: class-validator's @ValidateNested() reported each (and took 1–2 s to).
    const items = Array.from({ length: 10_000 }, () => ({ product_ids: 'x', junk: 1 }));
    for (const [method, url, body] of [
      ['patch', `${API}/test-plans/${p.id}`, {}],
      ['post', `${API}/test-plans`, { project_id: f.projectId, name: t.unique('Plan ') }],
    ] as const) {
      const res = await t
        .req(method, url, f.tester.token)
        .send({ ...body, generation_config: items });
      const problem = expectProblem(res, 422, 'validation_error');
      expect(problem.errors).toEqual({
        generation_config: ['generation_config must be an object'],
      });
      expect(problem.detail).toBe('Request contains invalid fields');
    }
    const unchanged = await t.req('get', `${API}/test-plans/${p.id}`, f.viewer.token);
    expect(unchanged.body).toMatchObject({ name: p.name, generation_source: 'manual' });
  });

  it('a product_generated plan checks the case_ids it does not apply (create and PATCH)', async () => {
    const compId = randomUUID();
    await t.db.query(
      `INSERT INTO components (id, project_id, name, key) VALUES ($1, $2, 'Gen', $3)`,
      [compId, f.projectId, t.unique('K')],
    );
    const covered = await testCase({
      component_coverages: [{ component_id: compId, coverage_strength: 'smoke' }],
    });
    const mine = await testCase();
    const foreign = await testCase({}, other);
    const generated = {
      generation_source: 'product_generated',
      generation_config: { component_ids: [compId] },
    };
    const name = t.unique('gen-checked');
    expectProblem(
      await t
        .req('post', `${API}/test-plans`, f.tester.token)
        .send({ project_id: f.projectId, name, ...generated, case_ids: [foreign.id] }),
      422,
      'test_case_project_mismatch',
    );
    const n = await t.db.query(`SELECT count(*)::int AS n FROM test_plans WHERE name = $1`, [name]);
    expect(n[0].n).toBe(0);
    const p = await plan(generated);
    const patch = (body: object) =>
      t.req('patch', `${API}/test-plans/${p.id}`, f.tester.token).send(body);
    expectProblem(await patch({ case_ids: [foreign.id, foreign.id] }), 422, 'validation_error');
    expectProblem(await patch({ case_ids: [foreign.id] }), 422, 'test_case_project_mismatch');
    expectProblem(await patch({ case_ids: [randomUUID()] }), 404, 'test_case_not_found');
    const before = await t.req('get', `${API}/test-plans/${p.id}`, f.viewer.token);
    expect(before.body.case_ids).toEqual([covered.id]);
    // A valid list is taken and not applied: the cases stay the generated ones.
    const ok = await patch({ case_ids: [mine.id] });
    expect(ok.status).toBe(200);
    expect(ok.body.case_ids).toEqual([covered.id]);
  });

  it('lists with search, tag, milestone and generation_source filters', async () => {
    const fx = await t.roleFixture();
    const m = await milestone(fx);
    await plan({ name: 'Alpha 50%', tags: ['Smoke'] }, fx);
    await plan({ name: 'Beta', description: 'nightly', milestone_id: m.id }, fx);
    await plan({ name: 'gamma', tags: ['regression'] }, fx);
    const names = async (q: string) => {
      const res = await t.req(
        'get',
        `${API}/test-plans?project_id=${fx.projectId}&${q}`,
        fx.viewer.token,
      );
      expect(res.status).toBe(200);
      return res.body.items.map((i: { name: string }) => i.name) as string[];
    };
    expect(await names('')).toEqual(['gamma', 'Beta', 'Alpha 50%']);
    expect(await names('sort_by=name')).toEqual(['Alpha 50%', 'Beta', 'gamma']);
    expect(await names('search=NIGHT')).toEqual(['Beta']);
    expect(await names('search=50%25')).toEqual(['Alpha 50%']);
    expect(await names('tag=smoke')).toEqual(['Alpha 50%']);
    expect(await names('tags=SMOKE&tags=regression&sort_by=name')).toEqual(['Alpha 50%', 'gamma']);
    expect(await names(`milestone_id=${m.id}`)).toEqual(['Beta']);
    expect(await names('generation_source=product_generated')).toEqual([]);
    const page = await t.req(
      'get',
      `${API}/test-plans?project_id=${fx.projectId}&page_size=2`,
      fx.viewer.token,
    );
    expect(page.body).toMatchObject({ total: 3, has_next: true });
    const tags = await t.req(
      'get',
      `${API}/test-plans/tags?project_id=${fx.projectId}`,
      fx.viewer.token,
    );
    expect(tags.body.items).toEqual(['regression', 'Smoke']);
    expectProblem(
      await t.req(
        'get',
        `${API}/test-plans?project_id=${fx.projectId}&sort_by=size`,
        fx.viewer.token,
      ),
      422,
      'validation_error',
    );
  });

  describe('create-run', () => {
    /**
     * Runs `request` while another transaction holds `statements` uncommitted, then commits that
     * transaction once the request waits for it (or has answered).
     */
    async function racing<T>(
      statements: string[],
      params: unknown[],
      request: () => Promise<T>,
    ): Promise<T> {
      const qr = t.db.createQueryRunner();
      await qr.connect();
      try {
        await qr.startTransaction();
        for (const sql of statements) await qr.query(sql, params);
        const pending = request();
        await waitUntilBlockedOrDone(t.db, qr, pending);
        await qr.commitTransaction();
        return await pending;
      } finally {
        await qr.release();
      }
    }

    it.each([
      ['deleted', ['DELETE FROM test_cases WHERE id = $1']],
      ['archived', [`UPDATE test_cases SET status = 'archived' WHERE id = $1`]],
    ])(
      'a plan case %s while its run is created is left out of the run (201), never a 422',
      async (_what, statements) => {
        const s = await suite(t.unique('Race '));
        const kept = await testCase({ suite_id: s.id });
        const gone = await testCase({ suite_id: s.id });
        const explicit = await testCase();
        const p = await plan({ suite_ids: [s.id], case_ids: [gone.id, explicit.id] });
        const res = await racing(statements, [gone.id], () =>
          t.req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token).send({ name: 'r' }),
        );
        expect(res.status).toBe(201);
        expect((await runItems(res.body.id)).map((i) => i.test_case_id).sort()).toEqual(
          [kept.id, explicit.id].sort(),
        );
      },
    );

    it('a product-generated plan whose covered case is deleted meanwhile is created without it (201, not 409)', async () => {
      const compId = randomUUID();
      await t.db.query(
        `INSERT INTO components (id, project_id, name, key) VALUES ($1, $2, 'Race', $3)`,
        [compId, f.projectId, t.unique('K')],
      );
      const coverage = {
        component_coverages: [{ component_id: compId, coverage_strength: 'smoke' }],
      };
      const kept = await testCase(coverage);
      const gone = await testCase(coverage);
      const res = await racing(['DELETE FROM test_cases WHERE id = $1'], [gone.id], () =>
        t.req('post', `${API}/test-plans`, f.tester.token).send({
          project_id: f.projectId,
          name: t.unique('Generated '),
          generation_source: 'product_generated',
          generation_config: { component_ids: [compId] },
        }),
      );
      expect(res.status).toBe(201);
      expect(res.body.case_ids).toEqual([kept.id]);
      expect(res.body.generation_summary.resolved_case_ids).toEqual([kept.id]);
    });

    it('takes active cases of the suite tree, then explicit active cases, once each; rows from bindings', async () => {
      const root = await suite('Root');
      const child = await suite('Child', root.id);
      const grandchild = await suite('Grandchild', child.id);
      const a = await testCase({ suite_id: root.id });
      const b = await testCase({ suite_id: grandchild.id });
      await testCase({ suite_id: child.id, status: 'draft' });
      await testCase({ suite_id: child.id, status: 'archived' });
      const explicitActive = await testCase();
      const explicitDraft = await testCase({ status: 'draft' });
      const ds = await post('/datasets', {
        project_id: f.projectId,
        name: t.unique('DS '),
        columns: [{ column_key: 'v' }],
        rows: [{ row_key: 'r1' }, { row_key: 'r2' }],
      });
      await post(`/test-cases/${explicitActive.id}/dataset-bindings`, {
        dataset_id: ds.id,
        dataset_alias: 'd',
      });
      const m = await milestone();
      const p = await plan({
        suite_ids: [root.id],
        case_ids: [b.id, explicitActive.id, explicitDraft.id],
        milestone_id: m.id,
      });
      const res = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'Sprint run', build: '1.2.3', description: 'd' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'Sprint run',
        build: '1.2.3',
        description: 'd',
        status: 'not_started',
        milestone_id: m.id,
        milestone_name: m.name,
        created_by: f.tester.id,
      });
      expect(res.body.summary.total).toBe(3);
      expect(res.body).toHaveProperty('status_breakdown');
      const items = await runItems(res.body.id);
      expect(items).toEqual([
        { test_case_id: a.id, rows: 1 },
        { test_case_id: b.id, rows: 1 },
        { test_case_id: explicitActive.id, rows: 2 },
      ]);
    });

    it('answers 201 with the full run object; rows are the cartesian product labelled alias:label | alias:label', async () => {
      const c = await testCase();
      const browsers = await post('/datasets', {
        project_id: f.projectId,
        name: t.unique('Browsers '),
        columns: [{ column_key: 'engine' }],
        rows: [
          { row_key: 'chrome', scenario_label: 'Chrome', values: { engine: 'blink' } },
          { row_key: 'ff', values: { engine: 'gecko' } },
        ],
      });
      const users = await post('/datasets', {
        project_id: f.projectId,
        name: t.unique('Users '),
        columns: [{ column_key: 'login' }],
        rows: [
          { row_key: 'admin', values: { login: 'root' } },
          { row_key: 'off', is_active: false },
          { row_key: 'guest', scenario_label: 'Guest user' },
        ],
      });
      // sort_order decides the binding order: users (0) is outermost, browsers (1) varies fastest.
      await post(`/test-cases/${c.id}/dataset-bindings`, {
        dataset_id: browsers.id,
        dataset_alias: 'br',
        sort_order: 1,
      });
      await post(`/test-cases/${c.id}/dataset-bindings`, {
        dataset_id: users.id,
        dataset_alias: 'us',
        sort_order: 0,
      });
      const plain = await testCase();
      const p = await plan({ case_ids: [c.id, plain.id] });
      const res = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'Matrix run' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        project_id: f.projectId,
        name: 'Matrix run',
        description: null,
        environment_id: null,
        environment_name: null,
        environment_revision: null,
        environment_revision_id: null,
        environment_revision_number: null,
        environment_snapshot: {},
        milestone_id: null,
        milestone_name: null,
        build: null,
        ci: null,
        attributes: {},
        assignee: null,
        created_by: f.tester.id,
        created_by_name: expect.any(String),
        status: 'not_started',
        started_at: null,
        completed_at: null,
        archived_at: null,
        planned_item_count: 0,
        summary: {
          total: 2,
          untested: 2,
          in_progress: 0,
          passed: 0,
          error: 0,
          failure: 0,
          blocked: 0,
          skipped: 0,
          xfailed: 0,
          xpassed: 0,
          pass_rate: 0,
        },
        status_breakdown: { items: [{ status: 'untested', count: 2 }] },
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      const got = await t.req('get', `${API}/test-runs/${res.body.id}`, f.viewer.token);
      expect(got.body).toEqual(res.body);
      const items = await t.req(
        'get',
        `${API}/run-cases?test_run_id=${res.body.id}`,
        f.viewer.token,
      );
      const item = items.body.items.find((i: { test_case_id: string }) => i.test_case_id === c.id);
      expect(item).toMatchObject({ status: 'untested', rows_total: 4 });
      const rows = await t.req('get', `${API}/run-cases/${item.id}/rows`, f.viewer.token);
      expect(rows.body.items.map((r: { scenario_label: string }) => r.scenario_label)).toEqual([
        'us:admin | br:Chrome',
        'us:admin | br:ff',
        'us:Guest user | br:Chrome',
        'us:Guest user | br:ff',
      ]);
      expect(rows.body.items[0].row_snapshot).toEqual({
        datasets: [
          expect.objectContaining({
            dataset_alias: 'us',
            dataset_id: users.id,
            dataset_name: users.name,
            revision_number: 1,
            row_key: 'admin',
            scenario_label: null,
            values: { login: 'root' },
          }),
          expect.objectContaining({
            dataset_alias: 'br',
            dataset_id: browsers.id,
            row_key: 'chrome',
            scenario_label: 'Chrome',
            values: { engine: 'blink' },
          }),
        ],
      });
      const other = items.body.items.find(
        (i: { test_case_id: string }) => i.test_case_id === plain.id,
      );
      const single = await t.req('get', `${API}/run-cases/${other.id}/rows`, f.viewer.token);
      expect(single.body.items).toEqual([
        expect.objectContaining({
          scenario_label: 'Default scenario',
          row_snapshot: { datasets: [] },
        }),
      ]);
    });

    it('milestone: omitted → inherited, null → none, given → used; validated like runs', async () => {
      const c = await testCase();
      const m1 = await milestone();
      const m2 = await milestone();
      const p = await plan({ case_ids: [c.id], milestone_id: m1.id });
      const inherit = await post(`/test-plans/${p.id}/create-run`, { name: 'a' });
      expect(inherit.milestone_id).toBe(m1.id);
      const none = await post(`/test-plans/${p.id}/create-run`, { name: 'b', milestone_id: null });
      expect(none.milestone_id).toBeNull();
      const given = await post(`/test-plans/${p.id}/create-run`, {
        name: 'c',
        milestone_id: m2.id,
      });
      expect(given.milestone_id).toBe(m2.id);
      const foreign = await milestone(other);
      const bad = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'd', milestone_id: foreign.id });
      expectProblem(bad, 422, 'invalid_milestone');
      const env = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'e', environment_id: randomUUID() });
      expectProblem(env, 422, 'invalid_environment');
      const runs = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1 AND name IN ('d', 'e')`,
        [f.projectId],
      );
      expect(runs[0].n).toBe(0);
    });

    it('an inherited milestone archived since is 422 invalid_milestone saying so; null still creates the run', async () => {
      const c = await testCase();
      const m = await milestone();
      const p = await plan({ case_ids: [c.id], milestone_id: m.id });
      const archived = await t
        .req('patch', `${API}/milestones/${m.id}`, f.tester.token)
        .send({ status: 'archived' });
      expect(archived.status).toBe(200);
      const inherited = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'inherits an archived milestone' });
      const problem = expectProblem(inherited, 422, 'invalid_milestone');
      expect(problem.detail).toMatch(/test plan's milestone is archived/);
      expect((problem.errors as Record<string, string[]>).milestone_id[0]).toMatch(/inherited/);
      const none = await post(`/test-plans/${p.id}/create-run`, { name: 'x', milestone_id: null });
      expect(none.milestone_id).toBeNull();
      const runs = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1 AND name = 'inherits an archived milestone'`,
        [f.projectId],
      );
      expect(runs[0].n).toBe(0);
    });

    it('start_immediately starts the run', async () => {
      const c = await testCase();
      const p = await plan({ case_ids: [c.id] });
      const run = await post(`/test-plans/${p.id}/create-run`, {
        name: 'go',
        start_immediately: true,
      });
      expect(run.status).toBe('in_progress');
      expect(run.started_at).toEqual(expect.stringMatching(/Z$/));
      expect(run).toMatchObject({
        planned_item_count: 0,
        summary: expect.objectContaining({ total: 1, untested: 1 }),
        status_breakdown: { items: [{ status: 'untested', count: 1 }] },
      });
      const notStarted = await post(`/test-plans/${p.id}/create-run`, {
        name: 'wait',
        start_immediately: false,
      });
      expect(notStarted).toMatchObject({ status: 'not_started', started_at: null });
    });

    it('no active case → 422 no_active_cases; bad bodies → 422', async () => {
      const draft = await testCase({ status: 'draft' });
      const emptySuite = await suite('Empty');
      const p = await plan({ case_ids: [draft.id], suite_ids: [emptySuite.id] });
      const res = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'x' });
      expect(expectProblem(res, 422, 'no_active_cases').errors).toHaveProperty('test_plan_id');
      const blank = await plan();
      expectProblem(
        await t
          .req('post', `${API}/test-plans/${blank.id}/create-run`, f.tester.token)
          .send({ name: 'x' }),
        422,
        'no_active_cases',
      );
      const noName = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({});
      expect(expectProblem(noName, 422, 'validation_error').errors).toHaveProperty('name');
      const extra = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'x', project_id: f.projectId });
      expectProblem(extra, 422, 'validation_error');
      const nul = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'x', start_immediately: null });
      expectProblem(nul, 422, 'validation_error');
      expectProblem(
        await t
          .req('post', `${API}/test-plans/${randomUUID()}/create-run`, f.tester.token)
          .send({ name: 'x' }),
        404,
        'test_plan_not_found',
      );
    });

    it('an empty dataset selection rejects the whole run creation', async () => {
      const c = await testCase();
      const ds = await post('/datasets', {
        project_id: f.projectId,
        name: t.unique('DS '),
        columns: [],
        rows: [{ row_key: 'off', is_active: false }],
      });
      await post(`/test-cases/${c.id}/dataset-bindings`, { dataset_id: ds.id, dataset_alias: 'd' });
      const p = await plan({ case_ids: [c.id] });
      const res = await t
        .req('post', `${API}/test-plans/${p.id}/create-run`, f.tester.token)
        .send({ name: 'empty-sel' });
      expectProblem(res, 422, 'dataset_binding_empty_selection');
      const runs = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE name = 'empty-sel'`,
      );
      expect(runs[0].n).toBe(0);
    });
  });
});
