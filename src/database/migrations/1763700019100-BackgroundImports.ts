import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Background imports (issue #18 §3). An import record (`junit_imports`) gets a state: `queued` and
 * `running` while a background import waits or runs, `succeeded` (every synchronous import, and a
 * background one once applied) or `failed` (its problem in `problem`), with the progress in
 * testcases and its start and end. A queued project-level import has no run yet (`test_run_id` NULL
 * until applied). The uploaded files of a background import wait in `import_uploads`, in chunks of
 * of about 1 MiB (`bytea`), until the job ends (then they are deleted). They are written as the request
 * arrives, before the record whose file facts are known only at its end: hence the deferred foreign key.
 */
export class BackgroundImports1763700019100 implements MigrationInterface {
  name = 'BackgroundImports1763700019100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE junit_imports
        ALTER COLUMN test_run_id DROP NOT NULL,
        ADD COLUMN status varchar(16) NOT NULL DEFAULT 'succeeded',
        ADD COLUMN progress_processed integer NOT NULL DEFAULT 0,
        ADD COLUMN progress_total integer,
        ADD COLUMN started_at timestamptz,
        ADD COLUMN finished_at timestamptz,
        ADD COLUMN problem jsonb,
        ADD COLUMN request jsonb,
        ADD CONSTRAINT ck_junit_imports_status
          CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        ADD CONSTRAINT ck_junit_imports_progress
          CHECK (progress_processed >= 0 AND (progress_total IS NULL OR progress_total >= 0))
    `);
    await q.query(`
      CREATE TABLE import_uploads (
        import_id uuid NOT NULL,
        project_id uuid NOT NULL,
        file_index integer NOT NULL,
        seq integer NOT NULL,
        data bytea NOT NULL,
        CONSTRAINT pk_import_uploads PRIMARY KEY (import_id, file_index, seq),
        CONSTRAINT fk_import_uploads_import FOREIGN KEY (import_id) REFERENCES junit_imports(id)
          ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        CONSTRAINT fk_import_uploads_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE
      )
    `);
    await q.query(`CREATE INDEX ix_import_uploads_project ON import_uploads (project_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE import_uploads`);
    await q.query(`DELETE FROM junit_imports WHERE test_run_id IS NULL OR status <> 'succeeded'`);
    await q.query(`
      ALTER TABLE junit_imports
        DROP CONSTRAINT ck_junit_imports_progress,
        DROP CONSTRAINT ck_junit_imports_status,
        DROP COLUMN request,
        DROP COLUMN problem,
        DROP COLUMN finished_at,
        DROP COLUMN started_at,
        DROP COLUMN progress_total,
        DROP COLUMN progress_processed,
        DROP COLUMN status,
        ALTER COLUMN test_run_id SET NOT NULL
    `);
  }
}
