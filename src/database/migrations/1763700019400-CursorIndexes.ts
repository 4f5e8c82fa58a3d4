import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for keyset (`cursor`) paging (issue #19 §3): a keyset page is a range walk of an index on
 * (equality filters, sort key, id), so it costs the same wherever it starts. The orders the earlier
 * migrations did not cover:
 * - runs by status: (project_id, status, id);
 * - test cases by status and by priority label (`coalesce(priority, 'medium')`);
 * - a run's items by last execution (never executed = oldest: `coalesce(…, '-infinity')`, the
 *   default order) and by status, (test_run_id, status, id) replacing (test_run_id, status), which
 *   it serves as well.
 */
export class CursorIndexes1763700019400 implements MigrationInterface {
  name = 'CursorIndexes1763700019400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ix_test_runs_project_status_id ON test_runs (project_id, status, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_project_status_id ON test_cases (project_id, status, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_project_priority_label ON test_cases (project_id, coalesce(priority, 'medium'), id)`,
    );
    await q.query(
      `CREATE INDEX ix_run_items_run_last_executed_keyset ON run_items (test_run_id, coalesce(last_executed_at, '-infinity'::timestamptz), id)`,
    );
    await q.query(`CREATE INDEX ix_run_items_run_status_id ON run_items (test_run_id, status, id)`);
    await q.query(`DROP INDEX ix_run_items_run_status`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_run_items_run_status ON run_items (test_run_id, status)`);
    await q.query(`DROP INDEX ix_run_items_run_status_id`);
    await q.query(`DROP INDEX ix_run_items_run_last_executed_keyset`);
    await q.query(`DROP INDEX ix_test_cases_project_priority_label`);
    await q.query(`DROP INDEX ix_test_cases_project_status_id`);
    await q.query(`DROP INDEX ix_test_runs_project_status_id`);
  }
}
