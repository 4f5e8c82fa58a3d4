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

type Json = Record<string, unknown>;
type Factors = [number, number, number, number, number, number];
const MEDIUM: Factors = [4, 0, 0, 0, 4, 5]; // 37, medium
const HIGH: Factors = [4, 2, 2, 2, 3, 5]; // 51, high
const CRITICAL: Factors = [5, 4, 4, 4, 5, 1]; // 89, critical

describe('release readiness: GET /products/{id}/readiness', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function ok(res: { status: number; body: unknown }, status: number): Promise<Json> {
    if (res.status !== status) {
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body as Json;
  }

  async function component(name: string, factors: Factors): Promise<string> {
    const [bc, cf, ic, dd, pis, ac] = factors;
    const body = await ok(
      await t.req('post', `${API}/components`, t.adminToken).send({
        project_id: f.projectId,
        name: t.unique(name),
        business_criticality: bc,
        change_frequency: cf,
        integration_complexity: ic,
        defect_density: dd,
        production_incident_score: pis,
        automation_confidence: ac,
      }),
      201,
    );
    return body.id as string;
  }

  async function product(componentIds: string[]): Promise<string> {
    const p = await ok(
      await t
        .req('post', `${API}/products`, t.adminToken)
        .send({ project_id: f.projectId, name: t.unique('Product ') }),
      201,
    );
    await ok(
      await t.req('put', `${API}/products/${String(p.id)}/components`, t.adminToken).send({
        links: componentIds.map((component_id) => ({ component_id })),
      }),
      200,
    );
    return p.id as string;
  }

  /** An active case covering `componentId` (mandatory for release unless told otherwise). */
  async function kase(componentId: string, mandatory = true): Promise<string> {
    const body = await ok(
      await t.req('post', `${API}/test-cases`, t.adminToken).send({
        project_id: f.projectId,
        title: t.unique('Case '),
        status: 'active',
        component_coverages: [
          {
            component_id: componentId,
            coverage_type: 'direct',
            coverage_strength: 'regression',
            is_mandatory_for_release: mandatory,
          },
        ],
      }),
      201,
    );
    return body.id as string;
  }

  async function environment(): Promise<string> {
    const body = await ok(
      await t
        .req('post', `${API}/environments`, f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Env ') }),
      201,
    );
    return body.id as string;
  }

  /** A run holding `results` (case id → status); returns the run id. */
  async function run(results: Record<string, string>, body: Json = {}): Promise<string> {
    const r = await ok(
      await t
        .req('post', `${API}/test-runs`, f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Run '), ...body }),
      201,
    );
    const added = await ok(
      await t
        .req('post', `${API}/run-cases/bulk`, f.tester.token)
        .send({ test_run_id: r.id, test_case_ids: Object.keys(results) }),
      201,
    );
    for (const item of added.items as Json[]) {
      const status = results[item.test_case_id as string];
      if (status === 'untested') continue;
      const rows = await ok(
        await t.req('get', `${API}/run-cases/${String(item.id)}/rows`, f.viewer.token),
        200,
      );
      const row = (rows.items as Json[])[0];
      await ok(
        await t
          .req('patch', `${API}/run-cases/rows/${String(row.id)}`, f.tester.token)
          .send({ status }),
        200,
      );
    }
    return r.id as string;
  }

  async function archiveRun(id: string): Promise<void> {
    for (const status of ['in_progress', 'completed', 'archived']) {
      const current = await ok(await t.req('get', `${API}/test-runs/${id}`, f.viewer.token), 200);
      if (
        current.status === status ||
        (status === 'in_progress' && current.status !== 'not_started')
      ) {
        continue;
      }
      await ok(await t.req('patch', `${API}/test-runs/${id}`, f.lead.token).send({ status }), 200);
    }
  }

  function readiness(productId: string, query = '', token = f.viewer.token) {
    return t.req('get', `${API}/products/${productId}/readiness${query}`, token);
  }

  it('role matrix: viewer and up; no credential 401, non-member 404', async () => {
    const p = await product([]);
    const res = await expectRoleMatrix(t, f, {
      method: 'get',
      url: `${API}/products/${p}/readiness`,
      minRole: 'viewer',
      okStatus: 200,
      notFoundCode: 'product_not_found',
    });
    expect(res.body).toEqual({
      verdict: 'ready',
      product_id: p,
      evaluated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      criteria: { environment_id: null, build: null, min_risk_level: 'high' },
      counts: { components: 0, uncovered: 0, failing: 0, not_run: 0, passing: 0 },
      blockers: [],
    });
  });

  it('every reason: uncovered, failing, not_run; passing components are no blocker', async () => {
    const uncovered = await component('Uncovered ', HIGH);
    const failing = await component('Failing ', CRITICAL);
    const notRun = await component('NotRun ', HIGH);
    const passing = await component('Passing ', HIGH);
    const medium = await component('Medium ', MEDIUM);
    const p = await product([uncovered, failing, notRun, passing, medium]);

    const optional = await kase(uncovered, false); // not mandatory: does not cover for release
    const draft = await kase(uncovered); // made draft below: no longer active, does not cover
    const f1 = await kase(failing);
    const f2 = await kase(failing);
    const n1 = await kase(notRun); // never run
    const n2 = await kase(notRun);
    const n3 = await kase(notRun); // in a run, untested
    const p1 = await kase(passing);
    await run({ [optional]: 'passed', [draft]: 'passed', [f1]: 'failure', [f2]: 'passed' });
    await run({ [n2]: 'passed', [n3]: 'untested', [p1]: 'xfailed' });
    await ok(
      await t.req('patch', `${API}/test-cases/${draft}`, t.adminToken).send({ status: 'draft' }),
      200,
    );

    const res = await readiness(p);
    expect(res.status).toBe(200);
    expect(res.body.verdict).toBe('not_ready');
    expect(res.body.counts).toEqual({
      components: 4,
      uncovered: 1,
      failing: 1,
      not_run: 1,
      passing: 1,
    });
    const uncoveredBlocker = (res.body.blockers as Json[]).find((b) => b.reason === 'uncovered');
    expect(res.body.blockers).toEqual([
      {
        component_id: failing,
        component_name: expect.stringMatching(/^Failing /),
        risk_level: 'critical',
        risk_score: 89,
        reason: 'failing',
        test_case_ids: [f1],
      },
      // Both high, score 51: by name (NotRun before Uncovered).
      {
        component_id: notRun,
        component_name: expect.stringMatching(/^NotRun /),
        risk_level: 'high',
        risk_score: 51,
        reason: 'not_run',
        test_case_ids: [n1, n3].sort(),
      },
      {
        component_id: uncovered,
        component_name: expect.stringMatching(/^Uncovered /),
        risk_level: 'high',
        risk_score: 51,
        reason: 'uncovered',
        test_case_ids: [],
      },
    ]);
    expect(uncoveredBlocker).toBeDefined();

    // min_risk_level widens or narrows the evaluated components.
    const wide = await readiness(p, '?min_risk_level=medium');
    expect(wide.body.counts).toMatchObject({ components: 5, uncovered: 2 });
    expect(wide.body.criteria.min_risk_level).toBe('medium');
    const narrow = await readiness(p, '?min_risk_level=critical');
    expect(narrow.body.counts).toEqual({
      components: 1,
      uncovered: 0,
      failing: 1,
      not_run: 0,
      passing: 0,
    });
  });

  it('ready when every mandatory case of every component passed', async () => {
    const a = await component('A ', HIGH);
    const b = await component('B ', CRITICAL);
    const below = await component('Below ', MEDIUM); // uncovered, but below the level
    const p = await product([a, b, below]);
    const c1 = await kase(a);
    const c2 = await kase(b);
    const c3 = await kase(b);
    await run({ [c1]: 'passed', [c2]: 'passed', [c3]: 'xfailed' });
    const res = await readiness(p);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      verdict: 'ready',
      counts: { components: 2, uncovered: 0, failing: 0, not_run: 0, passing: 2 },
      blockers: [],
    });
  });

  it('the latest result counts: newest run first; archived runs are left out', async () => {
    const a = await component('Latest ', HIGH);
    const p = await product([a]);
    const c = await kase(a);
    await run({ [c]: 'failure' });
    const fixed = await run({ [c]: 'passed' });
    expect((await readiness(p)).body.verdict).toBe('ready');

    const broken = await run({ [c]: 'error' });
    const res = await readiness(p);
    expect(res.body.blockers).toEqual([
      expect.objectContaining({ reason: 'failing', test_case_ids: [c] }),
    ]);

    // Archiving the newest run makes the one before it the latest again.
    await archiveRun(broken);
    expect((await readiness(p)).body.verdict).toBe('ready');
    await archiveRun(fixed);
    expect((await readiness(p)).body.blockers).toEqual([
      expect.objectContaining({ reason: 'failing' }),
    ]);
  });

  it('the same answers whether the runs are read by key or joined as PostgreSQL plans', async () => {
    // A project of its own, so that its run count is this test's: the plan depends on it.
    const shared = f;
    f = await t.roleFixture();
    try {
      const a = await component('Plan ', HIGH);
      const p = await product([a]);
      const c = await kase(a);
      const emptyRuns = async (n: number) => {
        for (let i = 0; i < n; i++) {
          await ok(
            await t
              .req('post', `${API}/test-runs`, f.tester.token)
              .send({ project_id: f.projectId, name: t.unique('Empty run ') }),
            201,
          );
        }
      };
      /** The verdict, and whether each item's run was read by key (`readsRunsByKey`). */
      const judge = async () => {
        const { result, statements } = await statementsDuring(() => readiness(p));
        expect(result.status).toBe(200);
        const body = result.body as Json;
        return {
          verdict: body.verdict,
          reasons: (body.blockers as Json[]).map((b) => b.reason),
          byKey: statements.some((sql) => /CROSS JOIN LATERAL/.test(sql)),
        };
      };
      await run({ [c]: 'failure' });
      await run({ [c]: 'passed' });
      await archiveRun(await run({ [c]: 'error' }));
      // 3 items beside 2 runs not archived: joined.
      expect(await judge()).toEqual({ verdict: 'ready', reasons: [], byKey: false });
      // 3 items beside 12 runs: by key; the archived newest still does not count.
      await emptyRuns(10);
      expect(await judge()).toEqual({ verdict: 'ready', reasons: [], byKey: true });
      // 4 items beside 17 runs: by key; the newest run's failure counts.
      await emptyRuns(4);
      const broken = await run({ [c]: 'failure' });
      expect(await judge()).toEqual({ verdict: 'not_ready', reasons: ['failing'], byKey: true });
      await archiveRun(broken);
      expect(await judge()).toEqual({ verdict: 'ready', reasons: [], byKey: true });
      // A filter keeps PostgreSQL's plan, with the same answer.
      const filtered = await statementsDuring(() => readiness(p, '?build=nope'));
      expect((filtered.result.body as Json).verdict).toBe('not_ready');
      expect(filtered.statements.some((sql) => /CROSS JOIN LATERAL/.test(sql))).toBe(false);
    } finally {
      f = shared;
    }
  });

  it('environment_id and build restrict the runs that count', async () => {
    const a = await component('Restricted ', HIGH);
    const p = await product([a]);
    const c = await kase(a);
    const e1 = await environment();
    const e2 = await environment();
    await run({ [c]: 'passed' }, { environment_id: e1, build: '1.0' });
    await run({ [c]: 'failure' }, { environment_id: e2, build: '2.0' });

    const reason = async (query: string) => {
      const res = await readiness(p, query);
      expect(res.status).toBe(200);
      return (res.body.blockers as Json[])[0]?.reason ?? 'ready';
    };
    expect(await reason('')).toBe('failing');
    expect(await reason(`?environment_id=${e1}`)).toBe('ready');
    expect(await reason(`?environment_id=${e2}`)).toBe('failing');
    expect(await reason('?build=1.0')).toBe('ready');
    expect(await reason('?build=2.0')).toBe('failing');
    expect(await reason('?build=3.0')).toBe('not_run');
    expect(await reason(`?environment_id=${e1}&build=2.0`)).toBe('not_run');

    const res = await readiness(p, `?environment_id=${e1}&build=1.0&min_risk_level=high`);
    expect(res.body.criteria).toEqual({ environment_id: e1, build: '1.0', min_risk_level: 'high' });
  });

  it('a constant number of queries, whatever the number of components and cases', async () => {
    const count = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(await component('Q ', HIGH));
      const p = await product(ids);
      const results: Record<string, string> = {};
      for (const id of ids) results[await kase(id)] = 'passed';
      await run(results);
      const { result, statements } = await statementsDuring(() => readiness(p, `?build=x`));
      expect(result.status).toBe(200);
      return statements.length;
    };
    expect(await count(5)).toBe(await count(1));
  });

  it('unknown product 404; bad query 422', async () => {
    const p = await product([]);
    expectProblem(await readiness(randomUUID()), 404, 'product_not_found');

    const otherProject = await t.createProject();
    const foreignEnv = await ok(
      await t
        .req('post', `${API}/environments`, t.adminToken)
        .send({ project_id: otherProject, name: t.unique('Foreign ') }),
      201,
    );
    const foreign = await readiness(p, `?environment_id=${String(foreignEnv.id)}`);
    expectProblem(foreign, 422, 'invalid_environment');
    expect(Object.keys(foreign.body.errors as Json)).toEqual(['query.environment_id']);
    expectProblem(
      await readiness(p, `?environment_id=${randomUUID()}`),
      422,
      'invalid_environment',
    );

    for (const [query, field] of [
      ['?min_risk_level=severe', 'query.min_risk_level'],
      ['?min_risk_level=', 'query.min_risk_level'],
      ['?environment_id=nope', 'query.environment_id'],
      ['?build=', 'query.build'],
      [`?build=${'x'.repeat(256)}`, 'query.build'],
      ['?build=a&build=b', 'query.build'],
    ]) {
      const res = await readiness(p, query);
      expectProblem(res, 422, 'validation_error');
      expect(Object.keys(res.body.errors as Json)).toContain(field);
    }
  });
});
