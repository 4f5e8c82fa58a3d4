import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import { isUuid } from '../../common/persistence/ids';
import { collectReachable, type DependencyEdge } from '../components/dependency-graph';
import {
  buildPlanGenerationPreview,
  normalizePlanGenerationConfig,
  type PlanGenerationConfig,
  type PlanGenerationPreview,
  type PreviewCoverage,
  type PreviewTestCase,
} from './coverage';
import { PlanPreviewRepository } from './plan-preview.repository';

/**
 * Loads what `buildPlanGenerationPreview` needs for a project in a constant number of queries
 * (selected products with their links, the project's components, its edges when dependencies are
 * included, the coverages of the candidate components by active cases, the explicitly included
 * cases) and runs it. Also usable by product-generated test plans.
 */
@Injectable()
export class PlanPreviewService {
  constructor(private readonly reads: PlanPreviewRepository) {}

  /** The preview, or 422 `product_project_mismatch` / `component_project_mismatch`. */
  async preview(
    projectId: string,
    rawConfig: Partial<PlanGenerationConfig> | undefined,
  ): Promise<PlanGenerationPreview> {
    const config = normalizePlanGenerationConfig(rawConfig);
    const uuids = (ids: string[]) => ids.filter((id) => isUuid(id));

    const products = config.product_ids.length
      ? await this.reads.productsWithComponents(projectId, uuids(config.product_ids))
      : [];
    const components = await this.reads.componentRisks(projectId);
    const edges: DependencyEdge[] = config.include_dependent_components
      ? await this.reads.dependencyEdges(projectId)
      : [];

    // Every component that could be resolved: the selection, plus what it depends on.
    const selected = new Set<string>(config.component_ids);
    for (const product of products) for (const id of product.component_ids) selected.add(id);
    const candidates = config.include_dependent_components
      ? collectReachable(edges, selected)
      : selected;
    const candidateIds = uuids([...candidates]);

    const coverageRows = candidateIds.length
      ? await this.reads.activeCoverages(projectId, candidateIds)
      : [];
    const includeIds = uuids(config.explicit_include_case_ids);
    const included = includeIds.length ? await this.reads.activeCases(projectId, includeIds) : [];

    const testCases = new Map<string, PreviewTestCase>();
    for (const r of [...coverageRows, ...included]) {
      testCases.set(r.id, { id: r.id, key: r.key, priority: r.priority, status: r.status });
    }
    const coverages: PreviewCoverage[] = coverageRows.map((r) => ({
      test_case_id: r.test_case_id,
      component_id: r.component_id,
      coverage_strength: r.coverage_strength,
      is_mandatory_for_release: r.is_mandatory_for_release,
    }));

    const result = buildPlanGenerationPreview({
      config,
      products: products.map((p) => ({ id: p.id, component_ids: p.component_ids })),
      components,
      dependencies: edges,
      testCases: [...testCases.values()],
      coverages,
    });
    if (!result.ok) throw new AppException(result.code, result.detail, result.errors);
    return result.preview;
  }
}
