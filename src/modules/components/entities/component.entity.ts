import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { RiskLevel } from '../risk-score';

/** `components`: a functional area with six risk factors and the computed risk. */
@Entity({ name: 'components' })
export class ComponentEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 100 }) key: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ name: 'owner_id', type: 'uuid', nullable: true }) ownerId: string | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: 'active' | 'archived';
  @Column({ type: 'text', array: true, default: () => "'{}'" }) tags: string[];
  @Column({ name: 'business_criticality', type: 'smallint', default: 0 })
  businessCriticality: number;
  @Column({ name: 'change_frequency', type: 'smallint', default: 0 }) changeFrequency: number;
  @Column({ name: 'integration_complexity', type: 'smallint', default: 0 })
  integrationComplexity: number;
  @Column({ name: 'defect_density', type: 'smallint', default: 0 }) defectDensity: number;
  @Column({ name: 'production_incident_score', type: 'smallint', default: 0 })
  productionIncidentScore: number;
  @Column({ name: 'automation_confidence', type: 'smallint', default: 5 })
  automationConfidence: number;
  @Column({ name: 'risk_score', type: 'smallint', default: 0 }) riskScore: number;
  @Column({ name: 'risk_level', type: 'varchar', length: 16, default: 'low' }) riskLevel: RiskLevel;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
