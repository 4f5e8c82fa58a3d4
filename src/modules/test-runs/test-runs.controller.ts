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
import { JsonBody, sendJsonParts } from '../../common/http/json-body';
import { CURSOR_PAGING_NOTE, PageOrCursorSchema } from '../../common/pagination/cursor-query';
import { withNextLink } from '../../common/pagination/link';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  CreateTestRunDto,
  ListTestRunsQueryDto,
  TestRunDto,
  TestRunFieldsQueryDto,
  UpdateTestRunDto,
} from './dto/test-run.dto';
import { TEST_RUNS } from './test-runs.resource';
import { TestRunsService } from './test-runs.service';

const run = fromResource(TEST_RUNS);

@ApiTags('test-runs')
@Controller('test-runs')
export class TestRunsController {
  constructor(
    private readonly runs: TestRunsService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List test runs',
    description:
      'Filters: `status`, `environment_id`, `milestone_id` (each repeatable, any of the values), ' +
      '`search` (case-insensitive substring of name, build or environment name), `created_by`, ' +
      '`created_from` / `created_to` (a date `YYYY-MM-DD` — `created_to` then includes the whole ' +
      'day, UTC — or an ISO 8601 datetime, inclusive); run metadata (issue #24): `build` (whole ' +
      'value, case-insensitive) and `branch` (exact), each repeatable (any of the values), ' +
      '`commit_sha` (a prefix of 7 to 64 hex digits, case-insensitive; a whole SHA matches exactly), ' +
      '`attribute=key:value` (repeatable: every pair must match). Archived runs are hidden unless a `status` ' +
      'filter is given. Sort: `sort_by` created_at (default), name, status, build or environment; ' +
      '`sort_order` desc (default) or asc; ties by id. Unknown filter ids match nothing. ' +
      CURSOR_PAGING_NOTE +
      ' `fields` answers only the named fields of each run; without `environment_snapshot` no ' +
      'snapshot is read at all (a page of runs in kilobytes).',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageOrCursorSchema('TestRunDto') },
    problems: ['invalid_cursor'],
  })
  async list(
    @Query() q: ListTestRunsQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    // Written explicitly: each run's snapshot goes out as its cached bytes.
    const page = await this.runs.listJson(q);
    sendJsonParts(res, withNextLink(req, res, page).parts);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a test run',
    description:
      'The run starts `not_started` with no items (add them through `/run-cases`). With an ' +
      "`environment_id`, the environment's current revision (id, number, hash, full snapshot, " +
      'name) is captured on the run and never changes when the environment changes later. A ' +
      'blank `environment_id` / `milestone_id` / `assignee` means none. Any other field ' +
      '(`status`, `planned_item_count`, timestamps…) is 422 `validation_error`.',
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: TestRunDto,
    problems: ['invalid_environment', 'invalid_milestone', 'invalid_assignee'],
  })
  create(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateTestRunDto,
  ): Promise<JsonBody> {
    return this.runs.createJson(access, user, dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a test run with summary and status breakdown',
    description:
      'The membership check and ' +
      'the read are one query: a run that does not exist or belongs to a project the caller is ' +
      'not a member of is 404 `test_run_not_found`. `fields` answers only the named fields; ' +
      'without `environment_snapshot` the snapshot is not read.',
    serviceChecksRole: 'viewer',
    response: TestRunDto,
    problems: ['test_run_not_found'],
  })
  async get(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Query() q: TestRunFieldsQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    // Written explicitly: the snapshot goes out as its cached bytes.
    sendJsonParts(res, await this.runs.getForUserJson(user, id, q.fields));
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update run metadata or change its status',
    description:
      'Only present keys change. Transitions: not_started→in_progress, in_progress→completed ' +
      '(409 `run_items_in_progress` while an item or a row is in_progress), completed→archived ' +
      '(lead); anything else is 409 `invalid_status_transition`. `started_at` / `completed_at` / ' +
      '`archived_at` are accepted only with their transition (else 422) and default to now; a ' +
      'value earlier than the previous lifecycle timestamp is 422; `status: null` changes nothing. ' +
      'An archived run is read-only: a PATCH without a status change is 409 `run_archived`, any ' +
      'status change out of archived 409 `invalid_status_transition`. A refused PATCH changes ' +
      'nothing. `environment_id` re-captures the current revision and cannot be null (422 ' +
      '`invalid_environment`). `name` and `planned_item_count` (0..2147483647) cannot be null.',
    minRole: 'tester',
    project: run,
    response: TestRunDto,
    problems: [
      'invalid_status_transition',
      'run_items_in_progress',
      'run_archived',
      'invalid_environment',
      'invalid_milestone',
      'invalid_assignee',
    ],
  })
  async update(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Body() dto: UpdateTestRunDto,
  ): Promise<JsonBody> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatchParts({ resource: TEST_RUNS, id }, () =>
      this.runs.getForUserJson(user, id),
    );
    return this.runs.updateJson(access, user, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Permanently delete a test run',
    description: 'Removes the run with its items, rows and history, whatever its status.',
    minRole: 'lead',
    project: run,
    status: 204,
  })
  async remove(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatchParts({ resource: TEST_RUNS, id }, () =>
      this.runs.getForUserJson(user, id),
    );
    return this.runs.remove(id);
  }
}
