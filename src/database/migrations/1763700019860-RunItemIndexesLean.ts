import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Database size (issue #23 item 1): the indexes of `run_items` (367 MiB of the bench's 924 MiB
 * database before this), each checked against the queries it serves (EXPLAIN on the bench
 * database, the same index with the same conditions after the change).
 *
 * - `ix_run_items_test_case` (test_case_id, created_at) → (test_case_id) WHERE test_case_id IS NOT
 *   NULL. Its lookups are equalities on the case (a case's history, the latest result per case of a
 *   product summary, the ON DELETE SET NULL of `fk_run_items_test_case` and the case-copies trigger):
 *   none reads or orders by the item's `created_at`, and each implies NOT NULL, so items of deleted
 *   cases need no entry. Without the timestamp every key repeats once per run the case was in, and
 *   B-tree deduplication stores each case once with a list of row pointers: 39.9 → 7.4 MiB on
 *   1,000,000 items over 20,000 cases.
 * - `fillfactor = 100` on the indexes led by an always-increasing key (uuidv7 ids: `pk_run_items`;
 *   runs' ids: `uq_run_items_run_case`, `ix_run_items_run_status_id`,
 *   `ix_run_items_run_last_executed_keyset`): new items belong to the newest runs, so their
 *   entries go to the right end, where B-tree leaves the left page of a split as full as the
 *   fillfactor says; the default 90 left a tenth of every such page empty for inserts that come
 *   rarely (a case added to an older run still in progress). At bench scale the two rebuilt after
 *   the load went 58.0 + 57.8 → 52.4 + 52.3 MiB; the setting applies to pages written from now
 *   on, and `REINDEX` repacks an existing database's indexes.
 *
 * Kept, each the only index for its queries: `pk_run_items`, `uq_run_items_run_case` (a run's item
 * per case; the writer's probe), `ix_run_items_run_status_id` and
 * `ix_run_items_run_last_executed_keyset` (a run's case list filtered by status and sorted by last
 * execution, keyset pages), `ix_run_items_project_case_run` with INCLUDE (status, id) (the flaky
 * ranking reads both from the index without visiting the table), `ix_run_items_assignee` (the
 * assignee filter and the assignee key's ON DELETE SET NULL; a single column, already deduplicated).
 */
export class RunItemIndexesLean1763700019860 implements MigrationInterface {
  name = 'RunItemIndexesLean1763700019860';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ix_run_items_test_case`);
    await q.query(
      `CREATE INDEX ix_run_items_test_case ON run_items (test_case_id) WHERE test_case_id IS NOT NULL`,
    );
    for (const index of APPEND_INDEXES) {
      await q.query(`ALTER INDEX ${index} SET (fillfactor = 100)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of APPEND_INDEXES) {
      await q.query(`ALTER INDEX ${index} RESET (fillfactor)`);
    }
    await q.query(`DROP INDEX IF EXISTS ix_run_items_test_case`);
    await q.query(`CREATE INDEX ix_run_items_test_case ON run_items (test_case_id, created_at)`);
  }
}

/** The indexes of `run_items` whose keys grow with time (uuidv7 ids of the item or of its run). */
const APPEND_INDEXES = [
  'pk_run_items',
  'uq_run_items_run_case',
  'ix_run_items_run_status_id',
  'ix_run_items_run_last_executed_keyset',
];
