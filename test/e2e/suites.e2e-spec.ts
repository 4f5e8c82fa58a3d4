import { randomUUID } from 'node:crypto';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { waitFor, waitUntilBlockedOrDone } from '../support/wait-for';

const API = '/api/v1';

describe('suites (CONTRACT §7)', () => {
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

  const createSuite = async (body: Record<string, unknown> = {}, fx: RoleFixture = f) => {
    const res = await t
      .req('post', `${API}/suites`, fx.tester.token)
      .send({ project_id: fx.projectId, name: t.unique('Suite '), ...body });
    if (res.status !== 201)
      throw new Error(`create suite: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; name: string; parent_id: string | null; [k: string]: unknown };
  };
  const createCase = async (body: Record<string, unknown>, fx: RoleFixture = f) => {
    const res = await t
      .req('post', `${API}/test-cases`, fx.tester.token)
      .send({ project_id: fx.projectId, title: t.unique('Case '), ...body });
    if (res.status !== 201)
      throw new Error(`create case: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; suite_id: string | null };
  };
  /** root → l2 → l3 → l4 */
  const chain = async (levels: number, fx: RoleFixture = f) => {
    const out: Array<{ id: string }> = [];
    for (let i = 0; i < levels; i++)
      out.push(await createSuite({ parent_id: out[i - 1]?.id ?? null }, fx));
    return out;
  };

  describe('role matrix', () => {
    it('GET /suites needs viewer', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/suites?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
    });
    it('POST /suites needs tester', async () => {
      await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/suites`,
        body: () => ({ project_id: f.projectId, name: 'matrix' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
    });
    it('GET /suites/{id} needs viewer', async () => {
      const s = await createSuite();
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/suites/${s.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'suite_not_found',
      });
    });
    it('PATCH /suites/{id} needs tester', async () => {
      const s = await createSuite();
      await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/suites/${s.id}`,
        body: () => ({ description: 'x' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'suite_not_found',
      });
    });
    it('DELETE /suites/{id} needs lead', async () => {
      const s = await createSuite();
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/suites/${s.id}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'suite_not_found',
      });
      expectProblem(
        await t.req('get', `${API}/suites/${s.id}`, f.lead.token),
        404,
        'suite_not_found',
      );
    });
  });

  it('creates with defaults and counts cases directly in the suite', async () => {
    const s = await createSuite({ name: '  Auth  ', description: 'd' });
    expect(s).toMatchObject({
      project_id: f.projectId,
      name: 'Auth',
      parent_id: null,
      description: 'd',
      position: 100,
      test_cases_count: 0,
      active_test_cases_count: 0,
    });
    const child = await createSuite({ parent_id: s.id, position: 3 });
    expect(child).toMatchObject({ parent_id: s.id, position: 3 });
    await createCase({ suite_id: s.id });
    await createCase({ suite_id: s.id, status: 'draft' });
    await createCase({ suite_id: s.id, status: 'archived' });
    await createCase({ suite_id: child.id });
    const got = await t.req('get', `${API}/suites/${s.id}`, f.viewer.token);
    expect(got.body).toMatchObject({ test_cases_count: 2, active_test_cases_count: 1 });
  });

  it('rejects bad bodies with 422', async () => {
    const post = (body: Record<string, unknown>) =>
      t
        .req('post', `${API}/suites`, f.tester.token)
        .send({ project_id: f.projectId, name: 'x', ...body });
    expect(
      expectProblem(await post({ name: '  ' }), 422, 'validation_error').errors,
    ).toHaveProperty('name');
    expect(
      expectProblem(await post({ parent_id: 'abc' }), 422, 'validation_error').errors,
    ).toHaveProperty('parent_id');
    expect(
      expectProblem(await post({ position: null }), 422, 'validation_error').errors,
    ).toHaveProperty('position');
    expect(
      expectProblem(await post({ sort_order: 1 }), 422, 'validation_error').errors,
    ).toHaveProperty('sort_order');
    const s = await createSuite();
    const nul = await t.req('patch', `${API}/suites/${s.id}`, f.tester.token).send({ name: null });
    expect(expectProblem(nul, 422, 'validation_error').errors).toHaveProperty('name');
  });

  describe('parent rules', () => {
    it('allows 4 levels; a 5th is 422 suite_depth_limit_exceeded', async () => {
      const [, , , l4] = await chain(4);
      const res = await t
        .req('post', `${API}/suites`, f.tester.token)
        .send({ project_id: f.projectId, name: 'l5', parent_id: l4.id });
      expect(expectProblem(res, 422, 'suite_depth_limit_exceeded').errors).toHaveProperty(
        'parent_id',
      );
    });

    it('moving a subtree counts its height', async () => {
      const [, , l3] = await chain(3);
      const [sub] = await chain(2); // sub has one child level
      const bad = await t
        .req('patch', `${API}/suites/${sub.id}`, f.tester.token)
        .send({ parent_id: l3.id });
      expectProblem(bad, 422, 'suite_depth_limit_exceeded');
      const [a, b] = await chain(2);
      const ok = await t
        .req('patch', `${API}/suites/${sub.id}`, f.tester.token)
        .send({ parent_id: b.id });
      expect(ok.status).toBe(200);
      expect(ok.body.parent_id).toBe(b.id);
      expect(a.id).not.toBe(b.id);
    });

    it('itself or a descendant as parent is 422 suite_parent_cycle', async () => {
      const [root, mid, leaf] = await chain(3);
      expectProblem(
        await t
          .req('patch', `${API}/suites/${root.id}`, f.tester.token)
          .send({ parent_id: root.id }),
        422,
        'suite_parent_cycle',
      );
      expectProblem(
        await t
          .req('patch', `${API}/suites/${root.id}`, f.tester.token)
          .send({ parent_id: leaf.id }),
        422,
        'suite_parent_cycle',
      );
      expectProblem(
        await t
          .req('patch', `${API}/suites/${root.id}`, f.tester.token)
          .send({ parent_id: mid.id }),
        422,
        'suite_parent_cycle',
      );
      const unchanged = await t.req('get', `${API}/suites/${root.id}`, f.viewer.token);
      expect(unchanged.body.parent_id).toBeNull();
    });

    it('a parent of another project is 422 suite_project_mismatch; an unknown one 404', async () => {
      const foreign = await createSuite({}, other);
      const res = await t
        .req('post', `${API}/suites`, f.tester.token)
        .send({ project_id: f.projectId, name: 'x', parent_id: foreign.id });
      expect(expectProblem(res, 422, 'suite_project_mismatch').errors).toHaveProperty('parent_id');
      const s = await createSuite();
      expectProblem(
        await t
          .req('patch', `${API}/suites/${s.id}`, f.tester.token)
          .send({ parent_id: foreign.id }),
        422,
        'suite_project_mismatch',
      );
      expectProblem(
        await t
          .req('patch', `${API}/suites/${s.id}`, f.tester.token)
          .send({ parent_id: randomUUID() }),
        404,
        'suite_not_found',
      );
    });

    it('parent null moves a suite to the root', async () => {
      const [, child] = await chain(2);
      const res = await t
        .req('patch', `${API}/suites/${child.id}`, f.tester.token)
        .send({ parent_id: null, name: 'Now root' });
      expect(res.body).toMatchObject({ parent_id: null, name: 'Now root' });
    });
  });

  describe('concurrency', () => {
    const depth = async (id: string): Promise<number> => {
      const rows = await t.db.query(
        `WITH RECURSIVE a AS (SELECT id, parent_id, 1 AS lvl FROM suites WHERE id = $1
           UNION ALL SELECT s.id, s.parent_id, a.lvl + 1 FROM suites s JOIN a ON s.id = a.parent_id)
         SELECT max(lvl)::int AS d FROM a`,
        [id],
      );
      return rows[0].d as number;
    };

    it('crossed moves never build a cycle: one wins, the other is 422 suite_parent_cycle', async () => {
      for (let i = 0; i < 3; i++) {
        const [a, b] = [await createSuite(), await createSuite()];
        const res = await Promise.all([
          t.req('patch', `${API}/suites/${a.id}`, f.tester.token).send({ parent_id: b.id }),
          t.req('patch', `${API}/suites/${b.id}`, f.tester.token).send({ parent_id: a.id }),
        ]);
        expect(res.map((r) => r.status).sort()).toEqual([200, 422]);
        expectProblem(
          res.find((r) => r.status === 422) as (typeof res)[number],
          422,
          'suite_parent_cycle',
        );
      }
    });

    it('a child created while its parent moves deeper never makes a fifth level', async () => {
      for (let i = 0; i < 3; i++) {
        const [, l2] = await chain(2);
        const [, , target3] = await chain(3);
        const res = await Promise.all([
          t.req('patch', `${API}/suites/${l2.id}`, f.tester.token).send({ parent_id: target3.id }),
          t
            .req('post', `${API}/suites`, f.tester.token)
            .send({ project_id: f.projectId, name: 'leaf', parent_id: l2.id }),
        ]);
        // l2 (depth 2 → 4) with a new child would be 5 levels: exactly one of the two succeeds.
        const ok = res.filter((r) => r.status < 300);
        expect(ok).toHaveLength(1);
        for (const r of res.filter((x) => x.status >= 300))
          expectProblem(r, 422, 'suite_depth_limit_exceeded');
        if (res[1].status === 201) expect(await depth(res[1].body.id)).toBeLessThanOrEqual(4);
      }
    });

    it('a child created while its parent is deleted is 201 or 404, never 500', async () => {
      for (let i = 0; i < 3; i++) {
        const parent = await createSuite();
        const [created, deleted] = await Promise.all([
          t
            .req('post', `${API}/suites`, f.tester.token)
            .send({ project_id: f.projectId, name: 'kid', parent_id: parent.id }),
          t.req('delete', `${API}/suites/${parent.id}`, f.lead.token),
        ]);
        expect(deleted.status).toBe(204);
        if (created.status === 201) expect(created.body.parent_id).toBe(parent.id);
        else expectProblem(created, 404, 'suite_not_found');
        if (created.status === 201) {
          const kid = await t.req('get', `${API}/suites/${created.body.id}`, f.viewer.token);
          expect(kid.body.parent_id).toBeNull(); // moved to the deleted suite's parent (the root)
        }
      }
    });
  });

  it('a NUL character is 422 validation_error, never 500', async () => {
    const res = await t
      .req('post', `${API}/suites`, f.tester.token)
      .send({ project_id: f.projectId, name: 'a\u0000b' });
    expectProblem(res, 422, 'validation_error');
    const s = await createSuite();
    expectProblem(
      await t.req('patch', `${API}/suites/${s.id}`, f.tester.token).send({ description: '\u0000' }),
      422,
      'validation_error',
    );
  });

  it('DELETE moves child suites and test cases to the parent; nothing is lost', async () => {
    const [root, mid] = await chain(2);
    const kid1 = await createSuite({ parent_id: mid.id });
    const kid2 = await createSuite({ parent_id: mid.id });
    const c1 = await createCase({ suite_id: mid.id });
    const c2 = await createCase({ suite_id: kid1.id });
    await t.req('delete', `${API}/suites/${mid.id}`, f.lead.token).expect(204);
    for (const k of [kid1, kid2]) {
      expect((await t.req('get', `${API}/suites/${k.id}`, f.viewer.token)).body.parent_id).toBe(
        root.id,
      );
    }
    expect((await t.req('get', `${API}/test-cases/${c1.id}`, f.viewer.token)).body.suite_id).toBe(
      root.id,
    );
    expect((await t.req('get', `${API}/test-cases/${c2.id}`, f.viewer.token)).body.suite_id).toBe(
      kid1.id,
    );
    // Deleting a root suite makes its children roots and its cases suite-less.
    const c3 = await createCase({ suite_id: root.id });
    await t.req('delete', `${API}/suites/${root.id}`, f.lead.token).expect(204);
    expect(
      (await t.req('get', `${API}/suites/${kid1.id}`, f.viewer.token)).body.parent_id,
    ).toBeNull();
    expect(
      (await t.req('get', `${API}/test-cases/${c3.id}`, f.viewer.token)).body.suite_id,
    ).toBeNull();
    expect((await t.req('get', `${API}/test-cases/${c1.id}`, f.viewer.token)).status).toBe(200);
    expectProblem(
      await t.req('delete', `${API}/suites/${root.id}`, f.lead.token),
      404,
      'suite_not_found',
    );
  });

  describe('DELETE keeps the cases of the test plans that included the suite', () => {
    type Plan = { id: string; suite_ids: string[]; case_ids: string[]; updated_at: string };
    const createPlan = async (body: Record<string, unknown>): Promise<Plan> => {
      const res = await t
        .req('post', `${API}/test-plans`, f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Plan '), ...body });
      if (res.status !== 201) throw new Error(`plan: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as Plan;
    };
    const getPlan = async (id: string): Promise<Plan> =>
      (await t.req('get', `${API}/test-plans/${id}`, f.viewer.token).expect(200)).body as Plan;
    /** The cases a run made from the plan gets, sorted. */
    const runCases = async (planId: string): Promise<string[]> => {
      const run = await t
        .req('post', `${API}/test-plans/${planId}/create-run`, f.tester.token)
        .send({ name: t.unique('Run ') })
        .expect(201);
      const rows = await t.db.query(
        `SELECT test_case_id FROM run_items WHERE test_run_id = $1 ORDER BY test_case_id`,
        [(run.body as { id: string }).id],
      );
      return rows.map((r: { test_case_id: string }) => r.test_case_id);
    };

    it('its link is replaced by its child suites in its place and its cases become explicit', async () => {
      const [parent, mid] = await chain(2);
      const kidB = await createSuite({ parent_id: mid.id, position: 2 });
      const kidA = await createSuite({ parent_id: mid.id, position: 1 });
      const [before, after] = [await createSuite(), await createSuite()];
      const inMid = [
        await createCase({ suite_id: mid.id }),
        await createCase({ suite_id: mid.id }),
      ];
      const inKid = await createCase({ suite_id: kidB.id });
      const elsewhere = [await createCase({ suite_id: before.id }), await createCase({})];
      await createCase({ suite_id: after.id });
      await createCase({ suite_id: parent.id }); // not in the plan: the parent is not included
      const plan = await createPlan({
        suite_ids: [before.id, mid.id, after.id],
        case_ids: [elsewhere[1].id],
      });
      const cases = await runCases(plan.id);
      expect(cases).toEqual(
        expect.arrayContaining([...inMid, inKid, ...elsewhere].map((c) => c.id)),
      );

      await t.req('delete', `${API}/suites/${mid.id}`, f.lead.token).expect(204);

      const now = await getPlan(plan.id);
      expect(now.suite_ids).toEqual([before.id, kidA.id, kidB.id, after.id]);
      expect(now.case_ids).toEqual([elsewhere[1].id, ...inMid.map((c) => c.id)]);
      expect(Date.parse(now.updated_at)).toBeGreaterThan(Date.parse(plan.updated_at));
      expect(await runCases(plan.id)).toEqual(cases);
    });

    it('a plan that includes a suite above it, or its children and cases already, keeps its links', async () => {
      const [top, , mid] = await chain(3);
      const kid = await createSuite({ parent_id: mid.id });
      const inMid = await createCase({ suite_id: mid.id });
      const viaTop = await createPlan({ suite_ids: [mid.id, top.id] });
      const overlapping = await createPlan({
        suite_ids: [mid.id, kid.id],
        case_ids: [inMid.id],
      });
      const [topCases, overlapCases] = [await runCases(viaTop.id), await runCases(overlapping.id)];
      await t.req('delete', `${API}/suites/${mid.id}`, f.lead.token).expect(204);

      const a = await getPlan(viaTop.id);
      expect(a).toMatchObject({ suite_ids: [top.id], case_ids: [], updated_at: viaTop.updated_at });
      expect(await runCases(viaTop.id)).toEqual(topCases);
      const b = await getPlan(overlapping.id);
      expect(b).toMatchObject({ suite_ids: [kid.id], case_ids: [inMid.id] });
      expect(await runCases(overlapping.id)).toEqual(overlapCases);
    });

    it('a case PATCH naming the suite being deleted waits for the delete (404), never a deadlock (409)', async () => {
      const [parent, doomed] = await chain(2);
      const c = await createCase({ suite_id: doomed.id });
      // Created last, so its id sorts after the others: the delete locks the parent and the
      // suite, then waits for this child while the test holds it.
      const child = await createSuite({ parent_id: doomed.id });
      const waiting = async () => {
        const rows = (await t.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )) as Array<{ n: number }>;
        return rows[0].n;
      };
      const qr = t.db.createQueryRunner();
      await qr.connect();
      try {
        await qr.startTransaction();
        await qr.query(`SELECT id FROM suites WHERE id = $1 FOR UPDATE`, [child.id]);
        const deleted = t.req('delete', `${API}/suites/${doomed.id}`, f.lead.token).then((r) => r);
        await waitUntilBlockedOrDone(t.db, qr, deleted);
        // The PATCH (the suite sent back unchanged, as a form does) waits for the delete.
        const patched = t
          .req('patch', `${API}/test-cases/${c.id}`, f.tester.token)
          .send({ title: 'renamed', suite_id: doomed.id })
          .then((r) => r);
        await waitFor(async () => (await waiting()) >= 2, { what: 'the PATCH to wait' });
        await qr.commitTransaction();
        const [del, patch] = await Promise.all([deleted, patched]);
        expect(del.status).toBe(204);
        expectProblem(patch, 404, 'suite_not_found');
      } finally {
        await qr.release();
      }
      const kept = await t.req('get', `${API}/test-cases/${c.id}`, f.viewer.token).expect(200);
      expect(kept.body).toMatchObject({ suite_id: parent.id });
      expect(kept.body.title).not.toBe('renamed');
    });

    it('a suite and its parent deleted at once both answer 204 (no deadlock)', async () => {
      for (let i = 0; i < 8; i++) {
        const [root, parent, mid] = await chain(3);
        const kid = await createSuite({ parent_id: mid.id });
        const c = await createCase({ suite_id: mid.id });
        const res = await Promise.all([
          t.req('delete', `${API}/suites/${mid.id}`, f.lead.token),
          t.req('delete', `${API}/suites/${parent.id}`, f.lead.token),
        ]);
        expect(res.map((r) => r.status)).toEqual([204, 204]);
        const moved = await t.req('get', `${API}/suites/${kid.id}`, f.viewer.token).expect(200);
        expect(moved.body.parent_id).toBe(root.id);
        const kept = await t.req('get', `${API}/test-cases/${c.id}`, f.viewer.token).expect(200);
        expect(kept.body.suite_id).toBe(root.id);
      }
    });
  });

  it('lists with parent_id, root_only, search, sorting and paging', async () => {
    const fx = await t.roleFixture();
    const a = await createSuite({ name: 'Alpha', position: 2 }, fx);
    const b = await createSuite({ name: 'beta_x', position: 1 }, fx);
    const c = await createSuite({ name: 'Gamma', parent_id: a.id }, fx);
    const list = async (q: string) => {
      const res = await t.req(
        'get',
        `${API}/suites?project_id=${fx.projectId}&${q}`,
        fx.viewer.token,
      );
      expect(res.status).toBe(200);
      return res.body as {
        items: Array<{ id: string; name: string }>;
        total: number;
        has_next: boolean;
      };
    };
    const names = async (q: string) => (await list(q)).items.map((i) => i.name);
    expect(await names('')).toEqual(['Gamma', 'beta_x', 'Alpha']);
    expect(await names('sort_by=name')).toEqual(['Alpha', 'beta_x', 'Gamma']);
    expect(await names('sort_by=name&sort_order=desc')).toEqual(['Gamma', 'beta_x', 'Alpha']);
    expect(await names('sort_by=position&root_only=true')).toEqual(['beta_x', 'Alpha']);
    expect(await names(`parent_id=${a.id}`)).toEqual(['Gamma']);
    expect(await names('search=A_X')).toEqual(['beta_x']);
    expect(await names('search=a')).toHaveLength(3);
    const page = await list('sort_by=name&page_size=2');
    expect(page).toMatchObject({ total: 3, has_next: true });
    expect([b.id, c.id]).toHaveLength(2);
    const bad = await t.req(
      'get',
      `${API}/suites?project_id=${fx.projectId}&sort_by=depth`,
      fx.viewer.token,
    );
    expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty(['query.sort_by']);
    expectProblem(await t.req('get', `${API}/suites`, fx.viewer.token), 422, 'validation_error');
  });
});
