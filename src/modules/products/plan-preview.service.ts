import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import { Db } from '../../common/persistence/db.service';
import { isUuid } from '../../common/persistence/ids';
import { collectReachable, type DependencyEdge } from '../components/dependency-graph';
import type { RiskLevel } from '../components/risk-score';
import {
  buildPlanGenerationPreview,
  type CoverageStrength,
  normalizePlanGenerationConfig,
  type PlanGenerationConfig,
  type PlanGenerationPreview,
  type PreviewCoverage,
  type PreviewTestCase,
  type TestCasePriority,
} from './coverage';

interface CaseRow {
  id: string;
  key: string;
  priority: TestCasePriority | null;
  status: string;
}

interface CoverageCaseRow extends CaseRow {
  test_case_id: string;
  component_id: string;
  coverage_strength: CoverageStrength;
  is_mandatory_for_release: boolean;
}

/**
 * Loads what `buildPlanGenerationPreview` needs for a project in a constant number of queries
 * (selected products with their links, the project's components, its edges when dependencies are
 * included, the coverages of the candidate components by active cases, the explicitly included
 * cases) and runs it. Also usable by product-generated test plans.
 */
@Injectable()
export class PlanPreviewService {
  constructor(private readonly db: Db) {}

  /** The preview, or 422 `product_project_mismatch` / `component_project_mismatch`. */
  async preview(
    projectId: string,
    rawConfig: Partial<PlanGenerationConfig> | undefined,
  ): Promise<PlanGenerationPreview> {
    const config = normalizePlanGenerationConfig(rawConfig);
    const uuids = (ids: string[]) => ids.filter((id) => isUuid(id));

    const products = config.product_ids.length
      ? await this.db.query<{ id: string; component_ids: string[] }>(
          `SELECT p.id,
                  coalesce(array_agg(pc.component_id) FILTER (WHERE pc.component_id IS NOT NULL), '{}')
                    AS component_ids
             FROM products p LEFT JOIN product_components pc ON pc.product_id = p.id
            WHERE p.project_id = $1 AND p.id = ANY($2::uuid[])
            GROUP BY p.id`,
          [projectId, uuids(config.product_ids)],
        )
      : [];
    const components = await this.db.query<{
      id: string;
      risk_level: RiskLevel;
      risk_score: number;
    }>(`SELECT id, risk_level, risk_score FROM components WHERE project_id = $1`, [projectId]);
    const edges: DependencyEdge[] = config.include_dependent_components
      ? (
          await this.db.query<{ s: string; t: string }>(
            `SELECT source_component_id AS s, target_component_id AS t
               FROM component_dependencies WHERE project_id = $1`,
            [projectId],
          )
        ).map((e): DependencyEdge => [e.s, e.t])
      : [];

    // Every component that could be resolved: the selection, plus what it depends on.
    const selected = new Set<string>(config.component_ids);
    for (const product of products) for (const id of product.component_ids) selected.add(id);
    const candidates = config.include_dependent_components
      ? collectReachable(edges, selected)
      : selected;
    const candidateIds = uuids([...candidates]);

    const coverageRows = candidateIds.length
      ? await this.db.query<CoverageCaseRow>(
          `SELECT cov.test_case_id, cov.component_id, cov.coverage_strength,
                  cov.is_mandatory_for_release, tc.id, tc.key, tc.priority, tc.status
             FROM test_case_component_coverages cov
             JOIN test_cases tc ON tc.id = cov.test_case_id AND tc.status = 'active'
            WHERE cov.project_id = $1 AND cov.component_id = ANY($2::uuid[])`,
          [projectId, candidateIds],
        )
      : [];
    const includeIds = uuids(config.explicit_include_case_ids);
    const included = includeIds.length
      ? await this.db.query<CaseRow>(
          `SELECT id, key, priority, status FROM test_cases
            WHERE project_id = $1 AND id = ANY($2::uuid[]) AND status = 'active'`,
          [projectId, includeIds],
        )
      : [];

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
