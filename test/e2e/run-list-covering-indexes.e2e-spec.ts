import {
  RUN_LIST_INDEXES,
  RunListCoveringIndexes1763700020000,
} from '../../src/database/migrations/1763700020000-RunListCoveringIndexes';
import { explainedSteps, sentWhileGetting } from '../support/plan-rows';
import type { SentStatement } from '../support/query-count';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const api = (path: string) => `/api/v1${path}`;

/**
 * Migration `RunListCoveringIndexes`: the run list's sort indexes carry `status` (and the column
 * their expression reads), so that a deep page (`page`/`page_size`, an OFFSET walk) filters the
 * runs it skips inside the index instead of reading each from the table. Checked on the page
 * statement the service itself sends, under EXPLAIN ANALYZE after a vacuum: an index-only scan of
 * the sort's index that fetched nothing from the table, and the same page as the rows sorted here.
 */
describe('run list pages walk their sort index alone (migration RunListCoveringIndexes)', () => {
  let t: TestApp;
  let g: RoleFixture;
  const ROWS = 3000;
  const STATUSES = ['not_started', 'in_progress', 'completed', 'archived'] as const;

  beforeAll(async () => {
    t = await createTestApp();
    g = await t.roleFixture();
    // Names, builds and environment names that sort alike in any collation (lower-case ASCII,
    // zero-padded), in an order unrelated to creation; a quarter of each status.
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      // The test cluster commits asynchronously, and a vacuum marks no page all-visible while the
      // commit of a row on it is not yet flushed: this commit is flushed before it returns.
      await qr.query('SET LOCAL synchronous_commit = on');
      await qr.query(
        `INSERT INTO test_runs (id, project_id, name, created_by, environment_snapshot, build,
                                environment_name, status, created_at)
         SELECT uuidv7(), $1, 'run ' || lpad(((i * 7919) % ${ROWS})::text, 5, '0'), $2, '{}',
                'b' || lpad(((i * 104729) % 211)::text, 4, '0'),
                'env ' || lpad(((i * 31) % 17)::text, 3, '0'),
                (ARRAY['not_started', 'in_progress', 'completed', 'archived'])[1 + i % 4],
                now() - ((i * 5881) % ${ROWS}) * interval '1 second'
           FROM generate_series(1, ${ROWS}) AS i`,
        [g.projectId, g.tester.id],
      );
      await qr.commitTransaction();
    } finally {
      await qr.release();
    }
    // Marks every page all-visible, as autovacuum does for runs no longer written to.
    await t.db.query('VACUUM (ANALYZE) test_runs');
    const [pages] = await t.db.query<Array<{ visible: number; all: number }>>(
      `SELECT relallvisible AS visible, relpages AS all FROM pg_class WHERE relname = 'test_runs'`,
    );
    expect(pages?.visible).toBe(pages?.all);
  });
  afterAll(async () => {
    await t.close();
  });

  interface Row {
    id: string;
    name: string;
    build: string;
    environment_name: string;
    status: string;
    created_at: string;
  }

  /** The page a sort asks for, from every run of the project sorted here. */
  async function expectedPage(
    sortBy: keyof Row,
    order: 'asc' | 'desc',
    statuses: readonly string[],
    page: number,
    size: number,
  ): Promise<string[]> {
    const rows = await t.db.query<Row[]>(
      `SELECT id, name, build, environment_name, status,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_at
         FROM test_runs WHERE project_id = $1`,
      [g.projectId],
    );
    const sign = order === 'asc' ? 1 : -1;
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    return rows
      .filter((r) => statuses.includes(r.status))
      .sort((a, b) => sign * (cmp(a[sortBy], b[sortBy]) || cmp(a.id, b.id)))
      .slice((page - 1) * size, page * size)
      .map((r) => r.id);
  }

  /** The page statement the service sent for `url`, and the page's ids. */
  async function pageStatement(url: string): Promise<SentStatement & { ids: string[] }> {
    const { res, ...statement } = await sentWhileGetting(t, api(url), g.viewer.token, (c) =>
      c.sql.includes('WITH page AS'),
    );
    expect(res.status).toBe(200);
    return { ...statement, ids: (res.body.items as Array<{ id: string }>).map((i) => i.id) };
  }

  const live = STATUSES.filter((s) => s !== 'archived');
  it.each<[string, string, keyof Row, 'asc' | 'desc', readonly string[]]>([
    ['', 'ix_test_runs_project_created', 'created_at', 'desc', live],
    [
      '&sort_order=asc&status=completed',
      'ix_test_runs_project_created',
      'created_at',
      'asc',
      ['completed'],
    ],
    [
      '&sort_by=name&sort_order=asc&status=completed&status=in_progress',
      'ix_test_runs_project_name',
      'name',
      'asc',
      ['completed', 'in_progress'],
    ],
    ['&sort_by=name&sort_order=desc', 'ix_test_runs_project_name', 'name', 'desc', live],
    ['&sort_by=build&sort_order=asc', 'ix_test_runs_project_build', 'build', 'asc', live],
    [
      '&sort_by=environment&sort_order=desc&status=archived',
      'ix_test_runs_project_environment_name',
      'environment_name',
      'desc',
      ['archived'],
    ],
  ])('GET /test-runs?page=12%s: %s, index only', async (query, index, key, order, statuses) => {
    const url = `/test-runs?project_id=${g.projectId}&fields=id&page=12&page_size=50${query}`;
    const { ids, ...statement } = await pageStatement(url);
    expect(ids).toEqual(await expectedPage(key, order, statuses, 12, 50));
    expect(ids).toHaveLength(50);
    // Sequential scans and sorts off: the walk the statement can do, whatever the planner makes
    // of a table this small.
    const steps = await explainedSteps(t, statement, ['enable_seqscan = off', 'enable_sort = off']);
    const walk = steps.find((n) => n['Index Name'] === index);
    // 600 runs skipped and 50 read (after the skipped ones the filter dropped), none of them
    // fetched from the table.
    expect(walk).toMatchObject({ 'Node Type': 'Index Only Scan', 'Heap Fetches': 0 });
    expect(walk?.['Actual Rows']).toBe(600);
  });

  it('takes the longest names, builds and environment names the API accepts', async () => {
    // 255 characters of four UTF-8 bytes each: the key and the included column, 2 KB an entry.
    const long = (c: string) => c.repeat(255);
    const env = await t
      .req('post', api('/environments'), g.lead.token)
      .send({ project_id: g.projectId, name: long('🦊') });
    expect(env.status).toBe(201);
    const run = await t.req('post', api('/test-runs'), g.tester.token).send({
      project_id: g.projectId,
      name: long('🐢'),
      build: long('🐙'),
      environment_id: env.body.id,
    });
    expect(run.status).toBe(201);
    const stored = await t.db.query<Array<{ n: number; b: number; e: number }>>(
      `SELECT octet_length(name) AS n, octet_length(build) AS b, octet_length(environment_name) AS e
         FROM test_runs WHERE id = $1`,
      [run.body.id],
    );
    expect(stored).toEqual([{ n: 1020, b: 1020, e: 1020 }]);
    for (const sort of ['name', 'build', 'environment']) {
      const res = await t.req(
        'get',
        api(
          `/test-runs?project_id=${g.projectId}&fields=id&sort_by=${sort}&sort_order=desc&page_size=1`,
        ),
        g.viewer.token,
      );
      expect(res.status).toBe(200);
      // Every emoji sorts after ASCII.
      expect(res.body.items).toEqual([{ id: run.body.id }]);
    }
  });

  it('is reversible: down rebuilds the four without included columns, up adds them again (rolled back after)', async () => {
    const names = RUN_LIST_INDEXES.map((i) => i.name);
    const definitions = async (run: (sql: string) => Promise<unknown>) => {
      const rows = (await run(
        `SELECT indexname, indexdef FROM pg_indexes
          WHERE indexname IN (${names.map((n) => `'${n}'`).join(', ')}) ORDER BY indexname`,
      )) as Array<{ indexname: string; indexdef: string }>;
      return Object.fromEntries(rows.map((r) => [r.indexname, r.indexdef]));
    };
    const covering = await definitions((sql) => t.db.query(sql));
    expect(Object.keys(covering)).toHaveLength(4);
    for (const i of RUN_LIST_INDEXES) {
      expect(covering[i.name]).toMatch(/ INCLUDE \(.*\bstatus\)$/);
    }
    const migration = new RunListCoveringIndexes1763700020000();
    await t.inRolledBackTransaction(async (qr) => {
      await migration.down(qr);
      const plain = await definitions((sql) => qr.query(sql));
      expect(Object.keys(plain)).toHaveLength(4);
      for (const def of Object.values(plain)) expect(def).not.toContain('INCLUDE');
      await migration.up(qr);
      expect(await definitions((sql) => qr.query(sql))).toEqual(covering);
    });
  });
});
