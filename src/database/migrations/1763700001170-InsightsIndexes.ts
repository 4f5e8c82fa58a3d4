import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes of the insights reads (issue #17 §3, §4):
 *
 * - `ix_run_items_project_case_run`: a project's run items by case, newest run first (run ids are
 *   time-ordered uuidv7), with the status and item id in the index: the flaky list reads the
 *   project's items once in this order (an index-only scan, no sort) and folds each case's results
 *   into its window without a window function.
 * - `ix_run_item_rows_flaky`: the rows an import marked flaky (a passed row whose comment starts
 *   with the import's `Flaky: passed after …` header), by project: a handful of rows, read once per
 *   flaky list.
 */
export class InsightsIndexes1763700001170 implements MigrationInterface {
  name = 'InsightsIndexes1763700001170';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ix_run_items_project_case_run ON run_items (project_id, test_case_id, test_run_id DESC) INCLUDE (status, id)`,
    );
    await q.query(
      `CREATE INDEX ix_run_item_rows_flaky ON run_item_rows (project_id, run_item_id)
        WHERE status = 'passed' AND comment LIKE 'Flaky: passed after %'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_run_item_rows_flaky`);
    await q.query(`DROP INDEX ix_run_items_project_case_run`);
  }
}
