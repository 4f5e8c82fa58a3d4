import { randomUUID } from 'node:crypto';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

type Json = Record<string, unknown>;

const MILESTONE_FIELDS = [
  'id',
  'project_id',
  'name',
  'description',
  'status',
  'start_date',
  'target_date',
  'completed_at',
  'owner_id',
  'release_label',
  'created_by',
  'created_at',
  'updated_at',
].sort();

describe('milestones', () => {
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

  async function createMilestone(body: Json = {}, projectId = f.projectId): Promise<Json> {
    return ok(
      await t
        .req('post', api('/milestones'), f.tester.token)
        .send({ project_id: projectId, name: t.unique('M '), ...body }),
      201,
    );
  }

  describe('role matrix', () => {
    it('GET /milestones needs viewer', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/milestones?project_id=${f.projectId}`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });

    it('POST /milestones needs tester', async () => {
      await expectRoleMatrix(t, f, {
        method: 'post',
        url: api('/milestones'),
        body: () => ({ project_id: f.projectId, name: 'Matrix' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
    });

    it('GET /milestones/{id} needs viewer', async () => {
      const m = await createMilestone();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/milestones/${String(m.id)}`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'milestone_not_found',
      });
    });

    it('GET /milestones/{id}/summary needs viewer', async () => {
      const m = await createMilestone();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/milestones/${String(m.id)}/summary`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'milestone_not_found',
      });
    });

    it('PATCH /milestones/{id} needs tester', async () => {
      const m = await createMilestone();
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: api(`/milestones/${String(m.id)}`),
        body: () => ({ release_label: 'v9' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'milestone_not_found',
      });
      expect(res.body.release_label).toBe('v9');
    });

    it('DELETE /milestones/{id} needs lead', async () => {
      const m = await createMilestone();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: api(`/milestones/${String(m.id)}`),
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'milestone_not_found',
      });
      expectProblem(
        await t.req('get', api(`/milestones/${String(m.id)}`), f.lead.token),
        404,
        'milestone_not_found',
      );
    });
  });

  /** A run and a test plan linked to milestone `m`. */
  async function runAndPlanOf(m: Json): Promise<{ run: Json; plan: Json }> {
    const create = async (path: string, name: string) =>
      ok(
        await t
          .req('post', api(path), f.tester.token)
          .send({ project_id: f.projectId, name: t.unique(name), milestone_id: m.id }),
        201,
      );
    return { run: await create('/test-runs', 'run '), plan: await create('/test-plans', 'plan ') };
  }

  describe('deletion', () => {
    it('unlinks its runs and test plans, which are kept', async () => {
      const m = await createMilestone();
      const { run, plan } = await runAndPlanOf(m);
      expect([run.milestone_id, plan.milestone_id]).toEqual([m.id, m.id]);
      await ok(await t.req('delete', api(`/milestones/${String(m.id)}`), f.lead.token), 204);
      const runAfter = await ok(
        await t.req('get', api(`/test-runs/${String(run.id)}`), f.viewer.token),
        200,
      );
      const planAfter = await ok(
        await t.req('get', api(`/test-plans/${String(plan.id)}`), f.viewer.token),
        200,
      );
      expect([runAfter.milestone_id, runAfter.milestone_name]).toEqual([null, null]);
      expect([planAfter.milestone_id, planAfter.milestone_name]).toEqual([null, null]);
    });
  });

  it('an archived milestone re-sent on its run or plan is kept, in either letter case; a new link to it is refused', async () => {
    const m = await createMilestone();
    const { run, plan } = await runAndPlanOf(m);
    await ok(
      await t
        .req('patch', api(`/milestones/${String(m.id)}`), f.tester.token)
        .send({ status: 'archived' }),
      200,
    );
    const upper = String(m.id).toUpperCase();
    for (const path of [`/test-runs/${String(run.id)}`, `/test-plans/${String(plan.id)}`]) {
      const kept = await ok(
        await t.req('patch', api(path), f.lead.token).send({ milestone_id: upper }),
        200,
      );
      expect(kept.milestone_id).toBe(m.id);
    }
    const other = await ok(
      await t
        .req('post', api('/test-runs'), f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('run ') }),
      201,
    );
    const refused = await t
      .req('patch', api(`/test-runs/${String(other.id)}`), f.lead.token)
      .send({ milestone_id: upper });
    expect(refused.status).toBe(422);
  });

  describe('fields and validation', () => {
    it('creates with defaults and returns every field', async () => {
      const m = await createMilestone({ name: '  Release 2.4 ' });
      expect(Object.keys(m).sort()).toEqual(MILESTONE_FIELDS);
      expect(m).toMatchObject({
        project_id: f.projectId,
        name: 'Release 2.4',
        description: null,
        status: 'planned',
        start_date: null,
        target_date: null,
        completed_at: null,
        owner_id: null,
        release_label: null,
        created_by: f.tester.id,
      });
    });

    it('stores dates as calendar dates and validates them', async () => {
      const m = await createMilestone({
        start_date: '2026-05-01',
        target_date: '2026-06-30',
        owner_id: f.viewer.id,
        release_label: 'v2.4.0',
        description: 'GA',
      });
      expect(m).toMatchObject({
        start_date: '2026-05-01',
        target_date: '2026-06-30',
        owner_id: f.viewer.id,
        release_label: 'v2.4.0',
      });
      const post = (body: Json) =>
        t
          .req('post', api('/milestones'), f.tester.token)
          .send({ project_id: f.projectId, name: 'x', ...body });
      let p = expectProblem(await post({ target_date: '2026-02-30' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('target_date');
      p = expectProblem(
        await post({ start_date: '2026-05-01T00:00:00Z' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('start_date');
      p = expectProblem(
        await post({ start_date: '2026-07-01', target_date: '2026-06-01' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('target_date');
      p = expectProblem(await post({ status: 'done' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('status');
      p = expectProblem(await post({ release_label: 'x'.repeat(129) }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('release_label');
      p = expectProblem(await post({ bogus: 1 }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('bogus');
      p = expectProblem(await post({ name: '' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('name');
      expectProblem(await post({ owner_id: f.outsider.id }), 422, 'invalid_owner');
      // The patched result is validated as a whole; the problem names the field that was sent.
      p = expectProblem(
        await t
          .req('patch', api(`/milestones/${String(m.id)}`), f.tester.token)
          .send({ start_date: '2026-07-01' }),
        422,
        'validation_error',
      );
      expect(Object.keys(p.errors as Json)).toEqual(['start_date']);
    });

    it('PATCH may send back the current owner after they left the project; a new owner is checked', async () => {
      const g = await t.roleFixture();
      const m = await ok(
        await t
          .req('post', api('/milestones'), g.tester.token)
          .send({ project_id: g.projectId, name: 'Owned', owner_id: g.viewer.id }),
        201,
      );
      expect(
        (
          await t.req(
            'delete',
            `/api/v1/projects/${g.projectId}/members/${g.viewer.id}`,
            g.lead.token,
          )
        ).status,
      ).toBe(204);
      const patch = (body: Json) =>
        t.req('patch', api(`/milestones/${String(m.id)}`), g.tester.token).send(body);
      const res = await ok(await patch({ name: 'Owned 2', owner_id: g.viewer.id }), 200);
      expect(res).toMatchObject({ name: 'Owned 2', owner_id: g.viewer.id });
      expectProblem(await patch({ owner_id: g.outsider.id }), 422, 'invalid_owner');
    });

    it('PATCH changes only present keys; null clears; completed sets completed_at', async () => {
      const m = await createMilestone({ description: 'd', target_date: '2026-06-30' });
      const patch = (body: Json) =>
        t.req('patch', api(`/milestones/${String(m.id)}`), f.tester.token).send(body);
      let res = await ok(await patch({ description: null, status: 'active' }), 200);
      expect(res).toMatchObject({
        description: null,
        status: 'active',
        target_date: '2026-06-30',
        name: m.name,
      });
      expectProblem(await patch({ name: null }), 422, 'validation_error');
      expectProblem(await patch({ status: null }), 422, 'validation_error');
      res = await ok(await patch({ status: 'completed' }), 200);
      expect(res.completed_at).toEqual(expect.stringMatching(/Z$/));
      res = await ok(await patch({ completed_at: '2026-06-29T10:00:00+02:00' }), 200);
      expect(res.completed_at).toBe('2026-06-29T08:00:00.000Z');
      res = await ok(await patch({ status: 'archived', completed_at: null }), 200);
      expect(res).toMatchObject({ status: 'archived', completed_at: null });
    });
  });

  describe('list', () => {
    it('filters by status and search, orders by target date (nulls last), pages', async () => {
      const projectId = await t.createProject(f.lead.token);
      const late = await ok(
        await t.req('post', api('/milestones'), f.lead.token).send({
          project_id: projectId,
          name: 'Late',
          target_date: '2026-09-01',
          release_label: 'v3',
        }),
        201,
      );
      const early = await ok(
        await t.req('post', api('/milestones'), f.lead.token).send({
          project_id: projectId,
          name: 'Early',
          target_date: '2026-01-01',
          status: 'active',
        }),
        201,
      );
      const none = await ok(
        await t
          .req('post', api('/milestones'), f.lead.token)
          .send({ project_id: projectId, name: 'Someday 100%', description: 'no date' }),
        201,
      );
      const list = async (qs: string) =>
        ok(await t.req('get', api(`/milestones?project_id=${projectId}${qs}`), f.lead.token), 200);
      const all = await list('');
      expect(all).toMatchObject({ total: 3, page: 1, page_size: 50, has_next: false });
      expect((all.items as Json[]).map((m) => m.id)).toEqual([early.id, late.id, none.id]);
      expect(((await list('&status=active')).items as Json[]).map((m) => m.id)).toEqual([early.id]);
      expect((await list('&status=active&status=planned')).total).toBe(3);
      expect(((await list('&search=V3')).items as Json[]).map((m) => m.id)).toEqual([late.id]);
      expect(((await list('&search=NO DATE')).items as Json[]).map((m) => m.id)).toEqual([none.id]);
      expect(
        ((await list(`&search=${encodeURIComponent('%')}`)).items as Json[]).map((m) => m.id),
      ).toEqual([none.id]);
      const p2 = await list('&page=2&page_size=2');
      expect(p2).toMatchObject({ total: 3, has_next: false });
      expect((p2.items as Json[]).map((m) => m.id)).toEqual([none.id]);
      expect(await list('&page=5')).toMatchObject({ items: [], total: 3 });
      expectProblem(await t.req('get', api('/milestones'), f.lead.token), 422, 'validation_error');
      expectProblem(
        await t.req('get', api(`/milestones?project_id=${projectId}&status=nope`), f.lead.token),
        422,
        'validation_error',
      );
      for (const [qs, key] of [
        ['&search=a%00b', 'query.search'],
        ['&page_size=201', 'query.page_size'],
        ['&page=0', 'query.page'],
        ['&page=100000000000000000000', 'query.page'],
      ]) {
        const p = expectProblem(
          await t.req('get', api(`/milestones?project_id=${projectId}${qs}`), f.lead.token),
          422,
          'validation_error',
        );
        expect(p.errors).toHaveProperty([key]);
      }
    });
  });

  describe('summary', () => {
    it('counts linked runs by status and their items by result', async () => {
      const m = await createMilestone({ target_date: '2020-01-01' });
      const empty = await ok(
        await t.req('get', api(`/milestones/${String(m.id)}/summary`), f.viewer.token),
        200,
      );
      expect(empty).toEqual({
        milestone_id: m.id,
        plans_total: 0,
        planned_cases_total: 0,
        runs_total: 0,
        planned_runs: 0,
        active_runs: 0,
        completed_runs: 0,
        archived_runs: 0,
        total_tests: 0,
        untested: 0,
        in_progress: 0,
        passed: 0,
        error: 0,
        failure: 0,
        blocked: 0,
        skipped: 0,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 0,
        overdue: true,
      });

      const cases = [];
      for (let i = 0; i < 3; i++) {
        cases.push(
          await ok(
            await t
              .req('post', api('/test-cases'), f.tester.token)
              .send({ project_id: f.projectId, title: t.unique('c') }),
            201,
          ),
        );
      }
      const mkRun = async () =>
        ok(
          await t
            .req('post', api('/test-runs'), f.tester.token)
            .send({ project_id: f.projectId, name: t.unique('r'), milestone_id: m.id }),
          201,
        );
      const r1 = await mkRun();
      const r2 = await mkRun();
      await mkRun();
      await ok(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: r1.id, test_case_ids: cases.map((c) => c.id) }),
        201,
      );
      const bulk2 = await ok(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: r2.id, test_case_ids: [cases[0].id] }),
        201,
      );
      const item = (bulk2.items as Json[])[0];
      const rows = await ok(
        await t.req('get', api(`/run-cases/${String(item.id)}/rows`), f.viewer.token),
        200,
      );
      await ok(
        await t
          .req(
            'patch',
            api(`/run-cases/rows/${String((rows.items as Json[])[0].id)}`),
            f.tester.token,
          )
          .send({ status: 'passed' }),
        200,
      );
      await ok(
        await t
          .req('patch', api(`/test-runs/${String(r2.id)}`), f.tester.token)
          .send({ status: 'in_progress' }),
        200,
      );
      // A run of another milestone does not count.
      const other = await createMilestone();
      await ok(
        await t
          .req('post', api('/test-runs'), f.tester.token)
          .send({ project_id: f.projectId, name: 'other', milestone_id: other.id }),
        201,
      );

      // Two plans of the milestone with 2 and 1 explicit cases; a plan of another milestone.
      const plans = [randomUUID(), randomUUID(), randomUUID()];
      await t.db.query(
        `INSERT INTO test_plans (id, project_id, name, milestone_id)
         SELECT u.p, $1, 'plan ' || u.p, u.mid FROM unnest($2::uuid[], $3::uuid[]) AS u(p, mid)`,
        [f.projectId, plans, [m.id, m.id, other.id]],
      );
      await t.db.query(
        `INSERT INTO test_plan_cases (test_plan_id, test_case_id, project_id, position)
         VALUES ($1, $4, $5, 1), ($1, $6, $5, 2), ($2, $4, $5, 1), ($3, $4, $5, 1)`,
        [plans[0], plans[1], plans[2], cases[0].id, f.projectId, cases[1].id],
      );

      const s = await ok(
        await t.req('get', api(`/milestones/${String(m.id)}/summary`), f.viewer.token),
        200,
      );
      expect(s).toMatchObject({
        plans_total: 2,
        planned_cases_total: 3,
        runs_total: 3,
        planned_runs: 2,
        active_runs: 1,
        completed_runs: 0,
        archived_runs: 0,
        total_tests: 4,
        untested: 3,
        passed: 1,
        pass_rate: 25,
        overdue: true,
      });
      await ok(
        await t
          .req('patch', api(`/milestones/${String(m.id)}`), f.tester.token)
          .send({ status: 'completed' }),
        200,
      );
      const done = await ok(
        await t.req('get', api(`/milestones/${String(m.id)}/summary`), f.viewer.token),
        200,
      );
      expect(done.overdue).toBe(false);
    });

    it('a future target date is not overdue', async () => {
      const m = await createMilestone({ target_date: '2999-01-01' });
      const s = await ok(
        await t.req('get', api(`/milestones/${String(m.id)}/summary`), f.viewer.token),
        200,
      );
      expect(s.overdue).toBe(false);
    });
  });
});
