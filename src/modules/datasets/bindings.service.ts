import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { Db } from '../../common/persistence/db.service';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import {
  BindingChanges,
  BindingMode,
  BindingState,
  NEW_BINDING_DEFAULTS,
  resolveBindingState,
  resolvedRevisionNumber,
  RowSelectionType,
} from './binding-rules';
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

interface BindingRow {
  id: string;
  test_case_id: string;
  dataset_id: string;
  dataset_name: string;
  dataset_alias: string;
  mode: BindingMode;
  pinned_revision_number: number | null;
  row_selection_type: RowSelectionType;
  selected_row_keys: string[];
  sort_order: number;
  current_revision_number: number;
  created_at: Date;
  updated_at: Date;
}

const BINDING_SELECT = `SELECT b.id, b.test_case_id, b.dataset_id, d.name AS dataset_name, b.dataset_alias, b.mode,
       b.pinned_revision_number, b.row_selection_type, b.selected_row_keys, b.sort_order,
       d.current_revision_number, b.created_at, b.updated_at
  FROM test_case_dataset_bindings b JOIN datasets d ON d.id = b.dataset_id`;

/** Order of a case's bindings everywhere (reads and run-row expansion). */
export const BINDING_ORDER = 'b.sort_order, b.created_at, b.id';

/** How many unknown keys an error message lists. */
const MAX_LISTED_KEYS = 50;

@Injectable()
export class BindingsService {
  constructor(private readonly db: Db) {}

  async list(testCaseId: string): Promise<{ items: DatasetBindingDto[] }> {
    const rows = await this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.test_case_id = $1 ORDER BY ${BINDING_ORDER}`,
      [testCaseId],
    );
    return { items: rows.map(toBindingDto) };
  }

  /** Bindings of many cases in one query (test case reads and lists). */
  async listForCases(testCaseIds: string[]): Promise<Map<string, DatasetBindingDto[]>> {
    const out = new Map<string, DatasetBindingDto[]>(testCaseIds.map((id) => [id, []]));
    if (testCaseIds.length === 0) return out;
    const rows = await this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.test_case_id = ANY($1::uuid[]) ORDER BY b.test_case_id, ${BINDING_ORDER}`,
      [testCaseIds],
    );
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
    const datasets = await this.db.query<{ project_id: string; current_revision_number: number }>(
      `SELECT project_id, current_revision_number FROM datasets WHERE id = $1 FOR KEY SHARE`,
      [datasetId],
    );
    const dataset = datasets[0];
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
    const taken = await this.db.query<{ dataset_id: string; dataset_alias: string }>(
      `SELECT dataset_id, dataset_alias FROM test_case_dataset_bindings
        WHERE test_case_id = $1 AND (dataset_id = $2 OR dataset_alias = $3)`,
      [testCaseId, datasetId, dto.dataset_alias],
    );
    if (taken.some((b) => b.dataset_id === datasetId)) throw conflict('dataset_already_bound');
    if (taken.length > 0) throw conflict('dataset_alias_already_exists');
    const state = resolveOrThrow(
      { dataset_alias: dto.dataset_alias, ...NEW_BINDING_DEFAULTS },
      dto,
    );
    await this.assertResolvable(datasetId, dataset.current_revision_number, state);
    const id = uuidv7();
    await this.db.query(
      `INSERT INTO test_case_dataset_bindings (id, project_id, test_case_id, dataset_id, dataset_alias, mode,
              pinned_revision_number, row_selection_type, selected_row_keys, sort_order)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10)`,
      [
        id,
        access.projectId,
        testCaseId,
        datasetId,
        state.dataset_alias,
        state.mode,
        state.pinned_revision_number,
        state.row_selection_type,
        state.selected_row_keys,
        state.sort_order,
      ],
    );
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
    const rows = await this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.id = $1 AND b.test_case_id = $2 FOR UPDATE OF b`,
      [bindingId, testCaseId],
    );
    const current = rows[0];
    if (!current) throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    if (dto.dataset_alias !== undefined && dto.dataset_alias !== current.dataset_alias) {
      const taken = await this.db.query(
        `SELECT 1 FROM test_case_dataset_bindings WHERE test_case_id = $1 AND dataset_alias = $2`,
        [testCaseId, dto.dataset_alias],
      );
      if (taken.length > 0) throw conflict('dataset_alias_already_exists');
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
    await this.db.query(
      `UPDATE test_case_dataset_bindings
          SET dataset_alias = $2, mode = $3, pinned_revision_number = $4, row_selection_type = $5,
              selected_row_keys = $6::text[], sort_order = $7, updated_at = now()
        WHERE id = $1`,
      [
        bindingId,
        state.dataset_alias,
        state.mode,
        state.pinned_revision_number,
        state.row_selection_type,
        state.selected_row_keys,
        state.sort_order,
      ],
    );
    return this.get(testCaseId, bindingId);
  }

  async remove(testCaseId: string, bindingId: string): Promise<void> {
    if (!isUuid(bindingId))
      throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    const rows = await this.db.query<{ id: string }>(
      `WITH d AS (DELETE FROM test_case_dataset_bindings WHERE id = $1 AND test_case_id = $2 RETURNING id)
       SELECT id FROM d`,
      [bindingId, testCaseId],
    );
    if (rows.length === 0)
      throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
  }

  private async get(testCaseId: string, bindingId: string): Promise<DatasetBindingDto> {
    const rows = await this.db.query<BindingRow>(
      `${BINDING_SELECT} WHERE b.id = $1 AND b.test_case_id = $2`,
      [bindingId, testCaseId],
    );
    if (!rows[0]) throw AppException.notFound('dataset_binding_not_found', 'Dataset binding');
    return toBindingDto(rows[0]);
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
    const rows = await this.db.query<{ keys: string[] | null }>(
      `SELECT CASE WHEN $3 THEN ARRAY(SELECT e->>'row_key' FROM jsonb_array_elements(r.rows) e) END AS keys
         FROM dataset_revisions r WHERE r.dataset_id = $1 AND r.revision_number = $2`,
      [datasetId, number, subset],
    );
    if (!rows[0]) {
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
    const known = new Set(rows[0].keys ?? []);
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
