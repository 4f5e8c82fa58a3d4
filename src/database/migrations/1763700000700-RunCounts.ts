import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-project run counts by status, kept by statement-level triggers on test_runs, so the run list's
 * `total` for the common filters (project, status) is a lookup instead of a count over every run
 * of the project (the list must not slow down as a project grows).
 */
export class RunCounts1763700000700 implements MigrationInterface {
  name = 'RunCounts1763700000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE project_run_counts (
        project_id uuid NOT NULL,
        status varchar(32) NOT NULL,
        n bigint NOT NULL DEFAULT 0,
        CONSTRAINT pk_project_run_counts PRIMARY KEY (project_id, status),
        CONSTRAINT fk_project_run_counts_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE FUNCTION project_run_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO project_run_counts (project_id, status, n)
          SELECT project_id, status, count(*) FROM new_rows GROUP BY project_id, status
          ORDER BY project_id, status
          ON CONFLICT (project_id, status) DO UPDATE SET n = project_run_counts.n + EXCLUDED.n;
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE project_run_counts c SET n = c.n - d.k
            FROM (SELECT project_id, status, count(*) AS k FROM old_rows GROUP BY project_id, status) d
           WHERE c.project_id = d.project_id AND c.status = d.status;
        ELSE
          WITH moved AS (
            SELECT o.project_id, o.status AS old_status, n.status AS new_status
              FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE o.status IS DISTINCT FROM n.status
          ), delta AS (
            SELECT project_id, status, sum(k) AS k FROM (
              SELECT project_id, old_status AS status, -1 AS k FROM moved
              UNION ALL
              SELECT project_id, new_status AS status, 1 AS k FROM moved
            ) x GROUP BY project_id, status
          )
          INSERT INTO project_run_counts (project_id, status, n)
          SELECT project_id, status, k FROM delta ORDER BY project_id, status
          ON CONFLICT (project_id, status) DO UPDATE SET n = project_run_counts.n + EXCLUDED.n;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER trg_test_runs_count_insert AFTER INSERT ON test_runs
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION project_run_counts_apply()`);
    await q.query(`
      CREATE TRIGGER trg_test_runs_count_delete AFTER DELETE ON test_runs
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION project_run_counts_apply()`);
    await q.query(`
      CREATE TRIGGER trg_test_runs_count_update AFTER UPDATE ON test_runs
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION project_run_counts_apply()`);
    await q.query(`
      INSERT INTO project_run_counts (project_id, status, n)
      SELECT project_id, status, count(*) FROM test_runs GROUP BY project_id, status`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_test_runs_count_update ON test_runs`);
    await q.query(`DROP TRIGGER trg_test_runs_count_delete ON test_runs`);
    await q.query(`DROP TRIGGER trg_test_runs_count_insert ON test_runs`);
    await q.query(`DROP FUNCTION project_run_counts_apply()`);
    await q.query(`DROP TABLE project_run_counts`);
  }
}
