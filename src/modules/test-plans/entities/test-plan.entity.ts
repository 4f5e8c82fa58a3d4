import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'test_plans' })
export class TestPlanEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'text', array: true, default: () => "'{}'" }) tags: string[];
  @Column({ name: 'generation_source', type: 'varchar', length: 32, default: 'manual' })
  generationSource: string;
  @Column({ name: 'generation_config', type: 'jsonb', default: () => "'{}'" })
  generationConfig: Record<string, unknown>;
  @Column({ name: 'generation_summary', type: 'jsonb', default: () => "'{}'" })
  generationSummary: Record<string, unknown>;
  @Column({ name: 'milestone_id', type: 'uuid', nullable: true }) milestoneId: string | null;
  @Column({ name: 'created_by', type: 'uuid', nullable: true }) createdBy: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity({ name: 'test_plan_suites' })
export class TestPlanSuiteEntity {
  @PrimaryColumn({ name: 'test_plan_id', type: 'uuid' }) testPlanId: string;
  @PrimaryColumn({ name: 'suite_id', type: 'uuid' }) suiteId: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'integer' }) position: number;
}

@Entity({ name: 'test_plan_cases' })
export class TestPlanCaseEntity {
  @PrimaryColumn({ name: 'test_plan_id', type: 'uuid' }) testPlanId: string;
  @PrimaryColumn({ name: 'test_case_id', type: 'uuid' }) testCaseId: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'integer' }) position: number;
}
