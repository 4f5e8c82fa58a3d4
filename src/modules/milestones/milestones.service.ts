import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { uuidv7 } from '../../common/persistence/ids';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { computePassRate } from '../test-runs/run-summary';
import {
  CreateMilestoneDto,
  ListMilestonesQueryDto,
  MilestoneDto,
  MilestoneSummaryDto,
  UpdateMilestoneDto,
} from './dto/milestone.dto';
import { MilestonePatch, MilestoneRow, MilestonesRepository } from './milestones.repository';
import { toInstant } from '../../common/validation/datetime';

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
    private readonly milestones: MilestonesRepository,
    private readonly accessService: AccessService,
  ) {}

  async list(q: ListMilestonesQueryDto): Promise<Page<MilestoneDto>> {
    const { rows, total } = await this.milestones.page({
      projectId: q.project_id,
      statuses: q.status,
      search: q.search,
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    });
    return pageOf(rows.map(toMilestoneDto), q.page, q.page_size, total);
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
    await this.milestones.insert({
      id,
      projectId: dto.project_id,
      name: dto.name,
      description: dto.description ?? null,
      status,
      startDate: dto.start_date ?? null,
      targetDate: dto.target_date ?? null,
      completedAt,
      ownerId: dto.owner_id ?? null,
      releaseLabel: dto.release_label ?? null,
      createdBy: user.id,
    });
    return this.get(id);
  }

  async get(id: string): Promise<MilestoneDto> {
    const row = await this.milestones.findById(id);
    if (!row) throw AppException.notFound('milestone_not_found', 'Milestone');
    return toMilestoneDto(row);
  }

  async update(access: ProjectAccess, id: string, dto: UpdateMilestoneDto): Promise<MilestoneDto> {
    const current = await this.milestones.findByIdForUpdate(id);
    if (!current) throw AppException.notFound('milestone_not_found', 'Milestone');
    const start = dto.start_date !== undefined ? dto.start_date : current.start_date;
    const target = dto.target_date !== undefined ? dto.target_date : current.target_date;
    checkDates(start, target, dto.target_date === undefined ? 'start_date' : 'target_date');
    // Re-sending the current owner is accepted even after they left the project (as a run's
    // current assignee is): a client PATCHing back the object it read is not refused for it.
    if (dto.owner_id && dto.owner_id.toLowerCase() !== current.owner_id?.toLowerCase())
      await this.checkOwner(access.projectId, dto.owner_id);

    const patch: MilestonePatch = {};
    if (dto.name !== undefined) patch.name = dto.name;
    if (dto.description !== undefined) patch.description = dto.description;
    if (dto.status !== undefined) patch.status = dto.status;
    if (dto.start_date !== undefined) patch.start_date = dto.start_date;
    if (dto.target_date !== undefined) patch.target_date = dto.target_date;
    if (dto.owner_id !== undefined) patch.owner_id = dto.owner_id;
    if (dto.release_label !== undefined) patch.release_label = dto.release_label;
    if (dto.completed_at !== undefined) {
      patch.completed_at = dto.completed_at === null ? null : toInstant(dto.completed_at);
    } else if (
      dto.status === 'completed' &&
      current.status !== 'completed' &&
      current.completed_at === null
    ) {
      patch.completed_at = new Date();
    }
    await this.milestones.update(id, patch);
    return this.get(id);
  }

  /** Deletes the milestone; runs (and plans) pointing at it lose the link (ON DELETE SET NULL). */
  async remove(id: string): Promise<void> {
    await this.milestones.delete(id);
  }

  async summary(id: string): Promise<MilestoneSummaryDto> {
    const s = await this.milestones.summary(id);
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

/** 422 when the target date comes before the start date, keyed by the field the request sent. */
function checkDates(
  start: string | null,
  target: string | null,
  field: 'start_date' | 'target_date' = 'target_date',
): void {
  if (start && target && start > target) {
    throw AppException.validation({
      [field]:
        field === 'target_date'
          ? ['target_date must not be earlier than start_date']
          : ['start_date must not be later than target_date'],
    });
  }
}
