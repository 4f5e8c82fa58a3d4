import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * JUnit import records (CONTRACT §6): one row per real (non-dry-run) import — file name, size,
 * SHA-256, the summary of what the import did, who ran it and when. The raw file is never stored.
 * Listed newest first per run (`GET /test-runs/{id}/imports`), hence the (test_run_id, created_at)
 * index.
 */
export class Imports1763700000600 implements MigrationInterface {
  name = 'Imports1763700000600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE junit_imports (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        test_run_id uuid NOT NULL,
        file_name varchar(255) NOT NULL,
        size_bytes bigint NOT NULL,
        sha256 char(64) NOT NULL,
        summary jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_junit_imports PRIMARY KEY (id),
        CONSTRAINT ck_junit_imports_size CHECK (size_bytes >= 0),
        CONSTRAINT ck_junit_imports_sha256 CHECK (sha256 ~ '^[0-9a-f]{64}$'),
        CONSTRAINT ck_junit_imports_summary CHECK (jsonb_typeof(summary) = 'object'),
        CONSTRAINT fk_junit_imports_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_junit_imports_test_run FOREIGN KEY (test_run_id) REFERENCES test_runs(id) ON DELETE CASCADE,
        CONSTRAINT fk_junit_imports_created_by FOREIGN KEY (created_by) REFERENCES users(id)
      )`);
    await q.query(
      `CREATE INDEX ix_junit_imports_run_created ON junit_imports (test_run_id, created_at, id)`,
    );
    await q.query(`CREATE INDEX ix_junit_imports_project ON junit_imports (project_id)`);
    await q.query(`CREATE INDEX ix_junit_imports_created_by ON junit_imports (created_by)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE junit_imports`);
  }
}
