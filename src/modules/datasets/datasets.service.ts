import { Injectable } from '@nestjs/common';
import { isPathInteger } from '../../common/validation/path-integer';
import { MAX_ERROR_FIELDS, validationProblem } from '../../common/validation/validate';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { Page, pageOf } from '../../common/pagination/page';
import { fieldSelection, pickFields, selects } from '../../common/pagination/fields';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { normalizeColumns, normalizeRows, sameTable, validateTable } from './dataset-table';
import {
  DatasetChanges,
  DatasetRow,
  DatasetsRepository,
  RevisionRow,
} from './datasets.repository';
import {
  CreateDatasetDto,
  DatasetBulkDto,
  DatasetBulkResultDto,
  DatasetColumnDto,
  DatasetDto,
  DatasetRevisionDto,
  DatasetRowDto,
  ListDatasetsQueryDto,
  ListRevisionsQueryDto,
  UpdateDatasetDto,
} from './dto/dataset.dto';
import type { StoredDatasetColumn, StoredDatasetRow } from './entities/dataset.entity';

registerUniqueConstraints({
  uq_datasets_project_name: {
    code: 'dataset_already_exists',
    field: 'name',
    detail: 'A dataset with this name already exists in the project',
  },
});

@Injectable()
export class DatasetsService {
  constructor(private readonly datasets: DatasetsRepository) {}

  async list(q: ListDatasetsQueryDto): Promise<Page<Partial<DatasetDto>>> {
    const { rows, total } = await this.datasets.findPage(q);
    const selection = fieldSelection(q.fields);
    // `fields` without current_revision: no revision (columns, rows) is read.
    const revisions = selects(selection, 'current_revision')
      ? await this.datasets.revisionsByIds(
          rows.map((r) => r.current_revision_id).filter((x): x is string => x !== null),
          q.include_rows,
        )
      : new Map<string, RevisionRow>();
    return pageOf(
      rows.map((r) =>
        pickFields(
          toDatasetDto(
            r,
            r.current_revision_id ? (revisions.get(r.current_revision_id) ?? null) : null,
          ),
          selection,
        ),
      ),
      q.page,
      q.page_size,
      total,
    );
  }

  async get(id: string): Promise<DatasetDto> {
    const d = await this.datasets.findById(id);
    if (!d) throw AppException.notFound('dataset_not_found', 'Dataset');
    const rev = d.current_revision_id
      ? (await this.datasets.revisionsByIds([d.current_revision_id], true)).get(d.current_revision_id)
      : undefined;
    return toDatasetDto(d, rev ?? null);
  }

  async create(
    access: ProjectAccess,
    user: AuthenticatedUser,
    dto: CreateDatasetDto,
  ): Promise<DatasetDto> {
    const columns = normalizeColumns(dto.columns ?? []);
    const rows = normalizeRows(dto.rows ?? []);
    assertValidTable(columns, rows);
    const id = uuidv7();
    const revisionId = uuidv7();
    const status = dto.status ?? 'active';
    await this.datasets.insert({
      id,
      projectId: access.projectId,
      name: dto.name,
      description: dto.description ?? null,
      status,
      sourceType: dto.source_type ?? 'manual',
      sourceRef: dto.source_ref ?? null,
      revisionId,
      createdBy: user.id,
      archived: status === 'archived',
    });
    await this.datasets.insertRevision({
      id: revisionId,
      projectId: access.projectId,
      datasetId: id,
      number: 1,
      columns,
      rows,
      changeSummary: dto.change_summary ?? null,
      createdBy: user.id,
    });
    return this.get(id);
  }

  /**
   * Metadata changes update the dataset in place; `columns`/`rows` (each replacing the whole list,
   * the other kept from the current revision) write a new revision only when the table differs.
   */
  async update(user: AuthenticatedUser, id: string, dto: UpdateDatasetDto): Promise<DatasetDto> {
    const d = await this.datasets.lockForUpdate(id);
    if (!d) throw AppException.notFound('dataset_not_found', 'Dataset');

    const changes: DatasetChanges = {
      name: dto.name,
      description: dto.description,
      source_type: dto.source_type,
      source_ref: dto.source_ref,
      status: dto.status,
    };
    if (dto.status === 'archived' && d.status !== 'archived') changes.archivedAt = 'now';
    if (dto.status === 'active') changes.archivedAt = 'clear';

    if (dto.columns !== undefined || dto.rows !== undefined) {
      const cur = (d.current_revision_id
        ? await this.datasets.findRevisionTable(d.current_revision_id)
        : undefined) ?? { columns: [], rows: [] };
      const columns = dto.columns !== undefined ? normalizeColumns(dto.columns) : cur.columns;
      const rows = dto.rows !== undefined ? normalizeRows(dto.rows) : cur.rows;
      assertValidTable(columns, rows);
      if (!sameTable({ columns, rows }, cur)) {
        const revisionId = uuidv7();
        const number = d.current_revision_number + 1;
        await this.datasets.insertRevision({
          id: revisionId,
          projectId: d.project_id,
          datasetId: id,
          number,
          columns,
          rows,
          changeSummary: dto.change_summary ?? null,
          createdBy: user.id,
        });
        changes.current_revision_number = number;
        changes.current_revision_id = revisionId;
      }
    }
    await this.datasets.update(id, changes);
    return this.get(id);
  }

  /** Hard delete: revisions and bindings go with it (run rows keep their snapshots). */
  async remove(id: string): Promise<void> {
    await this.datasets.delete(id);
  }

  /**
   * `POST /datasets/bulk` (role and project checked by the guard). Every id must name a dataset
   * (404 `dataset_not_found`, the detail listing the unknown ids) of the body's project (422
   * `dataset_project_mismatch`); then all of them are deleted like `DELETE /datasets/{id}`
   * (revisions and bindings cascade). Two statements whatever the number of ids; the rows are
   * locked first, so a dataset deleted concurrently is reported unknown instead of miscounted.
   */
  async bulk(access: ProjectAccess, dto: DatasetBulkDto): Promise<DatasetBulkResultDto> {
    // Uuids are case-insensitive: compare them lower-cased. Anything else cannot be an id and is
    // simply unknown (never sent to PostgreSQL, whose uuid cast would refuse it).
    const requested = new Map<string, string>(); // canonical id → first spelling sent
    for (const raw of dto.dataset_ids) {
      const key = canonicalId(raw);
      if (!requested.has(key)) requested.set(key, raw);
    }
    const uuids = [...requested.keys()].filter(isUuid);
    const found = uuids.length > 0 ? await this.datasets.lockManyForUpdate(uuids) : [];
    const projectOf = new Map(found.map((r) => [r.id, r.project_id]));
    const unknown = [...requested].filter(([key]) => !projectOf.has(key)).map(([, raw]) => raw);
    if (unknown.length > 0) {
      // A 404 has no `errors` (CONTRACT §3: only validation failures do), so the detail lists them.
      throw new AppException(
        'dataset_not_found',
        `${unknown.length === 1 ? 'Dataset' : 'Datasets'} not found: ${unknown.join(', ')}`,
      );
    }
    const foreign = [...requested]
      .filter(([key]) => projectOf.get(key) !== access.projectId)
      .map(([, raw]) => raw);
    if (foreign.length > 0) {
      throw new AppException(
        'dataset_project_mismatch',
        'Some datasets belong to another project',
        { dataset_ids: [`not datasets of this project: ${foreign.join(', ')}`] },
      );
    }
    if (dto.action === 'delete') {
      await this.datasets.deleteManyInProject(access.projectId, [...projectOf.keys()]);
    }
    return { affected_count: projectOf.size };
  }

  async revisions(id: string, q: ListRevisionsQueryDto): Promise<Page<DatasetRevisionDto>> {
    const { rows, total } = await this.datasets.findRevisionPage(id, q);
    return pageOf(rows.map(toRevisionDto), q.page, q.page_size, total);
  }

  async revision(id: string, revisionNumber: string): Promise<DatasetRevisionDto> {
    // Checked by the guard already (pathIntegers); kept for callers outside a request.
    if (!isPathInteger(revisionNumber)) {
      throw AppException.validation({
        'path.revision_number': ['revision_number must be a positive integer'],
      });
    }
    const row = await this.datasets.findRevision(id, Number(revisionNumber));
    if (!row) {
      throw AppException.notFoundAs(
        'dataset_revision_not_found',
        `Dataset revision ${revisionNumber} not found`,
      );
    }
    return toRevisionDto(row);
  }

}

function assertValidTable(columns: StoredDatasetColumn[], rows: StoredDatasetRow[]): void {
  const errors = validateTable(columns, rows);
  const fields = Object.keys(errors).length;
  if (fields === 0) return;
  // More fields than a 422 lists: the first ones, and how many there were (as every 422 says).
  throw fields > MAX_ERROR_FIELDS
    ? validationProblem(errors)
    : AppException.validation(errors, 'The dataset table is invalid');
}

function toColumnDto(c: StoredDatasetColumn, i: number): DatasetColumnDto {
  return {
    column_key: c.column_key,
    display_name: c.display_name,
    data_type: c.data_type,
    required: c.required,
    default_value: c.default_value,
    order_index: i,
    is_scenario_label: c.is_scenario_label,
  };
}

function toRowDto(r: StoredDatasetRow, i: number): DatasetRowDto {
  return {
    row_key: r.row_key,
    scenario_label: r.scenario_label,
    order_index: i,
    values: r.values,
    is_active: r.is_active,
  };
}

function toRevisionDto(r: RevisionRow): DatasetRevisionDto {
  const dto: DatasetRevisionDto = {
    id: r.id,
    dataset_id: r.dataset_id,
    revision_number: r.revision_number,
    rows_count: r.rows_count,
    change_summary: r.change_summary,
    created_by: r.created_by,
    created_at: new Date(r.created_at).toISOString(),
    is_current: r.is_current,
    columns: r.columns.map(toColumnDto),
  };
  if (r.rows) dto.rows = r.rows.map(toRowDto);
  return dto;
}

function toDatasetDto(d: DatasetRow, rev: RevisionRow | null): DatasetDto {
  return {
    id: d.id,
    project_id: d.project_id,
    name: d.name,
    description: d.description,
    status: d.status,
    source_type: d.source_type,
    source_ref: d.source_ref,
    current_revision_number: d.current_revision_number,
    current_revision_id: d.current_revision_id,
    current_revision: rev ? toRevisionDto(rev) : null,
    test_case_ids: d.test_case_ids,
    test_cases_count: d.test_case_ids.length,
    created_by: d.created_by,
    created_at: new Date(d.created_at).toISOString(),
    updated_at: new Date(d.updated_at).toISOString(),
    archived_at: d.archived_at ? new Date(d.archived_at).toISOString() : null,
  };
}
