import { MigrationInterface, QueryRunner } from 'typeorm';

/** The two indexes, as partial (`up`) or whole (`down`). */
const INDEXES = [
  { name: 'ix_test_cases_owner', table: 'test_cases', column: 'owner_id' },
  { name: 'ix_run_items_assignee', table: 'run_items', column: 'assignee_id' },
] as const;

/**
 * `ix_test_cases_owner` and `ix_run_items_assignee` without the rows whose key is NULL (issue
 * #23 item 2, only the indexes a query uses): what they serve — the `owner_id` filter of the
 * case list (`owner_id = ANY($1)`), the `assignee_id` filter of the run's items (`assignee_id =
 * $1`) and the assignee key's `ON DELETE SET NULL` (`assignee_id = $1`) — never looks a NULL up,
 * and PostgreSQL proves `IS NOT NULL` from those strict comparisons, generic plans included
 * (checked with `EXPLAIN`; test/e2e/partial-null-key-indexes.e2e-spec.ts keeps it). An import
 * writes its new cases without an owner, and the items of a run without an assignee: each such
 * row no longer adds an entry (2.5–3 µs each, bench/README.md fixes 50 and 53), as
 * `ix_test_cases_primary_product` already skips cases without a primary product. `down`
 * rebuilds them whole.
 */
export class PartialNullKeyIndexes1763700019980 implements MigrationInterface {
  name = 'PartialNullKeyIndexes1763700019980';

  async up(q: QueryRunner): Promise<void> {
    for (const i of INDEXES) {
      await q.query(`DROP INDEX IF EXISTS ${i.name}`);
      await q.query(
        `CREATE INDEX ${i.name} ON ${i.table} (${i.column}) WHERE ${i.column} IS NOT NULL`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const i of INDEXES) {
      await q.query(`DROP INDEX IF EXISTS ${i.name}`);
      await q.query(`CREATE INDEX ${i.name} ON ${i.table} (${i.column})`);
    }
  }
}
