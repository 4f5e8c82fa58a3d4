import { Injectable } from '@nestjs/common';
import { isoOf, isoUtc } from '../../common/persistence/sql';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { normalizeStringList } from '../../common/normalize';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { CatalogService } from './catalog.service';
import {
  ComponentDto,
  CreateComponentDto,
  ListComponentsQueryDto,
  UpdateComponentDto,
} from './dto/component.dto';
import {
  ComponentGraphDto,
  DependencyDto,
  DependencyListDto,
  ReplaceDependenciesDto,
} from './dto/dependency.dto';
import { numberIdPairs, validateDependencyReplacement } from './dependency-graph';
import { ComponentEntity } from './entities/component.entity';
import {
  computeRisk,
  mergeRiskFactors,
  RISK_FACTOR_KEYS,
  type RiskFactors,
  type RiskLevel,
} from './risk-score';

registerUniqueConstraints({
  uq_components_project_key: {
    code: 'component_already_exists',
    field: 'key',
    detail: 'A component with this key already exists in this project',
  },
  uq_component_dependencies_source_target: {
    code: 'validation_error',
    field: 'dependencies',
    detail: 'The same dependency is listed twice',
  },
});

/** A `components` row as selected by `SELECT c.*` (or COMPONENT_COLUMNS_ISO). */
export interface ComponentRow {
  id: string;
  project_id: string;
  name: string;
  key: string;
  description: string | null;
  owner_id: string | null;
  status: 'active' | 'archived';
  tags: string[];
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

interface DependencyRow {
  id: string;
  source_component_id: string;
  target_component_id: string;
  dependency_type: 'depends_on';
  created_at: Date | string;
}

/** The columns of ComponentRow, with the timestamps as ISO text (isoUtc). */
const COMPONENT_COLUMNS_ISO = `c.id, c.project_id, c.name, c.key, c.description, c.owner_id, c.status, c.tags,
  c.business_criticality, c.change_frequency, c.integration_complexity, c.defect_density,
  c.production_incident_score, c.automation_confidence, c.risk_score, c.risk_level,
  ${isoUtc('c.created_at')} AS created_at, ${isoUtc('c.updated_at')} AS updated_at`;

/** Columns of a component, in the list order used everywhere (highest risk first). */
const COMPONENT_ORDER = 'c.risk_score DESC, c.updated_at DESC, c.id DESC';

export function toComponentDto(r: ComponentRow): ComponentDto {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    key: r.key,
    description: r.description,
    owner_id: r.owner_id,
    status: r.status,
    tags: r.tags,
    business_criticality: r.business_criticality,
    change_frequency: r.change_frequency,
    integration_complexity: r.integration_complexity,
    defect_density: r.defect_density,
    production_incident_score: r.production_incident_score,
    automation_confidence: r.automation_confidence,
    risk_score: r.risk_score,
    risk_level: r.risk_level,
    created_at: isoOf(r.created_at),
    updated_at: isoOf(r.updated_at),
  };
}

function toDependencyDto(r: DependencyRow): DependencyDto {
  return {
    id: r.id,
    source_component_id: r.source_component_id,
    target_component_id: r.target_component_id,
    dependency_type: r.dependency_type,
    created_at: isoOf(r.created_at),
  };
}

function factorsOf(r: ComponentRow): RiskFactors {
  return {
    business_criticality: r.business_criticality,
    change_frequency: r.change_frequency,
    integration_complexity: r.integration_complexity,
    defect_density: r.defect_density,
    production_incident_score: r.production_incident_score,
    automation_confidence: r.automation_confidence,
  };
}

function factorPatch(dto: Partial<Record<keyof RiskFactors, number>>): Partial<RiskFactors> {
  const patch: Partial<RiskFactors> = {};
  for (const key of RISK_FACTOR_KEYS) {
    const value = dto[key];
    if (value !== undefined) patch[key] = value;
  }
  return patch;
}

/** camelCase entity columns of the six factors and the risk. */
function riskColumns(f: RiskFactors): Partial<ComponentEntity> {
  const risk = computeRisk(f);
  return {
    businessCriticality: f.business_criticality,
    changeFrequency: f.change_frequency,
    integrationComplexity: f.integration_complexity,
    defectDensity: f.defect_density,
    productionIncidentScore: f.production_incident_score,
    automationConfidence: f.automation_confidence,
    riskScore: risk.risk_score,
    riskLevel: risk.risk_level,
  };
}

@Injectable()
export class ComponentsService {
  constructor(
    private readonly db: Db,
    private readonly catalog: CatalogService,
  ) {}

  /** One page: two queries (rows, total). */
  async list(q: ListComponentsQueryDto): Promise<Page<ComponentDto>> {
    const params: unknown[] = [q.project_id];
    const where = ['c.project_id = $1'];
    const add = (sql: (n: number) => string, value: unknown) => {
      params.push(value);
      where.push(sql(params.length));
    };
    if (q.status?.length) add((n) => `c.status = ANY($${n}::text[])`, q.status);
    if (q.risk_level?.length) add((n) => `c.risk_level = ANY($${n}::text[])`, q.risk_level);
    const tags = normalizeStringList(q.tag ?? []).map((t) => t.toLowerCase());
    if (tags.length) add((n) => `catalog_lower_tags(c.tags) && $${n}::text[]`, tags);
    if (q.product_id?.length) {
      // Ids are opaque: one that is not a uuid names no product and so matches nothing.
      add(
        (n) =>
          `EXISTS (SELECT 1 FROM product_components pc
                    WHERE pc.component_id = c.id AND pc.product_id = ANY($${n}::uuid[]))`,
        q.product_id.filter((productId) => isUuid(productId)),
      );
    }
    const search = q.search?.trim();
    if (search) {
      add(
        (n) => `(c.name ILIKE $${n} OR c.key ILIKE $${n} OR c.description ILIKE $${n})`,
        likePattern(search),
      );
    }
    const whereSql = where.join(' AND ');
    const rows = await this.db.query<ComponentRow>(
      `SELECT c.* FROM components c WHERE ${whereSql}
        ORDER BY ${COMPONENT_ORDER}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page_size, offsetOf(q.page, q.page_size)],
    );
    const count = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM components c WHERE ${whereSql}`,
      params,
    );
    return pageOf(rows.map(toComponentDto), q.page, q.page_size, count[0]?.n ?? 0);
  }

  async get(id: string): Promise<ComponentDto> {
    return toComponentDto(await this.row(id));
  }

  async create(dto: CreateComponentDto): Promise<ComponentDto> {
    const id = uuidv7();
    await this.db.repo(ComponentEntity).insert({
      id,
      projectId: dto.project_id,
      ...(await this.catalog.newColumns('components', dto.project_id, dto)),
      ...riskColumns(mergeRiskFactors(factorPatch(dto))),
    });
    return this.get(id);
  }

  /**
   * Partial update. The key changes only when `key` is in the body (slugified and suffixed when
   * taken; null/empty → regenerated from the name). Risk is recomputed when any factor is present.
   */
  async update(id: string, dto: UpdateComponentDto): Promise<ComponentDto> {
    const current = await this.row(id, true);
    const patch: Partial<ComponentEntity> = await this.catalog.patchColumns(
      'components',
      current,
      dto,
    );
    const factors = factorPatch(dto);
    if (Object.keys(factors).length > 0) {
      Object.assign(patch, riskColumns(mergeRiskFactors(factors, factorsOf(current))));
    }
    if (Object.keys(patch).length > 0) await this.db.repo(ComponentEntity).update({ id }, patch);
    return this.get(id);
  }

  /**
   * Hard delete. Foreign keys remove its product links, every dependency edge in which it is the
   * source or the target, and the test-case coverages of it.
   */
  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM components WHERE id = $1`, [id]);
  }

  /** Outgoing dependencies, oldest first. */
  async dependencies(id: string): Promise<DependencyListDto> {
    const rows = await this.db.query<DependencyRow>(
      `SELECT id, source_component_id, target_component_id, dependency_type, created_at
         FROM component_dependencies WHERE source_component_id = $1
        ORDER BY created_at, id`,
      [id],
    );
    return { items: rows.map(toDependencyDto) };
  }

  /**
   * Replaces all outgoing dependencies. Under a per-project advisory lock (so two concurrent
   * replacements cannot together close a cycle): duplicates → 422, self → 422
   * `component_dependency_cycle`, a target outside the project → 422 `component_project_mismatch`,
   * then every edge of the project is loaded in one query (one text of id pairs, numbered in memory)
   * and checked for a cycle through this component; finally the old edges are deleted and the new ones inserted in one statement.
   */
  async replaceDependencies(
    projectId: string,
    componentId: string,
    dto: ReplaceDependenciesDto,
  ): Promise<DependencyListDto> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `component_dependencies:${projectId}`,
    ]);
    // Keeps the component from being deleted concurrently (its id is about to be referenced).
    const self = await this.db.query<{ id: string }>(
      `SELECT id FROM components WHERE id = $1 FOR KEY SHARE`,
      [componentId],
    );
    if (self.length === 0) throw AppException.notFound('component_not_found', 'Component');
    // The canonical (lower-case) spelling, so that `A…` and `a…` are one component everywhere.
    const id = self[0].id;
    const entries = dto.dependencies ?? [];
    const targets = entries.map((d) => canonicalId(d.target_component_id));
    const uuids = targets.filter((target) => isUuid(target));
    const found = uuids.length
      ? await this.db.query<{ id: string }>(
          `SELECT id FROM components WHERE project_id = $1 AND id = ANY($2::uuid[]) FOR KEY SHARE`,
          [projectId, uuids],
        )
      : [];
    const projectComponentIds = new Set(found.map((r) => r.id));
    // Cheap checks first; the project's edges are loaded only when they pass.
    let result = validateDependencyReplacement({
      componentId: id,
      targets,
      projectComponentIds,
      edges: [],
    });
    if (result.ok && targets.length > 0) {
      // One text of uuid pairs instead of a row per edge: 50,000 edges as rows (an object and two
      // strings each, then pairs) were ~90 ms of CPU while the lock is held. Numbering the components
      // in SQL instead moved twice that work into the database.
      const [graph] = await this.db.query<{ edges: string | null }>(
        `SELECT string_agg(source_component_id::text || target_component_id::text, '') AS edges
           FROM component_dependencies WHERE project_id = $1`,
        [projectId],
      );
      result = validateDependencyReplacement({
        componentId: id,
        targets,
        projectComponentIds,
        edges: numberIdPairs(graph.edges ?? ''),
      });
    }
    if (!result.ok) throw new AppException(result.code, result.detail, result.errors);

    await this.db.query(`DELETE FROM component_dependencies WHERE source_component_id = $1`, [id]);
    if (targets.length > 0) {
      await this.db.query(
        `INSERT INTO component_dependencies
              (id, source_component_id, target_component_id, project_id, dependency_type)
         SELECT u.id, $2::uuid, u.target, $3::uuid, u.type
           FROM unnest($1::uuid[], $4::uuid[], $5::text[]) AS u(id, target, type)`,
        [
          targets.map(() => uuidv7()),
          id,
          projectId,
          targets,
          entries.map((d) => d.dependency_type ?? 'depends_on'),
        ],
      );
    }
    return this.dependencies(id);
  }

  /** Every component and every dependency edge of the project: two queries. */
  async graph(projectId: string): Promise<ComponentGraphDto> {
    // Timestamps as ISO text from SQL: thousands of rows, no Date round trip in JavaScript.
    const components = await this.db.query<ComponentRow>(
      `SELECT ${COMPONENT_COLUMNS_ISO} FROM components c WHERE c.project_id = $1 ORDER BY ${COMPONENT_ORDER}`,
      [projectId],
    );
    const edges = await this.db.query<DependencyRow>(
      `SELECT id, source_component_id, target_component_id, dependency_type,
              ${isoUtc('created_at')} AS created_at
         FROM component_dependencies WHERE project_id = $1
        ORDER BY component_dependencies.created_at, id`,
      [projectId],
    );
    return { components: components.map(toComponentDto), dependencies: edges.map(toDependencyDto) };
  }

  private async row(id: string, lock = false): Promise<ComponentRow> {
    const rows = await this.db.query<ComponentRow>(
      `SELECT c.* FROM components c WHERE c.id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`,
      [id],
    );
    if (!rows[0]) throw AppException.notFound('component_not_found', 'Component');
    return rows[0];
  }
}
