import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export interface TestCaseStep {
  action: string;
  expected: string | null;
}

@Entity({ name: 'test_cases' })
export class TestCaseEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 32 }) key: string;
  @Column({ name: 'key_number', type: 'integer' }) keyNumber: number;
  @Column({ type: 'varchar', length: 500 }) title: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'text', nullable: true }) preconditions: string | null;
  @Column({ type: 'jsonb', default: () => "'[]'" }) steps: TestCaseStep[];
  @Column({ type: 'varchar', length: 16, nullable: true }) priority: string | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: string;
  @Column({ name: 'test_case_type', type: 'varchar', length: 16, default: 'manual' })
  testCaseType: string;
  @Column({ name: 'automation_id', type: 'varchar', length: 255, nullable: true }) automationId:
    | string
    | null;
  @Column({ name: 'suite_id', type: 'uuid', nullable: true }) suiteId: string | null;
  @Column({ name: 'owner_id', type: 'uuid', nullable: true }) ownerId: string | null;
  @Column({ name: 'primary_product_id', type: 'uuid', nullable: true }) primaryProductId:
    | string
    | null;
  @Column({ type: 'text', array: true, default: () => "'{}'" }) tags: string[];
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity({ name: 'test_case_component_coverages' })
export class TestCaseComponentCoverageEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'test_case_id', type: 'uuid' }) testCaseId: string;
  @Column({ name: 'component_id', type: 'uuid' }) componentId: string;
  @Column({ name: 'coverage_type', type: 'varchar', length: 16, default: 'direct' })
  coverageType: string;
  @Column({ name: 'coverage_strength', type: 'varchar', length: 16, default: 'regression' })
  coverageStrength: string;
  @Column({ name: 'is_mandatory_for_release', type: 'boolean', default: false })
  isMandatoryForRelease: boolean;
  @Column({ type: 'text', nullable: true }) notes: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** Per-project counters allocated under a row lock (test case keys). */
@Entity({ name: 'project_counters' })
export class ProjectCounterEntity {
  @PrimaryColumn({ name: 'project_id', type: 'uuid' }) projectId: string;
  @PrimaryColumn({ type: 'varchar', length: 64 }) name: string;
  @Column({ type: 'integer', default: 0 }) value: number;
}
