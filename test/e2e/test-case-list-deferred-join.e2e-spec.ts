import { mostRowsCarrying, sentWhileGetting } from '../support/plan-rows';
import type { SentStatement } from '../support/query-count';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const api = (path: string) => `/api/v1${path}`;

/**
 * A deep page of the case list (OFFSET 500 on), and every page sorted by owner or suite name, is a
 * deferred join (`TestCasesRepository.findPage`): the page's ids are chosen from the sort keys
 * alone, and only the page's cases are read whole and joined. Checked on the statement the service
 * itself sends, under EXPLAIN ANALYZE: no join, sort or limit of its plan carries a case's whole
 * row (its `description`) for more cases than the page has; and each page equals the page of the
 * plain statement, which sorts the whole rows.
 */
describe('case list pages: the whole rows of the page only (deferred join)', () => {
  let t: TestApp;
  let g: RoleFixture;
  const ROWS = 3000;
  const SIZE = 50;

  beforeAll(async () => {
    t = await createTestApp();
    g = await t.roleFixture();
    const suites: string[] = [];
    for (const name of ['Alpha', 'beta', 'Gamma', 'delta', 'Epsilon']) {
      const res = await t
        .req('post', api('/suites'), g.lead.token)
        .send({ project_id: g.projectId, name });
      expect(res.status).toBe(201);
      suites.push(res.body.id as string);
    }
    const owners = [g.lead.id, g.tester.id, g.viewer.id];
    // Titles in an order unrelated to creation; a sixth of the cases without a suite, a quarter
    // without an owner (the array index past the end is NULL), a third archived.
    await t.db.query(
      `INSERT INTO test_cases (id, project_id, key, key_number, title, description, priority, status,
                               suite_id, owner_id, created_by, created_at, updated_at)
       SELECT uuidv7(), $1, 'TC-' || i, i, 'case ' || lpad(((i * 7919) % ${ROWS})::text, 5, '0'),
              repeat('a long description ', 20),
              (ARRAY['low', 'medium', 'high', 'critical', NULL])[1 + i % 5],
              (ARRAY['active', 'draft', 'archived'])[1 + i % 3],
              ($2::uuid[])[1 + i % 6], ($3::uuid[])[1 + i % 4], $4,
              now() - ((i * 5881) % ${ROWS}) * interval '1 second',
              now() - (i % 500) * interval '1 minute'
         FROM generate_series(1, ${ROWS}) AS i`,
      [g.projectId, suites, owners, g.tester.id],
    );
    await t.db.query('ANALYZE test_cases');
  });
  afterAll(async () => {
    await t.close();
  });

  /** The sort expressions of the plain statement (reference §6.7's orders). */
  const ORDER: Record<string, string> = {
    created_at: 'tc.created_at',
    title: 'lower(tc.title)',
    priority: "coalesce(tc.priority, 'medium')",
    owner_name: "lower(coalesce(u.username, ''))",
    suite_name: "lower(coalesce(s.name, ''))",
  };

  /** The page of the plain statement: every matching case joined and sorted whole. */
  async function plainPage(sortBy: string, order: 'asc' | 'desc', page: number): Promise<string[]> {
    const dir = order === 'asc' ? 'ASC' : 'DESC';
    const rows = await t.db.query<Array<{ id: string }>>(
      `SELECT tc.id FROM test_cases tc
         LEFT JOIN suites s ON s.id = tc.suite_id
         LEFT JOIN users u ON u.id = tc.owner_id
        WHERE tc.project_id = $1 AND tc.status <> 'archived'
        ORDER BY ${ORDER[sortBy]} ${dir}, tc.id ${dir}
        LIMIT ${SIZE} OFFSET ${(page - 1) * SIZE}`,
      [g.projectId],
    );
    return rows.map((r) => r.id);
  }

  /** The page statement the service sent for `url`, and the page's ids. */
  async function pageStatement(url: string): Promise<SentStatement & { ids: string[] }> {
    const { res, ...statement } = await sentWhileGetting(t, api(url), g.viewer.token, (c) =>
      c.sql.includes('tc.description'),
    );
    expect(res.status).toBe(200);
    return { ...statement, ids: (res.body.items as Array<{ id: string }>).map((i) => i.id) };
  }

  it.each<[string, 'asc' | 'desc', number]>([
    ['created_at', 'desc', 12],
    ['created_at', 'asc', 30],
    ['title', 'asc', 12],
    ['priority', 'desc', 20],
    ['owner_name', 'asc', 1],
    ['owner_name', 'desc', 25],
    ['suite_name', 'asc', 1],
    ['suite_name', 'desc', 12],
  ])('GET /test-cases sorted by %s %s, page %i', async (sortBy, order, page) => {
    const url =
      `/test-cases?project_id=${g.projectId}&sort_by=${sortBy}&sort_order=${order}` +
      `&page=${page}&page_size=${SIZE}`;
    const { ids, ...statement } = await pageStatement(url);
    expect(ids).toHaveLength(SIZE);
    expect(ids).toEqual(await plainPage(sortBy, order, page));
    // The page's 50 cases carried whole; the plain statement carries every case it skips whole
    // too (600 to 2,000 here). Sequential scans and hash joins off: the walk and the lookups the
    // statement can do, whatever the planner makes of a table this small.
    const settings = ['enable_seqscan = off', 'enable_hashjoin = off'];
    expect(await mostRowsCarrying(t, statement, 'description', settings)).toBe(SIZE);
  });

  it('a shallow page sorted by a column of the case is the plain statement, with the same page', async () => {
    const url = `/test-cases?project_id=${g.projectId}&sort_by=title&page=2&page_size=${SIZE}`;
    const { sql, ids } = await pageStatement(url);
    expect(sql).not.toContain('WITH page AS');
    expect(ids).toEqual(await plainPage('title', 'desc', 2));
  });
});
