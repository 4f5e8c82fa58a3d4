import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** `products`: a named grouping of components. */
@Entity({ name: 'products' })
export class ProductEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 100 }) key: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ name: 'owner_id', type: 'uuid', nullable: true }) ownerId: string | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: 'active' | 'archived';
  @Column({ type: 'text', array: true, default: () => "'{}'" }) tags: string[];
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
