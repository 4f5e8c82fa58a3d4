import { Injectable } from '@nestjs/common';
import { ownedBytes } from '../../common/cache/owned-bytes';
import { isoOf } from '../../common/persistence/sql';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { normalizeStringList } from '../../common/normalize';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { CatalogService } from './catalog.service';
import { ComponentRow, ComponentsRepository, DependencyRow } from './components.repository';
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
import {
  type GraphIndex,
  graphIndexBytes,
  indexGraph,
  numberIdPairs,
  replaceOutgoing,
  validateDependencyReplacement,
} from './dependency-graph';
import { ComponentEntity } from './entities/component.entity';
import { ProjectGraphCache } from './graph-cache';
import { computeRisk, mergeRiskFactors, RISK_FACTOR_KEYS, type RiskFactors } from './risk-score';

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
    private readonly components: ComponentsRepository,
    private readonly catalog: CatalogService,
    private readonly graphCache: ProjectGraphCache,
  ) {}

  /** One page: two queries (rows, total). */
  async list(q: ListComponentsQueryDto): Promise<Page<ComponentDto>> {
    const { rows, total } = await this.components.page({
      projectId: q.project_id,
      statuses: q.status,
      riskLevels: q.risk_level,
      // Lower-cased by the database, with the rule of the stored side (see the repository).
      tags: normalizeStringList(q.tag ?? []),
      // Ids are opaque: one that is not a uuid names no product and so matches nothing.
      productIds: q.product_id?.length
        ? q.product_id.filter((productId) => isUuid(productId))
        : undefined,
      search: q.search?.trim(),
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    });
    return pageOf(rows.map(toComponentDto), q.page, q.page_size, total);
  }

  async get(id: string): Promise<ComponentDto> {
    return toComponentDto(await this.row(id));
  }

  async create(dto: CreateComponentDto): Promise<ComponentDto> {
    const id = uuidv7();
    // As the database spells it: the key allocation's lock is keyed by this text.
    const projectId = canonicalId(dto.project_id);
    await this.components.insert({
      id,
      projectId,
      ...(await this.catalog.newColumns('components', projectId, dto)),
      ...riskColumns(mergeRiskFactors(factorPatch(dto))),
    });
    await this.graphChanged(projectId, true);
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
    if (Object.keys(patch).length > 0) {
      await this.components.update(id, patch);
      await this.graphChanged(current.project_id, true);
    }
    return this.get(id);
  }

  /**
   * Hard delete. Foreign keys remove its product links, every dependency edge in which it is the
   * source or the target, and the test-case coverages of it.
   */
  async remove(id: string): Promise<void> {
    const projectId = await this.components.delete(id);
    if (projectId !== null) await this.graphChanged(projectId, false);
  }

  /** Outgoing dependencies, oldest first. */
  async dependencies(id: string): Promise<DependencyListDto> {
    const rows = await this.components.dependenciesOf(id);
    return { items: rows.map(toDependencyDto) };
  }

  /**
   * Replaces all outgoing dependencies. Under a per-project advisory lock (so two concurrent
   * replacements cannot together close a cycle): duplicates → 422, self → 422
   * `component_dependency_cycle`, a target outside the project → 422 `component_project_mismatch`,
   * then the project's graph of the version read after taking the lock (indexed, from the cache,
   * else every edge loaded in one query: one text of id pairs, numbered in memory) is checked for a
   * cycle through this component; finally the old edges are deleted, then the new ones inserted
   * and the graph version bumped in one statement (which answers the new edges). The index of the
   * new version is derived from the checked one in memory when no other write came between (so the
   * next replacement finds it).
   */
  async replaceDependencies(
    projectId: string,
    componentId: string,
    dto: ReplaceDependenciesDto,
  ): Promise<DependencyListDto> {
    await this.components.lockDependencies(projectId);
    // Keeps the component from being deleted concurrently (its id is about to be referenced).
    // The canonical (lower-case) spelling, so that `A…` and `a…` are one component everywhere.
    // The graph version is read in the same statement, under the lock: every replacement
    // committed before is in it.
    const source = await this.components.keyShareWithGraphVersion(componentId, projectId);
    if (source === null) throw AppException.notFound('component_not_found', 'Component');
    const { id, graphVersion: version } = source;
    const entries = dto.dependencies ?? [];
    const targets = entries.map((d) => canonicalId(d.target_component_id));
    const uuids = targets.filter((target) => isUuid(target));
    const found = uuids.length ? await this.components.keyShareInProject(projectId, uuids) : [];
    const projectComponentIds = new Set(found);
    // Cheap checks first; the project's graph is needed only when they pass.
    let result = validateDependencyReplacement({
      componentId: id,
      targets,
      projectComponentIds,
      edges: [],
    });
    let graph: GraphIndex | undefined;
    if (result.ok && targets.length > 0) {
      graph = await this.topology(projectId, version);
      result = validateDependencyReplacement({
        componentId: id,
        targets,
        projectComponentIds,
        edges: graph,
      });
    }
    if (!result.ok) throw new AppException(result.code, result.detail, result.errors);

    const written = await this.components.replaceDependencies(
      projectId,
      id,
      targets.map((target, index) => ({
        targetComponentId: target,
        dependencyType: entries[index].dependency_type ?? 'depends_on',
      })),
    );
    graph ??= this.graphCache.get<GraphIndex>('topology', projectId, version);
    if (graph !== undefined && written.previous === version) {
      const next = replaceOutgoing(graph, id, targets);
      this.graphCache.set('topology', projectId, written.version, next, graphIndexBytes(next));
    }
    return { items: written.rows.map(toDependencyDto) };
  }

  /**
   * Which of `ids` (uuids) are components of the project, each locked FOR KEY SHARE until the
   * transaction ends (so none is deleted while a row about to reference it is written).
   */
  async keyShareInProject(projectId: string, ids: string[]): Promise<Set<string>> {
    return new Set(await this.components.keyShareInProject(projectId, ids));
  }

  /**
   * Every component and every dependency edge of the project, as UTF-8 JSON bytes cached per graph
   * version (written to the socket as they are: no serialising or encoding per request): one
   * version lookup when cached, else the version, the components and the edges read again in one
   * snapshot of the database, so the answer is one state of the graph, cached under its version.
   */
  async graph(projectId: string): Promise<Buffer> {
    const current = await this.components.graphVersion(projectId);
    const cached = this.graphCache.get<Buffer>('response', projectId, current);
    if (cached !== undefined) return cached;
    const { version, components, edges } = await this.components.graphSnapshot(projectId);
    const dto: ComponentGraphDto = {
      components: components.map(toComponentDto),
      dependencies: edges.map(toDependencyDto),
    };
    // Cached in memory of its own: a small graph's bytes would otherwise be a slice of a shared
    // 8 KiB pool block, all of it kept alive by the cache (ownedBytes).
    const body = ownedBytes(Buffer.from(JSON.stringify(dto), 'utf8'));
    this.graphCache.set('response', projectId, version, body, body.length);
    return body;
  }

  /**
   * The project's dependency graph of `version`, indexed: cached, else every edge loaded in one
   * query (one text of uuid pairs instead of a row per edge, see edgePairsText) and cached when the
   * version did not change meanwhile.
   */
  private async topology(projectId: string, version: string): Promise<GraphIndex> {
    const cached = this.graphCache.get<GraphIndex>('topology', projectId, version);
    if (cached !== undefined) return cached;
    const graph = indexGraph(numberIdPairs(await this.components.edgePairsText(projectId)));
    if ((await this.components.graphVersion(projectId)) === version) {
      this.graphCache.set('topology', projectId, version, graph, graphIndexBytes(graph));
    }
    return graph;
  }

  /**
   * Bumps the project's graph version: the last statement of every write that changes what the
   * graph shows. `sameEdges`: the write left every dependency edge as it was (a component created
   * or updated), so the cached index of the version it replaced is the new version's too.
   */
  private async graphChanged(projectId: string, sameEdges: boolean): Promise<void> {
    const bumped = await this.components.bumpGraphVersion(projectId);
    if (!sameEdges) return;
    const graph = this.graphCache.get<GraphIndex>('topology', projectId, bumped.previous);
    if (graph !== undefined) {
      this.graphCache.set('topology', projectId, bumped.version, graph, graphIndexBytes(graph));
    }
  }

  private async row(id: string, lock = false): Promise<ComponentRow> {
    const row = lock
      ? await this.components.findByIdForUpdate(id)
      : await this.components.findById(id);
    if (!row) throw AppException.notFound('component_not_found', 'Component');
    return row;
  }
}
