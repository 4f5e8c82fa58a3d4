import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import type { DependencyEdge } from '../components/dependency-graph';
import type { RiskLevel } from '../components/risk-score';
import type { CoverageStrength, TestCasePriority } from './coverage';

/** A test case as the preview sees it. */
export interface CaseRow {
  id: string;
  key: string;
  priority: TestCasePriority | null;
  status: string;
}

/** A coverage of a candidate component by an active test case, with the case. */
export interface CoverageCaseRow extends CaseRow {
  test_case_id: string;
  component_id: string;
  coverage_strength: CoverageStrength;
  is_mandatory_for_release: boolean;
}

export interface ProductComponentsRow {
  id: string;
  component_ids: string[];
}

export interface ComponentRiskRow {
  id: string;
  risk_level: RiskLevel;
  risk_score: number;
}

/** The reads of a plan-generation preview: one query each, `= ANY($2)` for the selections. */
@Injectable()
export class PlanPreviewRepository {
  constructor(private readonly db: Db) {}

  /** The selected products (uuids) of the project, each with its linked component ids. */
  async productsWithComponents(projectId: string, ids: string[]): Promise<ProductComponentsRow[]> {
    return this.db.query<ProductComponentsRow>(
      `SELECT p.id,
                  coalesce(array_agg(pc.component_id) FILTER (WHERE pc.component_id IS NOT NULL), '{}')
                    AS component_ids
             FROM products p LEFT JOIN product_components pc ON pc.product_id = p.id
            WHERE p.project_id = $1 AND p.id = ANY($2::uuid[])
            GROUP BY p.id`,
      [projectId, ids],
    );
  }

  /** Every component of the project with its risk. */
  async componentRisks(projectId: string): Promise<ComponentRiskRow[]> {
    return this.db.query<ComponentRiskRow>(
      `SELECT id, risk_level, risk_score FROM components WHERE project_id = $1`,
      [projectId],
    );
  }

  /** Every dependency edge of the project as `[source, target]`. */
  async dependencyEdges(projectId: string): Promise<DependencyEdge[]> {
    const rows = await this.db.query<{ s: string; t: string }>(
      `SELECT source_component_id AS s, target_component_id AS t
               FROM component_dependencies WHERE project_id = $1`,
      [projectId],
    );
    return rows.map((e): DependencyEdge => [e.s, e.t]);
  }

  /** Coverages of the components `componentIds` (uuids) by the project's active test cases. */
  async activeCoverages(projectId: string, componentIds: string[]): Promise<CoverageCaseRow[]> {
    return this.db.query<CoverageCaseRow>(
      `SELECT cov.test_case_id, cov.component_id, cov.coverage_strength,
                  cov.is_mandatory_for_release, tc.id, tc.key, tc.priority, tc.status
             FROM test_case_component_coverages cov
             JOIN test_cases tc ON tc.id = cov.test_case_id AND tc.status = 'active'
            WHERE cov.project_id = $1 AND cov.component_id = ANY($2::uuid[])`,
      [projectId, componentIds],
    );
  }

  /** The active test cases of the project among `ids` (uuids). */
  async activeCases(projectId: string, ids: string[]): Promise<CaseRow[]> {
    return this.db.query<CaseRow>(
      `SELECT id, key, priority, status FROM test_cases
            WHERE project_id = $1 AND id = ANY($2::uuid[]) AND status = 'active'`,
      [projectId, ids],
    );
  }
}
