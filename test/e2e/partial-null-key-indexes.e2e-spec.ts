import { PartialNullKeyIndexes1763700019980 } from '../../src/database/migrations/1763700019980-PartialNullKeyIndexes';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Migration `PartialNullKeyIndexes`: `ix_test_cases_owner` and `ix_run_items_assignee` leave out
 * NULL keys, which only holds up if the statements they serve still use them. Checked on the
 * statements' own shapes, as generic plans (what a prepared statement runs after five
 * executions, when the planner cannot see the value), with sequential scans off so that the plan
 * names the index exactly when it is usable.
 */
describe('partial indexes of owner and assignee (migration PartialNullKeyIndexes)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  /** The index definitions, by name. */
  async function definitions(
    run: (sql: string) => Promise<unknown>,
  ): Promise<Record<string, string>> {
    const rows = (await run(
      `SELECT indexname, indexdef FROM pg_indexes
        WHERE indexname IN ('ix_test_cases_owner', 'ix_run_items_assignee')`,
    )) as Array<{ indexname: string; indexdef: string }>;
    return Object.fromEntries(rows.map((r) => [r.indexname, r.indexdef]));
  }

  it('leaves NULL keys out', async () => {
    expect(await definitions((sql) => t.db.query(sql))).toEqual({
      ix_test_cases_owner: expect.stringMatching(/\(owner_id\) WHERE \(owner_id IS NOT NULL\)$/),
      ix_run_items_assignee: expect.stringMatching(
        /\(assignee_id\) WHERE \(assignee_id IS NOT NULL\)$/,
      ),
    });
  });

  it.each([
    // The case list's owner filter (TestCasesRepository), a list of owners.
    [
      'ix_test_cases_owner',
      'SELECT id FROM test_cases tc WHERE tc.owner_id = ANY($1::uuid[])',
      ['{00000000-0000-7000-8000-000000000001}'],
    ],
    // The run items' assignee filter (RunItemsRepository), one assignee.
    [
      'ix_run_items_assignee',
      'SELECT id FROM run_items ri WHERE ri.assignee_id = $1',
      ['00000000-0000-7000-8000-000000000001'],
    ],
    // The statement the assignee key's ON DELETE SET NULL runs (PostgreSQL's RI trigger).
    [
      'ix_run_items_assignee',
      'UPDATE ONLY run_items SET assignee_id = NULL WHERE $1::uuid OPERATOR(pg_catalog.=) assignee_id',
      ['00000000-0000-7000-8000-000000000001'],
    ],
  ])('%s serves %s in a generic plan', async (index, sql, params) => {
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      await qr.query(`SET LOCAL enable_seqscan = off`);
      await qr.query(`PREPARE probe AS ${sql}`);
      const plan = (await qr.query(
        `EXPLAIN EXECUTE probe(${params.map((p) => `'${p}'`).join(', ')})`,
      )) as Array<{ 'QUERY PLAN': string }>;
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain(index);
    } finally {
      await qr.rollbackTransaction();
      await qr.query('DEALLOCATE ALL');
      await qr.release();
    }
  });

  it('is reversible: down rebuilds both whole, up makes them partial again (rolled back after)', async () => {
    const migration = new PartialNullKeyIndexes1763700019980();
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await migration.down(qr);
      const whole = await definitions((sql) => qr.query(sql));
      expect(whole.ix_test_cases_owner).toMatch(/\(owner_id\)$/);
      expect(whole.ix_run_items_assignee).toMatch(/\(assignee_id\)$/);
      await migration.up(qr);
      const partial = await definitions((sql) => qr.query(sql));
      expect(partial.ix_test_cases_owner).toMatch(/WHERE \(owner_id IS NOT NULL\)$/);
      expect(partial.ix_run_items_assignee).toMatch(/WHERE \(assignee_id IS NOT NULL\)$/);
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
  });
});
