import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * One real JUnit import into a run (CONTRACT §6), synchronous or background (issue #18 §3). The raw
 * file is not kept (a background import's files wait in `import_uploads` until its job ends).
 */
@Entity({ name: 'junit_imports' })
export class JunitImportEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  /** Null while a background project-level import has not found or created its run. */
  @Column({ name: 'test_run_id', type: 'uuid', nullable: true }) testRunId: string | null;
  @Column({ name: 'file_name', type: 'varchar', length: 255 }) fileName: string;
  /** bigint: the driver returns it as a string. */
  @Column({ name: 'size_bytes', type: 'bigint' }) sizeBytes: string;
  @Column({ type: 'char', length: 64 }) sha256: string;
  /** The import's answer without its per-case lists (status, counters, files); `{}` until it succeeded. */
  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" }) summary: Record<string, unknown>;
  /** The whole answer as the import call sent it (with the issue lists); set exactly when succeeded. */
  @Column({ type: 'json', nullable: true }) answer: Record<string, unknown> | null;
  /** `queued`, `running` (background imports), `succeeded`, `failed` (with `problem`). */
  @Column({ type: 'varchar', length: 16, default: 'succeeded' }) status: string;
  @Column({ name: 'progress_processed', type: 'int', default: 0 }) progressProcessed: number;
  @Column({ name: 'progress_total', type: 'int', nullable: true }) progressTotal: number | null;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt: Date | null;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt: Date | null;
  /** The problem body of a failed background import. */
  @Column({ type: 'jsonb', nullable: true }) problem: Record<string, unknown> | null;
  /** What a queued background import needs to run (flags, caller, files); null once it ended. */
  @Column({ type: 'jsonb', nullable: true }) request: Record<string, unknown> | null;
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
