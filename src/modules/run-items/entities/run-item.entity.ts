import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { RunItemStatus } from '../../test-runs/run-summary';

/**
 * A test case in a run ("run case"); status and row counters are rolled up from its rows. The case
 * copies (`testCase*`) are NULL while they equal the live case's values; triggers on `test_cases`
 * write them when the case changes or is deleted (migration RunItemCaseCopiesOnDemand).
 */
@Entity({ name: 'run_items' })
export class RunItemEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'test_run_id', type: 'uuid' }) testRunId: string;
  @Column({ name: 'test_case_id', type: 'uuid', nullable: true }) testCaseId: string | null;
  @Column({ name: 'assignee_id', type: 'uuid', nullable: true }) assigneeId: string | null;
  @Column({ type: 'varchar', length: 16, default: 'untested' }) status: RunItemStatus;
  @Column({ name: 'rows_total', type: 'integer', default: 0 }) rowsTotal: number;
  @Column({ name: 'rows_passed', type: 'integer', default: 0 }) rowsPassed: number;
  @Column({ name: 'rows_failed', type: 'integer', default: 0 }) rowsFailed: number;
  @Column({ type: 'text', nullable: true }) comment: string | null;
  @Column({ name: 'test_case_key', type: 'varchar', length: 64, nullable: true })
  testCaseKey: string | null;
  @Column({ name: 'test_case_title', type: 'text', nullable: true }) testCaseTitle: string | null;
  @Column({ name: 'test_case_priority', type: 'varchar', length: 32, nullable: true })
  testCasePriority: string | null;
  @Column({ name: 'test_case_tags', type: 'text', array: true, nullable: true })
  testCaseTags: string[] | null;
  @Column({ name: 'suite_id', type: 'uuid', nullable: true }) suiteId: string | null;
  @Column({ name: 'suite_name', type: 'text', nullable: true }) suiteName: string | null;
  @Column({ name: 'dataset_snapshot', type: 'jsonb', default: () => "'{}'::jsonb" })
  datasetSnapshot: Record<string, unknown>;
  @Column({ name: 'last_executed_at', type: 'timestamptz', nullable: true })
  lastExecutedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
