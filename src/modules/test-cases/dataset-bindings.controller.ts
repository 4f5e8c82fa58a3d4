import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromResource, ProjectAccess } from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body } from '../../common/validation/request-parts';
import { BindingsService } from '../datasets/bindings.service';
import {
  BINDING_CREATE_EXAMPLES,
  BINDING_UPDATE_EXAMPLES,
  CreateDatasetBindingDto,
  DatasetBindingDto,
  DatasetBindingListDto,
  UpdateDatasetBindingDto,
} from '../datasets/dto/binding.dto';
import { TEST_CASES } from './test-cases.resource';

const testCase = fromResource(TEST_CASES, 'test_case_id');

const RULES =
  "`mode: follow_latest` uses the dataset's current revision; `pin_revision` uses `pinned_revision_number`, which is " +
  'then required and must exist (422 `dataset_revision_not_found`). `row_selection_type: all` uses all active rows; ' +
  '`subset` uses only `selected_row_keys`, which is then required, non-empty, and every key must exist in the ' +
  'resolved revision (422 `unknown_row_keys`). A `pinned_revision_number` sent with follow_latest, or ' +
  '`selected_row_keys` sent with all, are ignored (not stored). One binding per dataset and case (409 `dataset_already_bound`); aliases are unique per case ' +
  '(409 `dataset_alias_already_exists`).';

/**
 * A test case's dataset bindings. The routes live with test cases (the project comes from the case);
 * the bindings are owned by the datasets module (BindingsService), which imports nothing from here.
 */
@ApiTags('dataset-bindings')
@Controller('test-cases/:test_case_id/dataset-bindings')
export class BindingsController {
  constructor(private readonly bindings: BindingsService) {}

  @Get()
  @Endpoint({
    summary: 'List the dataset bindings of a test case',
    description: 'Ordered by `sort_order`, then creation. Answers `{items}` without paging.',
    minRole: 'viewer',
    project: testCase,
    response: DatasetBindingListDto,
  })
  list(@Param('test_case_id') testCaseId: string): Promise<{ items: DatasetBindingDto[] }> {
    return this.bindings.list(testCaseId);
  }

  @Post()
  @Transactional()
  @ApiBody({ type: CreateDatasetBindingDto, examples: BINDING_CREATE_EXAMPLES })
  @Endpoint({
    summary: 'Bind a dataset to a test case',
    description: `${RULES} A dataset of another project is 422 \`dataset_project_mismatch\`; an unknown one 404 \`dataset_not_found\`.`,
    minRole: 'tester',
    project: testCase,
    status: 201,
    response: DatasetBindingDto,
    problems: [
      'dataset_not_found',
      'dataset_project_mismatch',
      'dataset_revision_not_found',
      'unknown_row_keys',
      'dataset_already_bound',
      'dataset_alias_already_exists',
    ],
  })
  create(
    @CurrentAccess() access: ProjectAccess,
    @Param('test_case_id') testCaseId: string,
    @Body() dto: CreateDatasetBindingDto,
  ): Promise<DatasetBindingDto> {
    return this.bindings.create(access, testCaseId, dto);
  }

  @Patch(':binding_id')
  @Transactional()
  @ApiBody({ type: UpdateDatasetBindingDto, examples: BINDING_UPDATE_EXAMPLES })
  @Endpoint({
    summary: 'Update a dataset binding',
    description: `Changes alias, mode, pinned revision, row selection or sort order; the resulting binding is validated as a whole. ${RULES}`,
    minRole: 'tester',
    project: testCase,
    response: DatasetBindingDto,
    problems: [
      'dataset_binding_not_found',
      'dataset_revision_not_found',
      'unknown_row_keys',
      'dataset_alias_already_exists',
    ],
  })
  update(
    @Param('test_case_id') testCaseId: string,
    @Param('binding_id') bindingId: string,
    @Body() dto: UpdateDatasetBindingDto,
  ): Promise<DatasetBindingDto> {
    return this.bindings.update(testCaseId, bindingId, dto);
  }

  @Delete(':binding_id')
  @Transactional()
  @Endpoint({
    summary: 'Remove a dataset binding',
    description: 'Like every DELETE on a project resource this needs lead (CONTRACT §4).',
    minRole: 'lead',
    project: testCase,
    status: 204,
    problems: ['dataset_binding_not_found'],
  })
  remove(
    @Param('test_case_id') testCaseId: string,
    @Param('binding_id') bindingId: string,
  ): Promise<void> {
    return this.bindings.remove(testCaseId, bindingId);
  }
}
