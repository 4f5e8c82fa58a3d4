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
const UNKNOWN = '0190a3a4-0000-7000-8000-000000000000';

const COLUMNS = [{ column_key: 'user' }];
const rowsOf = (...users: string[]) => users.map((u) => ({ row_key: u, values: { user: u } }));

describe('insights: run comparison (issue #17 §1)', () => {
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

  function ok(res: { status: number; body: unknown }, status = 200): Json {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }
  const post = async (path: string, body: Json, fx = f) =>
    ok(await t.req('post', `${API}${path}`, fx.lead.token).send(body), 201);
  const patch = async (path: string, body: Json) =>
    ok(await t.req('patch', `${API}${path}`, f.lead.token).send(body));
  const createCase = (title: string) => post('/test-cases', { project_id: f.projectId, title });
  const createRun = (body: Json = {}, fx = f) =>
    post('/test-runs', { project_id: fx.projectId, name: t.unique('Run '), ...body }, fx);

  /** Adds the cases to the run and sets each one's rows to the status given. */
  async function record(runId: string, results: Array<[string, string]>): Promise<void> {
    const bulk = await post('/run-cases/bulk', {
      test_run_id: runId,
      test_case_ids: results.map(([caseId]) => caseId),
    });
    for (const [caseId, status] of results) {
      if (status === 'untested') continue;
      const item = (bulk.items as Json[]).find((i) => i.test_case_id === caseId)!;
      const rows = ok(await t.req('get', `${API}/run-cases/${item.id}/rows`, f.viewer.token))
        .items as Json[];
      for (const row of rows) await patch(`/run-cases/rows/${row.id}`, { status });
    }
  }

  const compare = (runId: string, query: string, token = f.viewer.token) =>
    t.req('get', `${API}/test-runs/${runId}/compare${query}`, token);

  describe('classes, drift and paging', () => {
    let env: Json;
    let base: Json;
    let run: Json;
    let dataset: Json;
    const c: Record<string, string> = {};

    // [base status, run status] per case; null: not in that run.
    const PAIRS: Record<string, [string | null, string | null]> = {
      'b newly failing': ['passed', 'failure'],
      'A newly failing': ['skipped', 'error'],
      fixed: ['failure', 'xfailed'],
      'still failing': ['error', 'failure'],
      added: [null, 'passed'],
      removed: ['failure', null],
      'changed to skipped': ['passed', 'skipped'],
      'failure to blocked': ['failure', 'blocked'],
      unchanged: ['passed', 'passed'],
      'untested both': ['untested', 'untested'],
    };

    beforeAll(async () => {
      env = await post('/environments', { project_id: f.projectId, name: t.unique('Env ') });
      for (const title of Object.keys(PAIRS)) c[title] = (await createCase(title)).id;
      dataset = await post('/datasets', {
        project_id: f.projectId,
        name: t.unique('Users '),
        columns: COLUMNS,
        rows: rowsOf('alice'),
      });
      await post(`/test-cases/${c.unchanged}/dataset-bindings`, {
        dataset_id: dataset.id,
        dataset_alias: 'users',
      });

      base = await createRun({ environment_id: env.id, build: '1.0' });
      await record(
        base.id,
        Object.entries(PAIRS)
          .filter(([, [b]]) => b !== null)
          .map(([title, [b]]) => [c[title], b as string]),
      );
      // Between the two: a run of another environment and one without environment.
      await createRun({ build: '1.0' });
      // The environment and the dataset change before the compared run.
      await patch(`/environments/${env.id}`, { description: 'with a new database' });
      await patch(`/datasets/${dataset.id}`, { rows: rowsOf('alice', 'bob') });

      run = await createRun({ environment_id: env.id, build: '1.1' });
      await record(
        run.id,
        Object.entries(PAIRS)
          .filter(([, [, r]]) => r !== null)
          .map(([title, [, r]]) => [c[title], r as string]),
      );
      // A later run of the same environment is never the previous one.
      await createRun({ environment_id: env.id });
    });

    it('needs viewer; non-members get 404, no credential 401', async () => {
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/test-runs/${run.id}/compare?base_run_id=${base.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_run_not_found',
      });
    });

    it('puts every case in exactly one class, ordered by class then title', async () => {
      const body = ok(await compare(run.id, `?base_run_id=${base.id}`));
      expect(Object.keys(body).sort()).toEqual(
        [
          'base',
          'build_changed',
          'counts',
          'datasets',
          'environment',
          'has_next',
          'items',
          'page',
          'page_size',
          'run',
          'total',
        ].sort(),
      );
      expect(body.counts).toEqual({
        added: 1,
        removed: 1,
        newly_failing: 2,
        fixed: 1,
        still_failing: 1,
        unchanged: 2,
        changed: 2,
      });
      expect(body.total).toBe(10);
      expect(body.items).toEqual(
        [
          ['A newly failing', 'newly_failing'],
          ['b newly failing', 'newly_failing'],
          ['fixed', 'fixed'],
          ['still failing', 'still_failing'],
          ['added', 'added'],
          ['removed', 'removed'],
          ['changed to skipped', 'changed'],
          ['failure to blocked', 'changed'],
          ['unchanged', 'unchanged'],
          ['untested both', 'unchanged'],
        ].map(([title, change]) => ({
          test_case_id: c[title],
          title,
          change,
          base_status: PAIRS[title][0],
          status: PAIRS[title][1],
        })),
      );
      expect(body.run).toEqual({
        id: run.id,
        name: run.name,
        build: '1.1',
        status: expect.any(String),
        environment_id: env.id,
        environment_revision_number: 2,
        created_at: run.created_at,
      });
      expect(body.base).toMatchObject({
        id: base.id,
        build: '1.0',
        environment_revision_number: 1,
      });
      expect(body.build_changed).toBe(true);
    });

    it('reports the environment drift with the revision diff', async () => {
      const body = ok(await compare(run.id, `?base_run_id=${base.id}`));
      expect(body.environment).toMatchObject({
        same_environment: true,
        from_revision: 1,
        to_revision: 2,
        changed: true,
      });
      expect(body.environment.diff).toMatchObject({
        from_revision: 1,
        to_revision: 2,
        identical: false,
        counts: { added: 0, removed: 0, changed: 1 },
        changes: [{ op: 'changed', path: ['description'], to: 'with a new database' }],
      });
      // Against itself: nothing changed anywhere.
      const same = ok(await compare(run.id, `?base_run_id=${run.id}`));
      expect(same.environment).toMatchObject({ changed: false, from_revision: 2, to_revision: 2 });
      expect(same.environment.diff).toMatchObject({ identical: true, changes: [] });
      expect(same.counts).toMatchObject({ unchanged: 6, newly_failing: 0, changed: 0 });
      expect(same.counts.still_failing).toBe(3);
      expect(same.datasets).toEqual([]);
      expect(same.build_changed).toBe(false);
    });

    it('keeps a revision diff by its pair of revisions: the snapshots are read once', async () => {
      // Revisions never change, so the diff of a pair is kept in the process.
      const first = await statementsDuring(() => compare(base.id, `?base_run_id=${run.id}`));
      const again = await statementsDuring(() => compare(base.id, `?base_run_id=${run.id}`));
      const readsSnapshots = (sql: string) => /FROM environment_revisions/.test(sql);
      expect(first.statements.filter(readsSnapshots)).toHaveLength(1);
      expect(again.statements.filter(readsSnapshots)).toHaveLength(0);
      const body = ok(again.result);
      expect(body).toEqual(ok(first.result));
      expect(body.environment.diff).toMatchObject({
        from_revision: 2,
        to_revision: 1,
        counts: { added: 0, removed: 0, changed: 1 },
      });
    });

    it('lists the bound datasets whose revision differs', async () => {
      const body = ok(await compare(run.id, `?base_run_id=${base.id}`));
      expect(body.datasets).toEqual([
        { dataset_id: dataset.id, name: dataset.name, from_revision: 1, to_revision: 2 },
      ]);
    });

    it('base=previous: the latest earlier run of the same environment', async () => {
      const body = ok(await compare(run.id, '?base=previous'));
      expect(body.base.id).toBe(base.id);
      expectProblem(await compare(base.id, '?base=previous'), 404, 'no_previous_run');
    });

    it('base=previous without environment: the latest earlier run without environment', async () => {
      const first = await createRun();
      const second = await createRun();
      const body = ok(await compare(second.id, '?base=previous'));
      expect(body.base.id).toBe(first.id);
      expect(body.environment).toEqual({
        same_environment: true,
        from_revision: null,
        to_revision: null,
        changed: false,
        diff: null,
      });
      expect(body).toMatchObject({ total: 0, items: [] });
    });

    it('base=previous skips the runs of other environments (and of none)', async () => {
      // A project of its own: runs of environments e1 and e2 and without one, interleaved.
      const p = await t.roleFixture();
      const envOf = async (name: string) =>
        post('/environments', { project_id: p.projectId, name: t.unique(name) }, p);
      const [e1, e2] = [await envOf('e1 '), await envOf('e2 ')];
      const runIn = (environment: Json | null) =>
        createRun(environment === null ? {} : { environment_id: environment.id }, p);
      const a = await runIn(e1);
      const b = await runIn(null);
      const c = await runIn(e2);
      const d = await runIn(e1);
      const e = await runIn(null);
      const g = await runIn(e1);
      const previous = async (runId: string) => {
        const res = await t.req(
          'get',
          `${API}/test-runs/${runId}/compare?base=previous`,
          p.viewer.token,
        );
        return res.status === 200 ? res.body.base.id : res.body.code;
      };
      expect(await previous(g.id)).toBe(d.id);
      expect(await previous(d.id)).toBe(a.id);
      expect(await previous(e.id)).toBe(b.id);
      expect(await previous(c.id)).toBe('no_previous_run');
      expect(await previous(b.id)).toBe('no_previous_run');
      expect(await previous(a.id)).toBe('no_previous_run');
    });

    it('answers with the same statements whatever the size of the runs', async () => {
      const empty1 = await createRun({ environment_id: env.id });
      const empty2 = await createRun({ environment_id: env.id });
      const small = await statementsDuring(() => compare(empty2.id, `?base_run_id=${empty1.id}`));
      const full = await statementsDuring(() => compare(run.id, `?base_run_id=${base.id}`));
      expect(ok(small.result).total).toBe(0);
      expect(ok(full.result).total).toBe(10);
      expect(full.statements.length).toBe(small.statements.length);
      // The access checks plus the runs, the classes, the revisions and the datasets.
      expect(full.statements.length).toBeLessThanOrEqual(8);
    });

    it('filters items by change and paginates them; counts stay whole', async () => {
      const filtered = ok(
        await compare(run.id, `?base_run_id=${base.id}&change=removed&change=fixed`),
      );
      expect(filtered.items.map((i: Json) => i.change)).toEqual(['fixed', 'removed']);
      expect(filtered.total).toBe(2);
      expect(filtered.counts.unchanged).toBe(2);

      const page = ok(await compare(run.id, `?base_run_id=${base.id}&page=2&page_size=3`));
      expect(page).toMatchObject({ page: 2, page_size: 3, total: 10, has_next: true });
      expect(page.items.map((i: Json) => i.title)).toEqual(['still failing', 'added', 'removed']);
      const last = ok(await compare(run.id, `?base_run_id=${base.id}&page=4&page_size=3`));
      expect(last.items.map((i: Json) => i.title)).toEqual(['untested both']);
      expect(last.has_next).toBe(false);
      // A page past the end is empty with the real total (CONTRACT §2), also where the offset
      // passes what a 32-bit integer holds.
      for (const p of [5, 10737419, 9007199254740991]) {
        const past = ok(await compare(run.id, `?base_run_id=${base.id}&page=${p}&page_size=200`));
        expect(past).toMatchObject({ page: p, items: [], total: 10, has_next: false });
      }
    });

    it('every page is its slice of the whole ordered list, whatever the classes listed', async () => {
      // The statement sorts only the classes a page overlaps: pages must still tile the list.
      for (const changes of [[], ['removed', 'fixed'], ['unchanged', 'newly_failing', 'added']]) {
        const filter = changes.map((c) => `&change=${c}`).join('');
        const whole = ok(await compare(run.id, `?base_run_id=${base.id}${filter}&page_size=200`));
        expect(whole.items).toHaveLength(whole.total);
        for (const size of [1, 2, 3, 4, 7]) {
          const pages: Json[] = [];
          for (let page = 1; page <= Math.ceil(whole.total / size) + 1; page++) {
            const body = ok(
              await compare(
                run.id,
                `?base_run_id=${base.id}${filter}&page=${page}&page_size=${size}`,
              ),
            );
            expect(body.counts).toEqual(whole.counts);
            expect(body.total).toBe(whole.total);
            pages.push(...body.items);
          }
          expect(pages).toEqual(whole.items);
        }
      }
    });

    it('a base run of another project is 422 run_project_mismatch; unknown ones 404', async () => {
      const foreign = await createRun({}, other);
      expectProblem(
        await compare(run.id, `?base_run_id=${foreign.id}`),
        422,
        'run_project_mismatch',
      );
      expectProblem(await compare(run.id, `?base_run_id=${UNKNOWN}`), 404, 'test_run_not_found');
      expectProblem(await compare(UNKNOWN, `?base_run_id=${base.id}`), 404, 'test_run_not_found');
    });

    it('exactly one of base_run_id and base, and valid values (422)', async () => {
      for (const [query, field] of [
        ['', 'query.base'],
        [`?base_run_id=${base.id}&base=previous`, 'query.base'],
        ['?base=latest', 'query.base'],
        ['?base_run_id=nope', 'query.base_run_id'],
        ['?base=previous&change=gone', 'query.change'],
        ['?base=previous&page_size=500', 'query.page_size'],
      ]) {
        const body = expectProblem(await compare(run.id, query), 422, 'validation_error');
        expect(body.errors).toHaveProperty([field]);
      }
    });
  });

  // Found by an audit: a rerun on the latest dataset revisions left the run case's dataset snapshot
  // as it was, so the comparison reported no data change; a deleted case's run cases still counted.
  describe('dataset drift after a rerun on the latest revisions, and after a case is deleted', () => {
    it('reports the revision the rerun rows used, and forgets a deleted case', async () => {
      const kase = await createCase(t.unique('data-driven '));
      const data = await post('/datasets', {
        project_id: f.projectId,
        name: t.unique('Accounts '),
        columns: COLUMNS,
        rows: rowsOf('alice'),
      });
      await post(`/test-cases/${kase.id}/dataset-bindings`, {
        dataset_id: data.id,
        dataset_alias: 'acc',
      });
      const a = await createRun();
      await record(a.id, [[kase.id, 'failure']]);
      const b = await createRun();
      await record(b.id, [[kase.id, 'failure']]);
      const datasets = async () => ok(await compare(b.id, `?base_run_id=${a.id}`)).datasets;
      expect(await datasets()).toEqual([]);

      await patch(`/datasets/${data.id}`, {
        rows: [{ row_key: 'alice', values: { user: 'alice2' } }],
      });
      const [item] = ok(await t.req('get', `${API}/run-cases?test_run_id=${b.id}`, f.viewer.token))
        .items as Json[];
      const rerun = await post(
        `/run-cases/${item.id}/rerun`,
        { mode: 'failed', use_latest_revisions: true },
        f,
      );
      const [row] = rerun.items as Json[];
      expect((row.row_snapshot as { datasets: Json[] }).datasets[0]).toMatchObject({
        revision_number: 2,
      });
      expect(await datasets()).toEqual([
        { dataset_id: data.id, name: data.name, from_revision: 1, to_revision: 2 },
      ]);

      // The case is deleted: its run cases leave the comparison, and with them their datasets.
      expect((await t.req('delete', `${API}/test-cases/${kase.id}`, f.lead.token)).status).toBe(
        204,
      );
      const body = ok(await compare(b.id, `?base_run_id=${a.id}`));
      expect(body.items).toEqual([]);
      expect(body.datasets).toEqual([]);
    });
  });
});
