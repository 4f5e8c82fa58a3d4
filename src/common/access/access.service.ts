import { Injectable } from '@nestjs/common';
import { AccessRefusal } from '../errors/app-exception';
import { ErrorCode } from '../errors/error-codes';
import { isUuid } from '../persistence/ids';
import { AuthenticatedUser } from '../auth/authenticated-user';
import { AccessRepository, MembershipRow, UserMembershipRow } from './access.repository';
import { ProjectAccess, ResourceRef } from './project-access';
import { hasRole, isProjectRole, ProjectRole } from './roles';

/**
 * Project access rules in one place (CONTRACT §4): non-members get the resource's 404, members below
 * the needed role get 403 `insufficient_project_role`, administrators act as lead everywhere.
 */
@Injectable()
export class AccessService {
  constructor(private readonly repo: AccessRepository) {}

  /** Resolves the caller's access to a project by id (404 `notFound` when it is not visible). */
  async forProject(
    user: AuthenticatedUser,
    projectId: unknown,
    notFound: ErrorCode = 'project_not_found',
  ): Promise<ProjectAccess> {
    if (!isUuid(projectId))
      throw AccessRefusal.hidden(
        notFound,
        notFound === 'project_not_found' ? 'Project' : 'Resource',
      );
    const row = await this.repo.projectMembership(projectId, user.id);
    return this.decide(user, row, notFound, 'Project');
  }

  /** Resolves the caller's access to the project owning resource `id` of `ref`. */
  async forResource(
    user: AuthenticatedUser,
    ref: ResourceRef,
    id: unknown,
  ): Promise<ProjectAccess> {
    if (!isUuid(id)) throw AccessRefusal.hidden(ref.notFound, ref.label);
    const row = await this.repo.resourceMembership(ref, id, user.id);
    return this.decide(user, row, ref.notFound, ref.label);
  }

  /**
   * The user row of `userId` and its membership in project `id` (no `ref`) or in the project owning
   * resource `id` of `ref`, read together; {@link decide} turns the membership into access once the
   * user is authenticated. `id` must be a uuid.
   */
  userAndMembership(userId: string, id: string, ref?: ResourceRef): Promise<UserMembershipRow> {
    return this.repo.userAndMembership(userId, id, ref);
  }

  /** 403 unless `access` carries at least `needed` (for rules that depend on the payload). */
  require(access: ProjectAccess, needed: ProjectRole, action?: string): void {
    if (!hasRole(access.role, needed)) {
      throw AccessRefusal.forbidden(
        `${action ? action + ' requires' : 'This operation requires'} the ${needed} role or higher in this project; you are ${access.role}`,
      );
    }
  }

  /**
   * True when `userId` may see the project: an active user who is a member or an administrator. A
   * deactivated user has no access to anything (it cannot sign in, its tokens and keys are revoked).
   */
  async canAccess(userId: string, projectId: string): Promise<boolean> {
    return this.repo.activeMemberOrAdmin(userId, projectId);
  }

  /** Access from a membership row: 404 `notFound` when not visible, administrators act as lead. */
  decide(
    user: AuthenticatedUser,
    row: MembershipRow | undefined,
    notFound: ErrorCode,
    label: string,
  ): ProjectAccess {
    if (!row) throw AccessRefusal.hidden(notFound, label);
    if (user.isAdmin) return { projectId: row.project_id, role: 'lead', isAdmin: true };
    if (!isProjectRole(row.role)) throw AccessRefusal.hidden(notFound, label);
    return { projectId: row.project_id, role: row.role, isAdmin: false };
  }
}
