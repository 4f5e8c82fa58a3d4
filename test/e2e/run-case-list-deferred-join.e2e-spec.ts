import { mostRowsCarrying, sentWhileGetting } from '../support/plan-rows';
import type { SentStatement } from '../support/query-count';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const api = (path: string) => `/api/v1${path}`;

/**
 * A page of a run's items (`GET /run-cases`, `page`/`page_size`) is a deferred join
 * (`RunItemsRepository.findPage`): the page's ids and the count of every matching item are taken
 * from the items alone, and only the page's items are read whole with their run, case, suite and
 * assignee. Checked on the statement the service itself sends, under EXPLAIN ANALYZE: no join,
 * sort, window or limit of its plan carries an item's whole row (its `comment`) for more items than
 * the page has; and each page and total equal those of the plain statement, which joins, counts and
 * sorts the whole rows.
 */
describe('run case list pages: the whole rows of the page only (deferred join)', () => {
  let t: TestApp;
  let g: RoleFixture;
  let runId: string;
  const ROWS = 3000;
  const CASES = 2000;
  const SIZE = 50;

  beforeAll(async () => {
    t = await createTestApp();
    g = await t.roleFixture();
    const run = await t
      .req('post', api('/test-runs'), g.tester.token)
      .send({ project_id: g.projectId, name: 'big' });
    expect(run.status).toBe(201);
    runId = run.body.id as string;
    await t.db.query(
      `INSERT INTO test_cases (id, project_id, key, key_number, title, created_by)
       SELECT uuidv7(), $1, 'TC-' || i, i, 'case ' || lpad(((i * 7919) % ${CASES})::text, 5, '0'), $2
         FROM generate_series(1, ${CASES}) AS i`,
      [g.projectId, g.tester.id],
    );
    // Items of the first 2,000 cases, and 1,000 whose case is gone (their snapshot titles); a
    // quarter without an assignee (the array index past the end is NULL), a quarter never executed.
    await t.db.query(
      `INSERT INTO run_items (id, project_id, test_run_id, test_case_id, test_case_title,
                              test_case_key, status, assignee_id, comment, last_executed_at)
       SELECT uuidv7(), $1, $2, tc.id, 'gone ' || lpad(((i * 104729) % ${ROWS})::text, 5, '0'),
              'TC-' || i, (ARRAY['untested', 'passed', 'failure'])[1 + i % 3],
              ($3::uuid[])[1 + i % 4], repeat('a long comment ', 20),
              CASE WHEN i % 4 = 0 THEN NULL ELSE now() - ((i * 5881) % ${ROWS}) * interval '1 minute' END
         FROM generate_series(1, ${ROWS}) AS i
         LEFT JOIN test_cases tc ON tc.project_id = $1 AND tc.key_number = i`,
      [g.projectId, runId, [g.lead.id, g.tester.id, g.viewer.id]],
    );
    await t.db.query('ANALYZE test_cases, run_items');
  });
  afterAll(async () => {
    await t.close();
  });

  /** The sort expressions of the run case list (reference §3.4's orders). */
  const ORDER: Record<string, string> = {
    last_executed_at: "coalesce(ri.last_executed_at, '-infinity'::timestamptz)",
    test_case_title: "lower(coalesce(tc.title, ri.test_case_title, ''))",
    status: 'ri.status',
    assignee_name: "lower(coalesce(au.username, ''))",
  };

  /** The page and total of the plain statement: every matching item joined, counted, sorted whole. */
  async function plainPage(
    sortBy: string,
    order: 'asc' | 'desc',
    page: number,
    where: string,
  ): Promise<{ ids: string[]; total: number }> {
    const dir = order === 'asc' ? 'ASC' : 'DESC';
    const rows = await t.db.query<Array<{ id: string; total: number }>>(
      `SELECT ri.id, count(*) OVER ()::int AS total FROM run_items ri
         JOIN test_runs tr ON tr.id = ri.test_run_id
         LEFT JOIN test_cases tc ON tc.id = ri.test_case_id
         LEFT JOIN users au ON au.id = ri.assignee_id
        WHERE ri.test_run_id = $1 ${where}
        ORDER BY ${ORDER[sortBy]} ${dir}, ri.id ${dir}
        LIMIT ${SIZE} OFFSET ${(page - 1) * SIZE}`,
      [runId],
    );
    return { ids: rows.map((r) => r.id), total: rows[0]?.total ?? 0 };
  }

  /** The page statement the service sent for `url`, the page's ids and the total. */
  async function pageStatement(
    url: string,
  ): Promise<SentStatement & { ids: string[]; total: number }> {
    const { res, ...statement } = await sentWhileGetting(t, api(url), g.viewer.token, (c) =>
      c.sql.includes('ri.comment'),
    );
    expect(res.status).toBe(200);
    const ids = (res.body.items as Array<{ id: string }>).map((i) => i.id);
    return { ...statement, ids, total: res.body.total as number };
  }

  it.each<[string, 'asc' | 'desc', number, string, string]>([
    ['last_executed_at', 'desc', 1, '', ''],
    ['last_executed_at', 'asc', 40, '', ''],
    ['test_case_title', 'asc', 12, '', ''],
    ['status', 'desc', 30, '', ''],
    ['assignee_name', 'desc', 5, '', ''],
    ['last_executed_at', 'desc', 3, '&status=failure', "AND ri.status = 'failure'"],
    [
      'test_case_title',
      'desc',
      2,
      '&search=case%2000',
      "AND coalesce(tc.title, ri.test_case_title) ILIKE '%case 00%'",
    ],
  ])('GET /run-cases sorted by %s %s, page %i%s', async (sortBy, order, page, query, where) => {
    const url =
      `/run-cases?test_run_id=${runId}&sort_by=${sortBy}&sort_order=${order}` +
      `&page=${page}&page_size=${SIZE}${query}`;
    const { ids, total, ...statement } = await pageStatement(url);
    const plain = await plainPage(sortBy, order, page, where);
    expect(ids).toHaveLength(SIZE);
    expect(ids).toEqual(plain.ids);
    expect(total).toBe(plain.total);
    // The page's 50 items carried whole; the plain statement carries every matching item whole
    // through its joins, window and sort. Sequential scans and hash joins off: the walk and the
    // lookups the statement can do, whatever the planner makes of tables this small.
    const settings = ['enable_seqscan = off', 'enable_hashjoin = off'];
    expect(await mostRowsCarrying(t, statement, 'comment', settings)).toBe(SIZE);
  });
});
