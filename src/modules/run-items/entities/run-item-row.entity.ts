import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { RunItemStatus } from '../../test-runs/run-summary';

/** One execution row of a run item (one dataset scenario, or the default scenario). */
@Entity({ name: 'run_item_rows' })
export class RunItemRowEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'run_item_id', type: 'uuid' }) runItemId: string;
  @Column({ name: 'parent_row_id', type: 'uuid', nullable: true }) parentRowId: string | null;
  @Column({ name: 'row_order', type: 'integer' }) rowOrder: number;
  @Column({ name: 'scenario_label', type: 'text' }) scenarioLabel: string;
  @Column({ name: 'row_snapshot', type: 'jsonb', default: () => "'{}'::jsonb" })
  rowSnapshot: Record<string, unknown>;
  @Column({ type: 'varchar', length: 16, default: 'untested' }) status: RunItemStatus;
  @Column({ type: 'text', nullable: true }) comment: string | null;
  @Column({ name: 'defect_ids', type: 'text', array: true, default: () => "'{}'" })
  defectIds: string[];
  @Column({ name: 'actual_result', type: 'text', nullable: true }) actualResult: string | null;
  @Column({ name: 'system_out', type: 'text', nullable: true }) systemOut: string | null;
  @Column({ name: 'system_err', type: 'text', nullable: true }) systemErr: string | null;
  @Column({ name: 'executed_by_id', type: 'uuid', nullable: true }) executedById: string | null;
  @Column({ name: 'execution_count', type: 'integer', default: 0 }) executionCount: number;
  @Column({ name: 'last_executed_at', type: 'timestamptz', nullable: true })
  lastExecutedAt: Date | null;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt: Date | null;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt: Date | null;
  @Column({ name: 'duration_ms', type: 'bigint', nullable: true }) durationMs: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
