import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run metadata from CI (issue #24 item 5): `attributes` (a JSON object of string values) and the
 * `ci_*` columns of a run, with the indexes of the `GET /test-runs` filters:
 *
 * - `ix_test_runs_attributes`: GIN (`jsonb_path_ops`) for `attribute=key:value`
 *   (`attributes @> '{"key":"value"}'`), combined with the project's runs by a bitmap AND;
 * - `ix_test_runs_project_ci_branch`: `branch` (exact) within a project;
 * - `ix_test_runs_project_ci_commit_sha`: `commit_sha` (a prefix of at least 7 hex digits, or the
 *   whole SHA) within a project; `varchar_pattern_ops` so that `LIKE 'abc1234%'` is an index range
 *   whatever the database collation;
 * - `build` (exact, case-insensitive) is served by `ix_test_runs_project_build`
 *   (`project_id, lower(coalesce(build, '')), id`) of the TestRuns migration.
 *
 * Existing runs get `attributes = {}` and no CI fields (answered `ci: null`).
 */
export class RunMetadata1763700019300 implements MigrationInterface {
  name = 'RunMetadata1763700019300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_runs
      ADD COLUMN attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN ci_provider varchar(64),
      ADD COLUMN ci_branch varchar(255),
      ADD COLUMN ci_commit_sha varchar(64),
      ADD COLUMN ci_job_url varchar(2048),
      ADD COLUMN ci_pipeline_id varchar(255),
      ADD CONSTRAINT ck_test_runs_attributes_object CHECK (jsonb_typeof(attributes) = 'object'),
      ADD CONSTRAINT ck_test_runs_ci_commit_sha CHECK (ci_commit_sha ~ '^[0-9a-f]{7,64}$')`);
    await q.query(
      `CREATE INDEX ix_test_runs_attributes ON test_runs USING gin (attributes jsonb_path_ops)`,
    );
    await q.query(
      `CREATE INDEX ix_test_runs_project_ci_branch ON test_runs (project_id, ci_branch)
        WHERE ci_branch IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX ix_test_runs_project_ci_commit_sha
          ON test_runs (project_id, ci_commit_sha varchar_pattern_ops)
        WHERE ci_commit_sha IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_test_runs_project_ci_commit_sha`);
    await q.query(`DROP INDEX ix_test_runs_project_ci_branch`);
    await q.query(`DROP INDEX ix_test_runs_attributes`);
    await q.query(`ALTER TABLE test_runs
      DROP CONSTRAINT ck_test_runs_ci_commit_sha,
      DROP CONSTRAINT ck_test_runs_attributes_object,
      DROP COLUMN ci_pipeline_id,
      DROP COLUMN ci_job_url,
      DROP COLUMN ci_commit_sha,
      DROP COLUMN ci_branch,
      DROP COLUMN ci_provider,
      DROP COLUMN attributes`);
  }
}
