import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
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
import { Page, PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import { DATASETS } from './datasets.resource';
import { DatasetsService } from './datasets.service';
import {
  CreateDatasetDto,
  DatasetBulkDto,
  DatasetBulkResultDto,
  DatasetDto,
  DATASET_ID_MAX_LENGTH,
  DatasetRevisionDto,
  ListDatasetsQueryDto,
  ListRevisionsQueryDto,
  MAX_BULK_DATASETS,
  UpdateDatasetDto,
} from './dto/dataset.dto';

const dataset = fromResource(DATASETS);

const TABLE_RULES =
  'Table rules (422 `validation_error`, reported under `columns` or `rows` and under the exact path such as ' +
  '`columns.1.column_key`): column keys unique, at most one ' +
  'scenario-label column, row keys unique, row values only for defined columns. At most 200 columns and 10,000 rows.';

@ApiTags('datasets')
@Controller('datasets')
export class DatasetsController {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List datasets',
    description:
      'Filters: `search` (name or description), `source_type`, `status` (repeatable), `test_case_id` / ' +
      '`exclude_test_case_id` (datasets bound / not bound to a case). Sorted by `updated_at` desc by default. ' +
      'Items carry `current_revision` with its columns and rows; `include_rows=false` leaves the rows out. ' +
      '`fields` answers only the named fields of each dataset; without `current_revision` no revision ' +
      '(columns, rows) is read.',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageSchema('DatasetDto') },
  })
  list(@Query() q: ListDatasetsQueryDto): Promise<Page<Partial<DatasetDto>>> {
    return this.datasets.list(q);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a dataset and its revision 1',
    description: `Names are unique per project, compared exactly (409 \`dataset_already_exists\`). ${TABLE_RULES}`,
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: DatasetDto,
    problems: ['dataset_already_exists'],
  })
  create(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateDatasetDto,
  ): Promise<DatasetDto> {
    return this.datasets.create(access, user, dto);
  }

  @Post('bulk')
  @Transactional()
  @Endpoint({
    summary: 'Delete many datasets of a project at once',
    description:
      '`action` is `delete` (the only action; anything else is 422 `validation_error`). `dataset_ids` ' +
      `holds 1 to ${MAX_BULK_DATASETS} entries (duplicates count toward the limit), each a string of at most ` +
      `${DATASET_ID_MAX_LENGTH} characters; anything else is 422 \`validation_error\`. Ids are compared ` +
      'case-insensitively and duplicates count once. ' +
      'All or nothing, in this order: any id that is not a dataset (an id that is not a uuid is simply ' +
      'unknown) → 404 `dataset_not_found`, its `detail` listing the unknown ids; any dataset ' +
      'of another project → 422 `dataset_project_mismatch` with `errors.dataset_ids` listing them; ' +
      'otherwise every dataset is deleted exactly as by `DELETE /datasets/{id}` (revisions and bindings ' +
      'go with it; run rows keep their snapshots). `affected_count` is the number of distinct datasets ' +
      'deleted. The project is the body’s `project_id` (non-members get 404 `project_not_found`).',
    minRole: 'lead',
    project: fromBody(),
    response: DatasetBulkResultDto,
    problems: ['dataset_not_found', 'dataset_project_mismatch'],
  })
  bulk(
    @CurrentAccess() access: ProjectAccess,
    @Body() dto: DatasetBulkDto,
  ): Promise<DatasetBulkResultDto> {
    return this.datasets.bulk(access, dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a dataset with its current revision (columns and rows)',
    minRole: 'viewer',
    project: dataset,
    response: DatasetDto,
  })
  get(@Param('id') id: string): Promise<DatasetDto> {
    return this.datasets.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update a dataset',
    description:
      'Metadata (`name`, `description`, `status`, `source_type`, `source_ref`) changes in place. `columns` and `rows` ' +
      'each replace the whole list (the absent one is kept from the current revision); a new immutable revision ' +
      'is written only when the resulting table differs from the current one, carrying `change_summary`. ' +
      TABLE_RULES,
    minRole: 'tester',
    project: dataset,
    response: DatasetDto,
    problems: ['dataset_already_exists'],
  })
  async update(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Body() dto: UpdateDatasetDto,
  ): Promise<DatasetDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: DATASETS, id }, () => this.datasets.get(id));
    return this.datasets.update(user, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Delete a dataset with its revisions and bindings',
    description: 'Run rows created earlier keep their snapshots of the dataset rows.',
    minRole: 'lead',
    project: dataset,
    status: 204,
  })
  async remove(@Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ resource: DATASETS, id }, () => this.datasets.get(id));
    return this.datasets.remove(id);
  }

  @Get(':id/revisions')
  @Endpoint({
    summary: 'List revisions of a dataset (newest first)',
    description: 'Items carry columns and rows; `include_rows=false` leaves the rows out.',
    minRole: 'viewer',
    project: dataset,
    response: { schema: PageSchema('DatasetRevisionDto') },
  })
  revisions(
    @Param('id') id: string,
    @Query() q: ListRevisionsQueryDto,
  ): Promise<Page<DatasetRevisionDto>> {
    return this.datasets.revisions(id, q);
  }

  @Get(':id/revisions/:revision_number')
  @Endpoint({
    summary: 'Get one revision with columns and rows',
    description:
      'An unknown revision number is 404 `dataset_revision_not_found`; a malformed one (not an integer ≥ 1) ' +
      '422 `validation_error` with the key `path.revision_number`.',
    minRole: 'viewer',
    project: dataset,
    response: DatasetRevisionDto,
    pathIntegers: ['revision_number'],
    notFoundAs: ['dataset_revision_not_found'],
  })
  revision(
    @Param('id') id: string,
    @Param('revision_number') n: string,
  ): Promise<DatasetRevisionDto> {
    return this.datasets.revision(id, n);
  }
}
