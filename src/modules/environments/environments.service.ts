import { Injectable } from '@nestjs/common';
import { isPathInteger, MAX_PATH_INTEGER } from '../../common/validation/path-integer';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import {
  CreateEnvironmentDto,
  EnvironmentDto,
  EnvironmentEdgeDto,
  EnvironmentEntityDto,
  EnvironmentRevisionDto,
  EnvironmentRevisionListItemDto,
  EnvironmentSortKey,
  ListEnvironmentsQueryDto,
  ListRevisionsQueryDto,
  UpdateEnvironmentDto,
  UseCasesDto,
  UseCasesQueryDto,
} from './dto/environment.dto';
import { snapshotHash, compareCodePoints } from './snapshot-hash';
import {
  applyEnvironmentPatch,
  buildSnapshot,
  changedTopLevelFields,
  DerivedEdge,
  DerivedEntity,
  deriveEntitiesAndEdges,
  EnvironmentPatch,
  EnvironmentSnapshot,
  EnvironmentValidationError,
  issuesToErrorMap,
  revisionNote,
  topologyCounters,
  TopologyCounters,
} from './topology';

/** The status value that means "archived" (CONTRACT §8). */
export const ARCHIVED_STATUS = 'archived';

/** Largest revision number: what PostgreSQL `integer` holds, and the path accepts. */
const MAX_REVISION_NUMBER = MAX_PATH_INTEGER;

/** An environment joined with its current revision, as every environment response reads it. */
interface EnvironmentRow {
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

interface RevisionRow {
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

/** A derived entity as stored in `environment_revisions.entities` (its revision gives created_at). */
type StoredEntity = DerivedEntity & { id?: string };
/** A derived edge as stored in `environment_revisions.edges`. */
type StoredEdge = DerivedEdge & { id?: string };

/** What a test run captures from an environment (reference §3); see {@link EnvironmentsService.currentRevisionOf}. */
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

/** How a revision write changes `archived_at`. */
type ArchiveChange = 'set' | 'clear' | 'keep';

@Injectable()
export class EnvironmentsService {
  constructor(
    private readonly db: Db,
    private readonly access: AccessService,
  ) {}

  // -------------------------------------------------------------------------------------------
  // reads

  async list(q: ListEnvironmentsQueryDto): Promise<Page<EnvironmentDto>> {
    const params: unknown[] = [q.project_id];
    const where = ['e.project_id = $1'];
    if (!q.include_archived) where.push('e.archived_at IS NULL');
    const search = q.search?.trim();
    if (search) {
      params.push(likePattern(search));
      where.push(`(e.name ILIKE $${params.length} OR e.description ILIKE $${params.length})`);
    }
    const useCases = (q.use_case ?? []).map((u) => u.trim()).filter((u) => u !== '');
    if (useCases.length > 0) {
      params.push(useCases);
      where.push(`e.use_cases && $${params.length}::text[]`);
    }
    const filter = where.join(' AND ');
    const direction = q.sort_order === 'asc' ? 'ASC' : 'DESC';
    const countRows = await this.db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM environments e WHERE ${filter}`,
      params,
    );
    const rows = await this.db.query<EnvironmentRow>(
      `${ENVIRONMENT_SELECT}
        WHERE ${filter}
        ORDER BY ${SORT_COLUMNS[q.sort_by]} ${direction}, e.id ${direction}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page_size, offsetOf(q.page, q.page_size)],
    );
    return pageOf(rows.map(toEnvironmentDto), q.page, q.page_size, countRows[0]?.total ?? 0);
  }

  /** Distinct use cases of the project's environments, sorted case-insensitively. */
  async useCases(q: UseCasesQueryDto): Promise<UseCasesDto> {
    const rows = await this.db.query<{ use_case: string }>(
      `SELECT DISTINCT u.use_case
         FROM environments e CROSS JOIN LATERAL unnest(e.use_cases) AS u(use_case)
        WHERE e.project_id = $1 AND ($2::boolean OR e.archived_at IS NULL)`,
      [q.project_id, q.include_archived],
    );
    const values = [...new Set(rows.map((r) => r.use_case.trim()).filter((u) => u !== ''))];
    values.sort(
      (a, b) => compareCodePoints(a.toLowerCase(), b.toLowerCase()) || compareCodePoints(a, b),
    );
    return { items: values };
  }

  async get(id: string): Promise<EnvironmentDto> {
    const rows = await this.db.query<EnvironmentRow>(`${ENVIRONMENT_SELECT} WHERE e.id = $1`, [id]);
    if (!rows[0]) throw AppException.notFound('environment_not_found', 'Environment');
    return toEnvironmentDto(rows[0]);
  }

  async revisions(
    environmentId: string,
    q: ListRevisionsQueryDto,
  ): Promise<Page<EnvironmentRevisionListItemDto>> {
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
      [environmentId, q.page_size, offsetOf(q.page, q.page_size)],
    );
    return pageOf(rows.map(toRevisionListItemDto), q.page, q.page_size, countRows[0]?.total ?? 0);
  }

  async revision(environmentId: string, rawNumber: string): Promise<EnvironmentRevisionDto> {
    const revisionNumber = parseRevisionNumber(rawNumber);
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_LIST_COLUMNS}, full_snapshot, entities, edges
         FROM environment_revisions
        WHERE environment_id = $1 AND revision_number = $2`,
      [environmentId, revisionNumber],
    );
    const row = rows[0];
    if (!row) {
      throw AppException.notFound('environment_revision_not_found', 'Environment revision');
    }
    const createdAt = new Date(row.created_at).toISOString();
    return {
      ...toRevisionListItemDto(row),
      full_snapshot: row.full_snapshot ?? {},
      entities: (row.entities ?? []).map((e) => toEntityDto(e, createdAt)),
      edges: (row.edges ?? []).map((e) => toEdgeDto(e, createdAt)),
    };
  }

  /**
   * The environment and its current revision, for features that capture it (test runs): `null`
   * when the id is unknown or belongs to another project. Archived environments are returned
   * (check `archived_at`). Runs on the request's transaction.
   */
  async currentRevisionOf(
    projectId: string,
    environmentId: string,
  ): Promise<EnvironmentCurrentRevision | null> {
    if (!isUuid(environmentId)) return null;
    const rows = await this.db.query<EnvironmentCurrentRevision>(
      `SELECT e.id AS environment_id, e.project_id, e.name, e.status, e.archived_at,
              r.id AS revision_id, r.revision_number, r.snapshot_hash, r.full_snapshot
         FROM environments e JOIN environment_revisions r ON r.id = e.current_revision_id
        WHERE e.id = $1 AND e.project_id = $2`,
      [environmentId, projectId],
    );
    return rows[0] ?? null;
  }

  // -------------------------------------------------------------------------------------------
  // writes

  async create(
    user: AuthenticatedUser,
    access: ProjectAccess,
    dto: CreateEnvironmentDto,
  ): Promise<EnvironmentDto> {
    const status = normalizeStatus(dto.status);
    const archived = status === ARCHIVED_STATUS;
    if (archived) this.access.require(access, 'lead', 'Creating an archived environment');
    const snapshot = asValidation(() =>
      buildSnapshot({
        project_id: access.projectId,
        name: dto.name,
        kind: dto.kind,
        status,
        description: dto.description,
        tags: dto.tags,
        use_cases: dto.use_cases,
        topology: dto.topology,
        meta: dto.meta,
        extra: dto.extra,
      }),
    );
    const id = uuidv7();
    const revisionId = uuidv7();
    const env = snapshot.environment;
    // The row is completed from the revision by writeRevision (topology, meta, extra, counters);
    // the foreign key to the revision is deferred to the end of the transaction.
    await this.db.query(
      `INSERT INTO environments (id, project_id, name, kind, status, description, tags, use_cases,
              schema_version, current_revision_id, current_revision_number, snapshot_hash,
              created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, '', $11, $11)`,
      [
        id,
        access.projectId,
        env.name,
        env.kind,
        env.status,
        env.description,
        env.tags,
        env.use_cases,
        env.schema_version,
        revisionId,
        user.id,
      ],
    );
    return this.writeRevision({
      environmentId: id,
      revisionId,
      projectId: access.projectId,
      snapshot,
      revisionNumber: 1,
      note: revisionNote(null),
      userId: user.id,
      archive: archived ? 'set' : 'keep',
      isFirst: true,
    });
  }

  /**
   * Applies a PATCH under a row lock on the environment. A new revision is written only when the
   * snapshot hash changes; otherwise nothing is written and the current state is returned.
   */
  async update(
    user: AuthenticatedUser,
    access: ProjectAccess,
    id: string,
    dto: UpdateEnvironmentDto,
  ): Promise<EnvironmentDto> {
    const current = await this.lock(id);
    const patch: EnvironmentPatch = {};
    if (dto.name !== undefined) patch.name = dto.name;
    if (dto.kind !== undefined) patch.kind = dto.kind;
    if (dto.status !== undefined) patch.status = normalizeStatus(dto.status);
    if (dto.description !== undefined) patch.description = dto.description;
    if (dto.tags !== undefined) patch.tags = dto.tags;
    if (dto.use_cases !== undefined) patch.use_cases = dto.use_cases;
    if (dto.topology !== undefined) patch.topology = dto.topology;
    if (dto.meta !== undefined) patch.meta = dto.meta;
    if (dto.extra !== undefined) patch.extra = dto.extra;

    const base = current.full_snapshot;
    const candidate = asValidation(() => applyEnvironmentPatch(base, patch));
    const wasArchived = current.archived_at !== null;
    const willBeArchived = candidate.environment.status === ARCHIVED_STATUS;
    if (wasArchived !== willBeArchived) {
      this.access.require(
        access,
        'lead',
        willBeArchived ? 'Archiving an environment' : 'Restoring an archived environment',
      );
    }
    if (snapshotHash(candidate) === current.snapshot_hash) return toEnvironmentDto(current);

    return this.writeRevision({
      environmentId: id,
      projectId: current.project_id,
      snapshot: candidate,
      revisionNumber: nextRevisionNumber(current),
      note: revisionNote(changedTopLevelFields(base, candidate)),
      userId: user.id,
      archive: wasArchived === willBeArchived ? 'keep' : willBeArchived ? 'set' : 'clear',
      isFirst: false,
    });
  }

  /** DELETE: archives (status `archived`, `archived_at`, a new revision); repeating changes nothing. */
  async archive(user: AuthenticatedUser, id: string): Promise<void> {
    const current = await this.lock(id);
    if (current.archived_at !== null) return;
    const base = current.full_snapshot;
    const candidate = asValidation(() => applyEnvironmentPatch(base, { status: ARCHIVED_STATUS }));
    await this.writeRevision({
      environmentId: id,
      projectId: current.project_id,
      snapshot: candidate,
      revisionNumber: nextRevisionNumber(current),
      note: revisionNote(changedTopLevelFields(base, candidate)),
      userId: user.id,
      archive: 'set',
      isFirst: false,
    });
  }

  // -------------------------------------------------------------------------------------------
  // internals

  /**
   * Locks the environment row (SELECT … FOR UPDATE in the request transaction) so concurrent
   * writers of one environment serialise, and returns it with its current revision.
   */
  private async lock(id: string): Promise<EnvironmentRow> {
    // Lock the bare row first: a FOR UPDATE on the join would be re-checked against the row
    // version a concurrent writer committed (pointing at a newer revision) and return nothing.
    // Once the lock is held, the next statement sees the latest committed revision.
    const locked = await this.db.query<{ id: string }>(
      `SELECT id FROM environments WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const rows = locked[0]
      ? await this.db.query<EnvironmentRow>(`${ENVIRONMENT_SELECT} WHERE e.id = $1`, [id])
      : [];
    if (!rows[0]) throw AppException.notFound('environment_not_found', 'Environment');
    return rows[0];
  }

  /**
   * Writes revision `revisionNumber` of an environment from `snapshot` (hash, derived entities and
   * edges, counters), makes it the only current one, and mirrors it onto the environment row.
   * Returns the environment response built from the new revision.
   */
  private async writeRevision(w: {
    environmentId: string;
    /** Id of the new revision (generated when absent). */
    revisionId?: string;
    projectId: string;
    snapshot: EnvironmentSnapshot;
    revisionNumber: number;
    note: string;
    userId: string;
    archive: ArchiveChange;
    isFirst: boolean;
  }): Promise<EnvironmentDto> {
    const hash = snapshotHash(w.snapshot);
    const graph = deriveEntitiesAndEdges(w.snapshot);
    const counters = topologyCounters(w.snapshot.topology, graph);
    const revisionId = w.revisionId ?? uuidv7();
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
        revisionId,
        w.environmentId,
        w.projectId,
        w.revisionNumber,
        env.schema_version,
        w.note,
        JSON.stringify(w.snapshot),
        hash,
        JSON.stringify(graph.entities.map((e): StoredEntity => ({ id: uuidv7(), ...e }))),
        JSON.stringify(graph.edges.map((e): StoredEdge => ({ id: uuidv7(), ...e }))),
        counters.entities_count,
        counters.edges_count,
        w.userId,
      ],
    );
    const updated = await this.db.query<{
      archived_at: Date | null;
      created_at: Date;
      updated_at: Date;
      created_by: string;
    }>(
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
        revisionId,
        env.name,
        env.kind,
        env.status,
        env.description,
        env.tags,
        env.use_cases,
        env.schema_version,
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
    const row = updated[0];
    if (!row || !inserted[0]) throw AppException.notFound('environment_not_found', 'Environment');
    return buildEnvironmentDto({
      id: w.environmentId,
      projectId: w.projectId,
      snapshot: w.snapshot,
      revisionId,
      revisionNumber: w.revisionNumber,
      hash,
      counters,
      createdBy: row.created_by,
      updatedBy: w.userId,
      archivedAt: row.archived_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// helpers and mappers

/** Trims the status; any letter case of `archived` is stored as `archived`. */
function normalizeStatus(status: string | undefined): string | undefined {
  if (status === undefined) return undefined;
  const trimmed = status.trim();
  return trimmed.toLowerCase() === ARCHIVED_STATUS ? ARCHIVED_STATUS : trimmed;
}

function nextRevisionNumber(current: EnvironmentRow): number {
  const next = current.current_revision_number + 1;
  if (next > MAX_REVISION_NUMBER) {
    throw new AppException('conflict', 'The environment has reached the maximum revision number');
  }
  return next;
}

/** `path.revision_number` must be a positive integer (422 otherwise). */
function parseRevisionNumber(raw: string): number {
  // Checked by the guard already (pathIntegers); kept for callers outside a request.
  if (!isPathInteger(raw)) {
    throw AppException.validation({
      'path.revision_number': ['revision_number must be a positive integer'],
    });
  }
  return Number(raw);
}

/** Runs a pure rule and turns its EnvironmentValidationError into a 422 validation_error. */
function asValidation<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof EnvironmentValidationError) {
      throw AppException.validation(issuesToErrorMap(error.issues));
    }
    throw error;
  }
}

function toEnvironmentDto(row: EnvironmentRow): EnvironmentDto {
  return buildEnvironmentDto({
    id: row.id,
    projectId: row.project_id,
    snapshot: row.full_snapshot,
    revisionId: row.current_revision_id,
    revisionNumber: row.current_revision_number,
    hash: row.snapshot_hash,
    counters: {
      entities_count: row.entities_count,
      edges_count: row.edges_count,
      topology_component_count: row.topology_component_count,
      topology_node_count: Number(row.topology_node_count),
      topology_endpoint_count: row.topology_endpoint_count,
      infra_host_types: row.infra_host_types,
      infra_providers: row.infra_providers,
      infra_regions: row.infra_regions,
    },
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    archivedAt: row.archived_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}

/** The environment response: descriptive fields come from the current revision's snapshot. */
function buildEnvironmentDto(s: {
  id: string;
  projectId: string;
  snapshot: EnvironmentSnapshot;
  revisionId: string;
  revisionNumber: number;
  hash: string;
  counters: TopologyCounters;
  createdBy: string;
  updatedBy: string;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}): EnvironmentDto {
  const env = s.snapshot.environment;
  return {
    id: s.id,
    project_id: s.projectId,
    name: env.name,
    kind: env.kind,
    status: env.status,
    description: env.description,
    tags: env.tags,
    use_cases: env.use_cases,
    schema_version: env.schema_version,
    topology: s.snapshot.topology,
    meta: env.meta,
    extra: env.extra,
    current_revision_number: s.revisionNumber,
    current_revision_id: s.revisionId,
    snapshot_hash: s.hash,
    entities_count: s.counters.entities_count,
    edges_count: s.counters.edges_count,
    topology_component_count: s.counters.topology_component_count,
    topology_node_count: s.counters.topology_node_count,
    topology_endpoint_count: s.counters.topology_endpoint_count,
    infra_host_types: s.counters.infra_host_types,
    infra_providers: s.counters.infra_providers,
    infra_regions: s.counters.infra_regions,
    created_by: s.createdBy,
    updated_by: s.updatedBy,
    archived_at: s.archivedAt ? new Date(s.archivedAt).toISOString() : null,
    created_at: new Date(s.createdAt).toISOString(),
    updated_at: new Date(s.updatedAt).toISOString(),
  };
}

function toRevisionListItemDto(row: RevisionRow): EnvironmentRevisionListItemDto {
  return {
    id: row.id,
    environment_id: row.environment_id,
    revision_number: row.revision_number,
    schema_version: row.schema_version,
    is_current: row.is_current,
    revision_note: row.revision_note,
    snapshot_hash: row.snapshot_hash,
    entities_count: row.entities_count,
    edges_count: row.edges_count,
    created_by: row.created_by,
    created_at: new Date(row.created_at).toISOString(),
  };
}

function toEntityDto(e: StoredEntity, createdAt: string): EnvironmentEntityDto {
  return {
    id: e.id ?? '',
    entity_key: e.entity_key,
    entity_type: e.entity_type,
    name: e.name,
    role: e.role,
    spec: e.spec,
    extra: e.extra,
    created_at: createdAt,
  };
}

function toEdgeDto(e: StoredEdge, createdAt: string): EnvironmentEdgeDto {
  return {
    id: e.id ?? '',
    from_entity_key: e.from_entity_key,
    to_entity_key: e.to_entity_key,
    relation_type: e.relation_type,
    spec: e.spec,
    extra: e.extra,
    created_at: createdAt,
  };
}
