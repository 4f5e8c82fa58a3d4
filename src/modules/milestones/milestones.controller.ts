import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import {
  fromBody,
  fromQuery,
  fromResource,
  ProjectAccess,
  ResourceRef,
} from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { Page, PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  CreateMilestoneDto,
  ListMilestonesQueryDto,
  MilestoneDto,
  MilestoneSummaryDto,
  UpdateMilestoneDto,
} from './dto/milestone.dto';
import { MilestonesService } from './milestones.service';

export const MILESTONES: ResourceRef = {
  table: 'milestones',
  notFound: 'milestone_not_found',
  label: 'Milestone',
};
const milestone = fromResource(MILESTONES);

@ApiTags('milestones')
@Controller('milestones')
export class MilestonesController {
  constructor(private readonly milestones: MilestonesService) {}

  @Get()
  @Endpoint({
    summary: 'List milestones',
    description:
      'Filters: `status` (repeatable), `search` (name, description, release label). Ordered by ' +
      '`target_date` ascending (milestones without one last), then newest first.',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageSchema('MilestoneDto') },
  })
  list(@Query() q: ListMilestonesQueryDto): Promise<Page<MilestoneDto>> {
    return this.milestones.list(q);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a milestone',
    description:
      'Status defaults to `planned`; any status may be set at any time. `completed_at` is set to ' +
      'now when a milestone becomes `completed` without one. `start_date` must not be after ' +
      '`target_date` (422). An owner must have access to the project (422 `invalid_owner`).',
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: MilestoneDto,
    problems: ['invalid_owner'],
  })
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateMilestoneDto,
  ): Promise<MilestoneDto> {
    return this.milestones.create(user, dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a milestone',
    minRole: 'viewer',
    project: milestone,
    response: MilestoneDto,
  })
  get(@Param('id') id: string): Promise<MilestoneDto> {
    return this.milestones.get(id);
  }

  @Get(':id/summary')
  @Endpoint({
    summary: 'Milestone summary: linked plans and runs, run item counts by status, pass rate',
    description:
      'Counts cover every run linked to the milestone (any status). `total_tests` counts their run ' +
      'items; `pass_rate = round(passed / total_tests × 100, 2)`. Unlike the reference, the ' +
      '`in_progress` count is included. `overdue`: target date before today (UTC) and status ' +
      'neither completed nor archived.',
    minRole: 'viewer',
    project: milestone,
    response: MilestoneSummaryDto,
  })
  summary(@Param('id') id: string): Promise<MilestoneSummaryDto> {
    return this.milestones.summary(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    summary: 'Update a milestone',
    description: 'Only present keys change; `null` clears a nullable field.',
    minRole: 'tester',
    project: milestone,
    response: MilestoneDto,
    problems: ['invalid_owner'],
  })
  update(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: UpdateMilestoneDto,
  ): Promise<MilestoneDto> {
    return this.milestones.update(access, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    summary: 'Delete a milestone',
    description: 'Runs and test plans linked to it keep existing and lose the link.',
    minRole: 'lead',
    project: milestone,
    status: 204,
  })
  remove(@Param('id') id: string): Promise<void> {
    return this.milestones.remove(id);
  }
}
