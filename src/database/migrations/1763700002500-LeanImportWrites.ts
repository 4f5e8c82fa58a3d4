import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A lower cost per imported testcase (issue #23 item 2): constraints and indexes that every import
 * row paid for and nothing needed.
 *
 * Foreign keys that only restated what the parent already guarantees:
 * - `project_id` of `run_items`, `run_item_rows` and `run_item_history` (each row's parent, the
 *   run / the item, carries the same project and is removed with it: deleting a project still
 *   removes them through projects → test_runs → run_items → rows and history, all ON DELETE
 *   CASCADE). The column stays (the insights and run-item lists filter on it).
 * - `executed_by_id` and `changed_by_id` of `run_item_history`: a history record copies who ran
 *   and who recorded a result when it was written; users are never deleted (they are deactivated),
 *   so ON DELETE SET NULL never fired, and the writer takes both ids from the authenticated user.
 *
 * Indexes that served only those foreign keys' cascades (no query reads them):
 * `ix_run_item_rows_project`, `ix_run_item_history_project`, `ix_run_item_history_executed_by`,
 * `ix_run_item_history_changed_by`.
 *
 * Trigram indexes of `test_cases` that no query can use: the only substring search over cases
 * (`GET /test-cases?search=`) is `title ILIKE s OR key ILIKE s OR automation_id ILIKE s OR EXISTS
 * (… unnest(tags) … ILIKE s)`; one arm of the OR has no index, so PostgreSQL cannot combine the
 * three trigram indexes (a BitmapOr needs every arm indexed) and filters the project's cases
 * instead (EXPLAIN: the same plan with and without them). The run-item search matches
 * `coalesce(tc.title, ri.test_case_title)`, an expression no index on `title` serves. The GIN
 * index of lower-cased tags stays: the `tag` filter (`&&`) uses it.
 */
export class LeanImportWrites1763700002500 implements MigrationInterface {
  name = 'LeanImportWrites1763700002500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_items DROP CONSTRAINT fk_run_items_project`);
    await q.query(`ALTER TABLE run_item_rows DROP CONSTRAINT fk_run_item_rows_project`);
    await q.query(`ALTER TABLE run_item_history DROP CONSTRAINT fk_run_item_history_project`);
    await q.query(`ALTER TABLE run_item_history DROP CONSTRAINT fk_run_item_history_executed_by`);
    await q.query(`ALTER TABLE run_item_history DROP CONSTRAINT fk_run_item_history_changed_by`);
    await q.query(`DROP INDEX ix_run_item_rows_project`);
    await q.query(`DROP INDEX ix_run_item_history_project`);
    await q.query(`DROP INDEX ix_run_item_history_executed_by`);
    await q.query(`DROP INDEX ix_run_item_history_changed_by`);
    await q.query(`DROP INDEX ix_test_cases_title_trgm`);
    await q.query(`DROP INDEX ix_test_cases_key_trgm`);
    await q.query(`DROP INDEX ix_test_cases_automation_id_trgm`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ix_test_cases_automation_id_trgm ON test_cases USING gin (automation_id gin_trgm_ops)`,
    );
    await q.query(`CREATE INDEX ix_test_cases_key_trgm ON test_cases USING gin (key gin_trgm_ops)`);
    await q.query(
      `CREATE INDEX ix_test_cases_title_trgm ON test_cases USING gin (title gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX ix_run_item_history_changed_by ON run_item_history (changed_by_id)`,
    );
    await q.query(
      `CREATE INDEX ix_run_item_history_executed_by ON run_item_history (executed_by_id)`,
    );
    await q.query(`CREATE INDEX ix_run_item_history_project ON run_item_history (project_id)`);
    await q.query(`CREATE INDEX ix_run_item_rows_project ON run_item_rows (project_id)`);
    await q.query(
      `ALTER TABLE run_item_history ADD CONSTRAINT fk_run_item_history_changed_by
         FOREIGN KEY (changed_by_id) REFERENCES users(id) ON DELETE SET NULL`,
    );
    await q.query(
      `ALTER TABLE run_item_history ADD CONSTRAINT fk_run_item_history_executed_by
         FOREIGN KEY (executed_by_id) REFERENCES users(id) ON DELETE SET NULL`,
    );
    await q.query(
      `ALTER TABLE run_item_history ADD CONSTRAINT fk_run_item_history_project
         FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE`,
    );
    await q.query(
      `ALTER TABLE run_item_rows ADD CONSTRAINT fk_run_item_rows_project
         FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE`,
    );
    await q.query(
      `ALTER TABLE run_items ADD CONSTRAINT fk_run_items_project
         FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE`,
    );
  }
}
