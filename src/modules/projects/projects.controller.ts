import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromResource, ProjectAccess, PROJECTS } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  AddMemberDto,
  CreateProjectDto,
  ListProjectsQueryDto,
  MemberDto,
  MemberListDto,
  ProjectDto,
  UpdateMemberDto,
  UpdateProjectDto,
} from './dto/project.dto';
import { ProjectsService } from './projects.service';

const project = fromResource(PROJECTS);

@ApiTags('projects')
@Controller('projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Get()
  @Endpoint({
    summary: 'List projects',
    description:
      'Administrators see every project, other users the projects they are members of. `search` matches name or description (case-insensitive substring). Default order: newest first (`sort_by=created_at`, `sort_order=desc`); ties are broken by id.',
    access: 'authenticated',
    response: { schema: PageSchema('ProjectDto') },
  })
  list(@CurrentUser() user: AuthenticatedUser, @Query() q: ListProjectsQueryDto) {
    return this.projects.list(user, q);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a project (the creator becomes its lead)',
    access: 'authenticated',
    status: 201,
    response: ProjectDto,
  })
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateProjectDto,
  ): Promise<ProjectDto> {
    return this.projects.create(user, dto);
  }

  @Get(':id')
  @Endpoint({ summary: 'Get a project', minRole: 'viewer', project, response: ProjectDto })
  get(@Param('id') id: string): Promise<ProjectDto> {
    return this.projects.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({ summary: 'Update a project', minRole: 'lead', project, response: ProjectDto })
  update(@Param('id') id: string, @Body() dto: UpdateProjectDto): Promise<ProjectDto> {
    return this.projects.update(id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    summary: 'Delete a project and everything in it',
    minRole: 'lead',
    project,
    status: 204,
  })
  remove(@Param('id') id: string): Promise<void> {
    return this.projects.remove(id);
  }

  @Get(':id/members')
  @Endpoint({
    summary: 'List project members',
    minRole: 'viewer',
    project,
    response: MemberListDto,
  })
  members(@CurrentAccess() access: ProjectAccess) {
    return this.projects.members(access.projectId);
  }

  @Post(':id/members')
  @Transactional()
  @Endpoint({
    summary: 'Add a member',
    minRole: 'lead',
    project,
    status: 201,
    response: MemberDto,
    description:
      'An unknown `user_id` → 404 `user_not_found`, a deactivated user → 422 `invalid_user`, an existing member → 409 `project_member_already_exists`.',
    problems: ['project_member_already_exists', 'user_not_found', 'invalid_user'],
  })
  addMember(@CurrentAccess() access: ProjectAccess, @Body() dto: AddMemberDto): Promise<MemberDto> {
    return this.projects.addMember(access, dto);
  }

  @Patch(':id/members/:user_id')
  @Transactional()
  @Endpoint({
    summary: "Change a member's role",
    description:
      'The last lead cannot be demoted (409 `last_lead`), nor the last active one (a deactivated ' +
      'lead does not count as another lead for an active one; it may itself be demoted when another lead stays).',
    minRole: 'lead',
    project,
    response: MemberDto,
    problems: ['project_member_not_found', 'last_lead'],
  })
  updateMember(
    @CurrentAccess() access: ProjectAccess,
    @Param('user_id') userId: string,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.projects.updateMember(access, userId, dto);
  }

  @Delete(':id/members/:user_id')
  @Transactional()
  @Endpoint({
    summary: 'Remove a member',
    description:
      'The last lead cannot be removed (409 `last_lead`), nor the last active one (a deactivated ' +
      'lead does not count as another lead for an active one; it may itself be removed when another lead stays).',
    minRole: 'lead',
    project,
    status: 204,
    problems: ['project_member_not_found', 'last_lead'],
  })
  removeMember(
    @CurrentAccess() access: ProjectAccess,
    @Param('user_id') userId: string,
  ): Promise<void> {
    return this.projects.removeMember(access, userId);
  }
}
