import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import {
  fromBody,
  fromQuery,
  fromResource,
  ProjectAccess,
} from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { Page, PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import { CreateSuiteDto, ListSuitesQueryDto, SuiteDto, UpdateSuiteDto } from './dto/suite.dto';
import { SUITES } from './suites.resource';
import { SuitesService } from './suites.service';

const suite = fromResource(SUITES);

const PARENT_RULES =
  'Parent: unknown → 404 `suite_not_found`; of another project → 422 `suite_project_mismatch`; the suite itself ' +
  'or one of its descendants → 422 `suite_parent_cycle`; the tree has at most 4 levels, counting the moved ' +
  'subtree (422 `suite_depth_limit_exceeded`). Names need not be unique.';

@ApiTags('suites')
@Controller('suites')
export class SuitesController {
  constructor(private readonly suites: SuitesService) {}

  @Get()
  @Endpoint({
    summary: 'List suites',
    description:
      'Filters: `parent_id` (direct children), `root_only`, `search` (name). Sort by `created_at` (default, desc), ' +
      '`updated_at`, `name`, `position`. Counts are of test cases directly in each suite.',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageSchema('SuiteDto') },
  })
  list(@Query() q: ListSuitesQueryDto): Promise<Page<SuiteDto>> {
    return this.suites.list(q);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a suite',
    description: PARENT_RULES,
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: SuiteDto,
    problems: ['suite_not_found', 'suite_project_mismatch', 'suite_depth_limit_exceeded'],
  })
  create(@CurrentAccess() access: ProjectAccess, @Body() dto: CreateSuiteDto): Promise<SuiteDto> {
    return this.suites.create(access, dto);
  }

  @Get(':id')
  @Endpoint({ summary: 'Get a suite', minRole: 'viewer', project: suite, response: SuiteDto })
  get(@Param('id') id: string): Promise<SuiteDto> {
    return this.suites.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    summary: 'Update or move a suite',
    description: PARENT_RULES,
    minRole: 'tester',
    project: suite,
    response: SuiteDto,
    problems: [
      'suite_not_found',
      'suite_project_mismatch',
      'suite_parent_cycle',
      'suite_depth_limit_exceeded',
    ],
  })
  update(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: UpdateSuiteDto,
  ): Promise<SuiteDto> {
    return this.suites.update(access, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    summary: 'Delete a suite',
    description:
      'Its child suites and its test cases move to its parent (or to the root); nothing else is deleted. ' +
      'A test plan that included the suite (and no suite above it) keeps the same cases: its child ' +
      "suites take its place in the plan's `suite_ids`, its own test cases are appended to the plan's " +
      "`case_ids` (in key order), and the plan's `updated_at` changes. Deleting a suite and its parent " +
      'at the same time is safe: one waits for the other.',
    minRole: 'lead',
    project: suite,
    status: 204,
  })
  remove(@Param('id') id: string): Promise<void> {
    return this.suites.remove(id);
  }
}
