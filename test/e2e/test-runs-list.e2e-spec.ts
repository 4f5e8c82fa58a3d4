import { statementsDuring } from '../support/query-count';
import { settledFlag, waitUntilBlockedOrDone } from '../support/wait-for';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

type Json = Record<string, unknown>;

/** A snapshot of at least this many characters (16 KiB) is a large one. */
const STREAM_RAW_JSON_FROM = 16 * 1024;

describe('GET /test-runs: filters, search, sorting, paging', () => {
  let t: TestApp;
  let f: RoleFixture;
  const runs: Record<string, Json> = {};
  let envA: Json;
  let envB: Json;
  let milestone: Json;

  const api = (path: string) => `/api/v1${path}`;

  async function ok(res: { status: number; body: unknown }, status: number): Promise<Json> {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function list(qs: string, token = f.viewer.token): Promise<Json> {
    return ok(await t.req('get', api(`/test-runs?project_id=${f.projectId}${qs}`), token), 200);
  }

  const names = (page: Json) => (page.items as Json[]).map((r) => r.name);

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    envA = await ok(
      await t
        .req('post', api('/environments'), f.lead.token)
        .send({ project_id: f.projectId, name: 'Staging EU' }),
      201,
    );
    envB = await ok(
      await t
        .req('post', api('/environments'), f.lead.token)
        .send({ project_id: f.projectId, name: 'perf-lab' }),
      201,
    );
    milestone = await ok(
      await t
        .req('post', api('/milestones'), f.lead.token)
        .send({ project_id: f.projectId, name: 'R1' }),
      201,
    );
    // name, build, environment, milestone, creator, created_at, final status
    const specs: Array<
      [string, string | null, Json | null, boolean, 'lead' | 'tester', string, string]
    > = [
      ['alpha', 'b-100', envA, true, 'lead', '2026-03-01T08:00:00Z', 'not_started'],
      ['Bravo', 'B-200', envB, false, 'tester', '2026-03-02T23:59:59.500Z', 'in_progress'],
      ['charlie 50%_off', null, null, true, 'tester', '2026-03-03T00:00:00Z', 'completed'],
      ['delta', 'b-300', envA, false, 'lead', '2026-03-04T12:00:00Z', 'archived'],
      ['Echo', 'x-1', envB, false, 'tester', '2026-03-05T12:00:00Z', 'not_started'],
    ];
    for (const [name, build, env, withMilestone, creator, createdAt, status] of specs) {
      const run = await ok(
        await t.req('post', api('/test-runs'), f[creator].token).send({
          project_id: f.projectId,
          name,
          build,
          environment_id: env ? env.id : null,
          milestone_id: withMilestone ? milestone.id : null,
        }),
        201,
      );
      for (const step of ['in_progress', 'completed', 'archived']) {
        if (run.status === status) break;
        const res = await ok(
          await t
            .req('patch', api(`/test-runs/${String(run.id)}`), f.lead.token)
            .send({ status: step }),
          200,
        );
        run.status = res.status;
        if (res.status === status) break;
      }
      await t.db.query(`UPDATE test_runs SET created_at = $2 WHERE id = $1`, [run.id, createdAt]);
      runs[name] = run;
    }
    // A run of another project never shows up.
    const other = await t.createProject(f.lead.token);
    await ok(
      await t
        .req('post', api('/test-runs'), f.lead.token)
        .send({ project_id: other, name: 'alpha' }),
      201,
    );
  });

  afterAll(async () => {
    await t.close();
  });

  it('defaults: created_at desc, archived hidden, page 1 of 50', async () => {
    const page = await list('');
    expect(page).toMatchObject({ page: 1, page_size: 50, total: 4, has_next: false });
    expect(names(page)).toEqual(['Echo', 'charlie 50%_off', 'Bravo', 'alpha']);
  });

  it('status filter (repeatable) shows archived runs when asked', async () => {
    expect(names(await list('&status=archived'))).toEqual(['delta']);
    expect(names(await list('&status=archived&status=not_started'))).toEqual([
      'Echo',
      'delta',
      'alpha',
    ]);
    expect(names(await list('&status=completed'))).toEqual(['charlie 50%_off']);
  });

  it('environment_id and milestone_id filters (repeatable)', async () => {
    expect(names(await list(`&environment_id=${String(envA.id)}`))).toEqual(['alpha']);
    expect(
      names(await list(`&environment_id=${String(envA.id)}&status=archived&status=not_started`)),
    ).toEqual(['delta', 'alpha']);
    expect(
      names(await list(`&environment_id=${String(envA.id)}&environment_id=${String(envB.id)}`)),
    ).toEqual(['Echo', 'Bravo', 'alpha']);
    expect(names(await list(`&milestone_id=${String(milestone.id)}`))).toEqual([
      'charlie 50%_off',
      'alpha',
    ]);
    expect(names(await list('&milestone_id=unknown'))).toEqual([]);
    // Blank values are dropped: no filter at all when nothing else is left.
    expect(names(await list('&environment_id=&milestone_id=%20'))).toEqual(names(await list('')));
    expect(names(await list(`&environment_id=&environment_id=${String(envB.id)}`))).toEqual([
      'Echo',
      'Bravo',
    ]);
  });

  it('search matches name, build or environment name, case-insensitively, % and _ literally', async () => {
    expect(names(await list('&search=BRAV'))).toEqual(['Bravo']);
    expect(names(await list('&search=b-2'))).toEqual(['Bravo']);
    expect(names(await list('&search=staging'))).toEqual(['alpha']);
    expect(names(await list(`&search=${encodeURIComponent('50%_')}`))).toEqual(['charlie 50%_off']);
    expect(names(await list(`&search=${encodeURIComponent('%')}`))).toEqual(['charlie 50%_off']);
    expect(names(await list(`&search=${encodeURIComponent('a_p')}`))).toEqual([]);
  });

  it('created_by filter', async () => {
    expect(names(await list(`&created_by=${f.lead.id}`))).toEqual(['alpha']);
    expect(names(await list(`&created_by=${f.tester.id}`))).toEqual([
      'Echo',
      'charlie 50%_off',
      'Bravo',
    ]);
    expect(names(await list('&created_by=nobody'))).toEqual([]);
    expect(names(await list('&created_by='))).toEqual(names(await list('')));
  });

  it('created_from / created_to accept dates (created_to includes the whole day) and datetimes', async () => {
    expect(names(await list('&created_to=2026-03-02'))).toEqual(['Bravo', 'alpha']);
    expect(names(await list('&created_from=2026-03-02&created_to=2026-03-03'))).toEqual([
      'charlie 50%_off',
      'Bravo',
    ]);
    expect(names(await list('&created_to=2026-03-02T23:59:59Z'))).toEqual(['alpha']);
    // 01:00+02:00 is 23:00 UTC of the day before: Bravo (23:59:59.5 UTC) is inside.
    expect(
      names(await list(`&created_from=${encodeURIComponent('2026-03-03T01:00:00+02:00')}`)),
    ).toEqual(['Echo', 'charlie 50%_off', 'Bravo']);
    expect(
      names(await list('&created_from=2026-03-05T12:00:00Z&created_to=2026-03-05T12:00:00Z')),
    ).toEqual(['Echo']);
  });

  // Found by an audit: created_at is stored with microseconds and answered with milliseconds, so a
  // run's own created_at as created_to left it out.
  it('created_to compares at millisecond precision: a run answered with that created_at is included', async () => {
    const fx = await t.roleFixture();
    const made = await t
      .req('post', api('/test-runs'), fx.tester.token)
      .send({ project_id: fx.projectId, name: 'Exact' });
    expect(made.status).toBe(201);
    await t.db.query(
      `UPDATE test_runs SET created_at = '2026-04-01T10:00:00.678958Z' WHERE id = $1`,
      [made.body.id],
    );
    const page = async (qs: string) =>
      names(
        await ok(
          await t.req('get', api(`/test-runs?project_id=${fx.projectId}${qs}`), fx.viewer.token),
          200,
        ),
      );
    const answered = await ok(
      await t.req('get', api(`/test-runs/${made.body.id}`), fx.viewer.token),
      200,
    );
    expect(answered.created_at).toBe('2026-04-01T10:00:00.678Z');
    expect(await page('&created_to=2026-04-01T10:00:00.678Z')).toEqual(['Exact']);
    expect(
      await page('&created_from=2026-04-01T10:00:00.678Z&created_to=2026-04-01T10:00:00.678Z'),
    ).toEqual(['Exact']);
    expect(await page('&created_to=2026-04-01T10:00:00.677Z')).toEqual([]);
    expect(await page('&created_from=2026-04-01T10:00:00.679Z')).toEqual([]);
  });

  it.each([
    ['created_at', 'asc', ['alpha', 'Bravo', 'charlie 50%_off', 'Echo']],
    ['name', 'asc', ['alpha', 'Bravo', 'charlie 50%_off', 'Echo']],
    ['name', 'desc', ['Echo', 'charlie 50%_off', 'Bravo', 'alpha']],
    ['status', 'asc', ['charlie 50%_off', 'Bravo', 'alpha', 'Echo']],
    ['build', 'asc', ['charlie 50%_off', 'alpha', 'Bravo', 'Echo']],
    ['environment', 'asc', ['charlie 50%_off', 'Bravo', 'Echo', 'alpha']],
    ['environment', 'desc', ['alpha', 'Echo', 'Bravo', 'charlie 50%_off']],
  ])('sort_by=%s sort_order=%s', async (sortBy, order, expected) => {
    const page = await list(`&sort_by=${sortBy}&sort_order=${order}`);
    if (sortBy === 'status') {
      // Equal statuses tie-break by id in the same direction.
      const ns = (page.items as Json[]).filter((r) => r.status === 'not_started').map((r) => r.id);
      expect(ns).toEqual([...ns].sort());
      expect(names(page).slice(0, 2)).toEqual(expected.slice(0, 2));
    } else {
      expect(names(page)).toEqual(expected);
    }
  });

  it('pages are stable and total is real past the end', async () => {
    const p1 = await list('&page_size=2&sort_by=name&sort_order=asc');
    const p2 = await list('&page_size=2&page=2&sort_by=name&sort_order=asc');
    const p3 = await list('&page_size=2&page=3&sort_by=name&sort_order=asc');
    expect(p1).toMatchObject({ page: 1, page_size: 2, total: 4, has_next: true });
    expect(p2).toMatchObject({ page: 2, total: 4, has_next: false });
    expect([...names(p1), ...names(p2)]).toEqual(['alpha', 'Bravo', 'charlie 50%_off', 'Echo']);
    expect(p3).toMatchObject({ items: [], total: 4, has_next: false });
  });

  it.each([
    ['', 'project_id', '/test-runs'],
    ['&sort_by=owner', 'sort_by', null],
    ['&sort_order=up', 'sort_order', null],
    ['&status=done', 'status', null],
    ['&created_from=yesterday', 'created_from', null],
    ['&created_to=2026-02-30', 'created_to', null],
    ['&created_to=2026-03', 'created_to', null],
    ['&page=0', 'page', null],
    ['&page_size=201', 'page_size', null],
    ['&page_size=abc', 'page_size', null],
    ['&page=100000000000000000000', 'page', null],
    ['&search=a%00b', 'search', null],
    ['&created_to=2026-03-02T25:00:00Z', 'created_to', null],
    ['&created_from=0000-01-01', 'created_from', null],
  ])('bad query %s → 422 query.%s', async (qs, name, path) => {
    const url = path ? api(path) : api(`/test-runs?project_id=${f.projectId}${qs}`);
    const p = expectProblem(await t.req('get', url, f.viewer.token), 422, 'validation_error');
    expect(p.errors).toHaveProperty([`query.${name}`]);
  });

  it('a page is a constant number of queries whatever its size', async () => {
    const all = '&status=not_started&status=in_progress&status=completed&status=archived';
    const one = await statementsDuring(() => list(`&page_size=1${all}`));
    // Authentication with access (one statement for a bearer token), the page, its total.
    expect(one.statements).toHaveLength(3);
    const fifty = await statementsDuring(() => list(`&page_size=50${all}`));
    expect(fifty.statements).toHaveLength(3);
    const run = await statementsDuring(() =>
      t.req('get', api(`/test-runs/${String(runs.alpha.id)}`), f.viewer.token).expect(200),
    );
    // Authentication, then the run fused with the caller's membership.
    expect(run.statements).toHaveLength(2);
  });

  it('totals stay exact through creates, transitions and deletes (kept by triggers)', async () => {
    const g = await t.roleFixture();
    const mk = async (name: string) =>
      (
        await t
          .req('post', api('/test-runs'), g.tester.token)
          .send({ project_id: g.projectId, name })
      ).body as {
        id: string;
      };
    const [a, b, c] = [await mk('a'), await mk('b'), await mk('c')];
    await t.req('patch', api(`/test-runs/${a.id}`), g.tester.token).send({ status: 'in_progress' });
    await t.req('patch', api(`/test-runs/${a.id}`), g.tester.token).send({ status: 'completed' });
    await t.req('patch', api(`/test-runs/${a.id}`), g.lead.token).send({ status: 'archived' });
    await t.req('patch', api(`/test-runs/${b.id}`), g.tester.token).send({ status: 'in_progress' });
    expect((await t.req('delete', api(`/test-runs/${c.id}`), g.lead.token)).status).toBe(204);
    const total = async (qs: string) =>
      (await t.req('get', api(`/test-runs?project_id=${g.projectId}${qs}`), g.viewer.token)).body
        .total;
    expect(await total('')).toBe(1);
    expect(await total('&status=archived')).toBe(1);
    expect(await total('&status=in_progress&status=archived')).toBe(2);
    expect(await total('&status=not_started')).toBe(0);
    expect(await total('&search=b')).toBe(1);
    const counts = await t.db.query(
      `SELECT status, sum(n)::int AS n FROM project_run_counts WHERE project_id = $1
        GROUP BY status HAVING sum(n) <> 0 ORDER BY status`,
      [g.projectId],
    );
    expect(counts).toEqual([
      { status: 'archived', n: 1 },
      { status: 'in_progress', n: 1 },
    ]);
  });

  it("runs created at once in one project do not queue on the project's run count", async () => {
    const g = await t.roleFixture();
    const qr = t.db.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    try {
      // An open transaction that has created a run in the project (its count written, uncommitted).
      await qr.query(
        `INSERT INTO test_runs (id, project_id, name, created_by) VALUES (gen_random_uuid(), $1, 'open', $2)`,
        [g.projectId, g.lead.id],
      );
      const pending = t
        .req('post', api('/test-runs'), g.tester.token)
        .send({ project_id: g.projectId, name: 'concurrent' })
        .then((r) => r);
      const done = settledFlag(pending);
      await waitUntilBlockedOrDone(t.db, qr, pending);
      // Answered without waiting for the open transaction (before: blocked on its count row).
      expect(done()).toBe(true);
      expect((await pending).status).toBe(201);
      await qr.commitTransaction();
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
    const total = await t.req('get', api(`/test-runs?project_id=${g.projectId}`), g.viewer.token);
    expect(total.body.total).toBe(2);
  });

  it('answers a large environment snapshot (written in parts) whole, with its exact length, for GET, HEAD and the list', async () => {
    const g = await t.roleFixture(); // a project of its own: the list holds this run only
    const nodes = Array.from({ length: 300 }, (_, i) => ({
      name: `node-${i}`,
      host_type: 'vm',
      role: 'app',
      tags: [`zone-${i % 3}`, 'Grüße ☕'],
    }));
    const env = await t
      .req('post', `/api/v1/environments`, g.tester.token)
      .send({
        project_id: g.projectId,
        name: 'Large topology',
        topology: { system_under_test: [{ name: 'svc', nodes }] },
      })
      .expect(201);
    const revision = await t
      .req('get', `/api/v1/environments/${String(env.body.id)}/revisions/1`, g.viewer.token)
      .expect(200);
    expect(JSON.stringify(revision.body.full_snapshot).length).toBeGreaterThan(
      STREAM_RAW_JSON_FROM,
    );
    const run = await t
      .req('post', `/api/v1/test-runs`, g.tester.token)
      .send({ project_id: g.projectId, name: 'With a large snapshot', environment_id: env.body.id })
      .expect(201);

    // Uncompressed (a compressed answer is chunked, without Content-Length; the compression tests
    // cover that path).
    const got = await t
      .req('get', `/api/v1/test-runs/${String(run.body.id)}`, g.viewer.token)
      .set('Accept-Encoding', 'identity')
      .expect(200);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
    expect(got.body.environment_snapshot).toEqual(revision.body.full_snapshot);
    expect(got.body).toMatchObject({ id: run.body.id, name: 'With a large snapshot' });

    const head = await t
      .req('head', `/api/v1/test-runs/${String(run.body.id)}`, g.viewer.token)
      .expect(200);
    expect(head.text ?? '').toBe('');
    expect(head.headers['content-length']).toBe(got.headers['content-length']);

    const list = await t
      .req('get', `/api/v1/test-runs?project_id=${g.projectId}`, g.viewer.token)
      .set('Accept-Encoding', 'identity')
      .expect(200);
    expect(Number(list.headers['content-length'])).toBe(Buffer.byteLength(list.text));
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].environment_snapshot).toEqual(revision.body.full_snapshot);
  });
});
