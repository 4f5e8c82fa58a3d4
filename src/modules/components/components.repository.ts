import { Injectable } from '@nestjs/common';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { isoUtc } from '../../common/persistence/sql';
import type { CatalogRow } from './catalog.repository';
import type { CatalogStatus } from './dto/component.dto';
import { ComponentEntity } from './entities/component.entity';
import type { RiskLevel } from './risk-score';

/**
 * A `components` row as selected by `SELECT c.*` (or COMPONENT_COLUMNS_ISO): the one read shape of
 * the table (ComponentEntity is used for inserts and updates only).
 */
export interface ComponentRow extends CatalogRow {
  business_criticality: number;
  change_frequency: number;
  integration_complexity: number;
  defect_density: number;
  production_incident_score: number;
  automation_confidence: number;
  risk_score: number;
  risk_level: RiskLevel;
  /** A Date, or ISO text when selected with isoUtc (the graph). */
  created_at: Date | string;
  updated_at: Date | string;
}

/** A `component_dependencies` row. */
export interface DependencyRow {
  id: string;
  source_component_id: string;
  target_component_id: string;
  dependency_type: 'depends_on';
  created_at: Date | string;
}

export interface ComponentPageQuery {
  projectId: string;
  statuses?: CatalogStatus[];
  riskLevels?: RiskLevel[];
  /** Lower-cased tags; a component matches when it has any of them. */
  tags: string[];
  /** Components linked to any of these products (uuids); `undefined` for no filter. */
  productIds?: string[];
  search?: string;
  limit: number;
  offset: number;
}

/** An outgoing dependency to write. */
export interface NewDependency {
  targetComponentId: string;
  dependencyType: string;
}

/** The columns of ComponentRow, with the timestamps as ISO text (isoUtc). */
const COMPONENT_COLUMNS_ISO = `c.id, c.project_id, c.name, c.key, c.description, c.owner_id, c.status, c.tags,
  c.business_criticality, c.change_frequency, c.integration_complexity, c.defect_density,
  c.production_incident_score, c.automation_confidence, c.risk_score, c.risk_level,
  ${isoUtc('c.created_at')} AS created_at, ${isoUtc('c.updated_at')} AS updated_at`;

/**
 * Gives the graph of the project in parameter `project` (`$1`, …) a new version, answering it and
 * the version it replaced: see ComponentsRepository.bumpGraphVersion.
 */
function bumpGraphVersionSql(project: string): string {
  return `INSERT INTO component_graph_versions AS g (project_id, version)
       VALUES (${project}::uuid, nextval('component_graph_version_seq'))
       ON CONFLICT (project_id)
         DO UPDATE SET version = EXCLUDED.version, previous_version = g.version
       RETURNING g.version::text AS version, g.previous_version::text AS previous`;
}

/** Columns of a component, in the list order used everywhere (highest risk first). */
/** A project's graph version; one text for its one prepared statement name, in both reads. */
const GRAPH_VERSION_SQL = `SELECT version::text AS version FROM component_graph_versions WHERE project_id = $1`;

const COMPONENT_ORDER = 'c.risk_score DESC, c.updated_at DESC, c.id DESC';

/** `components` and `component_dependencies`. */
@Injectable()
export class ComponentsRepository {
  constructor(private readonly db: Db) {}

  /** One page: two queries (rows, total). */
  async page(q: ComponentPageQuery): Promise<{ rows: ComponentRow[]; total: number }> {
    const params: unknown[] = [q.projectId];
    const where = ['c.project_id = $1'];
    const add = (sql: (n: number) => string, value: unknown) => {
      params.push(value);
      where.push(sql(params.length));
    };
    if (q.statuses?.length) add((n) => `c.status = ANY($${n}::text[])`, q.statuses);
    if (q.riskLevels?.length) add((n) => `c.risk_level = ANY($${n}::text[])`, q.riskLevels);
    // Both sides lower-cased by the same SQL function: JavaScript's toLowerCase() follows other
    // rules for some letters (final sigma, dotted I), so a tag could miss its own spelling.
    if (q.tags.length)
      add((n) => `catalog_lower_tags(c.tags) && catalog_lower_tags($${n}::text[])`, q.tags);
    if (q.productIds !== undefined) {
      add(
        (n) =>
          `EXISTS (SELECT 1 FROM product_components pc
                    WHERE pc.component_id = c.id AND pc.product_id = ANY($${n}::uuid[]))`,
        q.productIds,
      );
    }
    if (q.search) {
      add(
        (n) => `(c.name ILIKE $${n} OR c.key ILIKE $${n} OR c.description ILIKE $${n})`,
        likePattern(q.search),
      );
    }
    const whereSql = where.join(' AND ');
    const rows = await this.db.query<ComponentRow>(
      `SELECT c.* FROM components c WHERE ${whereSql}
        ORDER BY ${COMPONENT_ORDER}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    );
    const count = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM components c WHERE ${whereSql}`,
      params,
    );
    return { rows, total: count[0]?.n ?? 0 };
  }

  async findById(id: string): Promise<ComponentRow | null> {
    return this.row(id, false);
  }

  /** The component, locked FOR NO KEY UPDATE in the request's transaction. */
  async findByIdForUpdate(id: string): Promise<ComponentRow | null> {
    return this.row(id, true);
  }

  private async row(id: string, lock: boolean): Promise<ComponentRow | null> {
    const rows = await this.db.query<ComponentRow>(
      `SELECT c.* FROM components c WHERE c.id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`,
      [id],
    );
    return rows[0] ?? null;
  }

  async insert(component: Partial<ComponentEntity>): Promise<void> {
    await this.db.repo(ComponentEntity).insert(component);
  }

  async update(id: string, patch: Partial<ComponentEntity>): Promise<void> {
    await this.db.repo(ComponentEntity).update({ id }, patch);
  }

  /**
   * Hard delete. Foreign keys remove its product links, every dependency edge in which it is the
   * source or the target, and the test-case coverages of it. The project of the deleted component,
   * `null` when there was none.
   */
  async delete(id: string): Promise<string | null> {
    const [rows] = await this.db.query<Array<{ project_id: string }>>(
      `DELETE FROM components WHERE id = $1 RETURNING project_id`,
      [id],
    );
    return rows[0]?.project_id ?? null;
  }

  /**
   * The version of the project's component graph (`'0'` when nothing bumped it yet): one primary
   * key lookup, the per-request cost of a cached graph.
   */
  async graphVersion(projectId: string): Promise<string> {
    const rows = await this.db.prepared<{ version: string }>(
      'component_graph_version',
      GRAPH_VERSION_SQL,
      [projectId],
    );
    return rows[0]?.version ?? '0';
  }

  /**
   * Gives the project's graph a new version (a value of component_graph_version_seq, never handed
   * out twice), the row locked until the transaction ends, and answers it with the version it
   * replaced (the one committed last, `'0'` for none). Versions are compared for equality only
   * (two writers that wait here may take their values in either order). Call it as the last
   * statement of every write that changes the graph: the row lock is then never held while waiting
   * for another lock, and no write commits between the version it replaced and its own.
   */
  async bumpGraphVersion(projectId: string): Promise<{ version: string; previous: string }> {
    const [row] = await this.db.query<{ version: string; previous: string }>(
      bumpGraphVersionSql('$1'),
      [projectId],
    );
    return row;
  }

  /** Outgoing dependencies, oldest first. */
  async dependenciesOf(id: string): Promise<DependencyRow[]> {
    return this.db.query<DependencyRow>(
      `SELECT id, source_component_id, target_component_id, dependency_type, created_at
         FROM component_dependencies WHERE source_component_id = $1
        ORDER BY created_at, id`,
      [id],
    );
  }

  /**
   * The per-project advisory lock of dependency replacements (held until the transaction ends), so
   * two concurrent replacements cannot together close a cycle.
   */
  async lockDependencies(projectId: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `component_dependencies:${projectId}`,
    ]);
  }

  /**
   * The component's canonical id, with the row locked FOR KEY SHARE (so it cannot be deleted while
   * its id is about to be referenced), and the project's graph version read in the same statement
   * (after the dependency lock taken before it: every replacement committed before is in that
   * version); `null` when there is no such component.
   */
  async keyShareWithGraphVersion(
    id: string,
    projectId: string,
  ): Promise<{ id: string; graphVersion: string } | null> {
    const rows = await this.db.query<{ id: string; graph_version: string | null }>(
      `SELECT c.id,
              (SELECT g.version::text FROM component_graph_versions g WHERE g.project_id = $2)
                AS graph_version
         FROM components c WHERE c.id = $1 FOR KEY SHARE OF c`,
      [id, projectId],
    );
    return rows[0] ? { id: rows[0].id, graphVersion: rows[0].graph_version ?? '0' } : null;
  }

  /** Which of `ids` (uuids) are components of the project, each locked FOR KEY SHARE. */
  async keyShareInProject(projectId: string, ids: string[]): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM components WHERE project_id = $1 AND id = ANY($2::uuid[]) FOR KEY SHARE`,
      [projectId, ids],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Every dependency edge of the project as one text of concatenated uuid pairs (source then
   * target). 50,000 edges as rows (an object and two strings each, then pairs) were ~90 ms of CPU
   * while the lock is held; numbering the components in SQL instead moved twice that work into the
   * database.
   */
  async edgePairsText(projectId: string): Promise<string> {
    const [graph] = await this.db.query<{ edges: string | null }>(
      `SELECT string_agg(source_component_id::text || target_component_id::text, '') AS edges
         FROM component_dependencies WHERE project_id = $1`,
      [projectId],
    );
    return graph.edges ?? '';
  }

  /**
   * Deletes the component's outgoing edges, then, in one statement, inserts `dependencies` and
   * bumps the project's graph version (as {@link bumpGraphVersion}: the last statement of the
   * write; the rows it inserts reference components the caller holds FOR KEY SHARE). Answers the
   * new edges, oldest first (one `created_at`, the transaction's: by id), and the versions.
   */
  async replaceDependencies(
    projectId: string,
    sourceId: string,
    dependencies: NewDependency[],
  ): Promise<{ rows: DependencyRow[]; version: string; previous: string }> {
    await this.db.query(`DELETE FROM component_dependencies WHERE source_component_id = $1`, [
      sourceId,
    ]);
    const result = await this.db.query<
      Partial<DependencyRow> & { graph_version: string; previous_version: string }
    >(
      `WITH inserted AS (
         INSERT INTO component_dependencies
               (id, source_component_id, target_component_id, project_id, dependency_type)
         SELECT u.id, $2::uuid, u.target, $3::uuid, u.type
           FROM unnest($1::uuid[], $4::uuid[], $5::text[]) AS u(id, target, type)
         RETURNING id, source_component_id, target_component_id, dependency_type, created_at
       ), bumped AS (
         ${bumpGraphVersionSql('$3')}
       )
       SELECT b.version AS graph_version, b.previous AS previous_version, i.*
         FROM bumped b LEFT JOIN inserted i ON true`,
      [
        dependencies.map(() => uuidv7()),
        sourceId,
        projectId,
        dependencies.map((d) => d.targetComponentId),
        dependencies.map((d) => d.dependencyType),
      ],
    );
    const rows = result
      .filter((r) => r.id !== null && r.id !== undefined)
      .map(
        (r): DependencyRow => ({
          id: r.id as string,
          source_component_id: r.source_component_id as string,
          target_component_id: r.target_component_id as string,
          dependency_type: r.dependency_type as DependencyRow['dependency_type'],
          created_at: r.created_at as Date,
        }),
      )
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { rows, version: result[0].graph_version, previous: result[0].previous_version };
  }

  /**
   * Every component of the project, highest risk first. Timestamps as ISO text from SQL: thousands
   * of rows, no Date round trip in JavaScript.
   */
  /**
   * The project's whole graph as one snapshot of the database (REPEATABLE READ, read only): its
   * version, every component (timestamps as ISO text) and every dependency edge, oldest first. Read
   * as separate statements, a write committed between them gave an answer mixing two states (an
   * edge to a component the list no longer had) under a version matching neither.
   */
  async graphSnapshot(
    projectId: string,
  ): Promise<{ version: string; components: ComponentRow[]; edges: DependencyRow[] }> {
    return this.db.readSnapshot(async (read) => {
      const versions = await read<{ version: string }>(
        'component_graph_version',
        GRAPH_VERSION_SQL,
        [projectId],
      );
      const components = await read<ComponentRow>(
        'component_graph_components',
        `SELECT ${COMPONENT_COLUMNS_ISO} FROM components c WHERE c.project_id = $1 ORDER BY ${COMPONENT_ORDER}`,
        [projectId],
      );
      const edges = await read<DependencyRow>(
        'component_graph_edges',
        `SELECT id, source_component_id, target_component_id, dependency_type,
                ${isoUtc('created_at')} AS created_at
           FROM component_dependencies WHERE project_id = $1
          ORDER BY component_dependencies.created_at, id`,
        [projectId],
      );
      return { version: versions[0]?.version ?? '0', components, edges };
    });
  }
}
