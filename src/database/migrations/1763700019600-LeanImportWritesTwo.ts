import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A lower cost per imported testcase, continued (issue #23 item 2; after `LeanImportWrites`):
 * constraints and index entries that every imported case, item or row paid for and that no query
 * and no cascade needs. Each drop or narrowing below keeps every query's plan (EXPLAIN on the bench
 * database: the same index with the same conditions) and every cascade that can fire.
 *
 * Foreign keys to `users` that only restate what the service checks, with their indexes (which
 * served only those keys' ON DELETE actions; no query filters on the column):
 * - `test_cases.created_by` (`fk_test_cases_created_by`, `ix_test_cases_created_by`): always the
 *   authenticated creator.
 * - `run_item_rows.executed_by_id` (`fk_run_item_rows_executed_by`, `ix_run_item_rows_executed_by`):
 *   the authenticated user, or an executor the service has checked has access to the project
 *   (422 `invalid_user`). Users are never deleted (they are deactivated), so ON DELETE SET NULL
 *   never fired; the same reasoning dropped the history records' user keys.
 * `owner_id` and `assignee_id` keep their keys: clients set them and the key is their check.
 *
 * Indexes that a longer index with the same leading columns serves as well:
 * - `ix_test_cases_project_status` (project_id, status): `ix_test_cases_project_status_id`
 *   (project_id, status, id).
 * - `ix_run_items_project` (project_id): `ix_run_items_project_case_run` (project_id, test_case_id,
 *   test_run_id DESC).
 *
 * Indexes of nullable references narrowed to the rows that have one (`WHERE … IS NOT NULL`):
 * every lookup by those columns is an equality (filters, and the ON DELETE SET NULL of the
 * referenced row), which implies NOT NULL, so the partial index serves it; imported cases have no
 * primary product and imported rows no parent row, so they no longer add an entry each:
 * `ix_test_cases_primary_product`, `ix_run_item_rows_parent`.
 *
 * Idempotent both ways (IF EXISTS / IF NOT EXISTS): another change may drop the same index.
 */
export class LeanImportWritesTwo1763700019600 implements MigrationInterface {
  name = 'LeanImportWritesTwo1763700019600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_cases DROP CONSTRAINT IF EXISTS fk_test_cases_created_by`);
    await q.query(
      `ALTER TABLE run_item_rows DROP CONSTRAINT IF EXISTS fk_run_item_rows_executed_by`,
    );
    await q.query(`DROP INDEX IF EXISTS ix_test_cases_created_by`);
    await q.query(`DROP INDEX IF EXISTS ix_run_item_rows_executed_by`);
    await q.query(`DROP INDEX IF EXISTS ix_test_cases_project_status`);
    await q.query(`DROP INDEX IF EXISTS ix_run_items_project`);
    await q.query(`DROP INDEX IF EXISTS ix_test_cases_primary_product`);
    await q.query(
      `CREATE INDEX ix_test_cases_primary_product ON test_cases (primary_product_id)
        WHERE primary_product_id IS NOT NULL`,
    );
    await q.query(`DROP INDEX IF EXISTS ix_run_item_rows_parent`);
    await q.query(
      `CREATE INDEX ix_run_item_rows_parent ON run_item_rows (parent_row_id)
        WHERE parent_row_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ix_run_item_rows_parent`);
    await q.query(`CREATE INDEX ix_run_item_rows_parent ON run_item_rows (parent_row_id)`);
    await q.query(`DROP INDEX IF EXISTS ix_test_cases_primary_product`);
    await q.query(`CREATE INDEX ix_test_cases_primary_product ON test_cases (primary_product_id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS ix_run_items_project ON run_items (project_id)`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS ix_test_cases_project_status ON test_cases (project_id, status)`,
    );
    await q.query(
      `CREATE INDEX IF NOT EXISTS ix_run_item_rows_executed_by ON run_item_rows (executed_by_id)`,
    );
    await q.query(`CREATE INDEX IF NOT EXISTS ix_test_cases_created_by ON test_cases (created_by)`);
    await q.query(
      `ALTER TABLE run_item_rows ADD CONSTRAINT fk_run_item_rows_executed_by
        FOREIGN KEY (executed_by_id) REFERENCES users(id) ON DELETE SET NULL`,
    );
    await q.query(
      `ALTER TABLE test_cases ADD CONSTRAINT fk_test_cases_created_by
        FOREIGN KEY (created_by) REFERENCES users(id)`,
    );
  }
}
