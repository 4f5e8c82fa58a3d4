import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A lower cost per imported case, continued (issue #23 item 2; after `LeanImportWritesTwo`): two
 * foreign keys of `test_cases` that every imported case paid for (an after-row trigger event and a
 * lookup each) and that only restate what every writer of the column already guarantees.
 *
 * - `fk_test_cases_suite` (`suite_id` → suites, ON DELETE SET NULL). Every writer of the column
 *   holds the suite it writes until it commits: a case created or edited through the API takes
 *   `FOR KEY SHARE` on its suite first (404 `suite_not_found` when there is none); a JUnit import
 *   reads the project's suites `FOR KEY SHARE` before it plans (so every suite a new case goes into
 *   exists until the import commits) and creates the others in its own transaction; deleting a
 *   suite locks it `FOR UPDATE` (which waits for those key-share locks) and then moves its cases to
 *   the parent suite before deleting it, so the SET NULL never fired; deleting a project removes
 *   its suites and its cases (both ON DELETE CASCADE from projects). About a fifth of the database
 *   time of copying imported cases (bench/README.md, fix 25). `ix_test_cases_suite` stays: the
 *   suite counts and the move of a deleted suite's cases look cases up by suite.
 * - `fk_test_cases_owner` (`owner_id` → users, ON DELETE SET NULL): the owner is the authenticated
 *   creator or a user the service has checked has access to the project (422 `invalid_owner`), and
 *   users are never deleted (they are deactivated), so the SET NULL never fired; the same reasoning
 *   dropped `fk_test_cases_created_by`. `ix_test_cases_owner` stays (the `owner_id` filter).
 *
 * Idempotent both ways (IF EXISTS, and `down` adds a key only when it is missing).
 */
export class LeanImportWritesThree1763700019900 implements MigrationInterface {
  name = 'LeanImportWritesThree1763700019900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_cases DROP CONSTRAINT IF EXISTS fk_test_cases_suite`);
    await q.query(`ALTER TABLE test_cases DROP CONSTRAINT IF EXISTS fk_test_cases_owner`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'fk_test_cases_owner') THEN
          ALTER TABLE test_cases ADD CONSTRAINT fk_test_cases_owner
            FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'fk_test_cases_suite') THEN
          ALTER TABLE test_cases ADD CONSTRAINT fk_test_cases_suite
            FOREIGN KEY (suite_id) REFERENCES suites(id) ON DELETE SET NULL;
        END IF;
      END $$`);
  }
}
