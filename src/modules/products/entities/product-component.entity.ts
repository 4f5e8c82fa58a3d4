import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * `product_components`: a component linked to a product (same project), one row per pair. The
 * link id is a time-ordered uuid allocated in payload order, so it breaks `sort_order` ties.
 */
@Entity({ name: 'product_components' })
export class ProductComponentEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'product_id', type: 'uuid' }) productId: string;
  @Column({ name: 'component_id', type: 'uuid' }) componentId: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'is_core', type: 'boolean', default: false }) isCore: boolean;
  @Column({ name: 'sort_order', type: 'integer', default: 0 }) sortOrder: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
