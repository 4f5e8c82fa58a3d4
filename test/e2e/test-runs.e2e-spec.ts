import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { statementsDuring } from '../support/query-count';
import { waitUntilBlockedOrDone } from '../support/wait-for';

/** Every field of api.md §2.1 / CONTRACT §5 on a run object. */
const RUN_FIELDS = [
  'id',
  'project_id',
  'name',
  'description',
  'environment_id',
  'environment_name',
  'environment_revision',
  'environment_revision_id',
  'environment_revision_number',
  'environment_snapshot',
  'milestone_id',
  'milestone_name',
  'build',
  'ci',
  'attributes',
  'assignee',
  'created_by',
  'created_by_name',
  'status',
  'started_at',
  'completed_at',
  'archived_at',
  'planned_item_count',
  'summary',
  'status_breakdown',
  'created_at',
  'updated_at',
].sort();

const EMPTY_SUMMARY = {
  total: 0,
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
};

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectRunShape(run: Record<string, unknown>): void {
  expect(Object.keys(run).sort()).toEqual(RUN_FIELDS);
  expect(run.summary).toEqual(
    expect.objectContaining({ total: expect.any(Number), pass_rate: expect.any(Number) }),
  );
  expect(Object.keys(run.summary as object).sort()).toEqual(Object.keys(EMPTY_SUMMARY).sort());
  expect(run.status_breakdown).toEqual({ items: expect.any(Array) });
  expect(typeof run.environment_snapshot).toBe('object');
  expect(run.environment_snapshot).not.toBeNull();
  expect(run.created_at).toMatch(ISO_Z);
  expect(run.updated_at).toMatch(ISO_Z);
  expect(typeof run.planned_item_count).toBe('number');
  expect(typeof run.created_by_name).toBe('string');
}

describe('test runs', () => {
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

  async function createRun(
    body: Record<string, unknown> = {},
    token = f.tester.token,
    projectId = f.projectId,
  ): Promise<Record<string, unknown>> {
    const res = await t
      .req('post', api('/test-runs'), token)
      .send({ project_id: projectId, name: t.unique('Run '), ...body });
    if (res.status !== 201)
      throw new Error(`create run: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  }

  async function createEnvironment(
    projectId = f.projectId,
    body: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const res = await t
      .req('post', api('/environments'), f.lead.token)
      .send({ project_id: projectId, name: t.unique('Env '), ...body });
    if (res.status !== 201)
      throw new Error(`create env: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  }

  async function createMilestone(
    body: Record<string, unknown> = {},
    projectId = f.projectId,
  ): Promise<Record<string, unknown>> {
    const res = await t
      .req('post', api('/milestones'), f.lead.token)
      .send({ project_id: projectId, name: t.unique('M '), ...body });
    if (res.status !== 201)
      throw new Error(`create milestone: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  }

  async function patchRun(id: unknown, body: Record<string, unknown>, token = f.lead.token) {
    return t.req('patch', api(`/test-runs/${String(id)}`), token).send(body);
  }

  /** Moves a run through the lifecycle up to `status`. */
  async function runIn(status: string): Promise<Record<string, unknown>> {
    const run = await createRun();
    const path = ['in_progress', 'completed', 'archived'];
    let current = run;
    for (const step of path) {
      if (current.status === status) break;
      const res = await patchRun(run.id, { status: step });
      expect(res.status).toBe(200);
      current = res.body as Record<string, unknown>;
    }
    expect(current.status).toBe(status);
    return current;
  }

  describe('role matrix', () => {
    it('GET /test-runs needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/test-runs?project_id=${f.projectId}`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(res.body).toMatchObject({ page: 1, page_size: 50 });
    });

    it('POST /test-runs needs tester', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: api('/test-runs'),
        body: () => ({ project_id: f.projectId, name: 'Matrix run' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
      expect(res.body.name).toBe('Matrix run');
    });

    it('GET /test-runs/{id} needs viewer', async () => {
      const run = await createRun();
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: api(`/test-runs/${String(run.id)}`),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_run_not_found',
      });
      expect(res.body.id).toBe(run.id);
      const admin = await t.req('get', api(`/test-runs/${String(run.id)}`), t.adminToken);
      expect(admin.status).toBe(200);
      expect(admin.body).toEqual(res.body);
    });

    it('PATCH /test-runs/{id} needs tester for metadata and status changes', async () => {
      const run = await createRun();
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: api(`/test-runs/${String(run.id)}`),
        body: () => ({ build: 'b-1' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'test_run_not_found',
      });
      expect(res.body.build).toBe('b-1');
      const start = await patchRun(run.id, { status: 'in_progress' }, f.tester.token);
      expect(start.status).toBe(200);
    });

    it('PATCH status=archived needs lead', async () => {
      const run = await runIn('completed');
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: api(`/test-runs/${String(run.id)}`),
        body: () => ({ status: 'archived' }),
        minRole: 'lead',
        okStatus: 200,
        notFoundCode: 'test_run_not_found',
      });
      expect(res.body.status).toBe('archived');
    });

    it('DELETE /test-runs/{id} needs lead', async () => {
      const run = await createRun();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: api(`/test-runs/${String(run.id)}`),
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'test_run_not_found',
      });
      expectProblem(
        await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token),
        404,
        'test_run_not_found',
      );
    });

    it('an administrator acts as lead without membership', async () => {
      const run = await runIn('completed');
      const res = await patchRun(run.id, { status: 'archived' }, t.adminToken);
      expect(res.status).toBe(200);
    });

    it('a malformed run id is a 404', async () => {
      expectProblem(
        await t.req('get', api('/test-runs/not-a-uuid'), f.lead.token),
        404,
        'test_run_not_found',
      );
    });
  });

  describe('fields', () => {
    it('a new run has every field with its initial values', async () => {
      const run = await createRun({ name: '  Smoke  ' });
      expectRunShape(run);
      expect(run).toMatchObject({
        project_id: f.projectId,
        name: 'Smoke',
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
        assignee: null,
        created_by: f.tester.id,
        created_by_name: `User ${f.tester.username}`,
        status: 'not_started',
        started_at: null,
        completed_at: null,
        archived_at: null,
        planned_item_count: 0,
        summary: EMPTY_SUMMARY,
        status_breakdown: { items: [] },
      });
    });

    it('create, get, patch and list all carry every field, with environment and milestone', async () => {
      const env = await createEnvironment();
      const milestone = await createMilestone();
      const created = await createRun({
        environment_id: env.id,
        milestone_id: milestone.id,
        build: '2.4.0-rc1',
        assignee: f.viewer.id,
        description: 'Nightly',
      });
      expectRunShape(created);
      expect(created).toMatchObject({
        environment_id: env.id,
        environment_name: env.name,
        environment_revision: {
          id: env.current_revision_id,
          revision_number: env.current_revision_number,
          snapshot_hash: env.snapshot_hash,
        },
        environment_revision_id: env.current_revision_id,
        environment_revision_number: 1,
        milestone_id: milestone.id,
        milestone_name: milestone.name,
        build: '2.4.0-rc1',
        assignee: f.viewer.id,
        description: 'Nightly',
      });
      expect(Object.keys(created.environment_snapshot as object).length).toBeGreaterThan(0);

      const got = await t.req('get', api(`/test-runs/${String(created.id)}`), f.viewer.token);
      expect(got.status).toBe(200);
      expectRunShape(got.body);
      expect(got.body).toEqual(created);

      const patched = await patchRun(created.id, { planned_item_count: 12 }, f.tester.token);
      expect(patched.status).toBe(200);
      expectRunShape(patched.body);
      expect(patched.body).toMatchObject({
        planned_item_count: 12,
        milestone_name: milestone.name,
      });

      const list = await t.req(
        'get',
        api(`/test-runs?project_id=${f.projectId}&search=2.4.0-rc1`),
        f.viewer.token,
      );
      expect(list.status).toBe(200);
      expect(list.body.items).toHaveLength(1);
      expectRunShape(list.body.items[0]);
      expect(list.body.items[0]).toEqual(patched.body);
    });

    it('create-run from a test plan answers the same complete run object', async () => {
      const env = await createEnvironment();
      const milestone = await createMilestone();
      const c = await t
        .req('post', api('/test-cases'), f.tester.token)
        .send({ project_id: f.projectId, title: t.unique('Case ') });
      expect(c.status).toBe(201);
      const plan = await t
        .req('post', api('/test-plans'), f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Plan '), case_ids: [c.body.id] });
      expect(plan.status).toBe(201);
      for (const startImmediately of [false, true]) {
        const res = await t
          .req('post', api(`/test-plans/${String(plan.body.id)}/create-run`), f.tester.token)
          .send({
            name: t.unique('From plan '),
            environment_id: env.id,
            milestone_id: milestone.id,
            start_immediately: startImmediately,
          });
        expect(res.status).toBe(201);
        expectRunShape(res.body);
        expect(res.body).toMatchObject({
          status: startImmediately ? 'in_progress' : 'not_started',
          environment_revision: { id: env.current_revision_id, revision_number: 1 },
          milestone_name: milestone.name,
          created_by_name: `User ${f.tester.username}`,
          planned_item_count: 0,
          summary: { ...EMPTY_SUMMARY, total: 1, untested: 1 },
          status_breakdown: { items: [{ status: 'untested', count: 1 }] },
        });
        const got = await t.req('get', api(`/test-runs/${String(res.body.id)}`), f.viewer.token);
        expect(got.body).toEqual(res.body);
      }
    });

    it('created_by_name falls back to the username', async () => {
      const res = await t.req('post', api('/users'), t.adminToken).send({
        username: t.unique('plain'),
        password: 'a long passphrase',
      });
      expect(res.status).toBe(201);
      await t.addMember(f.projectId, res.body.id, 'tester', f.lead.token);
      const token = await t.login(res.body.username, 'a long passphrase');
      const run = await createRun({}, token);
      expect(run.created_by_name).toBe(res.body.username);
    });

    it('rejects unknown fields, client ids, empty names and explicit nulls', async () => {
      const post = (body: object) => t.req('post', api('/test-runs'), f.tester.token).send(body);
      let p = expectProblem(
        await post({ project_id: f.projectId, name: 'x', id: 'abc' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('id');
      p = expectProblem(
        await post({ project_id: f.projectId, name: '   ' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('name');
      p = expectProblem(await post({ project_id: f.projectId }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('name');
      p = expectProblem(await post({ name: 'x' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('project_id');

      const run = await createRun();
      p = expectProblem(await patchRun(run.id, { name: null }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('name');
      p = expectProblem(
        await patchRun(run.id, { planned_item_count: -1 }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('planned_item_count');
      p = expectProblem(
        await patchRun(run.id, { planned_item_count: null }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('planned_item_count');
      p = expectProblem(await patchRun(run.id, { status: 'done' }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('status');
      p = expectProblem(await patchRun(run.id, { extra: 1 }), 422, 'validation_error');
      expect(p.errors).toHaveProperty('extra');
      // Text PostgreSQL cannot store is a 422, never a 500.
      expectProblem(
        await post({ project_id: f.projectId, name: 'nul\u0000name' }),
        422,
        'validation_error',
      );
      expectProblem(await patchRun(run.id, { build: 'b\u0000' }), 422, 'validation_error');
    });

    it('create rejects fields that are not part of its body (status, planned_item_count, timestamps)', async () => {
      for (const extra of [
        { status: 'in_progress' },
        { planned_item_count: 3 },
        { started_at: '2026-01-01T00:00:00Z' },
        { created_by: f.lead.id },
        { summary: {} },
      ]) {
        const p = expectProblem(
          await t
            .req('post', api('/test-runs'), f.tester.token)
            .send({ project_id: f.projectId, name: 'x', ...extra }),
          422,
          'validation_error',
        );
        expect(Object.keys(p.errors as object)).toEqual(Object.keys(extra));
      }
    });

    it('planned_item_count: an integer from 0 to 2147483647, never a 500', async () => {
      const run = await createRun();
      for (const value of [2147483648, 1e20, 1.5, '3', true, [], {}]) {
        const p = expectProblem(
          await patchRun(run.id, { planned_item_count: value }),
          422,
          'validation_error',
        );
        expect(p.errors).toHaveProperty('planned_item_count');
      }
      for (const value of [0, 2147483647, 7]) {
        const res = await patchRun(run.id, { planned_item_count: value }, f.tester.token);
        expect(res.status).toBe(200);
        expect(res.body.planned_item_count).toBe(value);
      }
    });

    it('PATCH changes only present keys and null clears nullable ones', async () => {
      const milestone = await createMilestone();
      const run = await createRun({ description: 'd', build: 'b', milestone_id: milestone.id });
      const res = await patchRun(run.id, { description: null, milestone_id: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        description: null,
        milestone_id: null,
        milestone_name: null,
        build: 'b',
        name: run.name,
      });
      const status = await patchRun(run.id, { status: null, name: 'Renamed' });
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ status: 'not_started', name: 'Renamed' });
    });
  });

  describe('references', () => {
    it('environment: missing, foreign or archived → 422 invalid_environment', async () => {
      const otherProject = await t.createProject(f.lead.token);
      const foreign = await createEnvironment(otherProject);
      const archived = await createEnvironment();
      const del = await t.req('delete', api(`/environments/${String(archived.id)}`), f.lead.token);
      expect(del.status).toBe(204);
      for (const id of ['0190d9a6-0000-7000-8000-000000000000', 'nope', foreign.id, archived.id]) {
        const p = expectProblem(
          await t
            .req('post', api('/test-runs'), f.tester.token)
            .send({ project_id: f.projectId, name: 'x', environment_id: id }),
          422,
          'invalid_environment',
        );
        expect(p.errors).toHaveProperty('environment_id');
      }
      const run = await createRun();
      expectProblem(
        await patchRun(run.id, { environment_id: foreign.id }),
        422,
        'invalid_environment',
      );
    });

    it('environment_id cannot be set to null', async () => {
      const env = await createEnvironment();
      const run = await createRun({ environment_id: env.id });
      expectProblem(await patchRun(run.id, { environment_id: null }), 422, 'invalid_environment');
      const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(after.body.environment_id).toBe(env.id);
    });

    it('blank environment_id on create means no environment', async () => {
      const run = await createRun({ environment_id: '  ' });
      expect(run.environment_id).toBeNull();
    });

    it('milestone: missing, foreign or archived → 422 invalid_milestone', async () => {
      const otherProject = await t.createProject(f.lead.token);
      const foreign = await createMilestone({}, otherProject);
      const archived = await createMilestone({ status: 'archived' });
      for (const id of ['0190d9a6-0000-7000-8000-000000000000', 'nope', foreign.id, archived.id]) {
        const p = expectProblem(
          await t
            .req('post', api('/test-runs'), f.tester.token)
            .send({ project_id: f.projectId, name: 'x', milestone_id: id }),
          422,
          'invalid_milestone',
        );
        expect(p.errors).toHaveProperty('milestone_id');
      }
      const run = await createRun();
      expectProblem(await patchRun(run.id, { milestone_id: foreign.id }), 422, 'invalid_milestone');
    });

    it('assignee without access → 422 invalid_assignee; members and admins are fine', async () => {
      for (const id of [f.outsider.id, 'nope', '0190d9a6-0000-7000-8000-000000000000']) {
        expectProblem(
          await t
            .req('post', api('/test-runs'), f.tester.token)
            .send({ project_id: f.projectId, name: 'x', assignee: id }),
          422,
          'invalid_assignee',
        );
      }
      const run = await createRun({ assignee: f.viewer.id });
      expectProblem(await patchRun(run.id, { assignee: f.outsider.id }), 422, 'invalid_assignee');
      const admin = await patchRun(run.id, { assignee: t.adminId });
      expect(admin.body.assignee).toBe(t.adminId);
      const cleared = await patchRun(run.id, { assignee: null });
      expect(cleared.body.assignee).toBeNull();
      // A deactivated member has no access any more, nor a deactivated administrator.
      const [member, admin2] = [await t.createUser(), await t.createUser({ isAdmin: true })];
      await t.addMember(f.projectId, member.id, 'tester', f.lead.token);
      expect((await patchRun(run.id, { assignee: member.id })).status).toBe(200);
      expect((await patchRun(run.id, { assignee: admin2.id })).status).toBe(200);
      expect((await patchRun(run.id, { assignee: null })).status).toBe(200);
      for (const u of [member, admin2]) {
        const off = await t
          .req('patch', `/api/v1/users/${u.id}`, t.adminToken)
          .send({ is_active: false });
        expect(off.status).toBe(200);
        expectProblem(await patchRun(run.id, { assignee: u.id }), 422, 'invalid_assignee');
      }
    });

    it('a refused reference changes nothing, whatever else the PATCH carries', async () => {
      const otherProject = await t.createProject(f.lead.token);
      const foreignEnv = await createEnvironment(otherProject);
      const foreignMilestone = await createMilestone({}, otherProject);
      const env = await createEnvironment();
      const run = await createRun({ environment_id: env.id, build: 'old', description: 'd' });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ build: 'new', environment_id: foreignEnv.id }, 'invalid_environment'],
        [{ build: 'new', milestone_id: foreignMilestone.id }, 'invalid_milestone'],
        [{ build: 'new', assignee: f.outsider.id }, 'invalid_assignee'],
        [{ build: 'new', environment_id: null }, 'invalid_environment'],
      ];
      for (const [body, code] of cases) {
        expectProblem(await patchRun(run.id, body, f.tester.token), 422, code);
      }
      const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.viewer.token);
      expect(after.body).toEqual(run);
      const count = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1 AND name = 'refused'`,
        [f.projectId],
      );
      expect(count[0].n).toBe(0);
      expectProblem(
        await t.req('post', api('/test-runs'), f.tester.token).send({
          project_id: f.projectId,
          name: 'refused',
          milestone_id: foreignMilestone.id,
        }),
        422,
        'invalid_milestone',
      );
      const none = await t.db.query(
        `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1 AND name = 'refused'`,
        [f.projectId],
      );
      expect(none[0].n).toBe(0);
    });

    it('a milestone deleted while a run is created with it is a 422, never a foreign-key 500', async () => {
      const milestone = await createMilestone();
      const qr = t.db.createQueryRunner();
      await qr.connect();
      await qr.startTransaction();
      try {
        await qr.query(`DELETE FROM milestones WHERE id = $1`, [milestone.id]);
        const pending = t
          .req('post', api('/test-runs'), f.tester.token)
          .send({ project_id: f.projectId, name: 'racing', milestone_id: milestone.id })
          .then((r) => r);
        await waitUntilBlockedOrDone(t.db, qr, pending);
        await qr.commitTransaction();
        expectProblem(await pending, 422, 'invalid_milestone');
      } finally {
        if (qr.isTransactionActive) await qr.rollbackTransaction();
        await qr.release();
      }
    });

    it('the same race with an environment given (revision and milestone read together) is a 422', async () => {
      const env = await createEnvironment();
      const milestone = await createMilestone();
      const qr = t.db.createQueryRunner();
      await qr.connect();
      await qr.startTransaction();
      try {
        await qr.query(`DELETE FROM milestones WHERE id = $1`, [milestone.id]);
        const pending = t
          .req('post', api('/test-runs'), f.tester.token)
          .send({
            project_id: f.projectId,
            name: 'racing with env',
            environment_id: env.id,
            milestone_id: milestone.id,
          })
          .then((r) => r);
        await waitUntilBlockedOrDone(t.db, qr, pending);
        await qr.commitTransaction();
        expectProblem(await pending, 422, 'invalid_milestone');
      } finally {
        if (qr.isTransactionActive) await qr.rollbackTransaction();
        await qr.release();
      }
    });

    it('a deleted milestone unlinks its runs', async () => {
      const milestone = await createMilestone();
      const run = await createRun({ milestone_id: milestone.id });
      const del = await t.req('delete', api(`/milestones/${String(milestone.id)}`), f.lead.token);
      expect(del.status).toBe(204);
      const got = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(got.body).toMatchObject({ milestone_id: null, milestone_name: null });
    });
  });

  describe('environment capture', () => {
    it('creates a run with environment and milestone in a fixed number of statements', async () => {
      const env = await createEnvironment();
      const milestone = await createMilestone();
      const { result: run, statements } = await statementsDuring(() =>
        createRun({ environment_id: env.id, milestone_id: milestone.id }),
      );
      // Authentication, access, the environment's revision with the milestone (one statement),
      // the insert answering the run with creator and milestone names (RETURNING) and the webhook
      // subscribers. The revision's snapshot comes from the cache the environment's creation
      // filled, or one read.
      const insert = statements.filter((sql) => /INSERT INTO test_runs/.test(sql));
      expect(insert).toHaveLength(1);
      expect(statements.filter((sql) => /FROM test_runs r/.test(sql))).toHaveLength(0);
      expect(statements.filter((sql) => /FROM milestones/.test(sql))).toHaveLength(1);
      expect(statements.filter((sql) => /FROM environments/.test(sql))).toHaveLength(1);
      expect(statements.filter((sql) => /FROM webhooks/.test(sql))).toEqual(insert);
      expect(statements.length).toBeLessThanOrEqual(5);
      expect(run).toMatchObject({
        environment_id: env.id,
        environment_revision_id: env.current_revision_id,
        milestone_id: milestone.id,
        milestone_name: milestone.name,
        created_by_name: expect.any(String),
        status: 'not_started',
      });
      const got = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(got.body).toEqual(run);
    });

    it('keeps the captured revision when the environment changes later', async () => {
      const env = await createEnvironment(f.projectId, { description: 'v1' });
      const run = await createRun({ environment_id: env.id });
      const changed = await t
        .req('patch', api(`/environments/${String(env.id)}`), f.lead.token)
        .send({ name: `${String(env.name)} renamed`, description: 'v2', meta: { x: 1 } });
      expect(changed.status).toBe(200);
      expect(changed.body.current_revision_number).toBe(2);

      const got = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(got.body).toMatchObject({
        environment_name: env.name,
        environment_revision_id: env.current_revision_id,
        environment_revision_number: 1,
        environment_revision: {
          id: env.current_revision_id,
          revision_number: 1,
          snapshot_hash: env.snapshot_hash,
        },
      });
      expect(got.body.environment_snapshot).toEqual(run.environment_snapshot);

      // Re-sending the environment on PATCH captures its current revision.
      const rebound = await patchRun(run.id, { environment_id: env.id });
      expect(rebound.status).toBe(200);
      expect(rebound.body).toMatchObject({
        environment_name: changed.body.name,
        environment_revision_id: changed.body.current_revision_id,
        environment_revision_number: 2,
        environment_revision: {
          id: changed.body.current_revision_id,
          revision_number: 2,
          snapshot_hash: changed.body.snapshot_hash,
        },
      });
      expect(rebound.body.environment_snapshot).not.toEqual(run.environment_snapshot);

      // Archiving the environment later does not touch the run.
      await t.req('delete', api(`/environments/${String(env.id)}`), f.lead.token);
      const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(after.body.environment_revision_number).toBe(2);
      expect(after.body.environment_id).toBe(env.id);
    });
  });

  describe('OpenAPI', () => {
    it('documents the run object with a complete example and every endpoint', async () => {
      const doc = await t.req('get', '/openapi.json');
      expect(doc.status).toBe(200);
      const schema = doc.body.components.schemas.TestRunDto;
      expect(Object.keys(schema.properties).sort()).toEqual(RUN_FIELDS);
      expect([...schema.required].sort()).toEqual(RUN_FIELDS);
      // Every property carries an example (null where the example run has none yet).
      const withoutExample = RUN_FIELDS.filter((field) => !('example' in schema.properties[field]));
      expect(withoutExample).toEqual([]);
      expect(schema.properties.summary.example).toMatchObject({ total: 4, pass_rate: 50 });
      const list = doc.body.paths['/api/v1/test-runs'];
      const one = doc.body.paths['/api/v1/test-runs/{id}'];
      expect(list.get.description).toContain('viewer');
      expect(list.post.description).toContain('tester');
      expect(one.get.description).toContain('viewer');
      expect(one.patch.description).toContain('tester');
      expect(one.delete.description).toContain('lead');
      expect(Object.keys(list.post.responses)).toEqual(
        expect.arrayContaining(['201', '401', '403', '404', '422']),
      );
      expect(JSON.stringify(one.patch.responses['409'])).toContain('invalid_status_transition');
      expect(JSON.stringify(one.patch.responses['409'])).toContain('run_items_in_progress');
      expect(JSON.stringify(one.patch.responses['422'])).toContain('invalid_environment');
      expect(one.delete.responses['204']).toBeDefined();
    });
  });

  describe('status transitions', () => {
    type Case = [from: string, to: string, expected: number, code: string];
    const table: Case[] = [
      ['not_started', 'not_started', 409, 'invalid_status_transition'],
      ['not_started', 'in_progress', 200, ''],
      ['not_started', 'completed', 409, 'invalid_status_transition'],
      ['not_started', 'archived', 409, 'invalid_status_transition'],
      ['in_progress', 'not_started', 409, 'invalid_status_transition'],
      ['in_progress', 'in_progress', 409, 'invalid_status_transition'],
      ['in_progress', 'completed', 200, ''],
      ['in_progress', 'archived', 409, 'invalid_status_transition'],
      ['completed', 'not_started', 409, 'invalid_status_transition'],
      ['completed', 'in_progress', 409, 'invalid_status_transition'],
      ['completed', 'completed', 409, 'invalid_status_transition'],
      ['completed', 'archived', 200, ''],
      ['archived', 'not_started', 409, 'invalid_status_transition'],
      ['archived', 'in_progress', 409, 'invalid_status_transition'],
      ['archived', 'completed', 409, 'invalid_status_transition'],
      ['archived', 'archived', 409, 'invalid_status_transition'],
    ];

    it.each(table)('%s → %s answers %i %s', async (from, to, expected, code) => {
      const run = await runIn(from);
      const res = await patchRun(run.id, { status: to });
      if (code) {
        const p = expectProblem(res, expected, code);
        if (code === 'invalid_status_transition' && to !== 'not_started') {
          const source = {
            in_progress: 'not_started',
            completed: 'in_progress',
            archived: 'completed',
          };
          expect(p.detail).toContain(
            `allowed only from ${source[to as keyof typeof source]} (current status: ${from})`,
          );
        }
        const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
        expect(after.body.status).toBe(from);
      } else {
        expect(res.status).toBe(expected);
        expect(res.body.status).toBe(to);
      }
    });

    it('sets the timestamps to now when omitted', async () => {
      const before = Date.now();
      const run = await runIn('archived');
      const after = Date.now();
      for (const field of ['started_at', 'completed_at', 'archived_at']) {
        const value = Date.parse(String(run[field]));
        expect(value).toBeGreaterThanOrEqual(before - 1000);
        expect(value).toBeLessThanOrEqual(after + 1000);
      }
      expect(Date.parse(String(run.started_at))).toBeLessThanOrEqual(
        Date.parse(String(run.completed_at)),
      );
      expect(Date.parse(String(run.completed_at))).toBeLessThanOrEqual(
        Date.parse(String(run.archived_at)),
      );
    });

    it('accepts explicit timestamps with their transition, in any offset', async () => {
      const run = await createRun();
      const started = await patchRun(run.id, {
        status: 'in_progress',
        started_at: '2026-01-01T10:00:00+02:00',
      });
      expect(started.body.started_at).toBe('2026-01-01T08:00:00.000Z');
      const completed = await patchRun(run.id, {
        status: 'completed',
        completed_at: '2026-01-01T09:30:00Z',
      });
      expect(completed.body.completed_at).toBe('2026-01-01T09:30:00.000Z');
      const archived = await patchRun(run.id, {
        status: 'archived',
        archived_at: '2026-01-02T00:00:00Z',
      });
      expect(archived.body).toMatchObject({
        status: 'archived',
        started_at: '2026-01-01T08:00:00.000Z',
        completed_at: '2026-01-01T09:30:00.000Z',
        archived_at: '2026-01-02T00:00:00.000Z',
      });
    });

    it('rejects a timestamp without its transition or earlier than the previous one', async () => {
      const run = await createRun();
      let p = expectProblem(
        await patchRun(run.id, { started_at: '2026-01-01T00:00:00Z' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('started_at');
      p = expectProblem(
        await patchRun(run.id, { status: 'in_progress', completed_at: '2026-01-01T00:00:00Z' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('completed_at');
      p = expectProblem(
        await patchRun(run.id, { status: 'in_progress', started_at: 'yesterday' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('started_at');
      await patchRun(run.id, { status: 'in_progress', started_at: '2026-01-02T00:00:00Z' });
      p = expectProblem(
        await patchRun(run.id, { status: 'completed', completed_at: '2026-01-01T00:00:00Z' }),
        422,
        'validation_error',
      );
      expect(p.errors).toHaveProperty('completed_at');
    });

    it('a failed transition discards the metadata of the same PATCH', async () => {
      const run = await createRun({ build: 'old' });
      expectProblem(
        await patchRun(run.id, { build: 'new', status: 'completed' }),
        409,
        'invalid_status_transition',
      );
      const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(after.body.build).toBe('old');
    });

    it('an archived run is read-only but can be deleted', async () => {
      const run = await runIn('archived');
      expectProblem(await patchRun(run.id, { name: 'changed' }), 409, 'run_archived');
      expectProblem(await patchRun(run.id, { planned_item_count: 3 }), 409, 'run_archived');
      expectProblem(
        await patchRun(run.id, { build: 'x', status: null }, f.tester.token),
        409,
        'run_archived',
      );
      // A status change out of archived is an illegal transition (api.md §3.1 rule 1).
      expectProblem(
        await patchRun(run.id, { name: 'changed', status: 'in_progress' }),
        409,
        'invalid_status_transition',
      );
      const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.viewer.token);
      expect(after.body).toEqual(run);
      const del = await t.req('delete', api(`/test-runs/${String(run.id)}`), f.lead.token);
      expect(del.status).toBe(204);
    });

    it('a completed run still accepts metadata changes', async () => {
      const run = await runIn('completed');
      const res = await patchRun(run.id, { build: 'after', planned_item_count: 2 }, f.tester.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        build: 'after',
        planned_item_count: 2,
        status: 'completed',
      });
    });

    it('concurrent transitions of one run: exactly one wins, the others are 409', async () => {
      const run = await createRun();
      const results = await Promise.all(
        Array.from({ length: 6 }, () => patchRun(run.id, { status: 'in_progress' })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expectProblem(r, 409, 'invalid_status_transition');
      }
      const winner = results.find((r) => r.status === 200);
      const after = await t.req('get', api(`/test-runs/${String(run.id)}`), f.viewer.token);
      expect(after.body.started_at).toBe(winner?.body.started_at);
    });

    it('a tester archiving gets 403 before any transition check', async () => {
      const run = await createRun();
      expectProblem(
        await patchRun(run.id, { status: 'archived' }, f.tester.token),
        403,
        'insufficient_project_role',
      );
    });
  });
});
