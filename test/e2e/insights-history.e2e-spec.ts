import type { Response } from 'supertest';
import { statementsDuring } from '../support/query-count';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

/** A response body as supertest gives it (parsed JSON, untyped). */
type Json = Response['body'];

const API = '/api/v1';

/** A JUnit report whose one testcase passed after a failed and an errored attempt (Surefire). */
const FLAKY_XML = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="flaky" tests="1">
  <testcase classname="com.example.FlakyTest" name="eventuallyPasses" time="0.3">
    <flakyFailure message="first attempt failed" type="java.lang.AssertionError" time="0.1"/>
    <flakyError message="second attempt errored" type="java.io.IOException" time="0.1"/>
  </testcase>
</testsuite>`);

describe('insights: case history and flaky tests (issue #17 §3, §4)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  function ok(res: { status: number; body: unknown }, status = 200): Json {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  /** Recording helpers for one role fixture's project. */
  function recorder(f: RoleFixture) {
    const post = async (path: string, body: Json) =>
      ok(await t.req('post', `${API}${path}`, f.tester.token).send(body), 201);
    return {
      createCase: (title: string) => post('/test-cases', { project_id: f.projectId, title }),
      createEnvironment: async (name: string) =>
        ok(
          await t
            .req('post', `${API}/environments`, f.lead.token)
            .send({ project_id: f.projectId, name }),
          201,
        ),
      createRun: (body: Json = {}) =>
        post('/test-runs', { project_id: f.projectId, name: t.unique('Run '), ...body }),
      /** Adds the cases to the run and sets each one's (only) row to the status given. */
      async record(runId: string, results: Array<[string, string]>): Promise<void> {
        const bulk = await post('/run-cases/bulk', {
          test_run_id: runId,
          test_case_ids: results.map(([caseId]) => caseId),
        });
        for (const [caseId, status] of results) {
          const item = (bulk.items as Json[]).find((i) => i.test_case_id === caseId)!;
          if (status === 'untested') continue;
          const rows = ok(await t.req('get', `${API}/run-cases/${item.id}/rows`, f.viewer.token))
            .items as Json[];
          ok(
            await t
              .req('patch', `${API}/run-cases/rows/${rows[0].id}`, f.tester.token)
              .send({ status }),
          );
        }
      },
      async importFlaky(runId: string): Promise<void> {
        ok(
          await t
            .req(
              'post',
              `${API}/test-runs/${runId}/imports/junit?create_missing_cases=true`,
              f.tester.token,
            )
            .attach('file', FLAKY_XML, 'flaky.xml'),
          201,
        );
      },
    };
  }

  describe('GET /test-cases/{id}/history', () => {
    let f: RoleFixture;
    let caseId: string;
    let runs: Json[];
    let env: Json;

    // Oldest first: passed, passed, failure, skipped, failure (env), passed (env).
    const STATUSES = ['passed', 'passed', 'failure', 'skipped', 'failure', 'passed'];

    beforeAll(async () => {
      f = await t.roleFixture();
      const r = recorder(f);
      caseId = (await r.createCase('History case')).id;
      env = await r.createEnvironment('Staging');
      runs = [];
      for (const [i, status] of STATUSES.entries()) {
        const run = await r.createRun({
          build: i === 0 ? 'b1' : 'b2',
          ...(i >= 4 ? { environment_id: env.id } : {}),
        });
        await r.record(run.id, [[caseId, status]]);
        runs.push(run);
      }
    });

    const history = (query = '', id = caseId, token = f.viewer.token) =>
      t.req('get', `${API}/test-cases/${id}/history${query}`, token);

    it('needs viewer; non-members get 404, no credential 401', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-cases/${caseId}/history`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_case_not_found',
      });
      expect(res.body.total).toBe(6);
    });

    it('lists the runs newest first with the stats of the window', async () => {
      const body = ok(await history());
      expect(Object.keys(body).sort()).toEqual(
        ['has_next', 'items', 'page', 'page_size', 'stats', 'total'].sort(),
      );
      expect(body.items.map((i: Json) => i.run_id)).toEqual(runs.map((r) => r.id).reverse());
      expect(body.items.map((i: Json) => i.status)).toEqual([...STATUSES].reverse());
      const newest = body.items[0];
      expect(Object.keys(newest).sort()).toEqual(
        [
          'build',
          'environment_id',
          'environment_revision_number',
          'finished_at',
          'run_created_at',
          'run_id',
          'run_name',
          'status',
        ].sort(),
      );
      expect(newest).toMatchObject({
        run_name: runs[5].name,
        build: 'b2',
        environment_id: env.id,
        environment_revision_number: 1,
        run_created_at: runs[5].created_at,
      });
      expect(Date.parse(newest.finished_at)).not.toBeNaN();
      // passing: P P F _ F P (oldest first) → flips P→F and F→P, over 5 pass-or-fail results.
      expect(body.stats).toEqual({
        runs: 6,
        passed: 3,
        failing: 2,
        flips: 2,
        flip_rate: 0.5,
        flaky_attempts: 0,
        last_status: 'passed',
        last_failure_run_id: runs[4].id,
      });
    });

    it('orders the page as its stats (by run id) when a run create waited and got an earlier created_at', async () => {
      const g = await t.roleFixture();
      const r = recorder(g);
      const c = (await r.createCase('Raced case')).id;
      const older = await r.createRun();
      const newer = await r.createRun();
      await r.record(older.id, [[c, 'failure']]);
      await r.record(newer.id, [[c, 'passed']]);
      // What a create that waited on a lock leaves (found by an audit with a held milestone lock):
      // its transaction started first (created_at) but its id was drawn after the other run's.
      await t.db.query(
        `UPDATE test_runs SET created_at = created_at - interval '1 hour' WHERE id = $1`,
        [newer.id],
      );
      const body = ok(
        await t.req('get', `${API}/test-cases/${c}/history?window=1`, g.viewer.token),
      );
      expect(body.items.map((i: Json) => i.run_id)).toEqual([newer.id, older.id]);
      expect(body.stats).toMatchObject({ runs: 1, last_status: 'passed' });
    });

    it('paginates the items; the stats do not depend on the page', async () => {
      const body = ok(await history('?page=2&page_size=2'));
      expect(body).toMatchObject({ page: 2, page_size: 2, total: 6, has_next: true });
      expect(body.items.map((i: Json) => i.run_id)).toEqual([runs[3].id, runs[2].id]);
      expect(body.stats.runs).toBe(6);
      const beyond = ok(await history('?page=9&page_size=2'));
      expect(beyond).toMatchObject({ items: [], total: 6, has_next: false });
    });

    it('counts the stats over the last `window` runs only', async () => {
      // The last three: skipped, failure, passed → one flip over two pass-or-fail results.
      const body = ok(await history('?window=3'));
      expect(body.total).toBe(6);
      expect(body.stats).toEqual({
        runs: 3,
        passed: 1,
        failing: 1,
        flips: 1,
        flip_rate: 1,
        flaky_attempts: 0,
        last_status: 'passed',
        last_failure_run_id: runs[4].id,
      });
      const one = ok(await history('?window=1'));
      expect(one.stats).toMatchObject({
        runs: 1,
        flips: 0,
        flip_rate: 0,
        last_failure_run_id: null,
      });
    });

    it('filters by environment and build (items and stats)', async () => {
      const byEnv = ok(await history(`?environment_id=${env.id}`));
      expect(byEnv.items.map((i: Json) => i.run_id)).toEqual([runs[5].id, runs[4].id]);
      expect(byEnv.stats).toMatchObject({ runs: 2, flips: 1, flip_rate: 1 });
      const byBuild = ok(await history('?build=b1'));
      expect(byBuild.items.map((i: Json) => i.run_id)).toEqual([runs[0].id]);
      expect(byBuild.stats).toMatchObject({ runs: 1, passed: 1, failing: 0 });
      const both = ok(await history(`?build=b1&environment_id=${env.id}`));
      expect(both).toMatchObject({ items: [], total: 0 });
      expect(both.stats).toMatchObject({ runs: 0, last_status: null });
    });

    it('answers a case without runs with an empty page', async () => {
      const other = await recorder(f).createCase('Never run');
      const body = ok(await history('', other.id));
      expect(body).toMatchObject({ items: [], total: 0, has_next: false });
      expect(body.stats).toEqual({
        runs: 0,
        passed: 0,
        failing: 0,
        flips: 0,
        flip_rate: 0,
        flaky_attempts: 0,
        last_status: null,
        last_failure_run_id: null,
      });
    });

    it('unknown case 404, bad query 422', async () => {
      expectProblem(
        await history('', '0190a3a4-0000-7000-8000-000000000000'),
        404,
        'test_case_not_found',
      );
      for (const [query, field] of [
        ['?window=0', 'query.window'],
        ['?window=201', 'query.window'],
        ['?window=x', 'query.window'],
        ['?environment_id=nope', 'query.environment_id'],
        ['?page_size=201', 'query.page_size'],
      ]) {
        const body = expectProblem(await history(query), 422, 'validation_error');
        expect(body.errors).toHaveProperty([field]);
      }
    });

    it('GET /test-cases/{id} still reaches the test case', async () => {
      const body = ok(await t.req('get', `${API}/test-cases/${caseId}`, f.viewer.token));
      expect(body).toMatchObject({ id: caseId, title: 'History case' });
      expect(body.key).toMatch(/^TC-\d+$/);
    });
  });

  describe('GET /test-cases/flaky', () => {
    let f: RoleFixture;
    const ids: Record<string, string> = {};
    let env: Json;
    let flakyTitle: string;

    // Per case, its statuses in the five plain runs (oldest first).
    const PLAIN: Record<string, string[]> = {
      a: ['passed', 'failure', 'passed', 'failure', 'passed'], // 4 flips / 4 → 1
      b: ['passed', 'passed', 'failure', 'error', 'passed'], // 2 flips / 4 → 0.5
      c: ['passed', 'failure', 'passed', 'skipped', 'skipped'], // 3 results only: 2 / 2 → 1
      d: ['passed', 'passed', 'passed', 'xfailed', 'passed'], // no flip
      e: ['failure', 'error', 'skipped', 'failure', 'blocked'], // failing all along: no flip
    };

    beforeAll(async () => {
      f = await t.roleFixture();
      const r = recorder(f);
      for (const key of Object.keys(PLAIN)) ids[key] = (await r.createCase(`Case ${key}`)).id;
      for (let i = 0; i < 5; i++) {
        const run = await r.createRun();
        await r.record(
          run.id,
          Object.keys(PLAIN).map((key) => [ids[key], PLAIN[key][i]] as [string, string]),
        );
      }
      // Then three runs of one environment where only b runs: passed, failure, passed.
      env = await r.createEnvironment('Perf lab');
      for (const status of ['passed', 'failure', 'passed']) {
        const run = await r.createRun({ environment_id: env.id });
        await r.record(run.id, [[ids.b, status]]);
      }
      // Five imports of a testcase that passes after failed attempts: flaky, never a flip.
      let lastImport = '';
      for (let i = 0; i < 5; i++) {
        lastImport = (await r.createRun()).id;
        await r.importFlaky(lastImport);
      }
      const items = ok(
        await t.req('get', `${API}/run-cases?test_run_id=${lastImport}`, f.viewer.token),
      ).items as Json[];
      expect(items).toHaveLength(1);
      ids.flaky = items[0].test_case_id;
      flakyTitle = items[0].test_case_title;
    });

    const flaky = (query = '', token = f.viewer.token) =>
      t.req('get', `${API}/test-cases/flaky?project_id=${f.projectId}${query}`, token);
    const order = (body: Json) =>
      (body.items as Json[]).map((i) => Object.keys(ids).find((k) => ids[k] === i.test_case_id));

    it('needs viewer; non-members get 404, no credential 401', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-cases/flaky?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(res.body.total).toBeGreaterThan(0);
    });

    it('ranks by flip_rate then flaky_attempts, with at least min_runs pass-or-fail results', async () => {
      const body = ok(await flaky());
      // b over all 8 runs: P P F F P | P F P → 4 flips / 7.
      expect(order(body)).toEqual(['a', 'b', 'flaky']);
      expect(body).toMatchObject({ total: 3, page: 1, page_size: 50, has_next: false });
      expect(body.items[0]).toEqual({
        test_case_id: ids.a,
        title: 'Case a',
        runs: 5,
        passed: 3,
        failing: 2,
        flips: 4,
        flip_rate: 1,
        flaky_attempts: 0,
        last_status: 'passed',
        last_failure_run_id: expect.any(String),
        recent: expect.any(Array),
      });
      expect((body.items[0].recent as Json[]).map((r) => r.status)).toEqual([...PLAIN.a].reverse());
      expect(body.items[0].last_failure_run_id).toBe(body.items[0].recent[1].run_id);
      expect(body.items[1]).toMatchObject({
        runs: 8,
        passed: 5,
        failing: 3,
        flips: 4,
        flip_rate: 4 / 7,
      });
      expect(body.items[2]).toMatchObject({
        title: flakyTitle,
        runs: 5,
        passed: 5,
        failing: 0,
        flips: 0,
        flip_rate: 0,
        flaky_attempts: 5,
        last_status: 'passed',
        last_failure_run_id: null,
      });
    });

    it('agrees with the history stats of each case', async () => {
      // min_runs 3: four runs are below the default 5, and the loop below would check nothing.
      const body = ok(await flaky('&window=4&min_runs=3'));
      expect(body.items.length).toBeGreaterThan(1);
      for (const item of body.items as Json[]) {
        const h = ok(
          await t.req(
            'get',
            `${API}/test-cases/${item.test_case_id}/history?window=4`,
            f.viewer.token,
          ),
        );
        const { test_case_id: _id, title: _title, recent: _recent, ...stats } = item;
        expect(stats).toEqual(h.stats);
      }
    });

    it('recent: the newest `window` entries of each case’s history, with and without environment', async () => {
      const seen = new Set<string>();
      for (const [query, window] of [
        ['', 30],
        ['&window=4&min_runs=3', 4],
        ['&window=3&min_runs=3', 3],
        ['&min_runs=1&page_size=2', 30],
        [`&environment_id=${env.id}&min_runs=3`, 30],
        [`&environment_id=${env.id}&min_runs=2&window=2`, 2],
      ] as const) {
        const filter = query.match(/environment_id=[^&]+/)?.[0];
        const body = ok(await flaky(query));
        expect({ query, listed: body.items.length > 0 }).toEqual({ query, listed: true });
        for (const item of body.items as Json[]) {
          seen.add(item.test_case_id);
          const h = ok(
            await t.req(
              'get',
              `${API}/test-cases/${item.test_case_id}/history?page_size=${window}${filter ? `&${filter}` : ''}`,
              f.viewer.token,
            ),
          );
          const expected = (h.items as Json[])
            .slice(0, window)
            .map((i) => ({ run_id: i.run_id, status: i.status }));
          expect(item.recent).toEqual(expected);
          expect(item.recent).toHaveLength(item.runs);
        }
        // A second read is the cached ranking: the same windows.
        expect(ok(await flaky(query))).toEqual(body);
      }
      expect([...seen].sort()).toEqual([ids.a, ids.b, ids.c, ids.flaky].sort());
    });

    it('min_runs lowers or raises the bar', async () => {
      expect(order(ok(await flaky('&min_runs=3')))).toEqual(['a', 'c', 'b', 'flaky']);
      expect(order(ok(await flaky('&min_runs=6')))).toEqual(['b']);
    });

    it('window: the last runs of each case', async () => {
      // Last three of b: P F P → 2 / 2; with min_runs 3 a (F P F… last three: P F P) too.
      const body = ok(await flaky('&window=3&min_runs=3'));
      expect(order(body)).toEqual(['a', 'b', 'flaky']);
      expect(body.items[1]).toMatchObject({ runs: 3, flips: 2, flip_rate: 1 });
    });

    it('environment_id: only the runs of that environment', async () => {
      const body = ok(await flaky(`&environment_id=${env.id}&min_runs=3`));
      expect(order(body)).toEqual(['b']);
      expect(body.items[0]).toMatchObject({
        runs: 3,
        passed: 2,
        failing: 1,
        flips: 2,
        flip_rate: 1,
      });
      const unknown = ok(await flaky('&environment_id=0190a3a4-0000-7000-8000-000000000000'));
      expect(unknown).toMatchObject({ items: [], total: 0 });
    });

    it('reads the project with the same statements whatever its size', async () => {
      const empty = await t.roleFixture();
      const emptyList = () =>
        t.req(
          'get',
          `${API}/test-cases/flaky?project_id=${empty.projectId}&window=29`,
          empty.viewer.token,
        );
      // A ranking not held yet (window 29 is asked nowhere else): ranking and page in one snapshot.
      const none = await statementsDuring(emptyList);
      const some = await statementsDuring(() => flaky('&window=29'));
      expect(ok(none.result).total).toBe(0);
      expect(ok(some.result).total).toBe(3);
      expect(some.statements.length).toBe(none.statements.length);
      // Held: the version (and the page's windows when that page is not held at it) only.
      const noneHeld = await statementsDuring(emptyList);
      const someHeld = await statementsDuring(() => flaky('&window=29'));
      expect(ok(someHeld.result)).toEqual(ok(some.result));
      expect(someHeld.statements.length).toBe(noneHeld.statements.length);
      expect(someHeld.statements.length).toBeLessThan(some.statements.length);
    });

    it('paginates the ranking', async () => {
      const body = ok(await flaky('&page=2&page_size=1'));
      expect(order(body)).toEqual(['b']);
      expect(body).toMatchObject({ total: 3, page: 2, page_size: 1, has_next: true });
    });

    it('bad input is 422 with a problem body', async () => {
      const missing = expectProblem(
        await t.req('get', `${API}/test-cases/flaky`, f.viewer.token),
        422,
        'validation_error',
      );
      expect(missing.errors).toHaveProperty(['query.project_id']);
      for (const [query, field] of [
        ['&window=0', 'query.window'],
        ['&window=500', 'query.window'],
        ['&min_runs=0', 'query.min_runs'],
        ['&min_runs=abc', 'query.min_runs'],
        ['&environment_id=x', 'query.environment_id'],
      ]) {
        const body = expectProblem(await flaky(query), 422, 'validation_error');
        expect(body.errors).toHaveProperty([field]);
      }
    });
  });
});
