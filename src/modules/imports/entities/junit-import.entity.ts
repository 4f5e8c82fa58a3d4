import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One real JUnit import into a run (CONTRACT §6). The raw file is not kept. */
@Entity({ name: 'junit_imports' })
export class JunitImportEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'test_run_id', type: 'uuid' }) testRunId: string;
  @Column({ name: 'file_name', type: 'varchar', length: 255 }) fileName: string;
  /** bigint: the driver returns it as a string. */
  @Column({ name: 'size_bytes', type: 'bigint' }) sizeBytes: string;
  @Column({ type: 'char', length: 64 }) sha256: string;
  /** The import result as answered by the import call (status, counters, issue lists). */
  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" }) summary: Record<string, unknown>;
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
