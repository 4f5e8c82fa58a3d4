import { Injectable } from '@nestjs/common';
import { AppException } from '../errors/app-exception';
import { ErrorCode } from '../errors/error-codes';
import { isUuid } from '../persistence/ids';
import { Db } from '../persistence/db.service';
import { AuthenticatedUser } from '../auth/authenticated-user';
import { ProjectAccess, ResourceRef } from './project-access';
import { hasRole, isProjectRole, ProjectRole } from './roles';

/**
 * Project access rules in one place (CONTRACT §4): non-members get the resource's 404, members below
 * the needed role get 403 `insufficient_project_role`, administrators act as lead everywhere.
 */
@Injectable()
export class AccessService {
  constructor(private readonly db: Db) {}

  /** Resolves the caller's access to a project by id (404 `notFound` when it is not visible). */
  async forProject(user: AuthenticatedUser, projectId: unknown, notFound: ErrorCode = 'project_not_found'): Promise<ProjectAccess> {
    if (!isUuid(projectId)) throw AppException.notFound(notFound, notFound === 'project_not_found' ? 'Project' : 'Resource');
    const rows = await this.db.prepared<{ id: string; role: string | null }>(
      'access.project',
      `SELECT p.id, m.role FROM projects p
         LEFT JOIN project_members m ON m.project_id = p.id AND m.user_id = $2
        WHERE p.id = $1`,
      [projectId, user.id],
    );
    return this.decide(user, rows[0] ? { projectId: rows[0].id, role: rows[0].role } : null, notFound, 'Project');
  }

  /** Resolves the caller's access to the project owning resource `id` of `ref`. */
  async forResource(user: AuthenticatedUser, ref: ResourceRef, id: unknown): Promise<ProjectAccess> {
    if (!isUuid(id)) throw AppException.notFound(ref.notFound, ref.label);
    const col = ref.projectColumn ?? 'project_id';
    // Table and column names come from code constants (ResourceRef), never from input.
    const rows = await this.db.prepared<{ project_id: string; role: string | null }>(
      `access.${ref.table}.${col}`,
      `SELECT r.${col} AS project_id, m.role FROM ${ref.table} r
         LEFT JOIN project_members m ON m.project_id = r.${col} AND m.user_id = $2
        WHERE r.id = $1`,
      [id, user.id],
    );
    return this.decide(user, rows[0] ? { projectId: rows[0].project_id, role: rows[0].role } : null, ref.notFound, ref.label);
  }

  /** 403 unless `access` carries at least `needed` (for rules that depend on the payload). */
  require(access: ProjectAccess, needed: ProjectRole, action?: string): void {
    if (!hasRole(access.role, needed)) {
      throw new AppException(
        'insufficient_project_role',
        `${action ? action + ' requires' : 'This operation requires'} the ${needed} role or higher in this project; you are ${access.role}`,
      );
    }
  }

  /**
   * True when `userId` may see the project: an active user who is a member or an administrator. A
   * deactivated user has no access to anything (it cannot sign in, its tokens and keys are revoked).
   */
  async canAccess(userId: string, projectId: string): Promise<boolean> {
    const rows = await this.db.query<{ ok: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM users u
                       WHERE u.id = $2 AND u.is_active
                         AND (u.is_admin OR EXISTS (SELECT 1 FROM project_members m
                                                     WHERE m.project_id = $1 AND m.user_id = u.id))) AS ok`,
      [projectId, userId],
    );
    return rows[0]?.ok === true;
  }

  private decide(
    user: AuthenticatedUser,
    row: { projectId: string; role: string | null } | null,
    notFound: ErrorCode,
    label: string,
  ): ProjectAccess {
    if (!row) throw AppException.notFound(notFound, label);
    if (user.isAdmin) return { projectId: row.projectId, role: 'lead', isAdmin: true };
    if (!isProjectRole(row.role)) throw AppException.notFound(notFound, label);
    return { projectId: row.projectId, role: row.role, isAdmin: false };
  }
}
