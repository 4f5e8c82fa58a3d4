import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RunItemStatus } from '../../test-runs/run-summary';

/** A change of a run item's rolled-up status, with the row result that caused it. */
@Entity({ name: 'run_item_history' })
export class RunItemHistoryEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'run_item_id', type: 'uuid' }) runItemId: string;
  @Column({ name: 'run_item_row_id', type: 'uuid', nullable: true }) runItemRowId: string | null;
  @Column({ name: 'from_status', type: 'varchar', length: 16, nullable: true })
  fromStatus: RunItemStatus | null;
  @Column({ name: 'to_status', type: 'varchar', length: 16 }) toStatus: RunItemStatus;
  @Column({ type: 'text', nullable: true }) comment: string | null;
  @Column({ name: 'defect_ids', type: 'text', array: true, default: () => "'{}'" })
  defectIds: string[];
  @Column({ name: 'actual_result', type: 'text', nullable: true }) actualResult: string | null;
  @Column({ name: 'system_out', type: 'text', nullable: true }) systemOut: string | null;
  @Column({ name: 'system_err', type: 'text', nullable: true }) systemErr: string | null;
  @Column({ name: 'executed_by_id', type: 'uuid', nullable: true }) executedById: string | null;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt: Date | null;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt: Date | null;
  @Column({ name: 'duration_ms', type: 'bigint', nullable: true }) durationMs: string | null;
  @Column({ name: 'changed_by_id', type: 'uuid', nullable: true }) changedById: string | null;
  @Column({ name: 'changed_at', type: 'timestamptz', default: () => 'now()' }) changedAt: Date;
}
