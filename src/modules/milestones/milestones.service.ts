import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { computePassRate } from '../run-items/roll-up';
import {
  CreateMilestoneDto,
  ListMilestonesQueryDto,
  MilestoneDto,
  MilestoneSummaryDto,
  UpdateMilestoneDto,
} from './dto/milestone.dto';
import type { MilestoneStatus } from './entities/milestone.entity';
import { toInstant } from '../../common/validation/datetime';

interface MilestoneRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  status: MilestoneStatus;
  start_date: string | null;
  target_date: string | null;
  completed_at: Date | null;
  owner_id: string | null;
  release_label: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  total?: number;
}

/** Dates are read as text so that no time zone ever shifts a calendar date. */
const COLUMNS = `m.id, m.project_id, m.name, m.description, m.status,
  m.start_date::text AS start_date, m.target_date::text AS target_date, m.completed_at,
  m.owner_id, m.release_label, m.created_by, m.created_at, m.updated_at`;

function toMilestoneDto(r: MilestoneRow): MilestoneDto {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    description: r.description,
    status: r.status,
    start_date: r.start_date,
    target_date: r.target_date,
    completed_at: r.completed_at ? new Date(r.completed_at).toISOString() : null,
    owner_id: r.owner_id,
    release_label: r.release_label,
    created_by: r.created_by,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

/** Milestones (reference runs-imports-plans.md §7): CRUD, list and the summary of linked runs. */
@Injectable()
export class MilestonesService {
  constructor(
    private readonly db: Db,
    private readonly accessService: AccessService,
  ) {}

  async list(q: ListMilestonesQueryDto): Promise<Page<MilestoneDto>> {
    const where = ['m.project_id = $1'];
    const params: unknown[] = [q.project_id];
    if (q.status?.length) {
      params.push(q.status);
      where.push(`m.status = ANY($${params.length})`);
    }
    if (q.search) {
      params.push(likePattern(q.search));
      const p = `$${params.length}`;
      where.push(`(m.name ILIKE ${p} OR m.description ILIKE ${p} OR m.release_label ILIKE ${p})`);
    }
    params.push(q.page_size, offsetOf(q.page, q.page_size));
    const rows = await this.db.query<MilestoneRow>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total
         FROM milestones m
        WHERE ${where.join(' AND ')}
        ORDER BY m.target_date ASC NULLS LAST, m.created_at DESC, m.id DESC
        LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    const total = rows[0]?.total ?? (await this.count(where, params.slice(0, -2)));
    return pageOf(rows.map(toMilestoneDto), q.page, q.page_size, total);
  }

  private async count(where: string[], params: unknown[]): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM milestones m WHERE ${where.join(' AND ')}`,
      params,
    );
    return rows[0]?.n ?? 0;
  }

  async create(user: AuthenticatedUser, dto: CreateMilestoneDto): Promise<MilestoneDto> {
    checkDates(dto.start_date ?? null, dto.target_date ?? null);
    if (dto.owner_id) await this.checkOwner(dto.project_id, dto.owner_id);
    const status = dto.status ?? 'planned';
    const completedAt =
      dto.completed_at !== undefined && dto.completed_at !== null
        ? toInstant(dto.completed_at)
        : status === 'completed'
          ? new Date()
          : null;
    const id = uuidv7();
    await this.db.query(
      `INSERT INTO milestones (id, project_id, name, description, status, start_date, target_date,
                               completed_at, owner_id, release_label, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        id,
        dto.project_id,
        dto.name,
        dto.description ?? null,
        status,
        dto.start_date ?? null,
        dto.target_date ?? null,
        completedAt,
        dto.owner_id ?? null,
        dto.release_label ?? null,
        user.id,
      ],
    );
    return this.get(id);
  }

  async get(id: string): Promise<MilestoneDto> {
    const rows = await this.db.query<MilestoneRow>(
      `SELECT ${COLUMNS} FROM milestones m WHERE m.id = $1`,
      [id],
    );
    if (!rows[0]) throw AppException.notFound('milestone_not_found', 'Milestone');
    return toMilestoneDto(rows[0]);
  }

  async update(access: ProjectAccess, id: string, dto: UpdateMilestoneDto): Promise<MilestoneDto> {
    const rows = await this.db.query<MilestoneRow>(
      `SELECT ${COLUMNS} FROM milestones m WHERE m.id = $1 FOR UPDATE`,
      [id],
    );
    const current = rows[0];
    if (!current) throw AppException.notFound('milestone_not_found', 'Milestone');
    const start = dto.start_date !== undefined ? dto.start_date : current.start_date;
    const target = dto.target_date !== undefined ? dto.target_date : current.target_date;
    checkDates(start, target);
    if (dto.owner_id) await this.checkOwner(access.projectId, dto.owner_id);

    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (dto.name !== undefined) set('name', dto.name);
    if (dto.description !== undefined) set('description', dto.description);
    if (dto.status !== undefined) set('status', dto.status);
    if (dto.start_date !== undefined) set('start_date', dto.start_date);
    if (dto.target_date !== undefined) set('target_date', dto.target_date);
    if (dto.owner_id !== undefined) set('owner_id', dto.owner_id);
    if (dto.release_label !== undefined) set('release_label', dto.release_label);
    if (dto.completed_at !== undefined) {
      set('completed_at', dto.completed_at === null ? null : toInstant(dto.completed_at));
    } else if (
      dto.status === 'completed' &&
      current.status !== 'completed' &&
      current.completed_at === null
    ) {
      set('completed_at', new Date());
    }
    if (sets.length > 0) {
      await this.db.query(
        `UPDATE milestones SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
    }
    return this.get(id);
  }

  /** Deletes the milestone; runs (and plans) pointing at it lose the link (ON DELETE SET NULL). */
  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM milestones WHERE id = $1`, [id]);
  }

  async summary(id: string): Promise<MilestoneSummaryDto> {
    const rows = await this.db.query<{
      overdue: boolean;
      plans_total: number;
      planned_cases_total: number;
      runs_total: number;
      planned_runs: number;
      active_runs: number;
      completed_runs: number;
      archived_runs: number;
      untested: number;
      in_progress: number;
      passed: number;
      error: number;
      failure: number;
      blocked: number;
      skipped: number;
      xfailed: number;
      xpassed: number;
    }>(
      `SELECT (m.target_date IS NOT NULL
                 AND m.target_date < (now() AT TIME ZONE 'UTC')::date
                 AND m.status NOT IN ('completed', 'archived')) AS overdue,
              (SELECT count(*) FROM test_plans p WHERE p.milestone_id = m.id)::int AS plans_total,
              (SELECT count(*) FROM test_plan_cases pc JOIN test_plans p ON p.id = pc.test_plan_id
                WHERE p.milestone_id = m.id)::int AS planned_cases_total,
              count(r.id)::int AS runs_total,
              count(r.id) FILTER (WHERE r.status = 'not_started')::int AS planned_runs,
              count(r.id) FILTER (WHERE r.status = 'in_progress')::int AS active_runs,
              count(r.id) FILTER (WHERE r.status = 'completed')::int AS completed_runs,
              count(r.id) FILTER (WHERE r.status = 'archived')::int AS archived_runs,
              coalesce(sum(r.count_untested), 0)::int AS untested,
              coalesce(sum(r.count_in_progress), 0)::int AS in_progress,
              coalesce(sum(r.count_passed), 0)::int AS passed,
              coalesce(sum(r.count_error), 0)::int AS error,
              coalesce(sum(r.count_failure), 0)::int AS failure,
              coalesce(sum(r.count_blocked), 0)::int AS blocked,
              coalesce(sum(r.count_skipped), 0)::int AS skipped,
              coalesce(sum(r.count_xfailed), 0)::int AS xfailed,
              coalesce(sum(r.count_xpassed), 0)::int AS xpassed
         FROM milestones m
         LEFT JOIN test_runs r ON r.milestone_id = m.id
        WHERE m.id = $1
        GROUP BY m.id`,
      [id],
    );
    const s = rows[0];
    if (!s) throw AppException.notFound('milestone_not_found', 'Milestone');
    const totalTests =
      s.untested +
      s.in_progress +
      s.passed +
      s.error +
      s.failure +
      s.blocked +
      s.skipped +
      s.xfailed +
      s.xpassed;
    return {
      milestone_id: id,
      plans_total: s.plans_total,
      planned_cases_total: s.planned_cases_total,
      runs_total: s.runs_total,
      planned_runs: s.planned_runs,
      active_runs: s.active_runs,
      completed_runs: s.completed_runs,
      archived_runs: s.archived_runs,
      total_tests: totalTests,
      untested: s.untested,
      in_progress: s.in_progress,
      passed: s.passed,
      error: s.error,
      failure: s.failure,
      blocked: s.blocked,
      skipped: s.skipped,
      xfailed: s.xfailed,
      xpassed: s.xpassed,
      pass_rate: computePassRate(s.passed, totalTests),
      overdue: s.overdue,
    };
  }

  private async checkOwner(projectId: string, ownerId: string): Promise<void> {
    if (!(await this.accessService.canAccess(ownerId, projectId))) {
      throw new AppException('invalid_owner', 'The owner has no access to this project', {
        owner_id: ['The owner must be a user with access to the project'],
      });
    }
  }
}

function checkDates(start: string | null, target: string | null): void {
  if (start && target && start > target) {
    throw AppException.validation({
      target_date: ['target_date must not be earlier than start_date'],
    });
  }
}
