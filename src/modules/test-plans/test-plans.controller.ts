import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { WRITE_ANSWER_ETAG } from '../../common/openapi/conditional-docs';
import { tagWriteAnswer } from '../../common/http/conditional';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { JsonBody } from '../../common/http/json-body';
import { Preconditions } from '../../common/http/preconditions';
import {
  fromBody,
  fromQuery,
  fromResource,
  ProjectAccess,
} from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { Page, PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import { TestRunDto } from '../test-runs/dto/test-run.dto';
import {
  CreateRunFromPlanDto,
  CreateTestPlanDto,
  ListTestPlansQueryDto,
  PlanTagsQueryDto,
  TestPlanDto,
  UpdateTestPlanDto,
} from './dto/test-plan.dto';
import { TEST_PLANS } from './test-plans.resource';
import { TestPlansService } from './test-plans.service';
import { TagListDto } from '../test-cases/dto/test-case.dto';

const plan = fromResource(TEST_PLANS);

const SCOPE_RULES =
  '`suite_ids` and `case_ids` must be distinct (422 `validation_error`), exist (404 `suite_not_found` / ' +
  '`test_case_not_found`) and belong to the project (422 `suite_project_mismatch` / `test_case_project_mismatch`); ' +
  'case status is checked only when a run is created. `milestone_id` must be a milestone of the project that is not ' +
  'archived (422 `invalid_milestone`). `generation_source: product_generated` needs `generation_config` (422 ' +
  '`validation_error`); its explicit cases are then generated from the config like POST /test-plans/generate-preview, ' +
  'and `generation_summary` holds that preview plus `reason_map`.';

@ApiTags('test-plans')
@Controller('test-plans')
export class TestPlansController {
  constructor(
    private readonly plans: TestPlansService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List test plans',
    description:
      'Filters: `search` (name or description), `tag`/`tags` (any, case-insensitive), `milestone_id`, ' +
      '`generation_source` (repeatable). Sort by `created_at` (default, desc), `updated_at`, `name`.',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageSchema('TestPlanDto') },
  })
  list(@Query() q: ListTestPlansQueryDto): Promise<Page<TestPlanDto>> {
    return this.plans.list(q);
  }

  @Get('tags')
  @Endpoint({
    summary: "Distinct tags of the project's test plans",
    minRole: 'viewer',
    project: fromQuery(),
    response: TagListDto,
  })
  tags(@Query() q: PlanTagsQueryDto): Promise<{ items: string[] }> {
    return this.plans.tags(q.project_id);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a test plan',
    description: SCOPE_RULES,
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: TestPlanDto,
    problems: [
      'suite_not_found',
      'suite_project_mismatch',
      'test_case_not_found',
      'test_case_project_mismatch',
      'invalid_milestone',
      'product_project_mismatch',
      'component_project_mismatch',
    ],
  })
  create(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateTestPlanDto,
  ): Promise<TestPlanDto> {
    return this.plans.create(access, user, dto);
  }

  @Get(':id')
  @Endpoint({ summary: 'Get a test plan', minRole: 'viewer', project: plan, response: TestPlanDto })
  get(@Param('id') id: string): Promise<TestPlanDto> {
    return this.plans.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update a test plan',
    description:
      'Present keys only; `suite_ids`/`case_ids` replace the lists ([] clears); `milestone_id: null` clears the link. ' +
      'Changing `generation_source` or `generation_config` of a product-generated plan regenerates its cases; ' +
      'switching to manual keeps the cases and empties `generation_summary`. ' +
      SCOPE_RULES,
    minRole: 'tester',
    project: plan,
    response: TestPlanDto,
    problems: [
      'suite_not_found',
      'suite_project_mismatch',
      'test_case_not_found',
      'test_case_project_mismatch',
      'invalid_milestone',
      'product_project_mismatch',
      'component_project_mismatch',
    ],
  })
  async update(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: UpdateTestPlanDto,
  ): Promise<TestPlanDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: TEST_PLANS, id }, () => this.plans.get(id));
    return this.plans.update(access, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Delete a test plan',
    description: 'Runs created from the plan are kept.',
    minRole: 'lead',
    project: plan,
    status: 204,
  })
  async remove(@Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ resource: TEST_PLANS, id }, () => this.plans.get(id));
    return this.plans.remove(id);
  }

  @Post(':id/create-run')
  @Transactional()
  @Endpoint({
    summary: 'Create a run from a test plan',
    description:
      "The run gets one item per active case of the plan's suites (with all descendant suites), then of its " +
      "explicit cases, each case once; rows are expanded from the cases' dataset bindings. No active case → 422 " +
      "`no_active_cases`. `milestone_id` omitted → the plan's milestone; null → none. Environment, milestone and " +
      "assignee are validated as for POST /test-runs, an inherited milestone too: when the plan's milestone has " +
      'been archived, an omitted `milestone_id` is 422 `invalid_milestone` (its detail says so; send null or ' +
      'another milestone). `start_immediately: true` starts the run (in_progress). ' +
      'Answers 201 with the full run object.',
    minRole: 'tester',
    project: plan,
    status: 201,
    response: TestRunDto,
    problems: [
      'no_active_cases',
      'invalid_environment',
      'invalid_milestone',
      'invalid_assignee',
      'dataset_binding_empty_selection',
      'dataset_revision_not_found',
    ],
  })
  createRun(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Body() dto: CreateRunFromPlanDto,
  ): Promise<JsonBody> {
    return this.plans.createRun(access, user, id, dto);
  }
}
