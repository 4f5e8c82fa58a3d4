import { MigrationInterface, QueryRunner } from 'typeorm';
import { TRANSLATE_TITLE_PROBE_SQL } from './1763700019930-TestCaseTitleProbe';

/**
 * The probe with a regular expression instead of two `translate` calls: the ASCII check `~
 * '^[\x01-\x7f]*$'`, then ASCII lower case (`lower` under the "C" collation, whatever the
 * database's) and one `regexp_replace` dropping every character but the kept letters and digits.
 */
export const REGEXP_TITLE_PROBE_SQL = `CASE WHEN title ~ '^[\\x01-\\x7f]*$'
      THEN regexp_replace(lower(title COLLATE "C"), '[^abcdfghijklmnopqruvwxyz0-9]+', '', 'g')
      ELSE '' END`;

const probeFunction = (body: string): string => `
  CREATE OR REPLACE FUNCTION test_case_title_probe(title text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ${body} $$`;

/**
 * `test_case_title_probe(title)` (the expression of `ix_test_cases_title_probe`, evaluated for
 * every case written, and of the import's read by key) without `translate` (issue #23 item 2):
 * `translate` looks each character of the title up in its 127-character lists, about 33 µs a
 * title on the embedded PostgreSQL 18 (4.0 s for 120,000 titles), against 2.4 µs (0.29 s) for
 * this body; the bench's 100,000-testcase import, which creates 90,000 cases, took 1.6 s less of
 * the database's CPU (bench/README.md, fix 49).
 *
 * The answer is the same for every title (for an ASCII one, a character is kept, lower-cased,
 * exactly when its lower case is a kept letter or digit, which is what the two `translate` calls
 * spelt out; any other title is `''` in both), so the index stays valid without a rebuild;
 * test/e2e/import-title-probe.e2e-spec.ts compares the two bodies on every one- and
 * two-character ASCII title and on random ones. Still a SQL function without STRICT, so the
 * planner inlines it and the read by key still uses the index. `down` puts the `translate` body
 * back.
 */
export class FasterTitleProbe1763700019970 implements MigrationInterface {
  name = 'FasterTitleProbe1763700019970';

  async up(q: QueryRunner): Promise<void> {
    await q.query(probeFunction(REGEXP_TITLE_PROBE_SQL));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(probeFunction(TRANSLATE_TITLE_PROBE_SQL));
  }
}
