import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';

type Factors = [number, number, number, number, number, number];
const LOW: Factors = [0, 0, 0, 0, 0, 5]; // 0, low
const MEDIUM: Factors = [4, 0, 0, 0, 4, 5]; // 37, medium
const HIGH: Factors = [4, 2, 2, 2, 3, 5]; // 51, high
const CRITICAL: Factors = [5, 4, 4, 4, 5, 1]; // 89, critical

interface Included {
  test_case_id: string;
  reason_codes: string[];
  matched_component_ids: string[];
  highest_component_risk_level: string;
  highest_component_risk_score: number;
}

describe('POST /test-plans/generate-preview', () => {
  let t: TestApp;
  let f: RoleFixture;
  const c: Record<'A' | 'B' | 'C' | 'D', string> = { A: '', B: '', C: '', D: '' };
  const k: Record<string, string> = {};
  let p1 = '';
  let p2 = '';

  async function component(
    name: string,
    factors: Factors,
    projectId = f.projectId,
  ): Promise<string> {
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
    if (res.status !== 201) throw new Error(`component: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  }

  async function product(
    name: string,
    componentIds: string[],
    projectId = f.projectId,
  ): Promise<string> {
    const res = await t
      .req('post', `${API}/products`, t.adminToken)
      .send({ project_id: projectId, name });
    if (res.status !== 201) throw new Error(`product: ${res.status} ${JSON.stringify(res.body)}`);
    const put = await t
      .req('put', `${API}/products/${res.body.id}/components`, t.adminToken)
      .send({ links: componentIds.map((id) => ({ component_id: id })) });
    if (put.status !== 200) throw new Error(`links: ${put.status} ${JSON.stringify(put.body)}`);
    return res.body.id as string;
  }

  async function testCase(
    priority: string | null,
    coverages: Array<{
      component_id: string;
      coverage_strength: string;
      is_mandatory_for_release?: boolean;
    }>,
    status = 'active',
  ): Promise<string> {
    const res = await t.req('post', `${API}/test-cases`, t.adminToken).send({
      project_id: f.projectId,
      title: t.unique('Case '),
      status,
      priority,
      component_coverages: coverages.map((cov) => ({ coverage_type: 'direct', ...cov })),
    });
    if (res.status !== 201) throw new Error(`case: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  }

  const preview = (config: Record<string, unknown> | undefined, token = f.tester.token) =>
    t
      .req('post', `${API}/test-plans/generate-preview`, token)
      .send({ project_id: f.projectId, config });

  const ids = (items: Included[]) => items.map((i) => i.test_case_id);

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    c.A = await component('A', LOW);
    c.B = await component('B', HIGH);
    c.C = await component('C', CRITICAL);
    c.D = await component('D', MEDIUM);
    // A depends on D, D depends on C
    await t
      .req('put', `${API}/components/${c.A}/dependencies`, t.adminToken)
      .send({ dependencies: [{ target_component_id: c.D }] });
    await t
      .req('put', `${API}/components/${c.D}/dependencies`, t.adminToken)
      .send({ dependencies: [{ target_component_id: c.C }] });
    p1 = await product('P1', [c.A, c.B]);
    p2 = await product('P2', [c.C]);
    k.k1 = await testCase('low', [
      { component_id: c.A, coverage_strength: 'smoke', is_mandatory_for_release: true },
    ]);
    k.k2 = await testCase('high', [{ component_id: c.B, coverage_strength: 'regression' }]);
    k.k3 = await testCase('critical', [{ component_id: c.D, coverage_strength: 'regression' }]);
    k.k4 = await testCase('medium', [{ component_id: c.C, coverage_strength: 'deep' }]);
    k.k5 = await testCase('critical', [{ component_id: c.A, coverage_strength: 'deep' }], 'draft');
    k.k6 = await testCase('low', []);
    k.k7 = await testCase('critical', [{ component_id: c.B, coverage_strength: 'smoke' }]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('role matrix (tester)', async () => {
    const res = await expectRoleMatrix(t, f, {
      method: 'post',
      url: `${API}/test-plans/generate-preview`,
      body: () => ({ project_id: f.projectId, config: { product_ids: [p1] } }),
      minRole: 'tester',
      okStatus: 200,
      notFoundCode: 'project_not_found',
    });
    expect(res.body.preview.resolved_component_ids).toEqual([c.A, c.B].sort());
  });

  it('products only, regression: linked components, reasons, order mandatory → risk → priority', async () => {
    const res = await preview({ product_ids: [p1, p1] });
    expect(res.status).toBe(200);
    const p = res.body.preview;
    expect(p.resolved_component_ids).toEqual([c.A, c.B].sort());
    expect(ids(p.included_cases)).toEqual([k.k1, k.k7, k.k2]);
    expect(p.resolved_case_ids).toEqual([k.k1, k.k7, k.k2]);
    expect(p.included_cases[0]).toEqual({
      test_case_id: k.k1,
      reason_codes: ['component_match', 'mandatory_release', 'product_match', 'regression_rule'],
      matched_component_ids: [c.A],
      highest_component_risk_level: 'low',
      highest_component_risk_score: 0,
    });
    expect(p.included_cases[2]).toMatchObject({
      reason_codes: ['component_match', 'product_match', 'regression_rule'],
      highest_component_risk_level: 'high',
      highest_component_risk_score: 51,
    });
    expect(p.excluded_cases).toEqual([]);
    expect(p.summary).toEqual({
      resolved_components: 2,
      candidate_cases: 3,
      included_cases: 3,
      excluded_cases: 0,
    });
  });

  it('full mode includes the same cases without regression_rule', async () => {
    const p = (await preview({ product_ids: [p1], generation_mode: 'full' })).body.preview;
    expect(ids(p.included_cases)).toEqual([k.k1, k.k7, k.k2]);
    for (const i of p.included_cases as Included[])
      expect(i.reason_codes).not.toContain('regression_rule');
  });

  it('include_dependent_components follows dependencies transitively', async () => {
    const p = (await preview({ product_ids: [p1], include_dependent_components: true })).body
      .preview;
    expect(p.resolved_component_ids).toEqual([c.A, c.B, c.C, c.D].sort());
    expect(ids(p.included_cases)).toEqual([k.k1, k.k4, k.k7, k.k2, k.k3]);
    const k3 = (p.included_cases as Included[]).find((i) => i.test_case_id === k.k3);
    expect(k3?.reason_codes).toEqual(['dependency_match', 'product_match', 'regression_rule']);
  });

  it('minimum_risk_level drops lower components', async () => {
    const p = (
      await preview({
        product_ids: [p1],
        include_dependent_components: true,
        minimum_risk_level: 'high',
      })
    ).body.preview;
    expect(p.resolved_component_ids).toEqual([c.B, c.C].sort());
    expect(ids(p.included_cases)).toEqual([k.k4, k.k7, k.k2]);
    for (const i of p.included_cases as Included[])
      expect(i.reason_codes).toContain('risk_threshold');
  });

  it('smoke mode keeps mandatory, smoke-covered and high/critical cases', async () => {
    const p = (
      await preview({
        product_ids: [p1],
        include_dependent_components: true,
        generation_mode: 'smoke',
      })
    ).body.preview;
    expect(ids(p.included_cases)).toEqual([k.k1, k.k4, k.k7, k.k2]);
    for (const i of p.included_cases as Included[]) expect(i.reason_codes).toContain('smoke_rule');
    expect(p.summary).toMatchObject({ candidate_cases: 5, included_cases: 4 });
  });

  it('components only, and products with components (intersection)', async () => {
    let p = (await preview({ component_ids: [c.D] })).body.preview;
    expect(ids(p.included_cases)).toEqual([k.k3]);
    expect(p.included_cases[0].reason_codes).toEqual(['component_match', 'regression_rule']);
    p = (await preview({ product_ids: [p1], component_ids: [c.A, c.C] })).body.preview;
    expect(p.resolved_component_ids).toEqual([c.A]);
    expect(ids(p.included_cases)).toEqual([k.k1]);
    p = (await preview({ product_ids: [p2] })).body.preview;
    expect(ids(p.included_cases)).toEqual([k.k4]);
  });

  it('explicit includes (active cases only) and excludes', async () => {
    const p = (
      await preview({
        product_ids: [p1],
        explicit_include_case_ids: [k.k6, k.k5, 'abc', '00000000-0000-7000-8000-000000000001'],
        explicit_exclude_case_ids: [k.k2, k.k3],
      })
    ).body.preview;
    expect(ids(p.included_cases)).toEqual([k.k1, k.k7, k.k6]);
    expect(p.included_cases[2]).toEqual({
      test_case_id: k.k6,
      reason_codes: ['explicit_include'],
      matched_component_ids: [],
      highest_component_risk_level: 'low',
      highest_component_risk_score: 0,
    });
    expect(p.excluded_cases).toEqual([{ test_case_id: k.k2, reason: 'explicit_exclude' }]);
    expect(p.summary).toEqual({
      resolved_components: 2,
      candidate_cases: 4,
      included_cases: 3,
      excluded_cases: 1,
    });
  });

  it('an empty or omitted config previews nothing', async () => {
    for (const config of [undefined, {}]) {
      const res = await preview(config);
      expect(res.status).toBe(200);
      expect(res.body.preview).toEqual({
        resolved_component_ids: [],
        resolved_case_ids: [],
        included_cases: [],
        excluded_cases: [],
        summary: {
          resolved_components: 0,
          candidate_cases: 0,
          included_cases: 0,
          excluded_cases: 0,
        },
      });
    }
  });

  it('ids are case-insensitive uuids', async () => {
    const config = {
      product_ids: [p1],
      component_ids: [c.A, c.B],
      include_dependent_components: true,
      explicit_include_case_ids: [k.k6],
      explicit_exclude_case_ids: [k.k2],
    };
    const lower = await preview(config);
    expect(lower.status).toBe(200);
    const upper = await preview({
      product_ids: [p1.toUpperCase(), p1],
      component_ids: [c.A.toUpperCase(), c.B.toUpperCase()],
      include_dependent_components: true,
      explicit_include_case_ids: [k.k6.toUpperCase()],
      explicit_exclude_case_ids: [k.k2.toUpperCase()],
    });
    expect(upper.status).toBe(200);
    expect(upper.body).toEqual(lower.body);
    expect(lower.body.preview.excluded_cases).toEqual([
      { test_case_id: k.k2, reason: 'explicit_exclude' },
    ]);
  });

  it('rejects products and components outside the project', async () => {
    const other = await t.createProject(t.adminToken);
    const foreignComponent = await component('Foreign', LOW, other);
    const foreignProduct = await product('Foreign P', [foreignComponent], other);
    let body = expectProblem(
      await preview({ product_ids: [p1, foreignProduct] }),
      422,
      'product_project_mismatch',
    );
    expect(body.errors).toHaveProperty(['config.product_ids']);
    expectProblem(
      await preview({ product_ids: ['not-a-product'] }),
      422,
      'product_project_mismatch',
    );
    body = expectProblem(
      await preview({ component_ids: [foreignComponent] }),
      422,
      'component_project_mismatch',
    );
    expect(body.errors).toHaveProperty(['config.component_ids']);
  });

  it('validates the body', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ config: { unknown_key: 1 } }, 'config.unknown_key'],
      [{ config: { generation_mode: 'weird' } }, 'config.generation_mode'],
      [{ config: { minimum_risk_level: 'huge' } }, 'config.minimum_risk_level'],
      [{ config: { product_ids: 'x' } }, 'config.product_ids'],
      [{ config: { include_dependent_components: null } }, 'config.include_dependent_components'],
      [{ config: null }, 'config'],
      [{ config: { product_ids: null } }, 'config.product_ids'],
      [{ config: { component_ids: [7] } }, 'config.component_ids'],
      [{ config: { explicit_include_case_ids: ['a\u0000'] } }, 'config.explicit_include_case_ids'],
      [{ config: [] }, 'config'],
      [{ extra: 1 }, 'extra'],
    ];
    for (const [body, key] of cases) {
      const res = await t
        .req('post', `${API}/test-plans/generate-preview`, f.tester.token)
        .send({ project_id: f.projectId, ...body });
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([key]);
    }
    const missing = await t
      .req('post', `${API}/test-plans/generate-preview`, f.tester.token)
      .send({ config: {} });
    expect(expectProblem(missing, 422, 'validation_error').errors).toHaveProperty(['project_id']);
  });
});
