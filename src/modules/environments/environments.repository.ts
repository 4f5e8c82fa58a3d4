import { Injectable } from '@nestjs/common';
import {
  KeysetOrder,
  KeysetRequest,
  keysetAfter,
  keysetColumns,
  keysetOrderBy,
} from '../../common/pagination/keyset';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import type { EnvironmentSortKey } from './dto/environment.dto';
import type { RevisionSnapshotLike } from './revision-diff';
import type {
  DerivedEdge,
  DerivedEntity,
  EnvironmentSection,
  EnvironmentSnapshot,
  TopologyCounters,
} from './topology';

/** An environment joined with its current revision, as every environment response reads it. */
export interface EnvironmentRow {
  id: string;
  project_id: string;
  current_revision_id: string;
  current_revision_number: number;
  snapshot_hash: string;
  entities_count: number;
  edges_count: number;
  topology_component_count: number;
  topology_node_count: string | number;
  topology_endpoint_count: number;
  infra_host_types: string[];
  infra_providers: string[];
  infra_regions: string[];
  created_by: string;
  updated_by: string;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
  full_snapshot: EnvironmentSnapshot;
}

/** An `environment_revisions` row (list columns; the snapshot and graph for a single revision). */
export interface RevisionRow {
  id: string;
  environment_id: string;
  revision_number: number;
  schema_version: number;
  is_current: boolean;
  revision_note: string | null;
  snapshot_hash: string;
  entities_count: number;
  edges_count: number;
  created_by: string;
  created_at: Date;
  full_snapshot?: Record<string, unknown>;
  entities?: StoredEntity[];
  edges?: StoredEdge[];
}

/** A revision's number, hash and stored snapshot (the input of a revision diff). */
export interface RevisionSnapshotRow {
  revision_number: number;
  snapshot_hash: string;
  full_snapshot: RevisionSnapshotLike;
}

/** A derived entity as stored in `environment_revisions.entities` (its revision gives created_at). */
export type StoredEntity = DerivedEntity & { id?: string };
/** A derived edge as stored in `environment_revisions.edges`. */
export type StoredEdge = DerivedEdge & { id?: string };

/** What a test run captures from an environment (reference §3). */
export interface EnvironmentCurrentRevision {
  environment_id: string;
  project_id: string;
  name: string;
  status: string;
  archived_at: Date | null;
  revision_id: string;
  revision_number: number;
  snapshot_hash: string;
  full_snapshot: EnvironmentSnapshot;
}

export interface EnvironmentPageQuery {
  projectId: string;
  includeArchived: boolean;
  search?: string;
  useCases: string[];
  sortBy: EnvironmentSortKey;
  direction: 'ASC' | 'DESC';
  limit: number;
  offset: number;
  /** Keyset paging (`cursor`): the order and where to start; then limit/offset are unused. */
  keyset?: KeysetRequest;
  /**
   * How much of the current revision's snapshot the answer needs (`fields`): all of it, only its
   * `environment` section (no topology), or none (then `full_snapshot` is `{}`).
   */
  snapshot?: 'full' | 'environment' | 'none';
}

/** The columns of a new environment row (completed from its first revision by writeRevision). */
export interface NewEnvironment {
  id: string;
  projectId: string;
  /** The descriptive fields, from the first revision's snapshot. */
  environment: EnvironmentSection;
  /** Id of the first revision (the foreign key is deferred to the end of the transaction). */
  revisionId: string;
  userId: string;
}

/** How a revision write changes `archived_at`. */
export type ArchiveChange = 'set' | 'clear' | 'keep';

export interface RevisionWrite {
  environmentId: string;
  revisionId: string;
  projectId: string;
  revisionNumber: number;
  note: string;
  snapshot: EnvironmentSnapshot;
  hash: string;
  entities: DerivedEntity[];
  edges: DerivedEdge[];
  counters: TopologyCounters;
  userId: string;
  archive: ArchiveChange;
  /** The environment's first revision: no earlier one to demote, `updated_at` stays `created_at`. */
  isFirst: boolean;
}

/** The environment columns a revision write answers with. */
export interface WrittenEnvironmentRow {
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
  created_by: string;
}

/** Environment columns plus the current revision's number, hash, counts and snapshot. */
const ENVIRONMENT_SELECT = `
  SELECT e.id, e.project_id, e.current_revision_id,
         r.revision_number AS current_revision_number, r.snapshot_hash,
         r.entities_count, r.edges_count,
         e.topology_component_count, e.topology_node_count, e.topology_endpoint_count,
         e.infra_host_types, e.infra_providers, e.infra_regions,
         e.created_by, e.updated_by, e.archived_at, e.created_at, e.updated_at,
         r.full_snapshot
    FROM environments e
    JOIN environment_revisions r ON r.id = e.current_revision_id`;

const REVISION_LIST_COLUMNS = `id, environment_id, revision_number, schema_version, is_current,
  revision_note, snapshot_hash, entities_count, edges_count, created_by, created_at`;

const SORT_COLUMNS: Readonly<Record<EnvironmentSortKey, string>> = {
  created_at: 'e.created_at',
  updated_at: 'e.updated_at',
  name: 'lower(e.name)',
};

/**
 * The keyset order of an environment list (`cursor`): the sort key then the id; served by
 * ix_environments_project_created, _updated and _name after project_id.
 */
export function environmentKeysetOrder(
  sortBy: EnvironmentSortKey,
  direction: 'ASC' | 'DESC',
): KeysetOrder {
  return {
    keys: [
      { sql: SORT_COLUMNS[sortBy], type: sortBy === 'name' ? 'text' : 'timestamptz' },
      { sql: 'e.id', type: 'uuid' },
    ],
    dir: direction,
  };
}

/** The snapshot a list reads (EnvironmentPageQuery.snapshot), as a select-list item. */
const SNAPSHOT_COLUMN = {
  full: 'r.full_snapshot',
  environment: "jsonb_build_object('environment', r.full_snapshot->'environment') AS full_snapshot",
  none: "'{}'::jsonb AS full_snapshot",
} as const;

/** The descriptive columns of an environment row, in table order (name … schema_version). */
function sectionColumns(env: EnvironmentSection): unknown[] {
  return [
    env.name,
    env.kind,
    env.status,
    env.description,
    env.tags,
    env.use_cases,
    env.schema_version,
  ];
}

/** `environments` and `environment_revisions`. */
@Injectable()
export class EnvironmentsRepository {
  constructor(private readonly db: Db) {}

  /** One page with its current revisions, and the total: two queries. */
  async page(q: EnvironmentPageQuery): Promise<{ rows: EnvironmentRow[]; total: number | null }> {
    const params: unknown[] = [q.projectId];
    const where = ['e.project_id = $1'];
    if (!q.includeArchived) where.push('e.archived_at IS NULL');
    if (q.search) {
      params.push(likePattern(q.search));
      where.push(`(e.name ILIKE $${params.length} OR e.description ILIKE $${params.length})`);
    }
    if (q.useCases.length > 0) {
      params.push(q.useCases);
      where.push(`e.use_cases && $${params.length}::text[]`);
    }
    const filter = where.join(' AND ');
    const snapshot = SNAPSHOT_COLUMN[q.snapshot ?? 'full'];
    const select =
      snapshot === SNAPSHOT_COLUMN.full
        ? ENVIRONMENT_SELECT
        : ENVIRONMENT_SELECT.replace('r.full_snapshot\n', `${snapshot}\n`);
    if (q.keyset) {
      // A keyset page: a range walk from the cursor's row, no OFFSET and no count.
      const k = q.keyset;
      const add = (value: unknown): string => {
        params.push(value);
        return `$${params.length}`;
      };
      const after = k.after ? ` AND ${keysetAfter(k.order, k.after, add)}` : '';
      const rows = await this.db.query<EnvironmentRow>(
        `${select.replace('\n    FROM environments e', `, ${keysetColumns(k.order)}\n    FROM environments e`)}
          WHERE ${filter}${after}
          ORDER BY ${keysetOrderBy(k.order)}
          LIMIT ${add(k.limit)}`,
        params,
      );
      return { rows, total: null };
    }
    const countRows = await this.db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM environments e WHERE ${filter}`,
      params,
    );
    const rows = await this.db.query<EnvironmentRow>(
      `${select}
        WHERE ${filter}
        ORDER BY ${SORT_COLUMNS[q.sortBy]} ${q.direction}, e.id ${q.direction}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    );
    return { rows, total: countRows[0]?.total ?? 0 };
  }

  /** The use cases of the project's environments (archived ones too when asked), distinct. */
  async distinctUseCases(projectId: string, includeArchived: boolean): Promise<string[]> {
    const rows = await this.db.query<{ use_case: string }>(
      `SELECT DISTINCT u.use_case
         FROM environments e CROSS JOIN LATERAL unnest(e.use_cases) AS u(use_case)
        WHERE e.project_id = $1 AND ($2::boolean OR e.archived_at IS NULL)`,
      [projectId, includeArchived],
    );
    return rows.map((r) => r.use_case);
  }

  async findById(id: string): Promise<EnvironmentRow | null> {
    const rows = await this.db.query<EnvironmentRow>(`${ENVIRONMENT_SELECT} WHERE e.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /**
   * Locks the environment row (SELECT … FOR UPDATE in the request transaction) so concurrent
   * writers of one environment serialise, and returns it with its current revision.
   */
  async findByIdForUpdate(id: string): Promise<EnvironmentRow | null> {
    // Lock the bare row first: a FOR UPDATE on the join would be re-checked against the row
    // version a concurrent writer committed (pointing at a newer revision) and return nothing.
    // Once the lock is held, the next statement sees the latest committed revision.
    const locked = await this.db.query<{ id: string }>(
      `SELECT id FROM environments WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return locked[0] ? this.findById(id) : null;
  }

  /**
   * The environment and its current revision when it belongs to the project (archived included),
   * else `null`. `environmentId` must be a uuid.
   */
  async findCurrentRevision(
    projectId: string,
    environmentId: string,
  ): Promise<EnvironmentCurrentRevision | null> {
    const rows = await this.db.query<EnvironmentCurrentRevision>(
      `SELECT e.id AS environment_id, e.project_id, e.name, e.status, e.archived_at,
              r.id AS revision_id, r.revision_number, r.snapshot_hash, r.full_snapshot
         FROM environments e JOIN environment_revisions r ON r.id = e.current_revision_id
        WHERE e.id = $1 AND e.project_id = $2`,
      [environmentId, projectId],
    );
    return rows[0] ?? null;
  }

  /** One page of the environment's revisions, newest first, and the total: two queries. */
  async revisionsPage(
    environmentId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: RevisionRow[]; total: number }> {
    const countRows = await this.db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM environment_revisions WHERE environment_id = $1`,
      [environmentId],
    );
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_LIST_COLUMNS}
         FROM environment_revisions
        WHERE environment_id = $1
        ORDER BY revision_number DESC
        LIMIT $2 OFFSET $3`,
      [environmentId, limit, offset],
    );
    return { rows, total: countRows[0]?.total ?? 0 };
  }

  /** Revision `revisionNumber` with its snapshot, entities and edges. */
  async findRevision(environmentId: string, revisionNumber: number): Promise<RevisionRow | null> {
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_LIST_COLUMNS}, full_snapshot, entities, edges
         FROM environment_revisions
        WHERE environment_id = $1 AND revision_number = $2`,
      [environmentId, revisionNumber],
    );
    return rows[0] ?? null;
  }

  /**
   * The revisions `numbers` of an environment (number, hash, snapshot), in one query; numbers the
   * environment does not have are simply absent.
   */
  async revisionSnapshots(
    environmentId: string,
    numbers: readonly number[],
  ): Promise<RevisionSnapshotRow[]> {
    return this.db.query<RevisionSnapshotRow>(
      `SELECT revision_number, snapshot_hash, full_snapshot
         FROM environment_revisions
        WHERE environment_id = $1 AND revision_number = ANY($2::int[])`,
      [environmentId, numbers],
    );
  }

  /** Inserts the environment row; writeRevision completes it (topology, meta, extra, counters). */
  async insert(e: NewEnvironment): Promise<void> {
    await this.db.query(
      `INSERT INTO environments (id, project_id, name, kind, status, description, tags, use_cases,
              schema_version, current_revision_id, current_revision_number, snapshot_hash,
              created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, '', $11, $11)`,
      [e.id, e.projectId, ...sectionColumns(e.environment), e.revisionId, e.userId],
    );
  }

  /**
   * Writes a revision and makes it the only current one (three statements): the earlier current
   * revision is demoted, the new one inserted (its entities and edges get ids), and the environment
   * row mirrors it. `null` when the environment or the revision is gone.
   */
  async writeRevision(w: RevisionWrite): Promise<WrittenEnvironmentRow | null> {
    const env = w.snapshot.environment;
    if (!w.isFirst) {
      await this.db.query(
        `UPDATE environment_revisions SET is_current = false
          WHERE environment_id = $1 AND is_current`,
        [w.environmentId],
      );
    }
    const inserted = await this.db.query<{ created_at: Date }>(
      `INSERT INTO environment_revisions (id, environment_id, project_id, revision_number,
              schema_version, is_current, revision_note, full_snapshot, snapshot_hash, entities,
              edges, entities_count, edges_count, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, true, $6, $7::jsonb, $8, $9::jsonb, $10::jsonb, $11, $12, $13,
               clock_timestamp())
       RETURNING created_at`,
      [
        w.revisionId,
        w.environmentId,
        w.projectId,
        w.revisionNumber,
        env.schema_version,
        w.note,
        JSON.stringify(w.snapshot),
        w.hash,
        JSON.stringify(w.entities.map((e): StoredEntity => ({ id: uuidv7(), ...e }))),
        JSON.stringify(w.edges.map((e): StoredEdge => ({ id: uuidv7(), ...e }))),
        w.counters.entities_count,
        w.counters.edges_count,
        w.userId,
      ],
    );
    const counters = w.counters;
    const updated = await this.db.query<WrittenEnvironmentRow>(
      `WITH updated AS (
       UPDATE environments e
          SET name = $3, kind = $4, status = $5, description = $6, tags = $7, use_cases = $8,
              schema_version = $9,
              topology = r.full_snapshot -> 'topology',
              meta = r.full_snapshot -> 'environment' -> 'meta',
              extra = r.full_snapshot -> 'environment' -> 'extra',
              current_revision_id = r.id, current_revision_number = r.revision_number,
              snapshot_hash = r.snapshot_hash,
              entities_count = $10, edges_count = $11, topology_component_count = $12,
              topology_node_count = $13, topology_endpoint_count = $14,
              infra_host_types = $15, infra_providers = $16, infra_regions = $17,
              updated_by = $18,
              archived_at = CASE $19::text WHEN 'set' THEN r.created_at
                                           WHEN 'clear' THEN NULL
                                           ELSE e.archived_at END,
              updated_at = CASE WHEN $20::boolean THEN e.created_at ELSE r.created_at END
         FROM environment_revisions r
        WHERE e.id = $1 AND r.id = $2
        RETURNING e.archived_at, e.created_at, e.updated_at, e.created_by)
       SELECT * FROM updated`,
      [
        w.environmentId,
        w.revisionId,
        ...sectionColumns(env),
        counters.entities_count,
        counters.edges_count,
        counters.topology_component_count,
        counters.topology_node_count,
        counters.topology_endpoint_count,
        counters.infra_host_types,
        counters.infra_providers,
        counters.infra_regions,
        w.userId,
        w.archive,
        w.isFirst,
      ],
    );
    return inserted[0] && updated[0] ? updated[0] : null;
  }
}
