import { Injectable } from '@nestjs/common';
import type { CredentialUserRow } from '../auth/credentials.repository';
import { Db } from '../persistence/db.service';
import { ResourceRef } from './project-access';

/** A project as its caller sees it: its id and the caller's membership role (null: no member). */
export interface MembershipRow {
  project_id: string;
  role: string | null;
}

/** A user as authentication reads it, with the membership of one project (see `userAndMembership`). */
export interface UserMembershipRow {
  user: CredentialUserRow | undefined;
  membership: MembershipRow | undefined;
}

type JoinedRow = CredentialUserRow & { project_id: string | null; role: string | null };

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
  async resourceMembership(
    ref: ResourceRef,
    id: string,
    userId: string,
  ): Promise<MembershipRow | undefined> {
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

  /**
   * Authentication's user row and the access check's membership in one statement: user `userId`,
   * and the project `id` (no `ref`) or the project owning resource `id` of `ref`, with the user's
   * role in it. `membership` is undefined when there is no such project or resource.
   */
  async userAndMembership(
    userId: string,
    id: string,
    ref?: ResourceRef,
  ): Promise<UserMembershipRow> {
    const table = ref?.table ?? 'projects';
    const col = ref ? (ref.projectColumn ?? 'project_id') : 'id';
    // Table and column names come from code constants (ResourceRef), never from input.
    const rows = await this.db.prepared<JoinedRow>(
      `access.user.${table}.${col}`,
      `SELECT u.id, u.username, u.display_name, u.is_admin, u.is_active, u.token_version,
              r.${col} AS project_id, m.role
         FROM users u
         LEFT JOIN ${table} r ON r.id = $2
         LEFT JOIN project_members m ON m.project_id = r.${col} AND m.user_id = u.id
        WHERE u.id = $1`,
      [userId, id],
    );
    const row = rows[0];
    if (!row) return { user: undefined, membership: undefined };
    const { project_id, role, ...user } = row;
    return { user, membership: project_id !== null ? { project_id, role } : undefined };
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
