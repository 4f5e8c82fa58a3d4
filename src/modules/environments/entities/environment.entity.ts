import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** Reads a PostgreSQL `bigint` (returned as a string by node-postgres) as a number. */
const bigintAsNumber = {
  to: (value: number): number => value,
  from: (value: string | number | null): number => Number(value ?? 0),
};

/**
 * `environments`: one row per environment, mirroring its current revision's snapshot (for list
 * filters and sorts) plus the counters derived from it. Matches migration 1763700000100.
 */
@Entity({ name: 'environments' })
export class EnvironmentEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 64, default: 'custom' }) kind: string;
  @Column({ type: 'varchar', length: 64, default: 'active' }) status: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'text', array: true, default: () => "'{}'" }) tags: string[];
  @Column({ name: 'use_cases', type: 'text', array: true, default: () => "'{}'" })
  useCases: string[];
  @Column({ name: 'schema_version', type: 'integer', default: 1 }) schemaVersion: number;
  @Column({ type: 'jsonb', default: () => "'{}'" }) topology: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'{}'" }) meta: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'{}'" }) extra: Record<string, unknown>;
  @Column({ name: 'current_revision_id', type: 'uuid' }) currentRevisionId: string;
  @Column({ name: 'current_revision_number', type: 'integer' }) currentRevisionNumber: number;
  @Column({ name: 'snapshot_hash', type: 'text' }) snapshotHash: string;
  @Column({ name: 'entities_count', type: 'integer', default: 0 }) entitiesCount: number;
  @Column({ name: 'edges_count', type: 'integer', default: 0 }) edgesCount: number;
  @Column({ name: 'topology_component_count', type: 'integer', default: 0 })
  topologyComponentCount: number;
  @Column({ name: 'topology_node_count', type: 'bigint', default: 0, transformer: bigintAsNumber })
  topologyNodeCount: number;
  @Column({ name: 'topology_endpoint_count', type: 'integer', default: 0 })
  topologyEndpointCount: number;
  @Column({ name: 'infra_host_types', type: 'text', array: true, default: () => "'{}'" })
  infraHostTypes: string[];
  @Column({ name: 'infra_providers', type: 'text', array: true, default: () => "'{}'" })
  infraProviders: string[];
  @Column({ name: 'infra_regions', type: 'text', array: true, default: () => "'{}'" })
  infraRegions: string[];
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @Column({ name: 'updated_by', type: 'uuid' }) updatedBy: string;
  @Column({ name: 'archived_at', type: 'timestamptz', nullable: true }) archivedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/**
 * `environment_revisions`: immutable numbered snapshots of an environment; exactly one per
 * environment has `is_current`. Matches migration 1763700000100.
 */
@Entity({ name: 'environment_revisions' })
export class EnvironmentRevisionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'environment_id', type: 'uuid' }) environmentId: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'revision_number', type: 'integer' }) revisionNumber: number;
  @Column({ name: 'schema_version', type: 'integer', default: 1 }) schemaVersion: number;
  @Column({ name: 'is_current', type: 'boolean', default: false }) isCurrent: boolean;
  @Column({ name: 'revision_note', type: 'text', nullable: true }) revisionNote: string | null;
  @Column({ name: 'full_snapshot', type: 'jsonb' }) fullSnapshot: Record<string, unknown>;
  @Column({ name: 'snapshot_hash', type: 'text' }) snapshotHash: string;
  @Column({ type: 'jsonb', default: () => "'[]'" }) entities: unknown[];
  @Column({ type: 'jsonb', default: () => "'[]'" }) edges: unknown[];
  @Column({ name: 'entities_count', type: 'integer', default: 0 }) entitiesCount: number;
  @Column({ name: 'edges_count', type: 'integer', default: 0 }) edgesCount: number;
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
