import { Injectable } from '@nestjs/common';
import { isPathInteger } from '../../common/validation/path-integer';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { normalizeColumns, normalizeRows, sameTable, validateTable } from './dataset-table';
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

interface DatasetRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  status: DatasetDto['status'];
  source_type: DatasetDto['source_type'];
  source_ref: string | null;
  current_revision_number: number;
  current_revision_id: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
  test_case_ids: string[];
}

interface RevisionRow {
  id: string;
  dataset_id: string;
  revision_number: number;
  rows_count: number;
  change_summary: string | null;
  created_by: string;
  created_at: Date;
  columns: StoredDatasetColumn[];
  rows?: StoredDatasetRow[];
  is_current: boolean;
}

const DATASET_COLUMNS = `d.id, d.project_id, d.name, d.description, d.status, d.source_type, d.source_ref,
  d.current_revision_number, d.current_revision_id, d.created_by, d.created_at, d.updated_at, d.archived_at,
  coalesce((SELECT array_agg(b.test_case_id ORDER BY b.created_at, b.id)
              FROM test_case_dataset_bindings b WHERE b.dataset_id = d.id), '{}')::text[] AS test_case_ids`;

const REVISION_COLUMNS = `r.id, r.dataset_id, r.revision_number, r.rows_count, r.change_summary, r.created_by,
  r.created_at, r.columns, (r.revision_number = d.current_revision_number) AS is_current`;

const SORTS: Record<
  ListDatasetsQueryDto['sort_by'],
  { expr: string; defaultOrder: 'asc' | 'desc' }
> = {
  updated_at: { expr: 'd.updated_at', defaultOrder: 'desc' },
  created_at: { expr: 'd.created_at', defaultOrder: 'desc' },
  name: { expr: 'lower(d.name)', defaultOrder: 'asc' },
};

@Injectable()
export class DatasetsService {
  constructor(private readonly db: Db) {}

  async list(q: ListDatasetsQueryDto): Promise<Page<DatasetDto>> {
    const params: unknown[] = [q.project_id];
    const where = ['d.project_id = $1'];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    if (q.search) {
      const s = p(likePattern(q.search));
      where.push(`(d.name ILIKE ${s} OR d.description ILIKE ${s})`);
    }
    if (q.source_type?.length) where.push(`d.source_type = ANY(${p(q.source_type)}::text[])`);
    if (q.status?.length) where.push(`d.status = ANY(${p(q.status)}::text[])`);
    if (q.test_case_id) {
      where.push(
        `EXISTS (SELECT 1 FROM test_case_dataset_bindings b WHERE b.dataset_id = d.id AND b.test_case_id = ${p(q.test_case_id)})`,
      );
    }
    if (q.exclude_test_case_id) {
      where.push(
        `NOT EXISTS (SELECT 1 FROM test_case_dataset_bindings b WHERE b.dataset_id = d.id AND b.test_case_id = ${p(q.exclude_test_case_id)})`,
      );
    }
    const sort = SORTS[q.sort_by];
    const dir = (q.sort_order ?? sort.defaultOrder) === 'asc' ? 'ASC' : 'DESC';
    const whereSql = where.join(' AND ');
    const countParams = [...params];
    const rows = await this.db.query<DatasetRow>(
      `SELECT ${DATASET_COLUMNS} FROM datasets d WHERE ${whereSql}
        ORDER BY ${sort.expr} ${dir}, d.id ${dir} LIMIT ${p(q.page_size)} OFFSET ${p(offsetOf(q.page, q.page_size))}`,
      params,
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM datasets d WHERE ${whereSql}`,
      countParams,
    );
    const revisions = await this.revisionsByIds(
      rows.map((r) => r.current_revision_id).filter((x): x is string => x !== null),
      q.include_rows,
    );
    return pageOf(
      rows.map((r) =>
        toDatasetDto(
          r,
          r.current_revision_id ? (revisions.get(r.current_revision_id) ?? null) : null,
        ),
      ),
      q.page,
      q.page_size,
      total[0]?.n ?? 0,
    );
  }

  async get(id: string): Promise<DatasetDto> {
    const rows = await this.db.query<DatasetRow>(
      `SELECT ${DATASET_COLUMNS} FROM datasets d WHERE d.id = $1`,
      [id],
    );
    const d = rows[0];
    if (!d) throw AppException.notFound('dataset_not_found', 'Dataset');
    const rev = d.current_revision_id
      ? (await this.revisionsByIds([d.current_revision_id], true)).get(d.current_revision_id)
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
    await this.db.query(
      `INSERT INTO datasets (id, project_id, name, description, status, source_type, source_ref,
                             current_revision_number, current_revision_id, created_by, archived_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, CASE WHEN $10 THEN now() END)`,
      [
        id,
        access.projectId,
        dto.name,
        dto.description ?? null,
        status,
        dto.source_type ?? 'manual',
        dto.source_ref ?? null,
        revisionId,
        user.id,
        status === 'archived',
      ],
    );
    await this.insertRevision({
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
    const locked = await this.db.query<{
      project_id: string;
      status: string;
      current_revision_number: number;
      current_revision_id: string | null;
    }>(
      `SELECT project_id, status, current_revision_number, current_revision_id FROM datasets WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const d = locked[0];
    if (!d) throw AppException.notFound('dataset_not_found', 'Dataset');

    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (col: string, v: unknown) => {
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    };
    if (dto.name !== undefined) set('name', dto.name);
    if (dto.description !== undefined) set('description', dto.description);
    if (dto.source_type !== undefined) set('source_type', dto.source_type);
    if (dto.source_ref !== undefined) set('source_ref', dto.source_ref);
    if (dto.status !== undefined) {
      set('status', dto.status);
      if (dto.status === 'archived' && d.status !== 'archived') sets.push('archived_at = now()');
      if (dto.status === 'active') sets.push('archived_at = NULL');
    }

    if (dto.columns !== undefined || dto.rows !== undefined) {
      const current = d.current_revision_id
        ? await this.db.query<{ columns: StoredDatasetColumn[]; rows: StoredDatasetRow[] }>(
            `SELECT columns, rows FROM dataset_revisions WHERE id = $1`,
            [d.current_revision_id],
          )
        : [];
      const cur = current[0] ?? { columns: [], rows: [] };
      const columns = dto.columns !== undefined ? normalizeColumns(dto.columns) : cur.columns;
      const rows = dto.rows !== undefined ? normalizeRows(dto.rows) : cur.rows;
      assertValidTable(columns, rows);
      if (!sameTable({ columns, rows }, cur)) {
        const revisionId = uuidv7();
        const number = d.current_revision_number + 1;
        await this.insertRevision({
          id: revisionId,
          projectId: d.project_id,
          datasetId: id,
          number,
          columns,
          rows,
          changeSummary: dto.change_summary ?? null,
          createdBy: user.id,
        });
        set('current_revision_number', number);
        set('current_revision_id', revisionId);
      }
    }
    if (sets.length > 0) {
      await this.db.query(
        `UPDATE datasets SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
    }
    return this.get(id);
  }

  /** Hard delete: revisions and bindings go with it (run rows keep their snapshots). */
  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM datasets WHERE id = $1`, [id]);
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
    const found =
      uuids.length > 0
        ? await this.db.query<{ id: string; project_id: string }>(
            `SELECT id, project_id FROM datasets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
            [uuids],
          )
        : [];
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
      await this.db.query(`DELETE FROM datasets WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
        access.projectId,
        [...projectOf.keys()],
      ]);
    }
    return { affected_count: projectOf.size };
  }

  async revisions(id: string, q: ListRevisionsQueryDto): Promise<Page<DatasetRevisionDto>> {
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS}${q.include_rows ? ', r.rows' : ''}
         FROM dataset_revisions r JOIN datasets d ON d.id = r.dataset_id
        WHERE r.dataset_id = $1 ORDER BY r.revision_number DESC LIMIT $2 OFFSET $3`,
      [id, q.page_size, offsetOf(q.page, q.page_size)],
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM dataset_revisions WHERE dataset_id = $1`,
      [id],
    );
    return pageOf(rows.map(toRevisionDto), q.page, q.page_size, total[0]?.n ?? 0);
  }

  async revision(id: string, revisionNumber: string): Promise<DatasetRevisionDto> {
    // Checked by the guard already (pathIntegers); kept for callers outside a request.
    if (!isPathInteger(revisionNumber)) {
      throw AppException.validation({
        'path.revision_number': ['revision_number must be a positive integer'],
      });
    }
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS}, r.rows
         FROM dataset_revisions r JOIN datasets d ON d.id = r.dataset_id
        WHERE r.dataset_id = $1 AND r.revision_number = $2`,
      [id, Number(revisionNumber)],
    );
    if (!rows[0]) {
      throw AppException.notFoundAs(
        'dataset_revision_not_found',
        `Dataset revision ${revisionNumber} not found`,
      );
    }
    return toRevisionDto(rows[0]);
  }

  private async revisionsByIds(
    ids: string[],
    withRows: boolean,
  ): Promise<Map<string, RevisionRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS}${withRows ? ', r.rows' : ''}
         FROM dataset_revisions r JOIN datasets d ON d.id = r.dataset_id
        WHERE r.id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** One statement per revision: the whole table is one jsonb value (10,000 rows included). */
  private async insertRevision(r: {
    id: string;
    projectId: string;
    datasetId: string;
    number: number;
    columns: StoredDatasetColumn[];
    rows: StoredDatasetRow[];
    changeSummary: string | null;
    createdBy: string;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO dataset_revisions (id, project_id, dataset_id, revision_number, rows_count, columns, rows,
                                      change_summary, created_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9)`,
      [
        r.id,
        r.projectId,
        r.datasetId,
        r.number,
        r.rows.length,
        JSON.stringify(r.columns),
        JSON.stringify(r.rows),
        r.changeSummary,
        r.createdBy,
      ],
    );
  }
}

function assertValidTable(columns: StoredDatasetColumn[], rows: StoredDatasetRow[]): void {
  const errors = validateTable(columns, rows);
  if (Object.keys(errors).length > 0)
    throw AppException.validation(errors, 'The dataset table is invalid');
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
