import { Injectable } from '@nestjs/common';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import type { ProjectSortKey } from './dto/project.dto';
import { ProjectEntity, ProjectMemberEntity } from './entities/project.entity';

export type ProjectRole = ProjectMemberEntity['role'];

/** A membership joined with its user, as the member endpoints answer it. */
export interface MemberRow {
  user_id: string;
  username: string;
  display_name: string | null;
  role: ProjectRole;
  created_at: Date;
}

/** The projects list: who asks (non-admins see their projects only), filter, order, page. */
export interface ProjectPageQuery {
  /** Only projects this user is a member of; `null` for every project (administrators). */
  memberId: string | null;
  search?: string;
  sortBy: ProjectSortKey;
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
}

const PROJECT_SORT_KEYS: Record<ProjectSortKey, string> = {
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  name: 'lower(p.name)',
};

const MEMBER_SELECT = `SELECT m.user_id, u.username, u.display_name, m.role, m.created_at
         FROM project_members m JOIN users u ON u.id = m.user_id`;

/**
 * `projects` and `project_members`: projects are read as {@link ProjectEntity}, memberships as
 * {@link MemberRow} (with the user's names).
 */
@Injectable()
export class ProjectsRepository {
  constructor(private readonly db: Db) {}

  /** One page of projects and the total (TypeORM's getManyAndCount). */
  async page(q: ProjectPageQuery): Promise<[ProjectEntity[], number]> {
    const qb = this.db.repo(ProjectEntity).createQueryBuilder('p');
    if (q.memberId !== null) {
      qb.innerJoin(ProjectMemberEntity, 'm', 'm.project_id = p.id AND m.user_id = :uid', {
        uid: q.memberId,
      });
    }
    if (q.search) {
      qb.andWhere('(p.name ILIKE :s OR p.description ILIKE :s)', { s: likePattern(q.search) });
    }
    qb.orderBy(PROJECT_SORT_KEYS[q.sortBy], q.direction).addOrderBy('p.id', q.direction);
    qb.offset(q.offset).limit(q.limit);
    return qb.getManyAndCount();
  }

  async findById(id: string): Promise<ProjectEntity | null> {
    return this.db.repo(ProjectEntity).findOneBy({ id });
  }

  async insert(project: Pick<ProjectEntity, 'id' | 'name' | 'description'>): Promise<void> {
    await this.db.repo(ProjectEntity).insert(project);
  }

  async update(
    id: string,
    patch: Partial<Pick<ProjectEntity, 'name' | 'description'>>,
  ): Promise<void> {
    await this.db.repo(ProjectEntity).update({ id }, patch);
  }

  /** Deletes the project; ON DELETE CASCADE removes everything in it. */
  async delete(id: string): Promise<void> {
    await this.db.repo(ProjectEntity).delete({ id });
  }

  /** Locks the project row (FOR UPDATE) so membership changes of one project serialise. */
  async lockForUpdate(projectId: string): Promise<void> {
    await this.db.query(`SELECT id FROM projects WHERE id = $1 FOR UPDATE`, [projectId]);
  }

  /** The project's members, by username (case-insensitive), then user id. */
  async listMembers(projectId: string): Promise<MemberRow[]> {
    return this.db.query<MemberRow>(
      `${MEMBER_SELECT}
        WHERE m.project_id = $1 ORDER BY lower(u.username), m.user_id`,
      [projectId],
    );
  }

  async findMember(projectId: string, userId: string): Promise<MemberRow | null> {
    const rows = await this.db.query<MemberRow>(
      `${MEMBER_SELECT}
        WHERE m.project_id = $1 AND m.user_id = $2`,
      [projectId, userId],
    );
    return rows[0] ?? null;
  }

  /** The member's role, or `null` when the user is no member of the project. */
  async findMemberRole(projectId: string, userId: string): Promise<ProjectRole | null> {
    const m = await this.db.repo(ProjectMemberEntity).findOneBy({ projectId, userId });
    return m?.role ?? null;
  }

  async insertMember(projectId: string, userId: string, role: ProjectRole): Promise<void> {
    await this.db.repo(ProjectMemberEntity).insert({ projectId, userId, role });
  }

  async updateMemberRole(projectId: string, userId: string, role: ProjectRole): Promise<void> {
    await this.db.repo(ProjectMemberEntity).update({ projectId, userId }, { role });
  }

  async deleteMember(projectId: string, userId: string): Promise<void> {
    await this.db.repo(ProjectMemberEntity).delete({ projectId, userId });
  }

  /**
   * The project's leads other than `userId`: how many, and how many of them are active (a
   * deactivated lead can do nothing until reactivated).
   */
  async otherLeads(projectId: string, userId: string): Promise<{ all: number; active: number }> {
    const rows = await this.db.query<{ all: number; active: number }>(
      `SELECT count(*)::int AS all, count(*) FILTER (WHERE u.is_active)::int AS active
         FROM project_members m JOIN users u ON u.id = m.user_id
        WHERE m.project_id = $1 AND m.role = 'lead' AND m.user_id <> $2`,
      [projectId, userId],
    );
    return rows[0] ?? { all: 0, active: 0 };
  }

  /** Whether a user exists and is active (`null` when there is no such user). */
  async findUserActive(userId: string): Promise<boolean | null> {
    const rows = await this.db.query<{ id: string; is_active: boolean }>(
      'SELECT id, is_active FROM users WHERE id = $1',
      [userId],
    );
    return rows[0] ? rows[0].is_active : null;
  }
}
