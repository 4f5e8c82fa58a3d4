import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `ix_run_items_run_last_executed` (test_run_id, last_executed_at, id), 58 MB of the 0.98 GB
 * bench database (issue #23 item 1). It never gave a run-case list its order: the list sorts by
 * `last_executed_at DESC NULLS LAST` (never executed = oldest), and the index's order read
 * backwards is NULLS FIRST, so PostgreSQL read the whole run's range from it and sorted (EXPLAIN,
 * 10,000-item run: index-only scan of 10,000 entries + top-N sort, 7.7 ms). The offset list now
 * sorts by the keyset's expression `coalesce(last_executed_at, '-infinity')`, the same order, which
 * `ix_run_items_run_last_executed_keyset` (migration CursorIndexes) gives directly: page 1 reads 50
 * entries (0.2 ms). Down recreates the index.
 */
export class DropRunItemsLastExecuted1763700019510 implements MigrationInterface {
  name = 'DropRunItemsLastExecuted1763700019510';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ix_run_items_run_last_executed`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS ix_run_items_run_last_executed ON run_items (test_run_id, last_executed_at, id)`,
    );
  }
}
