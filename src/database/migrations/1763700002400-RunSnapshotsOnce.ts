import { MigrationInterface, QueryRunner } from 'typeorm';

/** Revisions handled per query while moving snapshots (each snapshot is about 62 KB). */
const BATCH = 50;

/**
 * A run's environment snapshot is stored once, on its revision (issue #23 item 1). Until now every
 * run kept its own copy in `test_runs.environment_snapshot` (~62 KB for a 200-node topology): the
 * text `JSON.stringify` wrote of the revision's `full_snapshot` as pg parsed it. Revisions never
 * change, so that text can always be written again from the revision.
 *
 * After this migration `environment_snapshot` is NULL when the run's snapshot is exactly (byte for
 * byte) that text of its revision, and otherwise keeps the run's own text: runs without an
 * environment (`{}`), and any run whose stored text differs (e.g. rows converted from jsonb by
 * RunSnapshotJson1763700000800, which carry PostgreSQL's rendering). The comparison is made here
 * in JavaScript with the same `JSON.stringify` the service answers with, so no run's answer
 * changes. A run without a text must have a revision (`ck_test_runs_environment_snapshot`), and
 * a revision a run relies on can no longer vanish under it: `fk_test_runs_environment_revision`
 * becomes NO ACTION instead of SET NULL (no code deletes revisions; deleting a project removes its
 * runs in the same statement).
 *
 * `down` writes every run's copy back. The space of the dropped copies is reused by PostgreSQL;
 * `VACUUM FULL test_runs` returns it to the operating system.
 */
export class RunSnapshotsOnce1763700002400 implements MigrationInterface {
  name = 'RunSnapshotsOnce1763700002400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_runs ALTER COLUMN environment_snapshot DROP NOT NULL`);
    await forEachRevisionSnapshot(
      q,
      `SELECT DISTINCT environment_revision_id AS id FROM test_runs
        WHERE environment_revision_id IS NOT NULL AND environment_snapshot IS NOT NULL`,
      async (id, text) => {
        await q.query(
          `UPDATE test_runs SET environment_snapshot = NULL
            WHERE environment_revision_id = $1 AND environment_snapshot::text = $2`,
          [id, text],
        );
      },
    );
    await q.query(`
      ALTER TABLE test_runs
        ADD CONSTRAINT ck_test_runs_environment_snapshot
          CHECK (environment_snapshot IS NOT NULL OR environment_revision_id IS NOT NULL),
        DROP CONSTRAINT fk_test_runs_environment_revision,
        ADD CONSTRAINT fk_test_runs_environment_revision FOREIGN KEY (environment_revision_id)
          REFERENCES environment_revisions(id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE test_runs
        DROP CONSTRAINT ck_test_runs_environment_snapshot,
        DROP CONSTRAINT fk_test_runs_environment_revision,
        ADD CONSTRAINT fk_test_runs_environment_revision FOREIGN KEY (environment_revision_id)
          REFERENCES environment_revisions(id) ON DELETE SET NULL`);
    await forEachRevisionSnapshot(
      q,
      `SELECT DISTINCT environment_revision_id AS id FROM test_runs
        WHERE environment_snapshot IS NULL`,
      async (id, text) => {
        await q.query(
          `UPDATE test_runs SET environment_snapshot = $2::json
            WHERE environment_revision_id = $1 AND environment_snapshot IS NULL`,
          [id, text],
        );
      },
    );
    await q.query(`ALTER TABLE test_runs ALTER COLUMN environment_snapshot SET NOT NULL`);
  }
}

/**
 * Calls `each` with every revision `idsSql` selects and the text a run stored of its snapshot:
 * `JSON.stringify` of the jsonb value as pg parses it (`{}` for none), in batches.
 */
async function forEachRevisionSnapshot(
  q: QueryRunner,
  idsSql: string,
  each: (id: string, text: string) => Promise<void>,
): Promise<void> {
  const ids = ((await q.query(idsSql)) as { id: string }[]).map((r) => r.id);
  for (let from = 0; from < ids.length; from += BATCH) {
    const rows = (await q.query(
      `SELECT id, full_snapshot FROM environment_revisions WHERE id = ANY($1::uuid[])`,
      [ids.slice(from, from + BATCH)],
    )) as { id: string; full_snapshot: unknown }[];
    for (const row of rows) await each(row.id, JSON.stringify(row.full_snapshot ?? {}));
  }
}
