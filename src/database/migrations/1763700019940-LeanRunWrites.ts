import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A lower cost per created run (issue #23 item 4, `create-run`; after `LeanImportWritesThree`):
 * two foreign keys of `test_runs` that every new run paid for (an after-row trigger event and a
 * lookup of `users` each) and that only restate what every writer of the column guarantees.
 *
 * - `fk_test_runs_created_by` (`created_by` → users): always the authenticated caller, whose user
 *   row the request has just read (an inactive one is refused with 401 before any write).
 * - `fk_test_runs_assignee` (`assignee_id` → users, ON DELETE SET NULL): every writer checks the
 *   assignee first (`TestRunsService.checkAssignee`, 422 `invalid_assignee` for a user without
 *   access to the project); users are never deleted (they are deactivated), so the SET NULL never
 *   fired. The same reasoning dropped `fk_test_cases_created_by` and `fk_test_cases_owner`.
 *
 * Their indexes go with them: `ix_test_runs_created_by` and `ix_test_runs_assignee` served only the
 * keys' ON DELETE lookups (no query reads runs by creator or assignee alone: the `created_by` filter
 * of the run list uses `ix_test_runs_project_created_by`, which stays, and no run filter reads the
 * assignee); two index insertions less per new run.
 * Idempotent both ways (IF EXISTS, and `down` adds a key only when it is missing).
 */
export class LeanRunWrites1763700019940 implements MigrationInterface {
  name = 'LeanRunWrites1763700019940';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_runs DROP CONSTRAINT IF EXISTS fk_test_runs_created_by`);
    await q.query(`ALTER TABLE test_runs DROP CONSTRAINT IF EXISTS fk_test_runs_assignee`);
    await q.query(`DROP INDEX IF EXISTS ix_test_runs_created_by`);
    await q.query(`DROP INDEX IF EXISTS ix_test_runs_assignee`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS ix_test_runs_assignee ON test_runs (assignee_id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS ix_test_runs_created_by ON test_runs (created_by)`);
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'fk_test_runs_assignee') THEN
          ALTER TABLE test_runs ADD CONSTRAINT fk_test_runs_assignee
            FOREIGN KEY (assignee_id) REFERENCES users(id) ON DELETE SET NULL;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'fk_test_runs_created_by') THEN
          ALTER TABLE test_runs ADD CONSTRAINT fk_test_runs_created_by
            FOREIGN KEY (created_by) REFERENCES users(id);
        END IF;
      END $$`);
  }
}
