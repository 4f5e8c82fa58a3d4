import { Injectable } from '@nestjs/common';
import { likePattern, offsetOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import type { DatasetDto, ListDatasetsQueryDto } from './dto/dataset.dto';
import type { StoredDatasetColumn, StoredDatasetRow } from './entities/dataset.entity';

/** A dataset as every read answers it, with the ids of the cases bound to it. */
export interface DatasetRow {
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

/** A revision; `rows` only when asked for. */
export interface RevisionRow {
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

export interface NewDataset {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  status: string;
  sourceType: string;
  sourceRef: string | null;
  /** Id of the first revision (number 1), inserted right after. */
  revisionId: string;
  createdBy: string;
  /** Sets `archived_at` to now. */
  archived: boolean;
}

export interface NewRevision {
  id: string;
  projectId: string;
  datasetId: string;
  number: number;
  columns: StoredDatasetColumn[];
  rows: StoredDatasetRow[];
  changeSummary: string | null;
  createdBy: string;
}

/** The columns an update may set; absent keys keep their value. */
export interface DatasetChanges {
  name?: string;
  description?: string | null;
  source_type?: string;
  source_ref?: string | null;
  status?: string;
  /** `now`: archived now; `clear`: not archived. */
  archivedAt?: 'now' | 'clear';
  current_revision_number?: number;
  current_revision_id?: string;
}

/** A dataset locked for an update. */
export interface LockedDataset {
  project_id: string;
  status: string;
  current_revision_number: number;
  current_revision_id: string | null;
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

/** SQL of datasets and their revisions (`datasets`, `dataset_revisions`). */
@Injectable()
export class DatasetsRepository {
  constructor(private readonly db: Db) {}

  /** One page of a project's datasets and the number of all that match. */
  async findPage(q: ListDatasetsQueryDto): Promise<{ rows: DatasetRow[]; total: number }> {
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
    return { rows, total: total[0]?.n ?? 0 };
  }

  async findById(id: string): Promise<DatasetRow | undefined> {
    const rows = await this.db.query<DatasetRow>(
      `SELECT ${DATASET_COLUMNS} FROM datasets d WHERE d.id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Revisions by id, with their rows when asked (`r.rows` is the whole table). */
  async revisionsByIds(
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

  async insert(d: NewDataset): Promise<void> {
    await this.db.query(
      `INSERT INTO datasets (id, project_id, name, description, status, source_type, source_ref,
                             current_revision_number, current_revision_id, created_by, archived_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, CASE WHEN $10 THEN now() END)`,
      [
        d.id,
        d.projectId,
        d.name,
        d.description,
        d.status,
        d.sourceType,
        d.sourceRef,
        d.revisionId,
        d.createdBy,
        d.archived,
      ],
    );
  }

  /** One statement per revision: the whole table is one jsonb value (10,000 rows included). */
  async insertRevision(r: NewRevision): Promise<void> {
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

  /** Locks one dataset; undefined when there is no such dataset. */
  async lockForUpdate(id: string): Promise<LockedDataset | undefined> {
    const locked = await this.db.query<LockedDataset>(
      `SELECT project_id, status, current_revision_number, current_revision_id FROM datasets WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return locked[0];
  }

  /** `FOR KEY SHARE` on a dataset being bound; undefined when unknown. */
  async lockKeyShare(
    id: string,
  ): Promise<{ project_id: string; current_revision_number: number } | undefined> {
    const datasets = await this.db.query<{ project_id: string; current_revision_number: number }>(
      `SELECT project_id, current_revision_number FROM datasets WHERE id = $1 FOR KEY SHARE`,
      [id],
    );
    return datasets[0];
  }

  /** The table (columns and rows) of a revision; undefined when unknown. */
  async findRevisionTable(
    revisionId: string,
  ): Promise<{ columns: StoredDatasetColumn[]; rows: StoredDatasetRow[] } | undefined> {
    const current = await this.db.query<{
      columns: StoredDatasetColumn[];
      rows: StoredDatasetRow[];
    }>(`SELECT columns, rows FROM dataset_revisions WHERE id = $1`, [revisionId]);
    return current[0];
  }

  /** Sets the present keys and `updated_at`; nothing when no key is present. */
  async update(id: string, changes: DatasetChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (col: string, v: unknown) => {
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.source_type !== undefined) set('source_type', changes.source_type);
    if (changes.source_ref !== undefined) set('source_ref', changes.source_ref);
    if (changes.status !== undefined) set('status', changes.status);
    if (changes.archivedAt === 'now') sets.push('archived_at = now()');
    if (changes.archivedAt === 'clear') sets.push('archived_at = NULL');
    if (changes.current_revision_number !== undefined)
      set('current_revision_number', changes.current_revision_number);
    if (changes.current_revision_id !== undefined)
      set('current_revision_id', changes.current_revision_id);
    if (sets.length > 0) {
      await this.db.query(
        `UPDATE datasets SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
    }
  }

  /** Hard delete: revisions and bindings cascade. */
  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM datasets WHERE id = $1`, [id]);
  }

  /** Locks the datasets of these ids that exist, in id order; their ids and projects. */
  async lockManyForUpdate(ids: string[]): Promise<Array<{ id: string; project_id: string }>> {
    return this.db.query<{ id: string; project_id: string }>(
      `SELECT id, project_id FROM datasets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
      [ids],
    );
  }

  async deleteManyInProject(projectId: string, ids: string[]): Promise<void> {
    await this.db.query(`DELETE FROM datasets WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
      projectId,
      ids,
    ]);
  }

  /** One page of a dataset's revisions, newest first, and the number of all. */
  async findRevisionPage(
    datasetId: string,
    page: { page: number; page_size: number; include_rows?: boolean },
  ): Promise<{ rows: RevisionRow[]; total: number }> {
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS}${page.include_rows ? ', r.rows' : ''}
         FROM dataset_revisions r JOIN datasets d ON d.id = r.dataset_id
        WHERE r.dataset_id = $1 ORDER BY r.revision_number DESC LIMIT $2 OFFSET $3`,
      [datasetId, page.page_size, offsetOf(page.page, page.page_size)],
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM dataset_revisions WHERE dataset_id = $1`,
      [datasetId],
    );
    return { rows, total: total[0]?.n ?? 0 };
  }

  /** One revision by number, with its rows; undefined when unknown. */
  async findRevision(datasetId: string, revisionNumber: number): Promise<RevisionRow | undefined> {
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS}, r.rows
         FROM dataset_revisions r JOIN datasets d ON d.id = r.dataset_id
        WHERE r.dataset_id = $1 AND r.revision_number = $2`,
      [datasetId, revisionNumber],
    );
    return rows[0];
  }

  /**
   * Whether a revision exists (undefined when not), with its row keys when `withKeys` (null
   * otherwise).
   */
  async findRevisionRowKeys(
    datasetId: string,
    revisionNumber: number,
    withKeys: boolean,
  ): Promise<{ keys: string[] | null } | undefined> {
    const rows = await this.db.query<{ keys: string[] | null }>(
      `SELECT CASE WHEN $3 THEN ARRAY(SELECT e->>'row_key' FROM jsonb_array_elements(r.rows) e) END AS keys
         FROM dataset_revisions r WHERE r.dataset_id = $1 AND r.revision_number = $2`,
      [datasetId, revisionNumber, withKeys],
    );
    return rows[0];
  }

  /** The rows of each (dataset, revision number) pair that exists, in one query. */
  async revisionRowsOf(
    wanted: ReadonlyArray<{ datasetId: string; number: number }>,
  ): Promise<Array<{ dataset_id: string; revision_number: number; rows: StoredDatasetRow[] }>> {
    return this.db.query<{
      dataset_id: string;
      revision_number: number;
      rows: StoredDatasetRow[];
    }>(
      `SELECT r.dataset_id, r.revision_number, r.rows
           FROM dataset_revisions r
           JOIN unnest($1::uuid[], $2::int[]) AS w(dataset_id, revision_number)
             ON r.dataset_id = w.dataset_id AND r.revision_number = w.revision_number`,
      [wanted.map((w) => w.datasetId), wanted.map((w) => w.number)],
    );
  }
}
