import type { INestApplication } from '@nestjs/common';
import request, { type Response } from 'supertest';
import { createTestApp, TestApp } from '../support/test-app';
// After test-app, which loads the application's modules in their usual order.
import { createApp } from '../../src/bootstrap';
import { InsightsRepository } from '../../src/modules/insights/insights.repository';

/**
 * The flaky list is cached per process by (project, window, environment, min_runs), a run
 * comparison page by (runs, classes, page), both with the version of the project's results (`project_result_changes`), which statement-level triggers
 * change in the transaction of every write that changes what the list reads. Each test below
 * warms the cache on two instances of the service sharing one database, makes one kind of
 * write, and checks that both answer what an uncached read answers (a `window` never asked
 * before: no entry), and that the write did change the answer (else the test would prove
 * nothing).
 */
const API = '/api/v1';
type Json = Response['body'];

/** One flaky testcase: passed after a failed attempt (Surefire). */
const FLAKY_XML = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="cache" tests="1">
  <testcase classname="com.example.CacheTest" name="eventuallyPasses" time="0.3">
    <flakyFailure message="first attempt failed" type="java.lang.AssertionError" time="0.1"/>
  </testcase>
</testsuite>`);

describe('insights: the cached flaky list and comparisons follow every write (issues #17, #21)', () => {
  let t: TestApp;
  /** A second instance of the service on the same database. */
  let other: INestApplication;
  /** Windows of uncached reads: each one is asked once (every case has fewer than 30 results). */
  let freshWindow = 30;

  beforeAll(async () => {
    t = await createTestApp();
    other = await createApp(t.config, t.databaseUrl);
    await other.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  function ok(res: { status: number; body: unknown }, status = 200): Json {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }
  function on(instance: 'a' | 'b', method: 'get' | 'post' | 'patch' | 'delete', url: string) {
    const server = instance === 'a' ? t.server : other.getHttpServer();
    return request(server)[method](`${API}${url}`).set('Authorization', `Bearer ${t.adminToken}`);
  }
  const post = async (url: string, body: Json, instance: 'a' | 'b' = 'a') =>
    ok(await on(instance, 'post', url).send(body), 201);
  const patch = async (url: string, body: Json, instance: 'a' | 'b' = 'a') =>
    ok(await on(instance, 'patch', url).send(body));
  const get = async (url: string) => ok(await on('a', 'get', url));

  /**
   * A project with cases x (P F P F P), y (P P F P P) and z (P P P P P) over five runs; answers
   * the ids. `min_runs=1` in every read below, so that any result shows.
   */
  async function seed() {
    const projectId = await t.createProject();
    const cases: Record<string, string> = {};
    for (const key of ['x', 'y', 'z']) {
      cases[key] = (await post('/test-cases', { project_id: projectId, title: `Case ${key}` })).id;
    }
    const plan: Record<string, string[]> = {
      x: ['passed', 'failure', 'passed', 'failure', 'passed'],
      y: ['passed', 'passed', 'failure', 'passed', 'passed'],
      z: ['passed', 'passed', 'passed', 'passed', 'passed'],
    };
    const runs: string[] = [];
    /** Per run, the run case id of each case. */
    const items: Array<Record<string, string>> = [];
    for (let i = 0; i < 5; i++) {
      const run = await post('/test-runs', { project_id: projectId, name: t.unique('Run ') });
      runs.push(run.id);
      const bulk = await post('/run-cases/bulk', {
        test_run_id: run.id,
        test_case_ids: Object.values(cases),
      });
      const byCase: Record<string, string> = {};
      for (const [key, caseId] of Object.entries(cases)) {
        const item = (bulk.items as Json[]).find((x) => x.test_case_id === caseId)!;
        byCase[key] = item.id;
        await setStatus(item.id, plan[key][i]);
      }
      items.push(byCase);
    }
    return { projectId, cases, runs, items };
  }

  async function setStatus(runCaseId: string, status: string, instance: 'a' | 'b' = 'a') {
    const rows = (await get(`/run-cases/${runCaseId}/rows`)).items as Json[];
    for (const row of rows) await patch(`/run-cases/rows/${row.id}`, { status }, instance);
  }

  const flakyUrl = (projectId: string, query: string) =>
    `/test-cases/flaky?project_id=${projectId}&min_runs=1${query}`;
  /** The list as the cache of `instance` answers it (window 30). */
  const cached = async (instance: 'a' | 'b', projectId: string, query = '') =>
    ok(await on(instance, 'get', flakyUrl(projectId, query)));
  /** The list read without a cache entry: a window no read asked before. */
  const fresh = async (projectId: string, query = '') => {
    const body = await get(flakyUrl(projectId, `${query}&window=${++freshWindow}`));
    return body;
  };

  /**
   * Warms both caches, runs the write, then checks both instances answer what an uncached read
   * does; `changes` says whether the write changes the answer. Answers the new list.
   */
  async function expectFollows(
    projectId: string,
    write: () => Promise<unknown>,
    opts: { changes: boolean; query?: string } = { changes: true },
  ): Promise<Json> {
    const query = opts.query ?? '';
    const before = await cached('a', projectId, query);
    expect(await cached('b', projectId, query)).toEqual(before);
    // A second read comes from the cache and answers the same.
    expect(await cached('a', projectId, query)).toEqual(before);
    await write();
    const expected = await fresh(projectId, query);
    if (opts.changes) expect(expected).not.toEqual(before);
    else expect(expected).toEqual(before);
    expect(await cached('a', projectId, query)).toEqual(expected);
    expect(await cached('b', projectId, query)).toEqual(expected);
    return expected;
  }

  const titles = (body: Json) => (body.items as Json[]).map((i) => i.title as string);

  it('answers from the cache: a write that bypasses the triggers is not seen', async () => {
    const s = await seed();
    const before = await cached('a', s.projectId);
    expect(titles(before)).toEqual(['Case x', 'Case y']);
    // Each case's window as `recent`, newest run first, on the first read and the cached ones.
    const recentOfX = [...s.runs]
      .map((run_id, i) => ({
        run_id,
        status: ['passed', 'failure', 'passed', 'failure', 'passed'][i],
      }))
      .reverse();
    expect(before.items[0].recent).toEqual(recentOfX);
    const again = await cached('a', s.projectId);
    expect(again.items[0].recent).toEqual(recentOfX);
    expect(again).toEqual(before);
    expect((await cached('a', s.projectId, '&page=2&page_size=1')).items[0].recent).toEqual(
      before.items[1].recent,
    );
    // A direct write with triggers off (session_replication_role = replica): the version stays.
    const runner = t.db.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query(`SET LOCAL session_replication_role = replica`);
      await runner.query(`UPDATE run_items SET status = 'failure' WHERE id = $1`, [s.items[4].z]);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    expect(await cached('a', s.projectId)).toEqual(before);
    expect(titles(await fresh(s.projectId))).toEqual(['Case x', 'Case y', 'Case z']);
  });

  it("each page of a held ranking has its cases' windows, also after a write", async () => {
    const s = await seed();
    const page = (n: number) => `&page=${n}&page_size=1`;
    const first = await cached('a', s.projectId, page(1));
    // The ranking is held now, page 2 is not: its windows are read at the ranking's version.
    const second = await cached('a', s.projectId, page(2));
    expect([...titles(first), ...titles(second)]).toEqual(['Case x', 'Case y']);
    expect(second).toEqual(await fresh(s.projectId, page(2)));
    expect(await cached('a', s.projectId, page(2))).toEqual(second);
    // y's newest result passed → failure, written on the other instance.
    await setStatus(s.items[4].y, 'failure', 'b');
    const after = await cached('a', s.projectId, page(2));
    expect(after).not.toEqual(second);
    expect(after).toEqual(await fresh(s.projectId, page(2)));
    expect(after.items[0]).toMatchObject({
      title: 'Case y',
      flips: 3,
      last_status: 'failure',
      last_failure_run_id: s.runs[4],
    });
    expect(after.items[0].recent[0]).toEqual({ run_id: s.runs[4], status: 'failure' });
    expect(await cached('a', s.projectId, page(1))).toEqual(await fresh(s.projectId, page(1)));
  });

  it('a write committed between the ranking and its page is seen by neither', async () => {
    const s = await seed();
    const before = await fresh(s.projectId);
    const repo = t.app.get(InsightsRepository);
    const rank = repo.flakyWindows.bind(repo);
    const spy = jest.spyOn(repo, 'flakyWindows').mockImplementationOnce(async (...args) => {
      const windows = await rank(...args);
      // Another connection commits x's newest result as a failure before the page is read.
      await t.db.query(`UPDATE run_items SET status = 'failure' WHERE id = $1`, [s.items[4].x]);
      return windows;
    });
    try {
      const during = await cached('a', s.projectId, '&window=77');
      expect(spy).toHaveBeenCalledTimes(1);
      expect(during).toEqual(before);
    } finally {
      spy.mockRestore();
    }
    const after = await cached('a', s.projectId, '&window=77');
    expect(after).not.toEqual(before);
    expect(after).toEqual(await fresh(s.projectId));
    expect(after.items.find((i: Json) => i.title === 'Case x').recent[0]).toEqual({
      run_id: s.runs[4],
      status: 'failure',
    });
  });

  it('a result written on one instance is seen at once by the other', async () => {
    const s = await seed();
    const after = await expectFollows(s.projectId, () => setStatus(s.items[4].z, 'failure', 'b'));
    expect(titles(after)).toContain('Case z');
  });

  it('run case row results (PATCH /run-cases/rows/{id})', async () => {
    const s = await seed();
    await expectFollows(s.projectId, () => setStatus(s.items[2].y, 'passed'));
  });

  it('cases added to a run (POST /run-cases/bulk, POST /run-cases)', async () => {
    const s = await seed();
    const run = await post('/test-runs', { project_id: s.projectId, name: t.unique('Run ') });
    const after = await expectFollows(s.projectId, () =>
      post('/run-cases/bulk', { test_run_id: run.id, test_case_ids: [s.cases.x] }),
    );
    expect(after.items[0]).toMatchObject({ title: 'Case x', runs: 6, last_status: 'untested' });
    await expectFollows(s.projectId, () =>
      post('/run-cases', { test_run_id: run.id, test_case_id: s.cases.y }),
    );
  });

  it('reruns (POST /run-cases/{id}/rerun)', async () => {
    const s = await seed();
    // A new untested row for y's last (passed) row: untested ranks before passed in the roll-up.
    const [row] = (await get(`/run-cases/${s.items[4].y}/rows`)).items as Json[];
    const after = await expectFollows(s.projectId, () =>
      post(`/run-cases/${s.items[4].y}/rerun`, { mode: 'subset', run_case_row_ids: [row.id] }),
    );
    expect(after.items[1]).toMatchObject({ title: 'Case y', last_status: 'untested' });
  });

  it('run case deletion (DELETE /run-cases/{id})', async () => {
    const s = await seed();
    await expectFollows(s.projectId, async () =>
      ok(await on('a', 'delete', `/run-cases/${s.items[1].x}`), 204),
    );
  });

  it('JUnit imports, into a run and into a project', async () => {
    const s = await seed();
    const run = await post('/test-runs', { project_id: s.projectId, name: t.unique('Run ') });
    const after = await expectFollows(s.projectId, async () =>
      ok(
        await on(
          'a',
          'post',
          `/test-runs/${run.id}/imports/junit?create_missing_cases=true`,
        ).attach('file', FLAKY_XML, 'flaky.xml'),
        201,
      ),
    );
    expect(after.items.map((i: Json) => i.flaky_attempts)).toContain(1);
    await expectFollows(s.projectId, async () =>
      ok(
        await on(
          'b',
          'post',
          `/projects/${s.projectId}/imports/junit?create_missing_cases=true`,
        ).attach('file', FLAKY_XML, 'flaky.xml'),
        201,
      ),
    );
  });

  it('runs made from a plan (POST /test-plans/{id}/create-run)', async () => {
    const s = await seed();
    const plan = await post('/test-plans', {
      project_id: s.projectId,
      name: t.unique('Plan '),
      case_ids: [s.cases.y],
    });
    await expectFollows(s.projectId, () =>
      post(`/test-plans/${plan.id}/create-run`, { name: t.unique('From plan ') }),
    );
  });

  it('run deletion (DELETE /test-runs/{id}) and archival', async () => {
    const s = await seed();
    await expectFollows(s.projectId, async () =>
      ok(await on('b', 'delete', `/test-runs/${s.runs[1]}`), 204),
    );
    // Archiving a run changes no result the list reads; the answer stays exact.
    await patch(`/test-runs/${s.runs[2]}`, { status: 'in_progress' });
    await patch(`/test-runs/${s.runs[2]}`, { status: 'completed' });
    await expectFollows(
      s.projectId,
      () => patch(`/test-runs/${s.runs[2]}`, { status: 'archived' }),
      {
        changes: false,
      },
    );
  });

  it("a run's environment (PATCH /test-runs/{id}), with the environment filter", async () => {
    const s = await seed();
    const env = await post('/environments', { project_id: s.projectId, name: t.unique('Env ') });
    await patch(`/test-runs/${s.runs[3]}`, { environment_id: env.id });
    await patch(`/test-runs/${s.runs[4]}`, { environment_id: env.id });
    const query = `&environment_id=${env.id}`;
    const after = await expectFollows(
      s.projectId,
      () => patch(`/test-runs/${s.runs[2]}`, { environment_id: env.id }),
      { changes: true, query },
    );
    expect(titles(after)).toEqual(['Case x', 'Case y']);
  });

  it("a case's title, archival and deletion (PATCH, DELETE /test-cases/{id})", async () => {
    const s = await seed();
    const renamed = await expectFollows(s.projectId, () =>
      patch(`/test-cases/${s.cases.y}`, { title: 'A renamed y' }),
    );
    expect(titles(renamed)).toEqual(['Case x', 'A renamed y']);
    // Archiving a case changes nothing the list shows; the answer stays exact.
    await expectFollows(
      s.projectId,
      () => patch(`/test-cases/${s.cases.y}`, { status: 'archived' }),
      {
        changes: false,
      },
    );
    const deleted = await expectFollows(s.projectId, async () =>
      ok(await on('a', 'delete', `/test-cases/${s.cases.x}`), 204),
    );
    expect(titles(deleted)).toEqual(['A renamed y']);
  });

  it('writes that change nothing the list reads keep the version; compaction keeps the sum', async () => {
    const s = await seed();
    const version = async () =>
      Number(
        (
          await t.db.query<Array<{ v: string }>>(
            `SELECT coalesce(sum(changes), 0)::text AS v FROM project_result_changes
              WHERE project_id = $1`,
            [s.projectId],
          )
        )[0].v,
      );
    const start = await version();
    await patch(`/run-cases/${s.items[0].x}`, { comment: 'looked at it' });
    await patch(`/test-runs/${s.runs[0]}`, { name: 'Renamed run' });
    expect(await version()).toBe(start);

    // 300 transactions that each change a result: one in sixteen (by transaction id) folds the
    // committed rows into the base row, so the rows stay few while the sum counts every one.
    for (let i = 0; i < 300; i++) {
      await t.db.query(`UPDATE run_items SET status = $2 WHERE id = $1`, [
        s.items[0].z,
        i % 2 === 0 ? 'failure' : 'passed',
      ]);
    }
    expect(await version()).toBe(start + 300);
    const [{ n }] = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM project_result_changes WHERE project_id = $1`,
      [s.projectId],
    );
    expect(n).toBeLessThan(300);
    expect(await cached('a', s.projectId)).toEqual(await fresh(s.projectId));
  });
  it('a project with results can be deleted; its versions go with it', async () => {
    // Deleting the project deletes its runs and items: the triggers then note no change for it.
    const s = await seed();
    ok(await on('b', 'delete', `/projects/${s.projectId}`), 204);
    const [{ n }] = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM project_result_changes WHERE project_id = $1`,
      [s.projectId],
    );
    expect(n).toBe(0);
  });

  describe('the cached comparison (GET /test-runs/{id}/compare)', () => {
    /** Page sizes of uncached reads: each one is asked once (every comparison has 3–4 cases). */
    let freshSize = 10;

    /** The comparison of the seed's last run with the one before, without `page_size`. */
    async function comparison(instance: 'a' | 'b', s: { runs: string[] }, query = '') {
      const body = ok(
        await on(
          instance,
          'get',
          `/test-runs/${s.runs[4]}/compare?base_run_id=${s.runs[3]}${query}`,
        ),
      );
      const { page_size: _size, ...rest } = body;
      return rest;
    }

    /** As expectFollows, for the comparison of the seed's last two runs. */
    async function expectComparisonFollows(
      s: { runs: string[] },
      write: () => Promise<unknown>,
    ): Promise<Json> {
      const before = await comparison('a', s);
      expect(await comparison('b', s)).toEqual(before);
      expect(await comparison('a', s)).toEqual(before);
      await write();
      const expected = await comparison('a', s, `&page_size=${++freshSize}`);
      expect(expected).not.toEqual(before);
      expect(await comparison('a', s)).toEqual(expected);
      expect(await comparison('b', s)).toEqual(expected);
      return expected;
    }

    const classes = (body: Json) =>
      Object.fromEntries((body.items as Json[]).map((i) => [i.title, i.change]));

    it('answers from the cache: a write that bypasses the triggers is not seen', async () => {
      const s = await seed();
      const before = await comparison('a', s);
      expect(classes(before)).toEqual({
        'Case x': 'fixed',
        'Case y': 'unchanged',
        'Case z': 'unchanged',
      });
      const runner = t.db.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.query(`SET LOCAL session_replication_role = replica`);
        await runner.query(`UPDATE run_items SET status = 'failure' WHERE id = $1`, [s.items[4].z]);
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
      expect(await comparison('a', s)).toEqual(before);
      expect(classes(await comparison('a', s, '&page_size=99'))).toMatchObject({
        'Case z': 'newly_failing',
      });
    });

    it('results written in either run, on either instance; reruns', async () => {
      const s = await seed();
      const now = await expectComparisonFollows(s, () => setStatus(s.items[4].y, 'failure', 'b'));
      expect(classes(now)).toMatchObject({ 'Case y': 'newly_failing' });
      const base = await expectComparisonFollows(s, () => setStatus(s.items[3].z, 'error'));
      expect(classes(base)).toMatchObject({ 'Case z': 'fixed' });
      const [row] = (await get(`/run-cases/${s.items[4].x}/rows`)).items as Json[];
      const rerun = await expectComparisonFollows(s, () =>
        post(`/run-cases/${s.items[4].x}/rerun`, { mode: 'subset', run_case_row_ids: [row.id] }),
      );
      expect(classes(rerun)).toMatchObject({ 'Case x': 'changed' });
    });

    it('cases added to or removed from a run, imports', async () => {
      const s = await seed();
      const extra = await post('/test-cases', { project_id: s.projectId, title: 'Case w' });
      const added = await expectComparisonFollows(s, () =>
        post('/run-cases/bulk', { test_run_id: s.runs[4], test_case_ids: [extra.id] }),
      );
      expect(classes(added)).toMatchObject({ 'Case w': 'added' });
      const removed = await expectComparisonFollows(s, async () =>
        ok(await on('b', 'delete', `/run-cases/${s.items[4].z}`), 204),
      );
      expect(classes(removed)).toMatchObject({ 'Case z': 'removed' });
      const imported = await expectComparisonFollows(s, async () =>
        ok(
          await on(
            'a',
            'post',
            `/test-runs/${s.runs[4]}/imports/junit?create_missing_cases=true`,
          ).attach('file', FLAKY_XML, 'flaky.xml'),
          201,
        ),
      );
      expect(imported.counts.added).toBe(2);
    });

    it("a case's title and deletion", async () => {
      const s = await seed();
      const renamed = await expectComparisonFollows(s, () =>
        patch(`/test-cases/${s.cases.y}`, { title: 'A renamed y' }, 'b'),
      );
      expect(classes(renamed)).toMatchObject({ 'A renamed y': 'unchanged' });
      const deleted = await expectComparisonFollows(s, async () =>
        ok(await on('a', 'delete', `/test-cases/${s.cases.x}`), 204),
      );
      expect(Object.keys(classes(deleted))).toEqual(['A renamed y', 'Case z']);
    });
  });
});
