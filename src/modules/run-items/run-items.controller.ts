import { Controller, Delete, Get, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { Preconditions } from '../../common/http/preconditions';
import { tagWriteAnswer } from '../../common/http/conditional';
import { fromResource, ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { Page } from '../../common/pagination/page';
import { CURSOR_PAGING_NOTE, PageOrCursorSchema } from '../../common/pagination/cursor-query';
import { CursorPage } from '../../common/pagination/keyset';
import { withNextLink } from '../../common/pagination/link';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  BulkCreateRunCasesDto,
  BulkRunCasesResultDto,
  CreateRunCaseDto,
  ListRowsQueryDto,
  ListRunCasesQueryDto,
  RerunDto,
  RowPageDto,
  RunCaseDetailDto,
  RunCaseDetailQueryDto,
  RunCaseDto,
  RunCaseRowDto,
  UpdateRowDto,
  UpdateRunCaseDto,
} from './dto/run-item.dto';
import { RUN_ITEM_ROWS, RUN_ITEMS } from './run-items.resource';
import { RunItemsService } from './run-items.service';

const item = fromResource(RUN_ITEMS);
const row = fromResource(RUN_ITEM_ROWS, 'row_id');

const RUN_IN_BODY =
  'The project is the one of `test_run_id`: non-members get 404 `test_run_not_found`, members ' +
  'below the minimum role 403.';
const CLOSED = 'On a completed or archived run: 409 `run_closed`.';

@ApiTags('run-cases')
@Controller('run-cases')
export class RunItemsController {
  constructor(
    private readonly items: RunItemsService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List run cases of a run, or of one test case across runs',
    description:
      'With `test_run_id`: the items of that run (optional ' +
      '`test_case_id`). Without it, `project_id` and `test_case_id` are both required (422 ' +
      'otherwise) and the list is that case in every run of the project. Filters: `status` ' +
      '(repeatable), `assignee_id`, `search`. Sort: `sort_by` (default last_executed_at, never ' +
      'executed last) and `sort_order` (default desc), ties by id. `page_size` 1..200 ' +
      '(default 50). ' +
      CURSOR_PAGING_NOTE +
      ' ' +
      RUN_IN_BODY,
    serviceChecksRole: 'viewer',
    response: { schema: PageOrCursorSchema('RunCaseDto') },
    problems: [
      'insufficient_project_role',
      'test_run_not_found',
      'project_not_found',
      'test_case_not_found',
      'invalid_cursor',
    ],
  })
  async list(
    @CurrentUser() user: AuthenticatedUser,
    @Query() q: ListRunCasesQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Page<RunCaseDto> | CursorPage<RunCaseDto>> {
    return withNextLink(req, res, await this.items.list(user, q));
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Add one test case to a run',
    description:
      'The case must be an active case of the run’s project ' +
      '(422 `test_case_project_mismatch` for an unknown, deleted or foreign case, 422 `test_case_status_not_allowed` for draft or archived ones). A ' +
      'case already in the run is answered (201) with its existing item, unchanged. Rows are ' +
      'expanded from the case’s dataset bindings (one `Default scenario` row without bindings). ' +
      'The assignee defaults to the run’s. ' +
      CLOSED +
      ' ' +
      RUN_IN_BODY,
    serviceChecksRole: 'tester',
    status: 201,
    response: RunCaseDto,
    problems: [
      'insufficient_project_role',
      'test_run_not_found',
      'run_closed',
      'test_case_project_mismatch',
      'test_case_status_not_allowed',
      'invalid_assignee',
      'dataset_binding_empty_selection',
      'dataset_revision_not_found',
    ],
  })
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateRunCaseDto,
  ): Promise<RunCaseDto> {
    return this.items.create(user, dto);
  }

  @Post('bulk')
  @Transactional()
  @Endpoint({
    summary: 'Add many test cases to a run (by ids or a whole suite tree)',
    description:
      'Exactly one of a non-empty `test_case_ids` or ' +
      '`suite_id` (422 otherwise). With `suite_id`, the active cases of the suite and all its ' +
      'descendant suites are added (a suite that is not one of the project has no cases: 201 ' +
      'with no items). Listed cases are validated as for a single add (all or nothing: 422 ' +
      '`test_case_project_mismatch` / `test_case_status_not_allowed`); ' +
      'cases already in the run are skipped and returned unchanged. ' +
      CLOSED +
      ' ' +
      RUN_IN_BODY,
    serviceChecksRole: 'tester',
    status: 201,
    response: BulkRunCasesResultDto,
    problems: [
      'insufficient_project_role',
      'test_run_not_found',
      'run_closed',
      'test_case_project_mismatch',
      'test_case_status_not_allowed',
      'dataset_binding_empty_selection',
      'dataset_revision_not_found',
    ],
  })
  bulkCreate(
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: BulkCreateRunCasesDto,
  ): Promise<BulkRunCasesResultDto> {
    return this.items.bulkCreate(user, dto);
  }

  @Patch('rows/:row_id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Record the result of a run case row',
    description:
      'Only present keys change. A final status (anything but untested/in_progress) without ' +
      '`finished_at` gets now; `execution_count` grows by one only when a final status is ' +
      'entered; `executed_by` (alias `executed_by_id`) defaults to the caller then; ' +
      '`duration_ms` is derived from started_at/finished_at when not given. `finished_at` before ' +
      '`started_at` is 422 on a finished row or when `finished_at` is given (a row executed again ' +
      'takes a new `started_at` and keeps its earlier `finished_at` until it finishes again). The item’s status is rolled up from its rows (failure > error > ' +
      'blocked > xpassed > in_progress > untested > passed > xfailed > skipped) and a history ' +
      'record is written when it changes. ' +
      CLOSED,
    minRole: 'tester',
    project: row,
    response: RunCaseRowDto,
    problems: ['run_closed', 'invalid_user'],
    responseHeaders: {
      ETag: {
        description:
          'Strong entity tag of the row as answered (a row has no GET of its own): send it in `If-Match` to make the next PATCH conditional',
        schema: { type: 'string', example: '"3q2-7wH1xX0aV9Zc8kQ2bA"' },
      },
    },
  })
  async updateRow(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Param('row_id') rowId: string,
    @Body() dto: UpdateRowDto,
  ): Promise<RunCaseRowDto> {
    await this.preconditions.ifMatch({ runOfRow: rowId }, () => this.items.row(rowId));
    // The answer is the row as If-Match compares it: its ETag lets the next PATCH be conditional.
    tagWriteAnswer();
    return this.items.updateRow(access, user, rowId, dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a run case with its status history',
    description: 'History is newest first, paged by `history_page` / `history_page_size` (≤ 200).',
    minRole: 'viewer',
    project: item,
    response: RunCaseDetailDto,
  })
  get(@Param('id') id: string, @Query() q: RunCaseDetailQueryDto): Promise<RunCaseDetailDto> {
    return this.items.get(id, q);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Change the assignee or comment of a run case',
    description:
      'The status is not writable: it is rolled up from the rows. An assignee must have access ' +
      'to the project (422 `invalid_assignee`). ' +
      CLOSED,
    minRole: 'tester',
    project: item,
    response: RunCaseDto,
    problems: ['run_closed', 'invalid_assignee'],
  })
  async update(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: UpdateRunCaseDto,
  ): Promise<RunCaseDto> {
    await this.preconditions.ifMatch({ runOfItem: id }, () =>
      this.items.get(id, new RunCaseDetailQueryDto()),
    );
    return this.items.update(access, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Remove a run case (with its rows and history) from its run',
    description: CLOSED,
    minRole: 'lead',
    project: item,
    status: 204,
    problems: ['run_closed'],
  })
  async remove(@Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ runOfItem: id }, () =>
      this.items.get(id, new RunCaseDetailQueryDto()),
    );
    return this.items.remove(id);
  }

  @Get(':id/rows')
  @Endpoint({
    summary: 'List the rows of a run case',
    description:
      'Ordered by row_order. Filter: `status` (repeatable). page_size 1..500 (default 100).',
    minRole: 'viewer',
    project: item,
    response: RowPageDto,
  })
  rows(@Param('id') id: string, @Query() q: ListRowsQueryDto): Promise<RowPageDto> {
    return this.items.rows(id, q);
  }

  @Post(':id/rerun')
  @Transactional()
  @Endpoint({
    summary: 'Rerun failed or selected rows of a run case',
    description:
      '`mode` failed (default): rows whose status is failure or error; subset: the rows in ' +
      '`run_case_row_ids` (required, non-empty; ids that are not rows of this run case are ' +
      'ignored). Nothing selected answers 201 with an empty page. Each ' +
      'selected row gets a new `untested` row pointing at it (`parent_row_id`), numbered after ' +
      'the last row; the old rows are kept. `use_latest_revisions` rebuilds the rows from the ' +
      'case’s dataset bindings, each at its dataset’s current revision (a pinned revision is ' +
      'ignored), and keeps those that combine the same dataset rows (dataset and row key, which ' +
      'revisions keep) as a selected row, whatever their labels now: two dataset rows sharing a ' +
      'label stay two rows (a selected row whose snapshot names no dataset rows, e.g. an ' +
      'imported one, is matched by its label). When the new rows change ' +
      'the run case’s status, the change is recorded in its history, as every status change ' +
      'is (the reference implementation records none for a rerun). Answers the new rows. ' +
      CLOSED,
    minRole: 'tester',
    project: item,
    status: 201,
    response: RowPageDto,
    problems: ['run_closed', 'dataset_binding_empty_selection', 'dataset_revision_not_found'],
  })
  rerun(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Body() dto: RerunDto,
  ): Promise<RowPageDto> {
    return this.items.rerun(user, id, dto);
  }
}
