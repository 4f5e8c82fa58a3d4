import { SentStatement, statementsDuring } from '../support/query-count';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const api = (path: string) => `/api/v1${path}`;

/**
 * A deep page of the case list (OFFSET 500 on), and every page sorted by owner or suite name, is a
 * deferred join (`TestCasesRepository.findPage`): the page's ids are chosen from the sort keys
 * alone, and only the page's cases are read whole and joined. Checked on the statement the service
 * itself sends, under EXPLAIN ANALYZE: no step of its plan handles a case's whole row (its
 * `description`) more times than the page has cases; and each page equals the page of the plain
 * statement, which sorts the whole rows.
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

  /** The page statement the service sent for `url`, with its values, and the page it answered. */
  async function pageStatement(url: string): Promise<SentStatement & { ids: string[] }> {
    const { result: res, sent } = await statementsDuring(async () =>
      t.req('get', api(url), g.viewer.token),
    );
    expect(res.status).toBe(200);
    const page = sent.find((c) => c.sql.includes('ORDER BY') && c.sql.includes('tc.description'));
    expect(page).toBeDefined();
    const items = res.body.items as Array<{ id: string }>;
    return { ...(page as SentStatement), ids: items.map((i) => i.id) };
  }

  interface PlanNode {
    'Node Type': string;
    Output?: string[];
    'Actual Rows'?: number;
    'Actual Loops'?: number;
    Plans?: PlanNode[];
  }

  /**
   * The most rows any join, sort or limit of the statement's plan carried with a case's whole row
   * in its output (EXPLAIN ANALYZE, VERBOSE), with sequential scans and hash joins off: the walk and
   * the lookups the statement can do, whatever the planner makes of a table this small. Scans are
   * left out: a scan reads each row it visits whole whatever it passes on (PostgreSQL may then pass
   * the whole row, for the step above to narrow), where joins and sorts cost by what they carry.
   */
  async function wholeRowsHandled(sql: string, values: unknown[]): Promise<number> {
    const rows = await t.inRolledBackTransaction(async (qr) => {
      await qr.query('SET LOCAL enable_seqscan = off');
      await qr.query('SET LOCAL enable_hashjoin = off');
      return (await qr.query(`EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) ${sql}`, values)) as Array<{
        'QUERY PLAN': Array<{ Plan: PlanNode }>;
      }>;
    });
    let most = 0;
    const walk = (n: PlanNode) => {
      const carries = !n['Node Type'].endsWith('Scan') && !n['Node Type'].startsWith('Bitmap');
      if (carries && n.Output?.some((column) => column.includes('description'))) {
        most = Math.max(most, (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1));
      }
      n.Plans?.forEach(walk);
    };
    rows[0]?.['QUERY PLAN'].forEach((p) => walk(p.Plan));
    return most;
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
    const { sql, values, ids } = await pageStatement(url);
    expect(ids).toHaveLength(SIZE);
    expect(ids).toEqual(await plainPage(sortBy, order, page));
    // The page's 50 cases read whole; the plain statement handles every case it skips whole too
    // (600 to 2,000 here).
    expect(await wholeRowsHandled(sql, values)).toBe(SIZE);
  });

  it('a shallow page sorted by a column of the case is the plain statement, with the same page', async () => {
    const url = `/test-cases?project_id=${g.projectId}&sort_by=title&page=2&page_size=${SIZE}`;
    const { sql, ids } = await pageStatement(url);
    expect(sql).not.toContain('WITH page AS');
    expect(ids).toEqual(await plainPage('title', 'desc', 2));
  });
});
