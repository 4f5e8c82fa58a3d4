import { Injectable } from '@nestjs/common';
import { Db } from '../persistence/db.service';
import { ResourceRef } from './project-access';

/** A project as its caller sees it: its id and the caller's membership role (null: no member). */
export interface MembershipRow {
  project_id: string;
  role: string | null;
}

/** The statements of the access checks (every project-scoped request runs one). */
@Injectable()
export class AccessRepository {
  constructor(private readonly db: Db) {}

  /** The project `projectId` with `userId`'s role in it, or undefined when there is no such project. */
  async projectMembership(projectId: string, userId: string): Promise<MembershipRow | undefined> {
    const rows = await this.db.prepared<{ id: string; role: string | null }>(
      'access.project',
      `SELECT p.id, m.role FROM projects p
         LEFT JOIN project_members m ON m.project_id = p.id AND m.user_id = $2
        WHERE p.id = $1`,
      [projectId, userId],
    );
    return rows[0] ? { project_id: rows[0].id, role: rows[0].role } : undefined;
  }

  /** The project owning resource `id` of `ref` with `userId`'s role in it, or undefined. */
  async resourceMembership(ref: ResourceRef, id: string, userId: string): Promise<MembershipRow | undefined> {
    const col = ref.projectColumn ?? 'project_id';
    // Table and column names come from code constants (ResourceRef), never from input.
    const rows = await this.db.prepared<MembershipRow>(
      `access.${ref.table}.${col}`,
      `SELECT r.${col} AS project_id, m.role FROM ${ref.table} r
         LEFT JOIN project_members m ON m.project_id = r.${col} AND m.user_id = $2
        WHERE r.id = $1`,
      [id, userId],
    );
    return rows[0];
  }

  /** True when `userId` is an active user who is a member of the project or an administrator. */
  async activeMemberOrAdmin(userId: string, projectId: string): Promise<boolean> {
    const rows = await this.db.query<{ ok: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM users u
                       WHERE u.id = $2 AND u.is_active
                         AND (u.is_admin OR EXISTS (SELECT 1 FROM project_members m
                                                     WHERE m.project_id = $1 AND m.user_id = u.id))) AS ok`,
      [projectId, userId],
    );
    return rows[0]?.ok === true;
  }
}
