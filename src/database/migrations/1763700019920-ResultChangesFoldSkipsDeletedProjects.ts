import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `project_result_changes_note` (migration ProjectResultVersions) folds a project's committed change
 * rows into its base row in one transaction out of sixteen (by transaction id). Deleting a project
 * fires the note from the triggers of its cascaded runs and items, and when that transaction was
 * the sixteenth the fold updated the project's base row, which its foreign key then refused: one
 * project deletion in sixteen answered 409 `conflict` (23503). The fold now skips a project that no
 * longer exists for the transaction, as the insert before it already did. The answers of every
 * other call are unchanged (test/e2e/project-delete-fold.e2e-spec.ts).
 */
/** The fold's guard: the line this migration adds to the loop. */
const SKIP_DELETED = `          -- A project this transaction deletes has no row left to fold into (its cascade removes
          -- them); updating one would be refused by the foreign key.
          CONTINUE WHEN NOT EXISTS (SELECT 1 FROM projects WHERE id = p);
`;

/** The function as ProjectResultVersions made it (`skipDeleted` false) or as this migration does. */
function noteFunction(skipDeleted: boolean): string {
  return `
      CREATE OR REPLACE FUNCTION project_result_changes_note(projects uuid[]) RETURNS void
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
${skipDeleted ? SKIP_DELETED : ''}          PERFORM 1 FROM project_result_changes
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
      END $$`;
}

export class ResultChangesFoldSkipsDeletedProjects1763700019920 implements MigrationInterface {
  name = 'ResultChangesFoldSkipsDeletedProjects1763700019920';

  async up(q: QueryRunner): Promise<void> {
    await q.query(noteFunction(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(noteFunction(false));
  }
}
