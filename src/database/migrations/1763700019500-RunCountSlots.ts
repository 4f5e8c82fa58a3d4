import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Number of counter rows per (project, status) in `project_run_counts`: a transaction that creates,
 * deletes or moves runs adds its delta to the slot `txid % RUN_COUNT_SLOTS`, so concurrent
 * transactions (consecutive ids) write different rows instead of queueing on one row lock until
 * commit. Readers already `sum(n)`; at most this many rows per project and status to add up.
 */
export const RUN_COUNT_SLOTS = 64;

/**
 * Run counts per project and status in slots (issue #23 item 4, `create-run` p99). Before, every
 * run created in a project upserted the same `project_run_counts` row, whose row lock was then held
 * until the creating transaction ended (the run's re-read, the webhook lookup, the commit's WAL
 * flush and whatever waits in the service between them): every POST /test-runs of a project ran
 * one at a time through that section, and under load the requests queued there (sampled:
 * `Lock:transactionid` on the INSERT was the wait of most busy backends).
 *
 * Now a row is (project_id, status, slot), the trigger adds its deltas to the slot of the current
 * transaction id (deletes too, so a slot's `n` may be negative; the sum is the count). Down folds
 * the slots back into one row per (project, status).
 */
export class RunCountSlots1763700019500 implements MigrationInterface {
  name = 'RunCountSlots1763700019500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE project_run_counts ADD COLUMN slot smallint NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE project_run_counts DROP CONSTRAINT pk_project_run_counts`);
    await q.query(
      `ALTER TABLE project_run_counts ADD CONSTRAINT pk_project_run_counts PRIMARY KEY (project_id, status, slot)`,
    );
    await q.query(`
      CREATE OR REPLACE FUNCTION project_run_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        s smallint := (txid_current() % ${RUN_COUNT_SLOTS})::smallint;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO project_run_counts (project_id, status, slot, n)
          SELECT project_id, status, s, count(*) FROM new_rows GROUP BY project_id, status
          ORDER BY project_id, status
          ON CONFLICT (project_id, status, slot) DO UPDATE SET n = project_run_counts.n + EXCLUDED.n;
        ELSIF TG_OP = 'DELETE' THEN
          INSERT INTO project_run_counts (project_id, status, slot, n)
          SELECT project_id, status, s, -count(*) FROM old_rows
           WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = old_rows.project_id)
           GROUP BY project_id, status
           ORDER BY project_id, status
          ON CONFLICT (project_id, status, slot) DO UPDATE SET n = project_run_counts.n + EXCLUDED.n;
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
          INSERT INTO project_run_counts (project_id, status, slot, n)
          SELECT project_id, status, s, k FROM delta ORDER BY project_id, status
          ON CONFLICT (project_id, status, slot) DO UPDATE SET n = project_run_counts.n + EXCLUDED.n;
        END IF;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION project_run_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
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
    await q.query(`LOCK TABLE project_run_counts IN EXCLUSIVE MODE`);
    await q.query(`
      CREATE TEMP TABLE project_run_counts_folded AS
      SELECT project_id, status, sum(n)::bigint AS n FROM project_run_counts
       GROUP BY project_id, status`);
    await q.query(`DELETE FROM project_run_counts`);
    await q.query(`ALTER TABLE project_run_counts DROP CONSTRAINT pk_project_run_counts`);
    await q.query(`ALTER TABLE project_run_counts DROP COLUMN slot`);
    await q.query(
      `ALTER TABLE project_run_counts ADD CONSTRAINT pk_project_run_counts PRIMARY KEY (project_id, status)`,
    );
    await q.query(
      `INSERT INTO project_run_counts (project_id, status, n)
       SELECT project_id, status, n FROM project_run_counts_folded`,
    );
    await q.query(`DROP TABLE project_run_counts_folded`);
  }
}
