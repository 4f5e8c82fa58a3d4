import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import {
  COVERAGE_STRENGTH_SCORE,
  HIGH_RISK_LEVELS,
  type ProductSummarySnapshot,
  REQUIRED_COVERAGE_SCORE,
  type SummaryComponent,
  type SummaryCoverage,
} from './coverage';

/** `CASE <column> WHEN 'a' THEN 1 … ELSE 0 END` from a constant table (code, never input). */
function caseSql(column: string, table: Readonly<Record<string, number>>): string {
  const whens = Object.entries(table)
    .map(([value, score]) => `WHEN '${value}' THEN ${score}`)
    .join(' ');
  return `CASE ${column} ${whens} ELSE 0 END`;
}

const STRENGTH_SCORE_SQL = caseSql('a.coverage_strength', COVERAGE_STRENGTH_SCORE);
const REQUIRED_SCORE_SQL = caseSql('c.risk_level', REQUIRED_COVERAGE_SCORE);
const HIGH_RISK_SQL = `ARRAY[${HIGH_RISK_LEVELS.map((l) => `'${l}'`).join(', ')}]::text[]`;

/** Zeros: a product without links. */
export const EMPTY_SNAPSHOT: Readonly<ProductSummarySnapshot> = Object.freeze({
  total_components: 0,
  adequately_covered_components: 0,
  uncovered_components: 0,
  high_risk_uncovered_components: 0,
  mandatory_release_cases: 0,
});

interface SnapshotRow {
  product_id: string;
  total_components: number;
  adequately_covered_components: number;
  high_risk_uncovered_components: number;
  mandatory_release_cases: number;
}

/**
 * Coverage figures of products, read from the links, the components' risk levels and the coverages
 * of **active** test cases (`test_case_component_coverages` × `test_cases`).
 */
@Injectable()
export class ProductCoverageRepository {
  constructor(private readonly db: Db) {}

  /**
   * `summary_snapshot` of every product in `productIds`, aggregated in one SQL statement (computed
   * exactly like the same-named figures of `buildProductSummary`). Products without links get zeros.
   */
  async snapshots(productIds: readonly string[]): Promise<Map<string, ProductSummarySnapshot>> {
    const result = new Map<string, ProductSummarySnapshot>();
    if (productIds.length === 0) return result;
    const rows = await this.db.query<SnapshotRow>(
      `WITH linked AS (
         SELECT pc.product_id, c.id AS component_id, c.risk_level, ${REQUIRED_SCORE_SQL} AS required
           FROM product_components pc JOIN components c ON c.id = pc.component_id
          WHERE pc.product_id = ANY($1::uuid[])
       ),
       active_cov AS (
         SELECT cov.component_id, cov.test_case_id, cov.coverage_strength, cov.is_mandatory_for_release
           FROM test_case_component_coverages cov
           JOIN test_cases tc ON tc.id = cov.test_case_id AND tc.status = 'active'
          WHERE cov.component_id IN (SELECT component_id FROM linked)
       ),
       per_component AS (
         SELECT l.product_id, l.component_id, l.risk_level, l.required,
                coalesce(sum(${STRENGTH_SCORE_SQL}), 0) AS score
           FROM linked l LEFT JOIN active_cov a ON a.component_id = l.component_id
          GROUP BY l.product_id, l.component_id, l.risk_level, l.required
       ),
       per_product AS (
         SELECT product_id,
                count(*)::int AS total_components,
                count(*) FILTER (WHERE score >= required)::int AS adequately_covered_components,
                count(*) FILTER (WHERE score < required AND risk_level = ANY(${HIGH_RISK_SQL}))::int
                  AS high_risk_uncovered_components
           FROM per_component GROUP BY product_id
       ),
       mandatory AS (
         SELECT l.product_id, count(DISTINCT a.test_case_id)::int AS n
           FROM linked l
           JOIN active_cov a ON a.component_id = l.component_id AND a.is_mandatory_for_release
          GROUP BY l.product_id
       )
       SELECT p.product_id, p.total_components, p.adequately_covered_components,
              p.high_risk_uncovered_components, coalesce(m.n, 0)::int AS mandatory_release_cases
         FROM per_product p LEFT JOIN mandatory m ON m.product_id = p.product_id`,
      [productIds],
    );
    for (const r of rows) {
      result.set(r.product_id, {
        total_components: r.total_components,
        adequately_covered_components: r.adequately_covered_components,
        uncovered_components: r.total_components - r.adequately_covered_components,
        high_risk_uncovered_components: r.high_risk_uncovered_components,
        mandatory_release_cases: r.mandatory_release_cases,
      });
    }
    return result;
  }

  /**
   * What a product's summary and readiness are computed from, read by one statement (one snapshot
   * of the database): its linked components, and the coverages of those components by active test
   * cases. Read as two statements, a link removed between them answered its component as linked
   * but without coverage (uncovered, a readiness blocker), a state that never existed.
   */
  async summaryInputs(
    productId: string,
  ): Promise<{ components: SummaryComponent[]; coverages: SummaryCoverage[] }> {
    const rows = await this.db.query<{
      components: SummaryComponent[];
      coverages: SummaryCoverage[];
    }>(
      `SELECT coalesce((SELECT json_agg(json_build_object(
                  'component_id', c.id, 'component_key', c.key, 'component_name', c.name,
                  'risk_level', c.risk_level, 'risk_score', c.risk_score, 'is_core', pc.is_core))
                 FROM product_components pc JOIN components c ON c.id = pc.component_id
                WHERE pc.product_id = $1), '[]') AS components,
              coalesce((SELECT json_agg(json_build_object(
                  'component_id', cov.component_id, 'test_case_id', cov.test_case_id,
                  'coverage_strength', cov.coverage_strength,
                  'is_mandatory_for_release', cov.is_mandatory_for_release,
                  'test_case_type', tc.test_case_type))
                 FROM product_components pc
                 JOIN test_case_component_coverages cov ON cov.component_id = pc.component_id
                 JOIN test_cases tc ON tc.id = cov.test_case_id AND tc.status = 'active'
                WHERE pc.product_id = $1), '[]') AS coverages`,
      [productId],
    );
    return rows[0];
  }
}
