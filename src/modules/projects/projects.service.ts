import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { Db } from '../../common/persistence/db.service';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import {
  AddMemberDto,
  CreateProjectDto,
  ListProjectsQueryDto,
  MemberDto,
  ProjectDto,
  ProjectSortKey,
  toProjectDto,
  UpdateMemberDto,
  UpdateProjectDto,
} from './dto/project.dto';
import { ProjectEntity, ProjectMemberEntity } from './entities/project.entity';

interface MemberRow {
  user_id: string;
  username: string;
  display_name: string | null;
  role: 'viewer' | 'tester' | 'lead';
  created_at: Date;
}

@Injectable()
export class ProjectsService {
  constructor(private readonly db: Db) {}

  async list(user: AuthenticatedUser, q: ListProjectsQueryDto): Promise<Page<ProjectDto>> {
    const qb = this.db.repo(ProjectEntity).createQueryBuilder('p');
    if (!user.isAdmin) {
      qb.innerJoin(ProjectMemberEntity, 'm', 'm.project_id = p.id AND m.user_id = :uid', {
        uid: user.id,
      });
    }
    if (q.search) {
      qb.andWhere('(p.name ILIKE :s OR p.description ILIKE :s)', { s: likePattern(q.search) });
    }
    const dir = (q.sort_order ?? 'desc') === 'asc' ? 'ASC' : 'DESC';
    qb.orderBy(PROJECT_SORT_KEYS[q.sort_by ?? 'created_at'], dir).addOrderBy('p.id', dir);
    qb.offset(offsetOf(q.page, q.page_size)).limit(q.page_size);
    const [rows, total] = await qb.getManyAndCount();
    return pageOf(rows.map(toProjectDto), q.page, q.page_size, total);
  }

  async create(user: AuthenticatedUser, dto: CreateProjectDto): Promise<ProjectDto> {
    const id = uuidv7();
    await this.db
      .repo(ProjectEntity)
      .insert({ id, name: dto.name, description: dto.description ?? null });
    await this.db
      .repo(ProjectMemberEntity)
      .insert({ projectId: id, userId: user.id, role: 'lead' });
    return this.get(id);
  }

  async get(id: string): Promise<ProjectDto> {
    const p = await this.db.repo(ProjectEntity).findOneBy({ id });
    if (!p) throw AppException.notFound('project_not_found', 'Project');
    return toProjectDto(p);
  }

  async update(id: string, dto: UpdateProjectDto): Promise<ProjectDto> {
    const patch: Partial<ProjectEntity> = {};
    if (dto.name !== undefined) patch.name = dto.name;
    if (dto.description !== undefined) patch.description = dto.description;
    if (Object.keys(patch).length > 0) await this.db.repo(ProjectEntity).update({ id }, patch);
    return this.get(id);
  }

  /** Removes the project and, through ON DELETE CASCADE, everything in it. */
  async remove(id: string): Promise<void> {
    await this.db.repo(ProjectEntity).delete({ id });
  }

  async members(projectId: string): Promise<{ items: MemberDto[] }> {
    const rows = await this.db.query<MemberRow>(
      `SELECT m.user_id, u.username, u.display_name, m.role, m.created_at
         FROM project_members m JOIN users u ON u.id = m.user_id
        WHERE m.project_id = $1 ORDER BY lower(u.username), m.user_id`,
      [projectId],
    );
    return { items: rows.map(toMemberDto) };
  }

  async addMember(access: ProjectAccess, dto: AddMemberDto): Promise<MemberDto> {
    // Ids are opaque: a malformed one is simply an unknown user.
    const user = isUuid(dto.user_id)
      ? await this.db.query<{ id: string; is_active: boolean }>(
          'SELECT id, is_active FROM users WHERE id = $1',
          [dto.user_id],
        )
      : [];
    if (!user[0]) throw AppException.notFound('user_not_found', 'User');
    if (!user[0].is_active)
      throw new AppException('invalid_user', 'The user is deactivated', {
        user_id: ['The user is deactivated'],
      });
    await this.db
      .repo(ProjectMemberEntity)
      .insert({ projectId: access.projectId, userId: dto.user_id, role: dto.role });
    return this.member(access.projectId, dto.user_id);
  }

  async updateMember(
    access: ProjectAccess,
    userId: string,
    dto: UpdateMemberDto,
  ): Promise<MemberDto> {
    const current = await this.lockedMember(access.projectId, userId);
    if (current.role === 'lead' && dto.role !== 'lead')
      await this.assertNotLastLead(access.projectId);
    await this.db
      .repo(ProjectMemberEntity)
      .update({ projectId: access.projectId, userId }, { role: dto.role });
    return this.member(access.projectId, userId);
  }

  async removeMember(access: ProjectAccess, userId: string): Promise<void> {
    const current = await this.lockedMember(access.projectId, userId);
    if (current.role === 'lead') await this.assertNotLastLead(access.projectId);
    await this.db.repo(ProjectMemberEntity).delete({ projectId: access.projectId, userId });
  }

  private async member(projectId: string, userId: string): Promise<MemberDto> {
    const rows = await this.db.query<MemberRow>(
      `SELECT m.user_id, u.username, u.display_name, m.role, m.created_at
         FROM project_members m JOIN users u ON u.id = m.user_id
        WHERE m.project_id = $1 AND m.user_id = $2`,
      [projectId, userId],
    );
    if (!rows[0]) throw AppException.notFound('project_member_not_found', 'Project member');
    return toMemberDto(rows[0]);
  }

  /**
   * Locks the project's lead memberships (in a stable order) and the target, so two concurrent
   * demotions cannot both pass the last-lead check.
   */
  private async lockedMember(projectId: string, userId: string): Promise<ProjectMemberEntity> {
    if (!isUuid(userId)) throw AppException.notFound('project_member_not_found', 'Project member');
    await this.db.query(`SELECT id FROM projects WHERE id = $1 FOR UPDATE`, [projectId]);
    const m = await this.db.repo(ProjectMemberEntity).findOneBy({ projectId, userId });
    if (!m) throw AppException.notFound('project_member_not_found', 'Project member');
    return m;
  }

  private async assertNotLastLead(projectId: string): Promise<void> {
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM project_members WHERE project_id = $1 AND role = 'lead'`,
      [projectId],
    );
    if ((rows[0]?.n ?? 0) <= 1) {
      throw new AppException(
        'last_lead',
        'A project must keep at least one lead; promote someone else first',
      );
    }
  }
}

const PROJECT_SORT_KEYS: Record<ProjectSortKey, string> = {
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  name: 'lower(p.name)',
};

function toMemberDto(r: MemberRow): MemberDto {
  return {
    user_id: r.user_id,
    username: r.username,
    display_name: r.display_name,
    role: r.role,
    created_at: new Date(r.created_at).toISOString(),
  };
}
