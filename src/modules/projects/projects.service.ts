import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import {
  AddMemberDto,
  CreateProjectDto,
  ListProjectsQueryDto,
  MemberDto,
  ProjectDto,
  toProjectDto,
  UpdateMemberDto,
  UpdateProjectDto,
} from './dto/project.dto';
import { MemberRow, ProjectRole, ProjectsRepository } from './projects.repository';

@Injectable()
export class ProjectsService {
  constructor(private readonly projects: ProjectsRepository) {}

  async list(user: AuthenticatedUser, q: ListProjectsQueryDto): Promise<Page<ProjectDto>> {
    const [rows, total] = await this.projects.page({
      memberId: user.isAdmin ? null : user.id,
      search: q.search,
      sortBy: q.sort_by ?? 'created_at',
      direction: (q.sort_order ?? 'desc') === 'asc' ? 'ASC' : 'DESC',
      offset: offsetOf(q.page, q.page_size),
      limit: q.page_size,
    });
    return pageOf(rows.map(toProjectDto), q.page, q.page_size, total);
  }

  async create(user: AuthenticatedUser, dto: CreateProjectDto): Promise<ProjectDto> {
    const id = uuidv7();
    await this.projects.insert({ id, name: dto.name, description: dto.description ?? null });
    await this.projects.insertMember(id, user.id, 'lead');
    return this.get(id);
  }

  async get(id: string): Promise<ProjectDto> {
    const p = await this.projects.findById(id);
    if (!p) throw AppException.notFound('project_not_found', 'Project');
    return toProjectDto(p);
  }

  async update(id: string, dto: UpdateProjectDto): Promise<ProjectDto> {
    const patch: { name?: string; description?: string | null } = {};
    if (dto.name !== undefined) patch.name = dto.name;
    if (dto.description !== undefined) patch.description = dto.description;
    if (Object.keys(patch).length > 0) await this.projects.update(id, patch);
    return this.get(id);
  }

  /** Removes the project and, through ON DELETE CASCADE, everything in it. */
  async remove(id: string): Promise<void> {
    await this.projects.delete(id);
  }

  async members(projectId: string): Promise<{ items: MemberDto[] }> {
    const rows = await this.projects.listMembers(projectId);
    return { items: rows.map(toMemberDto) };
  }

  async addMember(access: ProjectAccess, dto: AddMemberDto): Promise<MemberDto> {
    // Ids are opaque: a malformed one is simply an unknown user.
    const active = isUuid(dto.user_id) ? await this.projects.findUserActive(dto.user_id) : null;
    if (active === null) throw AppException.notFound('user_not_found', 'User');
    if (!active)
      throw new AppException('invalid_user', 'The user is deactivated', {
        user_id: ['The user is deactivated'],
      });
    await this.projects.insertMember(access.projectId, dto.user_id, dto.role);
    return this.member(access.projectId, dto.user_id);
  }

  async updateMember(
    access: ProjectAccess,
    userId: string,
    dto: UpdateMemberDto,
  ): Promise<MemberDto> {
    const role = await this.lockedMemberRole(access.projectId, userId);
    if (role === 'lead' && dto.role !== 'lead')
      await this.assertNotLastLead(access.projectId, userId);
    await this.projects.updateMemberRole(access.projectId, userId, dto.role);
    return this.member(access.projectId, userId);
  }

  async removeMember(access: ProjectAccess, userId: string): Promise<void> {
    const role = await this.lockedMemberRole(access.projectId, userId);
    if (role === 'lead') await this.assertNotLastLead(access.projectId, userId);
    await this.projects.deleteMember(access.projectId, userId);
  }

  private async member(projectId: string, userId: string): Promise<MemberDto> {
    const row = await this.projects.findMember(projectId, userId);
    if (!row) throw AppException.notFound('project_member_not_found', 'Project member');
    return toMemberDto(row);
  }

  /**
   * Locks the project (so two concurrent demotions cannot both pass the last-lead check) and
   * returns the target's role.
   */
  private async lockedMemberRole(projectId: string, userId: string): Promise<ProjectRole> {
    if (!isUuid(userId)) throw AppException.notFound('project_member_not_found', 'Project member');
    await this.projects.lockForUpdate(projectId);
    const role = await this.projects.findMemberRole(projectId, userId);
    if (role === null) throw AppException.notFound('project_member_not_found', 'Project member');
    return role;
  }

  /**
   * A lead may be demoted or removed only when another lead stays, and, when the lead is active,
   * another active one: a project left with deactivated leads only has nobody to manage it.
   */
  private async assertNotLastLead(projectId: string, userId: string): Promise<void> {
    const others = await this.projects.otherLeads(projectId, userId);
    const active = await this.projects.findUserActive(userId);
    if (others.all === 0 || (active === true && others.active === 0)) {
      throw new AppException(
        'last_lead',
        'A project must keep at least one lead; promote someone else first',
      );
    }
  }
}

function toMemberDto(r: MemberRow): MemberDto {
  return {
    user_id: r.user_id,
    username: r.username,
    display_name: r.display_name,
    role: r.role,
    created_at: new Date(r.created_at).toISOString(),
  };
}
