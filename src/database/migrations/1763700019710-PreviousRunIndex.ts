import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /test-runs/{id}/compare?base=previous` (the dashboard's "compare with previous") looks for
 * the latest run of the same project and environment created before the run. With only
 * (project_id, created_at, id) it walked every earlier run of the project to find one of that
 * environment (60–120 ms on the bench's 100,000 runs); on (project_id, environment_id,
 * created_at, id) it is one backward step of the index, whether the environment is set or NULL
 * (0.2 ms). About 7.5 MB on those 100,000 runs.
 */
export class PreviousRunIndex1763700019710 implements MigrationInterface {
  name = 'PreviousRunIndex1763700019710';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ix_test_runs_project_environment_created ON test_runs (project_id, environment_id, created_at, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_test_runs_project_environment_created`);
  }
}
