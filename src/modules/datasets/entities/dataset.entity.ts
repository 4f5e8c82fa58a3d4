import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** One column of a dataset revision, as stored in `dataset_revisions.columns`. */
export interface StoredDatasetColumn {
  column_key: string;
  display_name: string;
  data_type: string;
  required: boolean;
  default_value: string | null;
  is_scenario_label: boolean;
}

/** One row of a dataset revision, as stored in `dataset_revisions.rows`. */
export interface StoredDatasetRow {
  row_key: string;
  scenario_label: string | null;
  values: Record<string, unknown>;
  is_active: boolean;
}

@Entity({ name: 'datasets' })
export class DatasetEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: string;
  @Column({ name: 'source_type', type: 'varchar', length: 32, default: 'manual' })
  sourceType: string;
  @Column({ name: 'source_ref', type: 'varchar', length: 512, nullable: true }) sourceRef:
    | string
    | null;
  @Column({ name: 'current_revision_number', type: 'integer', default: 0 })
  currentRevisionNumber: number;
  @Column({ name: 'current_revision_id', type: 'uuid', nullable: true }) currentRevisionId:
    | string
    | null;
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
  @Column({ name: 'archived_at', type: 'timestamptz', nullable: true }) archivedAt: Date | null;
}

@Entity({ name: 'dataset_revisions' })
export class DatasetRevisionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'dataset_id', type: 'uuid' }) datasetId: string;
  @Column({ name: 'revision_number', type: 'integer' }) revisionNumber: number;
  @Column({ name: 'rows_count', type: 'integer', default: 0 }) rowsCount: number;
  @Column({ type: 'jsonb', default: () => "'[]'" }) columns: StoredDatasetColumn[];
  @Column({ type: 'jsonb', default: () => "'[]'" }) rows: StoredDatasetRow[];
  @Column({ name: 'change_summary', type: 'text', nullable: true }) changeSummary: string | null;
  @Column({ name: 'created_by', type: 'uuid' }) createdBy: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity({ name: 'test_case_dataset_bindings' })
export class DatasetBindingEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'test_case_id', type: 'uuid' }) testCaseId: string;
  @Column({ name: 'dataset_id', type: 'uuid' }) datasetId: string;
  @Column({ name: 'dataset_alias', type: 'varchar', length: 128 }) datasetAlias: string;
  @Column({ type: 'varchar', length: 16, default: 'follow_latest' }) mode: string;
  @Column({ name: 'pinned_revision_number', type: 'integer', nullable: true })
  pinnedRevisionNumber: number | null;
  @Column({ name: 'row_selection_type', type: 'varchar', length: 16, default: 'all' })
  rowSelectionType: string;
  @Column({ name: 'selected_row_keys', type: 'text', array: true, default: () => "'{}'" })
  selectedRowKeys: string[];
  @Column({ name: 'sort_order', type: 'integer', default: 0 }) sortOrder: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
