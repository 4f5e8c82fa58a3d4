import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * `component_graph_versions`: the version of a project's component graph, bumped by every write
 * that changes it (see the migration ComponentGraphVersions). Written with SQL only
 * (ComponentsRepository.bumpGraphVersion); the entity mirrors the table for the drift check.
 */
@Entity({ name: 'component_graph_versions' })
export class ComponentGraphVersionEntity {
  @PrimaryColumn({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'bigint' }) version: string;
  @Column({ name: 'previous_version', type: 'bigint', default: 0 }) previousVersion: string;
}
