import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { RunStatus } from '../run-status';

/**
 * A test run. Item counters by (rolled-up) item status are kept on the row (`count_<status>`) and
 * recomputed in the transaction that changes items, so reads need no aggregation.
 */
@Entity({ name: 'test_runs' })
export class TestRunEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ name: 'environment_id', type: 'uuid', nullable: true }) environmentId: string | null;
  @Column({ name: 'environment_name', type: 'text', nullable: true }) environmentName:
    | string
    | null;
  @Column({ name: 'environment_revision_id', type: 'uuid', nullable: true })
  environmentRevisionId: string | null;
  @Column({ name: 'environment_revision_number', type: 'integer', nullable: true })
  environmentRevisionNumber: number | null;
  @Column({ name: 'environment_snapshot_hash', type: 'varchar', length: 200, nullable: true })
  environmentSnapshotHash: string | null;
  /** NULL: the snapshot of the revision (stored once there); else the run's own JSON text. */
  @Column({
    name: 'environment_snapshot',
    type: 'json',
    nullable: true,
    default: () => "'{}'::json",
  })
  environmentSnapshot: Record<string, unknown> | null;
  @Column({ name: 'milestone_id', type: 'uuid', nullable: true }) milestoneId: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) build: string | null;
  /** Free key → value strings (issue #24 item 5; bounds in `run-metadata.ts`). */
  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" }) attributes: Record<string, string>;
  @Column({ name: 'ci_provider', type: 'varchar', length: 64, nullable: true })
  ciProvider: string | null;
  @Column({ name: 'ci_branch', type: 'varchar', length: 255, nullable: true })
  ciBranch: string | null;
  @Column({ name: 'ci_commit_sha', type: 'varchar', length: 64, nullable: true })
  ciCommitSha: string | null;
  @Column({ name: 'ci_job_url', type: 'varchar', length: 2048, nullable: true })
  ciJobUrl: string | null;
  @Column({ name: 'ci_pipeline_id', type: 'varchar', length: 255, nullable: true })
  ciPipelineId: string | null;
  @Column({ name: 'assignee_id', type: 'uuid', nullable: true }) assigneeId: string | null;
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @Column({ type: 'varchar', length: 16, default: 'not_started' }) status: RunStatus;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt: Date | null;
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true }) completedAt: Date | null;
  @Column({ name: 'archived_at', type: 'timestamptz', nullable: true }) archivedAt: Date | null;
  @Column({ name: 'planned_item_count', type: 'integer', default: 0 }) plannedItemCount: number;
  @Column({ name: 'count_untested', type: 'integer', default: 0 }) countUntested: number;
  @Column({ name: 'count_in_progress', type: 'integer', default: 0 }) countInProgress: number;
  @Column({ name: 'count_passed', type: 'integer', default: 0 }) countPassed: number;
  @Column({ name: 'count_error', type: 'integer', default: 0 }) countError: number;
  @Column({ name: 'count_failure', type: 'integer', default: 0 }) countFailure: number;
  @Column({ name: 'count_blocked', type: 'integer', default: 0 }) countBlocked: number;
  @Column({ name: 'count_skipped', type: 'integer', default: 0 }) countSkipped: number;
  @Column({ name: 'count_xfailed', type: 'integer', default: 0 }) countXfailed: number;
  @Column({ name: 'count_xpassed', type: 'integer', default: 0 }) countXpassed: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
