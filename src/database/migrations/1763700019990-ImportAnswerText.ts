import { MigrationInterface, QueryRunner } from 'typeorm';

/** The answer's per-case lists: kept in `answer` only, not in `summary`. */
export const IMPORT_ANSWER_LISTS = [
  'created_cases',
  'unmatched_cases',
  'ambiguous_cases',
  'error_cases',
  'ignored_cases',
  'flaky_cases',
  'warnings',
] as const;

/**
 * An import's answer stored as the text it was sent as (`answer json`), its counters apart
 * (`summary jsonb`, without the per-case lists) — issue #23 item 2. The answer of a
 * 100,000-testcase import is about 24 MB; as `jsonb` the database converted it to its binary form
 * on every insert (about 0.3 s of the import's one transaction, against 0.14 s as `json`, which
 * keeps the text as it is, checked as JSON), `GET /imports/{id}` converted it back and parsed it
 * again in the service, and every listed record's counters read through the whole value. Now the
 * list reads `summary` (a few hundred bytes) and `GET /imports/{id}` sends `answer`'s text as it is.
 * A record has an answer exactly when it succeeded.
 *
 * `up` moves each answer whole into `answer` (as `jsonb` prints it) and keeps its counters in
 * `summary`; `down` puts the whole answer back into `summary`: nothing is lost either way.
 */
export class ImportAnswerText1763700019990 implements MigrationInterface {
  name = 'ImportAnswerText1763700019990';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE junit_imports ADD COLUMN answer json`);
    await q.query(
      `UPDATE junit_imports SET answer = summary::json, summary = summary - $1::text[]
        WHERE status = 'succeeded'`,
      [IMPORT_ANSWER_LISTS],
    );
    await q.query(
      `ALTER TABLE junit_imports ADD CONSTRAINT ck_junit_imports_answer
         CHECK ((answer IS NOT NULL) = (status = 'succeeded'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE junit_imports SET summary = answer::jsonb WHERE answer IS NOT NULL`);
    await q.query(`ALTER TABLE junit_imports DROP COLUMN answer`);
  }
}
