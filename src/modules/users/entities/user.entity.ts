import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryColumn('uuid') id: string;
  @Column({ type: 'varchar', length: 64 }) username: string;
  @Column({ name: 'display_name', type: 'varchar', length: 200, nullable: true }) displayName: string | null;
  @Column({ type: 'varchar', length: 320, nullable: true }) email: string | null;
  @Column({ name: 'password_hash', type: 'varchar', length: 512 }) passwordHash: string;
  @Column({ name: 'is_admin', type: 'boolean', default: false }) isAdmin: boolean;
  @Column({ name: 'is_active', type: 'boolean', default: true }) isActive: boolean;
  @Column({ name: 'token_version', type: 'integer', default: 0 }) tokenVersion: number;
  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true }) lastLoginAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
