import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The version of each project's results (issues #17, #21): what the insights cache keys the
 * flaky list by (`common/cache/versioned-cache.ts`), correct on any number of instances sharing
 * the database.
 *
 * Every transaction that changes something the insights read — run items (insert, delete, or an
 * update of their run, case, title, status or dataset snapshot), their rows (insert, delete, or an
 * update of their item, status or comment), a test case's title or status, its deletion, a run's
 * environment or status, its deletion (which deletes its items) — adds one row (project,
 * its transaction id) to `project_result_changes`, from statement-level triggers, so no writer can
 * forget it. The version of a project is the sum of `changes` over its rows visible to a
 * statement: the number of such transactions committed. Commits are seen in one order by every
 * later snapshot, so two snapshots see the same number exactly when they see the same results;
 * a reader reads the version in the statement that reads the data (one snapshot).
 *
 * No lock is shared between writers: each inserts its own key (`ON CONFLICT DO NOTHING` makes a
 * transaction's later statements free). Compaction keeps the rows few: one writer transaction in
 * sixteen (by transaction id) that can lock the project's base row (`xact` 0, `SKIP LOCKED`:
 * never waits) folds the committed rows into it, in its own transaction, so the sum a reader sees
 * is unchanged. Base rows are made for every project (a trigger on `projects`); a project made
 * with triggers disabled (the bench's seed) simply is not compacted.
 */
export class ProjectResultVersions1763700019700 implements MigrationInterface {
  name = 'ProjectResultVersions1763700019700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE project_result_changes (
        project_id uuid NOT NULL,
        xact xid8 NOT NULL,
        changes bigint NOT NULL DEFAULT 1,
        CONSTRAINT pk_project_result_changes PRIMARY KEY (project_id, xact),
        CONSTRAINT fk_project_result_changes_project FOREIGN KEY (project_id)
          REFERENCES projects(id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE FUNCTION project_result_changes_note(projects uuid[]) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        me xid8 := pg_current_xact_id();
        p uuid;
      BEGIN
        IF projects IS NULL THEN RETURN; END IF;
        -- A project being deleted (its rows go with it) has nothing left to version.
        INSERT INTO project_result_changes (project_id, xact)
        SELECT x, me FROM unnest(projects) x
         WHERE EXISTS (SELECT 1 FROM projects WHERE id = x)
         ORDER BY 1
        ON CONFLICT DO NOTHING;
        IF me::text::bigint % 16 <> 0 THEN RETURN; END IF;
        FOREACH p IN ARRAY projects LOOP
          PERFORM 1 FROM project_result_changes
            WHERE project_id = p AND xact = '0'::xid8 FOR UPDATE SKIP LOCKED;
          IF FOUND THEN
            WITH gone AS (
              DELETE FROM project_result_changes
               WHERE project_id = p AND xact <> '0'::xid8 AND xact <> me
              RETURNING changes
            )
            UPDATE project_result_changes
               SET changes = changes + (SELECT coalesce(sum(changes), 0) FROM gone)
             WHERE project_id = p AND xact = '0'::xid8;
          END IF;
        END LOOP;
      END $$`);
    // One function for every table and event: the projects whose read data the statement changed.
    // An update counts for a project when one of its rows changed a column read (the first such
    // row answers: an import's batch of updates pays one probe, not a join of every row).
    await q.query(`
      CREATE FUNCTION project_result_changes_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        projects uuid[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(DISTINCT project_id) INTO projects FROM new_rows;
        ELSIF TG_OP = 'DELETE' THEN
          SELECT array_agg(DISTINCT project_id) INTO projects FROM old_rows;
        ELSIF TG_TABLE_NAME = 'run_items' THEN
          ${changedProjects(
            'o.project_id, o.test_run_id, o.test_case_id, o.test_case_title, o.status, o.dataset_snapshot',
            'n.project_id, n.test_run_id, n.test_case_id, n.test_case_title, n.status, n.dataset_snapshot',
          )}
        ELSIF TG_TABLE_NAME = 'run_item_rows' THEN
          ${changedProjects(
            'o.project_id, o.run_item_id, o.status, o.comment',
            'n.project_id, n.run_item_id, n.status, n.comment',
          )}
        ELSIF TG_TABLE_NAME = 'test_cases' THEN
          ${changedProjects('o.project_id, o.title, o.status', 'n.project_id, n.title, n.status')}
        ELSIF TG_TABLE_NAME = 'test_runs' THEN
          ${changedProjects(
            'o.project_id, o.environment_id, o.status',
            'n.project_id, n.environment_id, n.status',
          )}
        END IF;
        PERFORM project_result_changes_note(projects);
        RETURN NULL;
      END $$`);
    for (const [table, events] of TRIGGERS) {
      for (const event of events) {
        await q.query(`
          CREATE TRIGGER ${triggerName(table, event)} AFTER ${event} ON ${table}
            REFERENCING ${transition(event)}
            FOR EACH STATEMENT EXECUTE FUNCTION project_result_changes_trigger()`);
      }
    }
    await q.query(`
      CREATE FUNCTION project_result_changes_base() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO project_result_changes (project_id, xact, changes)
        SELECT id, '0'::xid8, 0 FROM new_rows ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER trg_projects_result_changes_base AFTER INSERT ON projects
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION project_result_changes_base()`);
    await q.query(`
      INSERT INTO project_result_changes (project_id, xact, changes)
      SELECT id, '0'::xid8, 0 FROM projects`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_projects_result_changes_base ON projects`);
    await q.query(`DROP FUNCTION project_result_changes_base()`);
    for (const [table, events] of TRIGGERS) {
      for (const event of events) {
        await q.query(`DROP TRIGGER ${triggerName(table, event)} ON ${table}`);
      }
    }
    await q.query(`DROP FUNCTION project_result_changes_trigger()`);
    await q.query(`DROP FUNCTION project_result_changes_note(uuid[])`);
    await q.query(`DROP TABLE project_result_changes`);
  }
}

type Event = 'INSERT' | 'UPDATE' | 'DELETE';

/**
 * PL/pgSQL: `projects` := the projects (before or after the update) with a row whose columns
 * `before` (of `o`, the old row) differ from `after` (of `n`, the new row).
 */
function changedProjects(before: string, after: string): string {
  return `SELECT array_agg(p.x) INTO projects
            FROM (SELECT project_id FROM old_rows UNION SELECT project_id FROM new_rows) p(x)
           WHERE EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                          WHERE p.x IN (o.project_id, n.project_id)
                            AND (${before}) IS DISTINCT FROM (${after}));`;
}

/** The tables and events that change what the insights read (inserting a run or a case does not). */
const TRIGGERS: Array<[string, Event[]]> = [
  ['run_items', ['INSERT', 'UPDATE', 'DELETE']],
  ['run_item_rows', ['INSERT', 'UPDATE', 'DELETE']],
  ['test_cases', ['UPDATE', 'DELETE']],
  ['test_runs', ['UPDATE', 'DELETE']],
];

const triggerName = (table: string, event: Event) =>
  `trg_${table}_result_changes_${event.toLowerCase()}`;

function transition(event: Event): string {
  if (event === 'INSERT') return 'NEW TABLE AS new_rows';
  if (event === 'DELETE') return 'OLD TABLE AS old_rows';
  return 'OLD TABLE AS old_rows NEW TABLE AS new_rows';
}
