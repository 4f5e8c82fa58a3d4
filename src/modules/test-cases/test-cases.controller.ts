import { Controller, Delete, Get, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { WRITE_ANSWER_ETAG } from '../../common/openapi/conditional-docs';
import { tagWriteAnswer } from '../../common/http/conditional';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { Preconditions } from '../../common/http/preconditions';
import {
  fromBody,
  fromQuery,
  fromResource,
  ProjectAccess,
} from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { Page } from '../../common/pagination/page';
import { CURSOR_PAGING_NOTE, PageOrCursorSchema } from '../../common/pagination/cursor-query';
import { CursorPage } from '../../common/pagination/keyset';
import { withNextLink } from '../../common/pagination/link';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  CreateTestCaseDto,
  ListTestCasesQueryDto,
  TagListDto,
  TagsQueryDto,
  TestCaseDto,
  UpdateTestCaseDto,
} from './dto/test-case.dto';
import { TEST_CASES } from './test-cases.resource';
import { TestCasesService } from './test-cases.service';

const testCase = fromResource(TEST_CASES);

const REFERENCE_RULES =
  'References: `suite_id` unknown → 404 `suite_not_found`, of another project → 422 `suite_project_mismatch`; ' +
  '`owner_id` must be a user with access to the project (422 `invalid_owner`); `primary_product_id` must be a ' +
  'product of the project (422 `product_project_mismatch`); `component_coverages` must name distinct components ' +
  'of the project (422 `validation_error` for duplicates, 422 `component_project_mismatch` otherwise). ' +
  '`automation_id` is unique per project (409 `automation_id_already_exists`). Any status may be set by a tester ' +
  '(draft, active, archived; only active cases join runs and count in coverage).';

@ApiTags('test-cases')
@Controller('test-cases')
export class TestCasesController {
  constructor(
    private readonly cases: TestCasesService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List test cases',
    description:
      'Filters (repeatable, any-of): `status` (archived cases are hidden unless a status filter is given), ' +
      '`priority`, `suite_id`, `tag` (case-insensitive), `test_case_type`, `product_id` (primary product), ' +
      '`component_id` (covered components), `owner_id`, `exclude_test_case_id`, `minimum_component_risk_level` ' +
      '(covers a component of that risk level or higher); `search` over key, title, ' +
      'automation_id and tags. Sort by `created_at` (default, desc), `updated_at`, `key` (by its number), `title`, ' +
      '`status` (by label: active < archived < draft), `priority` (by label, none counting as medium: ' +
      'critical < high < low < medium), `owner_name`, `suite_name`; ties by id. ' +
      CURSOR_PAGING_NOTE,
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageOrCursorSchema('TestCaseDto') },
    problems: ['invalid_cursor'],
  })
  async list(
    @Query() q: ListTestCasesQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Page<TestCaseDto> | CursorPage<TestCaseDto>> {
    return withNextLink(req, res, await this.cases.list(q));
  }

  @Get('tags')
  @Endpoint({
    summary: "Distinct tags of the project's test cases",
    description: 'Sorted case-insensitively; archived cases included.',
    minRole: 'viewer',
    project: fromQuery(),
    response: TagListDto,
  })
  tags(@Query() q: TagsQueryDto): Promise<{ items: string[] }> {
    return this.cases.tags(q.project_id);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a test case',
    description: `The key \`TC-<n>\` is allocated sequentially per project and never reused. Status defaults to active. ${REFERENCE_RULES}`,
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: TestCaseDto,
    problems: [
      'suite_not_found',
      'suite_project_mismatch',
      'invalid_owner',
      'product_project_mismatch',
      'component_project_mismatch',
      'automation_id_already_exists',
    ],
  })
  create(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateTestCaseDto,
  ): Promise<TestCaseDto> {
    return this.cases.create(access, user, dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a test case',
    minRole: 'viewer',
    project: testCase,
    response: TestCaseDto,
  })
  get(@Param('id') id: string): Promise<TestCaseDto> {
    return this.cases.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update a test case',
    description: `Only present keys change; null clears nullable fields; \`steps\`, \`tags\` and \`component_coverages\` are replaced as a whole. ${REFERENCE_RULES}`,
    minRole: 'tester',
    project: testCase,
    response: TestCaseDto,
    problems: [
      'suite_not_found',
      'suite_project_mismatch',
      'invalid_owner',
      'product_project_mismatch',
      'component_project_mismatch',
      'automation_id_already_exists',
    ],
  })
  async update(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: UpdateTestCaseDto,
  ): Promise<TestCaseDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    return this.cases.update(access, id, dto, () =>
      this.preconditions.ifMatch({ resource: TEST_CASES, id }, () => this.cases.get(id)),
    );
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Delete a test case',
    description:
      'Permanent; its coverages and dataset bindings go with it. Run items keep their snapshots.',
    minRole: 'lead',
    project: testCase,
    status: 204,
  })
  async remove(@Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ resource: TEST_CASES, id }, () => this.cases.get(id));
    return this.cases.remove(id);
  }
}
