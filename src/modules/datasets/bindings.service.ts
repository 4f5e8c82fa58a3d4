import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import {
  BindingChanges,
  BindingState,
  NEW_BINDING_DEFAULTS,
  resolveBindingState,
  resolvedRevisionNumber,
} from './binding-rules';
import { BindingRow, BindingsRepository } from './bindings.repository';
import { DatasetsRepository } from './datasets.repository';
import {
  CreateDatasetBindingDto,
  DatasetBindingDto,
  UpdateDatasetBindingDto,
} from './dto/binding.dto';

const CONFLICTS = {
  uq_test_case_dataset_bindings_case_dataset: {
    code: 'dataset_already_bound',
    field: 'dataset_id',
    detail: 'This dataset is already bound to the test case',
  },
  uq_test_case_dataset_bindings_case_alias: {
    code: 'dataset_alias_already_exists',
    field: 'dataset_alias',
    detail: 'Another binding of this test case already uses this alias',
  },
} as const;
registerUniqueConstraints(CONFLICTS);

/** The 409 of a duplicate dataset or alias, exactly as the unique constraint would answer it. */
function conflict(code: 'dataset_already_bound' | 'dataset_alias_already_exists'): AppException {
  const c =
    code === 'dataset_already_bound'
      ? CONFLICTS.uq_test_case_dataset_bindings_case_dataset
      : CONFLICTS.uq_test_case_dataset_bindings_case_alias;
  return new AppException(c.code, c.detail, { [c.field]: [c.detail] });
}

/** How many unknown keys an error message lists. */
const MAX_LISTED_KEYS = 50;

@Injectable()
export class BindingsService {
  constructor(
    private readonly bindings: BindingsRepository,
    private readonly datasets: DatasetsRepository,
  ) {}

  async list(testCaseId: string): Promise<{ items: DatasetBindingDto[] }> {
    const rows = await this.bindings.listByCase(testCaseId);
    return { items: rows.map(toBindingDto) };
  }

  /** Bindings of many cases in one query (test case reads and lists). */
  async listForCases(testCaseIds: string[]): Promise<Map<string, DatasetBindingDto[]>> {
    const out = new Map<string, DatasetBindingDto[]>(testCaseIds.map((id) => [id, []]));
    if (testCaseIds.length === 0) return out;
    const rows = await this.bindings.listByCases(testCaseIds);
    for (const r of rows) out.get(r.test_case_id)?.push(toBindingDto(r));
    return out;
  }

  async create(
    access: ProjectAccess,
    testCaseId: string,
    dto: CreateDatasetBindingDto,
  ): Promise<DatasetBindingDto> {
    // The stored spelling (uuids are case-insensitive): compared below in JavaScript.
    const datasetId = canonicalId(dto.dataset_id);
    const dataset = await this.datasets.lockKeyShare(datasetId);
    if (!dataset) {
      throw new AppException('dataset_not_found', 'Dataset not found', {
        dataset_id: ['No dataset with this id'],
      });
    }
    if (dataset.project_id !== access.projectId) {
      throw new AppException('dataset_project_mismatch', 'The dataset belongs to another project', {
        dataset_id: ['The dataset must belong to the project of the test case'],
      });
    }
    // Conflicts first (reference §5.3 order); the unique constraints still decide concurrent creates.
    const taken = await this.bindings.findTaken(testCaseId, datasetId, dto.dataset_alias);
    if (taken.some((b) => b.dataset_id === datasetId)) throw conflict('dataset_already_bound');
    if (taken.length > 0) throw conflict('dataset_alias_already_exists');
    const state = resolveOrThrow(
      { dataset_alias: dto.dataset_alias, ...NEW_BINDING_DEFAULTS },
      dto,
    );
    await this.assertResolvable(datasetId, dataset.current_revision_number, state);
    const id = uuidv7();
    await this.bindings.insert({
      ...state,
      id,
      projectId: access.projectId,
      testCaseId,
      datasetId,
    });
    return this.get(testCaseId, id);
  }

  /** Applies the present keys, then validates the resulting binding as a whole (CONTRACT §10). */
  async update(
    testCaseId: string,
    bindingId: string,
    dto: UpdateDatasetBindingDto,
  ): Promise<DatasetBindingDto> {
    if (!isUuid(bindingId))
      throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    const current = await this.bindings.lockInCase(testCaseId, bindingId);
    if (!current) throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    if (dto.dataset_alias !== undefined && dto.dataset_alias !== current.dataset_alias) {
      if (await this.bindings.aliasTaken(testCaseId, dto.dataset_alias))
        throw conflict('dataset_alias_already_exists');
    }
    const state = resolveOrThrow(
      {
        dataset_alias: current.dataset_alias,
        mode: current.mode,
        pinned_revision_number: current.pinned_revision_number,
        row_selection_type: current.row_selection_type,
        selected_row_keys: current.selected_row_keys,
        sort_order: current.sort_order,
      },
      dto,
    );
    await this.assertResolvable(current.dataset_id, current.current_revision_number, state);
    await this.bindings.update(bindingId, state);
    return this.get(testCaseId, bindingId);
  }

  async remove(testCaseId: string, bindingId: string): Promise<void> {
    if (!isUuid(bindingId))
      throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    if (!(await this.bindings.deleteInCase(testCaseId, bindingId)))
      throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
  }

  private async get(testCaseId: string, bindingId: string): Promise<DatasetBindingDto> {
    const row = await this.bindings.findInCase(testCaseId, bindingId);
    if (!row) throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    return toBindingDto(row);
  }

  /**
   * The pinned revision must exist (422 dataset_revision_not_found); a subset's keys must all exist
   * in the resolved revision (422 unknown_row_keys).
   */
  private async assertResolvable(
    datasetId: string,
    currentRevisionNumber: number,
    state: BindingState,
  ): Promise<void> {
    const number = resolvedRevisionNumber(state, currentRevisionNumber);
    const subset = state.row_selection_type === 'subset';
    const revision = await this.datasets.findRevisionRowKeys(datasetId, number, subset);
    if (!revision) {
      if (state.mode === 'pin_revision') {
        throw new AppException(
          'dataset_revision_not_found',
          `The dataset has no revision ${number}`,
          {
            pinned_revision_number: [`Revision ${number} does not exist for this dataset`],
          },
        );
      }
      throw new AppException('dataset_revision_not_found', 'The dataset has no revision yet');
    }
    if (!subset) return;
    const known = new Set(revision.keys ?? []);
    const unknown = state.selected_row_keys.filter((k) => !known.has(k));
    if (unknown.length > 0) {
      const listed =
        unknown.slice(0, MAX_LISTED_KEYS).join(', ') +
        (unknown.length > MAX_LISTED_KEYS ? ', …' : '');
      throw new AppException(
        'unknown_row_keys',
        `${unknown.length} selected row key(s) do not exist in revision ${number}`,
        {
          selected_row_keys: [`Unknown row keys in revision ${number}: ${listed}`],
        },
      );
    }
  }
}

function resolveOrThrow(current: BindingState, dto: BindingChanges): BindingState {
  const res = resolveBindingState(current, dto);
  if (!res.ok) throw AppException.validation(res.errors);
  return res.state;
}

function toBindingDto(r: BindingRow): DatasetBindingDto {
  return {
    id: r.id,
    test_case_id: r.test_case_id,
    dataset_id: r.dataset_id,
    dataset_name: r.dataset_name,
    dataset_alias: r.dataset_alias,
    mode: r.mode,
    pinned_revision_number: r.pinned_revision_number,
    resolved_revision_number: resolvedRevisionNumber(r, r.current_revision_number),
    row_selection_type: r.row_selection_type,
    selected_row_keys: r.selected_row_keys,
    sort_order: r.sort_order,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}
