import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The run's copy of its environment snapshot becomes `json` (the text, checked to be JSON) instead
 * of `jsonb`. It is only ever stored and answered whole, never queried inside; rendering a 200-node
 * jsonb snapshot as text cost PostgreSQL ~0.4 ms on every GET of a run and ~20 ms per list page,
 * reading `json` is a copy (bench/README.md). Rewrites test_runs once; the text of existing rows is
 * PostgreSQL's rendering of their jsonb value (equal as JSON).
 */
export class RunSnapshotJson1763700000800 implements MigrationInterface {
  name = 'RunSnapshotJson1763700000800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE test_runs
        ALTER COLUMN environment_snapshot DROP DEFAULT,
        ALTER COLUMN environment_snapshot TYPE json USING environment_snapshot::json,
        ALTER COLUMN environment_snapshot SET DEFAULT '{}'::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE test_runs
        ALTER COLUMN environment_snapshot DROP DEFAULT,
        ALTER COLUMN environment_snapshot TYPE jsonb USING environment_snapshot::jsonb,
        ALTER COLUMN environment_snapshot SET DEFAULT '{}'::jsonb`);
  }
}
