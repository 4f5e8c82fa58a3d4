import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `test_cases_lower_tags(tags)` (the expression of the GIN indexes `ix_test_cases_tags` and
 * `ix_test_plans_tags`, and of the `tag` filters) in PL/pgSQL instead of a SQL function with a
 * subquery (issue #23 item 2): every case an import creates evaluates it once for the index. The
 * SQL function cannot be inlined (it has a FROM), so each call started the SQL-function executor:
 * 3.8 µs a call, against 1.4 µs for this loop (100,000 calls of two tags each on the embedded
 * PostgreSQL 18: 380–385 ms before, 155–165 ms after).
 *
 * The answer is the same for every input, so the indexes stay valid without a rebuild: the elements
 * of any array (any dimensions, any bounds) in storage order, each lower-cased, NULL elements kept,
 * as a one-dimensional array; `{}` for an empty or NULL array (test/e2e/lower-tags.e2e-spec.ts
 * checks it against the old definition's expression).
 */
export class LowerTagsInPlpgsql1763700019910 implements MigrationInterface {
  name = 'LowerTagsInPlpgsql1763700019910';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION test_cases_lower_tags(tags text[]) RETURNS text[]
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
        AS $$
        DECLARE
          lowered text[] := '{}';
          tag text;
        BEGIN
          IF tags IS NULL THEN
            RETURN lowered;
          END IF;
          FOREACH tag IN ARRAY tags LOOP
            lowered := lowered || lower(tag);
          END LOOP;
          RETURN lowered;
        END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION test_cases_lower_tags(tags text[]) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT coalesce(array_agg(lower(t)), '{}') FROM unnest(tags) AS t $$`);
  }
}
