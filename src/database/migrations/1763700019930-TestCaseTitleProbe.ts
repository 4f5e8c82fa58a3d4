import { MigrationInterface, QueryRunner } from 'typeorm';

/** ASCII without NUL (which text cannot hold), as a SQL string literal's content. */
const ASCII = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
/** Kept by the probe (lower-cased first): letters and digits but `t`, `e` and `s`. */
const KEPT = 'abcdfghijklmnopqruvwxyz0123456789';
const UPPER_KEPT = KEPT.slice(0, 23).toUpperCase();
/** Upper-case kept letters first (lowered by `translate`), then every ASCII character dropped. */
const FROM =
  UPPER_KEPT + [...ASCII].filter((c) => !KEPT.includes(c) && !UPPER_KEPT.includes(c)).join('');

const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * This migration's probe of `title` as a SQL expression (replaced by migration
 * `FasterTitleProbe`, which must answer the same; its test compares the two).
 */
export const TRANSLATE_TITLE_PROBE_SQL = `CASE WHEN translate(title, ${literal(ASCII)}, '') = ''
                          THEN translate(title, ${literal(FROM)}, ${literal(KEPT.slice(0, 23))})
                          ELSE '' END`;

/**
 * `test_case_title_probe(title)` and the index `ix_test_cases_title_probe` on it (issue #23 item
 * 2): an import's matching read every active case of the project (0.5–0.7 s at 200,000 cases,
 * whatever the report's size); with a report smaller than the project it now reads the cases under
 * its results' automation ids or title probes. A probe is coarser than the normalised title
 * matching compares (`titleProbe` in `imports/matching.ts` says why two titles normalised alike
 * always have the same probe): an ASCII title's letters and digits, lower-cased, without `t`, `e`
 * and `s`; `''` for a title with any other character (always looked up). Two `translate` calls: no
 * regular expression, no dependency on the collation or the database's encoding. A SQL function
 * without STRICT, so that the planner inlines it (`EXPLAIN` showed a STRICT one, whose `CASE` body
 * is not strict, called as a function on every row instead).
 */
export class TestCaseTitleProbe1763700019930 implements MigrationInterface {
  name = 'TestCaseTitleProbe1763700019930';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION test_case_title_probe(title text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT ${TRANSLATE_TITLE_PROBE_SQL} $$`);
    // Not partial: the planner reads an expression's statistics only from a non-partial index, and
    // without them it took thousands of keys for the whole project.
    await q.query(
      `CREATE INDEX ix_test_cases_title_probe ON test_cases (project_id, test_case_title_probe(title))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_test_cases_title_probe`);
    await q.query(`DROP FUNCTION test_case_title_probe(text)`);
  }
}
