import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** `component_dependencies`: source depends on target (same project). */
@Entity({ name: 'component_dependencies' })
export class ComponentDependencyEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'source_component_id', type: 'uuid' }) sourceComponentId: string;
  @Column({ name: 'target_component_id', type: 'uuid' }) targetComponentId: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'dependency_type', type: 'varchar', length: 32, default: 'depends_on' })
  dependencyType: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
