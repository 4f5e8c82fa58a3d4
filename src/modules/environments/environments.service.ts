import { Injectable } from '@nestjs/common';
import { isPathInteger, MAX_PATH_INTEGER } from '../../common/validation/path-integer';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException } from '../../common/errors/app-exception';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { CursorCodec, cursorScope } from '../../common/pagination/cursor';
import {
  FieldSelection,
  fieldSelection,
  pickFields,
  selects,
} from '../../common/pagination/fields';
import { CursorPage, KeysetPaging } from '../../common/pagination/keyset';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import {
  CreateEnvironmentDto,
  EnvironmentDto,
  EnvironmentEdgeDto,
  EnvironmentEntityDto,
  EnvironmentRevisionDto,
  EnvironmentRevisionListItemDto,
  ListEnvironmentsQueryDto,
  ListRevisionsQueryDto,
  UpdateEnvironmentDto,
  UseCasesDto,
  UseCasesQueryDto,
} from './dto/environment.dto';
import { RevisionDiffDto, RevisionDiffQueryDto } from './dto/revision-diff.dto';
import {
  EnvironmentCurrentRevision,
  environmentKeysetOrder,
  EnvironmentRow,
  EnvironmentsRepository,
  RevisionRow,
  RevisionWrite,
  StoredEdge,
  StoredEntity,
} from './environments.repository';
import {
  DIFFED_ENVIRONMENT_FIELDS,
  diffRevisions,
  revisionDiffResponse,
  RevisionSnapshotLike,
} from './revision-diff';
import { WebhookEvents } from '../webhooks/webhook-events.service';

/** The revision a new one replaces, for the drift counts of `environment.revision_created`. */
interface PreviousRevision {
  revisionNumber: number;
  snapshot: RevisionSnapshotLike;
}
import { snapshotHash, compareCodePoints } from './snapshot-hash';
import {
  applyEnvironmentPatch,
  buildSnapshot,
  changedTopLevelFields,
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

@Injectable()
export class EnvironmentsService {
  constructor(
    private readonly environments: EnvironmentsRepository,
    private readonly access: AccessService,
    private readonly webhooks: WebhookEvents,
    private readonly cursors: CursorCodec,
  ) {}

  // -------------------------------------------------------------------------------------------
  // reads

  async list(
    q: ListEnvironmentsQueryDto,
  ): Promise<Page<Partial<EnvironmentDto>> | CursorPage<Partial<EnvironmentDto>>> {
    const filter = {
      projectId: q.project_id,
      includeArchived: q.include_archived,
      search: q.search?.trim(),
      useCases: (q.use_case ?? []).map((u) => u.trim()).filter((u) => u !== ''),
      sortBy: q.sort_by,
      direction: q.sort_order === 'asc' ? ('ASC' as const) : ('DESC' as const),
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    };
    const keyset =
      q.cursor === undefined
        ? undefined
        : new KeysetPaging(
            this.cursors,
            cursorScope('environments', { ...filter, limit: undefined, offset: undefined }),
            environmentKeysetOrder(filter.sortBy, filter.direction),
            q.cursor,
            q.page_size,
          );
    const selection = fieldSelection(q.fields);
    const { rows, total } = await this.environments.page({
      ...filter,
      keyset: keyset?.request,
      snapshot: snapshotNeeded(selection),
    });
    const map = (row: EnvironmentRow) => pickFields(toEnvironmentDto(row), selection);
    if (keyset) return keyset.page(rows, map);
    return pageOf(rows.map(map), q.page, q.page_size, total ?? 0);
  }

  /** Distinct use cases of the project's environments, sorted case-insensitively. */
  async useCases(q: UseCasesQueryDto): Promise<UseCasesDto> {
    const useCases = await this.environments.distinctUseCases(q.project_id, q.include_archived);
    const values = [...new Set(useCases.map((u) => u.trim()).filter((u) => u !== ''))];
    values.sort(
      (a, b) => compareCodePoints(a.toLowerCase(), b.toLowerCase()) || compareCodePoints(a, b),
    );
    return { items: values };
  }

  async get(id: string): Promise<EnvironmentDto> {
    const row = await this.environments.findById(id);
    if (!row) throw AppException.notFound('environment_not_found', 'Environment');
    return toEnvironmentDto(row);
  }

  async revisions(
    environmentId: string,
    q: ListRevisionsQueryDto,
  ): Promise<Page<EnvironmentRevisionListItemDto>> {
    const { rows, total } = await this.environments.revisionsPage(
      environmentId,
      q.page_size,
      offsetOf(q.page, q.page_size),
    );
    return pageOf(rows.map(toRevisionListItemDto), q.page, q.page_size, total);
  }

  async revision(environmentId: string, rawNumber: string): Promise<EnvironmentRevisionDto> {
    const revisionNumber = parseRevisionNumber(rawNumber);
    const row = await this.environments.findRevision(environmentId, revisionNumber);
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
   * The difference from revision `against` (default: the one before) to revision `rawNumber`
   * (issue #17 §2). One query reads both snapshots; the environment itself was checked by the
   * guard. An unknown revision (either side) is 404 `environment_revision_not_found`.
   */
  async revisionDiff(
    environmentId: string,
    rawNumber: string,
    q: RevisionDiffQueryDto,
  ): Promise<RevisionDiffDto> {
    const to = parseRevisionNumber(rawNumber);
    const from = q.against ?? (to > 1 ? to - 1 : null);
    const rows = await this.environments.revisionSnapshots(
      environmentId,
      from === null ? [to] : [to, from],
    );
    const byNumber = new Map(rows.map((r) => [r.revision_number, r]));
    const toRow = byNumber.get(to);
    if (!toRow) throw AppException.notFound('environment_revision_not_found', 'Environment revision');
    const fromRow = from === null ? null : byNumber.get(from);
    if (fromRow === undefined) {
      throw new AppException(
        'environment_revision_not_found',
        `Environment revision ${String(from)} (against) not found`,
      );
    }
    return revisionDiffResponse(fromRow, toRow) as RevisionDiffDto;
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
    return this.environments.findCurrentRevision(projectId, environmentId);
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
    // The row is completed from the revision by writeRevision (topology, meta, extra, counters);
    // the foreign key to the revision is deferred to the end of the transaction.
    await this.environments.insert({
      id,
      projectId: access.projectId,
      environment: snapshot.environment,
      revisionId,
      userId: user.id,
    });
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
    }, null);
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
    const hash = snapshotHash(candidate);
    if (hash === current.snapshot_hash) return toEnvironmentDto(current);

    return this.writeRevision({
      environmentId: current.id, // the stored id, not the path's spelling of it
      projectId: current.project_id,
      snapshot: candidate,
      hash,
      revisionNumber: nextRevisionNumber(current),
      note: revisionNote(changedTopLevelFields(base, candidate)),
      userId: user.id,
      archive: wasArchived === willBeArchived ? 'keep' : willBeArchived ? 'set' : 'clear',
      isFirst: false,
    }, { revisionNumber: current.current_revision_number, snapshot: base as unknown as RevisionSnapshotLike });
  }

  /** DELETE: archives (status `archived`, `archived_at`, a new revision); repeating changes nothing. */
  async archive(user: AuthenticatedUser, id: string): Promise<void> {
    const current = await this.lock(id);
    if (current.archived_at !== null) return;
    const base = current.full_snapshot;
    const candidate = asValidation(() => applyEnvironmentPatch(base, { status: ARCHIVED_STATUS }));
    await this.writeRevision({
      environmentId: current.id,
      projectId: current.project_id,
      snapshot: candidate,
      revisionNumber: nextRevisionNumber(current),
      note: revisionNote(changedTopLevelFields(base, candidate)),
      userId: user.id,
      archive: 'set',
      isFirst: false,
    }, { revisionNumber: current.current_revision_number, snapshot: base as unknown as RevisionSnapshotLike });
  }

  // -------------------------------------------------------------------------------------------
  // internals

  /**
   * `environment.revision_created` (issue #20), in the request's transaction: the new revision's
   * number and hash, and the counts of its drift against the previous revision (`drift` of the
   * first revision counts everything as added). The diff is computed only when someone listens.
   */
  private async emitRevision(
    w: { environmentId: string; projectId: string; revisionNumber: number; note: string; userId: string },
    snapshot: RevisionSnapshotLike,
    revisionId: string,
    hash: string,
    previous: PreviousRevision | null,
  ): Promise<void> {
    await this.webhooks.emit(w.projectId, 'environment.revision_created', () => ({
      id: revisionId,
      environment_id: w.environmentId,
      environment_name:
        typeof snapshot.environment?.name === 'string' ? snapshot.environment.name : null,
      revision_number: w.revisionNumber,
      snapshot_hash: hash,
      revision_note: w.note,
      created_by: w.userId,
      previous_revision_number: previous?.revisionNumber ?? null,
      drift: diffRevisions(previous?.snapshot ?? null, snapshot).counts,
    }));
  }

  /** The environment, locked FOR UPDATE for this transaction (concurrent writers serialise). */
  private async lock(id: string): Promise<EnvironmentRow> {
    const row = await this.environments.findByIdForUpdate(id);
    if (!row) throw AppException.notFound('environment_not_found', 'Environment');
    return row;
  }

  /**
   * Writes revision `revisionNumber` of an environment from `snapshot` (hash, derived entities and
   * edges, counters), makes it the only current one, and mirrors it onto the environment row.
   * Returns the environment response built from the new revision.
   */
  private async writeRevision(
    w: Omit<RevisionWrite, 'revisionId' | 'hash' | 'entities' | 'edges' | 'counters'> & {
      /** Id of the new revision (generated when absent). */
      revisionId?: string;
      /** `snapshotHash(snapshot)` when the caller has it already (computed when absent). */
      hash?: string;
    },
    previous: PreviousRevision | null,
  ): Promise<EnvironmentDto> {
    const hash = w.hash ?? snapshotHash(w.snapshot);
    const graph = deriveEntitiesAndEdges(w.snapshot);
    const counters = topologyCounters(w.snapshot.topology, graph);
    const revisionId = w.revisionId ?? uuidv7();
    const row = await this.environments.writeRevision({
      ...w,
      revisionId,
      hash,
      entities: graph.entities,
      edges: graph.edges,
      counters,
    });
    if (!row) throw AppException.notFound('environment_not_found', 'Environment');
    await this.emitRevision(w, w.snapshot as unknown as RevisionSnapshotLike, revisionId, hash, previous);
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

/** The environment fields answered from the current revision's `environment` section. */
const SECTION_FIELDS: readonly string[] = DIFFED_ENVIRONMENT_FIELDS;

/** How much of the snapshot a list with these `fields` reads (topology is the large part). */
function snapshotNeeded(selection: FieldSelection): 'full' | 'environment' | 'none' {
  if (selects(selection, 'topology')) return 'full';
  return SECTION_FIELDS.some((f) => selects(selection, f)) ? 'environment' : 'none';
}

/** A snapshot read partially (`fields`): its absent parts, never answered, read as empty. */
const EMPTY_SNAPSHOT = { environment: {}, topology: {} } as unknown as EnvironmentSnapshot;

function toEnvironmentDto(row: EnvironmentRow): EnvironmentDto {
  return buildEnvironmentDto({
    id: row.id,
    projectId: row.project_id,
    snapshot: { ...EMPTY_SNAPSHOT, ...row.full_snapshot },
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
