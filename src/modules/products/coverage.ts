/**
 * Pure coverage rules: how test-case coverages of components add up to the product summary, and
 * which cases a generated test plan selects (reference products-auth-errors.md §9).
 *
 * Inputs are plain rows the service has already read (one row per test case × component coverage);
 * only **active** test cases count anywhere (CONTRACT §7).
 */
import type { ErrorCode } from '../../common/errors/error-codes';
import { isUuid } from '../../common/persistence/ids';
import { type DependencyEdge, collectReachable } from '../components/dependency-graph';
import { RISK_LEVEL_RANK, type RiskLevel, isRiskLevelAtLeast } from '../components/risk-score';

// ---------------------------------------------------------------------------------------------
// Constants

/** How a case covers a component. It has no effect on any computation. */
export const COVERAGE_TYPES = ['direct', 'indirect', 'integration', 'e2e'] as const;
export type CoverageType = (typeof COVERAGE_TYPES)[number];

/** Depth of a coverage, shallow to deep. */
export const COVERAGE_STRENGTHS = ['smoke', 'regression', 'deep'] as const;
export type CoverageStrength = (typeof COVERAGE_STRENGTHS)[number];

/** Score each coverage contributes to its component. */
export const COVERAGE_STRENGTH_SCORE: Readonly<Record<CoverageStrength, number>> = {
  smoke: 1,
  regression: 2,
  deep: 3,
};

/** Coverage score a component needs, by risk level, to be adequately covered. */
export const REQUIRED_COVERAGE_SCORE: Readonly<Record<RiskLevel, number>> = {
  low: 1,
  medium: 2,
  high: 4,
  critical: 6,
};

/** Levels counted as "high risk" (`high_risk_uncovered_components`, smoke plan rule). */
export const HIGH_RISK_LEVELS: readonly RiskLevel[] = ['high', 'critical'];

/** Test case types; anything but `automated` counts as manual. */
export const TEST_CASE_TYPES = ['manual', 'automated'] as const;
export type TestCaseType = (typeof TEST_CASE_TYPES)[number];

/** Test case priorities (nullable on the case). */
export const TEST_CASE_PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
export type TestCasePriority = (typeof TEST_CASE_PRIORITIES)[number];

/** Rank used when ordering plan cases; a case without priority ranks 0. */
export const TEST_CASE_PRIORITY_RANK: Readonly<Record<TestCasePriority, number>> = {
  low: 1,
  medium: 2,
  high: 3,
  critical: 4,
};

/** Plan generation modes. */
export const PLAN_GENERATION_MODES = ['smoke', 'regression', 'full'] as const;
export type PlanGenerationMode = (typeof PLAN_GENERATION_MODES)[number];

/** Reason codes attached to an included case of a plan preview. */
export const PLAN_REASON_CODES = [
  'component_match',
  'dependency_match',
  'explicit_include',
  'mandatory_release',
  'product_match',
  'regression_rule',
  'risk_threshold',
  'smoke_rule',
] as const;
export type PlanReasonCode = (typeof PLAN_REASON_CODES)[number];

/** Score of one coverage strength. */
export function coverageStrengthScore(strength: CoverageStrength): number {
  return COVERAGE_STRENGTH_SCORE[strength];
}

/** Score a component of this risk level needs. */
export function requiredCoverageScore(level: RiskLevel): number {
  return REQUIRED_COVERAGE_SCORE[level];
}

/** True for `high` and `critical`. */
export function isHighRiskLevel(level: RiskLevel): boolean {
  return HIGH_RISK_LEVELS.includes(level);
}

/** Plain code-unit ordering of ids (what "ascending by id" means here). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Natural ordering of test case keys: digit runs compare as numbers, so `TC-2` < `TC-10`
 * (keys are `TC-<n>`, CONTRACT §7); otherwise plain code-unit order.
 */
export function compareCaseKeys(a: string, b: string): number {
  const pa = a.match(/\d+|\D+/g) ?? [];
  const pb = b.match(/\d+|\D+/g) ?? [];
  const length = Math.min(pa.length, pb.length);
  for (let i = 0; i < length; i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    const xDigits = /^\d/.test(x);
    const yDigits = /^\d/.test(y);
    if (xDigits && yDigits) {
      const xs = x.replace(/^0+(?=\d)/, '');
      const ys = y.replace(/^0+(?=\d)/, '');
      if (xs.length !== ys.length) return xs.length - ys.length;
      if (xs !== ys) return compareIds(xs, ys);
      if (x.length !== y.length) return x.length - y.length; // "07" after "7"
      continue;
    }
    return compareIds(x, y);
  }
  return pa.length - pb.length;
}

// ---------------------------------------------------------------------------------------------
// Product summary (§9.3)

/** A component linked to the product. */
export interface SummaryComponent {
  component_id: string;
  component_key: string;
  component_name: string;
  risk_level: RiskLevel;
  risk_score: number;
  /** `is_core` of the product-component link. */
  is_core: boolean;
}

/** One coverage of a linked component by a test case, with the attributes of that case. */
export interface SummaryCoverage {
  component_id: string;
  test_case_id: string;
  coverage_strength: CoverageStrength;
  is_mandatory_for_release: boolean;
  /** `automated` counts as automated; anything else (incl. null) as manual. */
  test_case_type: TestCaseType | null;
  /** When given, only `active` counts; omit it when the query already keeps active cases only. */
  test_case_status?: string;
}

/** One entry of `per_component_breakdown`. */
export interface ComponentCoverageSummary {
  component_id: string;
  component_key: string;
  component_name: string;
  risk_level: RiskLevel;
  risk_score: number;
  /** Sum of the strength scores of the active covering cases. */
  coverage_score: number;
  required_coverage_score: number;
  /** `coverage_score ≥ required_coverage_score`. */
  adequately_covered: boolean;
  /** `!adequately_covered` (no case at all, or not enough). */
  uncovered: boolean;
  smoke_case_count: number;
  regression_case_count: number;
  deep_case_count: number;
  /** Active covering case ids, ascending. */
  covered_case_ids: string[];
}

/** Product summary (`GET /products/{id}/summary`). */
export interface ProductSummary {
  product_id: string;
  total_components: number;
  core_components: number;
  components_with_cases: number;
  adequately_covered_components: number;
  inadequately_covered_components: number;
  /** Same value as `inadequately_covered_components` (reference §9.3). */
  uncovered_components: number;
  high_risk_uncovered_components: number;
  coverage_score_total: number;
  required_coverage_score_total: number;
  /** Distinct active cases covering any linked component. */
  total_cases: number;
  mandatory_release_cases: number;
  /** Distinct cases with a smoke coverage. */
  smoke_cases: number;
  /** Distinct cases with a smoke or regression coverage (cumulative). */
  regression_cases: number;
  /** Distinct cases with any coverage (cumulative; equals `total_cases`). */
  deep_cases: number;
  manual_cases: number;
  automated_cases: number;
  per_component_breakdown: ComponentCoverageSummary[];
}

/** `summary_snapshot` of product list items and product GET (CONTRACT §9). */
export interface ProductSummarySnapshot {
  total_components: number;
  adequately_covered_components: number;
  uncovered_components: number;
  high_risk_uncovered_components: number;
  mandatory_release_cases: number;
}

/** Strength counts of a component's active covering cases (exclusive buckets). */
export interface StrengthCounts {
  smoke_case_count: number;
  regression_case_count: number;
  deep_case_count: number;
}

function isActiveCoverage(row: { test_case_status?: string }): boolean {
  return row.test_case_status === undefined || row.test_case_status === 'active';
}

/**
 * Breakdown entry of one component from its strength counts (as a SQL `GROUP BY` could give them)
 * and its covering case ids.
 */
export function summarizeComponentCoverage(
  component: Omit<SummaryComponent, 'is_core'>,
  counts: StrengthCounts,
  coveredCaseIds: readonly string[] = [],
): ComponentCoverageSummary {
  const coverageScore =
    counts.smoke_case_count * COVERAGE_STRENGTH_SCORE.smoke +
    counts.regression_case_count * COVERAGE_STRENGTH_SCORE.regression +
    counts.deep_case_count * COVERAGE_STRENGTH_SCORE.deep;
  const required = requiredCoverageScore(component.risk_level);
  const adequate = coverageScore >= required;
  return {
    component_id: component.component_id,
    component_key: component.component_key,
    component_name: component.component_name,
    risk_level: component.risk_level,
    risk_score: component.risk_score,
    coverage_score: coverageScore,
    required_coverage_score: required,
    adequately_covered: adequate,
    uncovered: !adequate,
    smoke_case_count: counts.smoke_case_count,
    regression_case_count: counts.regression_case_count,
    deep_case_count: counts.deep_case_count,
    covered_case_ids: [...new Set(coveredCaseIds)].sort(compareIds),
  };
}

interface CaseFacts {
  mandatory: boolean;
  smoke: boolean;
  regressionOrSmoke: boolean;
  automated: boolean;
}

/**
 * The product summary from the product's linked components and the coverages of those components.
 *
 * - Coverages of inactive cases (when `test_case_status` is given) or of unlinked components are
 *   ignored; a repeated component (by id) is counted once, keeping the first row.
 * - A repeated (component, case) coverage counts once, with its strongest strength and mandatory
 *   if any row is mandatory (the database keeps one coverage per pair anyway).
 * - `per_component_breakdown` is sorted by lower-cased name, ties by component id.
 */
export function buildProductSummary(
  productId: string,
  components: readonly SummaryComponent[],
  coverages: readonly SummaryCoverage[],
): ProductSummary {
  const linked = new Map<string, SummaryComponent>();
  for (const component of components) {
    if (!linked.has(component.component_id)) linked.set(component.component_id, component);
  }

  // component id → case id → strongest coverage strength
  const perComponent = new Map<string, Map<string, CoverageStrength>>();
  const caseFacts = new Map<string, CaseFacts>();
  for (const row of coverages) {
    if (!linked.has(row.component_id) || !isActiveCoverage(row)) continue;
    let cases = perComponent.get(row.component_id);
    if (!cases) perComponent.set(row.component_id, (cases = new Map()));
    const previous = cases.get(row.test_case_id);
    if (
      !previous ||
      COVERAGE_STRENGTH_SCORE[row.coverage_strength] > COVERAGE_STRENGTH_SCORE[previous]
    ) {
      cases.set(row.test_case_id, row.coverage_strength);
    }
    const facts = caseFacts.get(row.test_case_id) ?? {
      mandatory: false,
      smoke: false,
      regressionOrSmoke: false,
      automated: row.test_case_type === 'automated',
    };
    facts.mandatory ||= row.is_mandatory_for_release;
    facts.smoke ||= row.coverage_strength === 'smoke';
    facts.regressionOrSmoke ||= row.coverage_strength !== 'deep';
    caseFacts.set(row.test_case_id, facts);
  }

  const breakdown = [...linked.values()].map((component) => {
    const cases = perComponent.get(component.component_id) ?? new Map<string, CoverageStrength>();
    const counts: StrengthCounts = {
      smoke_case_count: 0,
      regression_case_count: 0,
      deep_case_count: 0,
    };
    for (const strength of cases.values()) {
      if (strength === 'smoke') counts.smoke_case_count++;
      else if (strength === 'regression') counts.regression_case_count++;
      else counts.deep_case_count++;
    }
    return summarizeComponentCoverage(component, counts, [...cases.keys()]);
  });
  breakdown.sort((a, b) => {
    const byName = compareIds(a.component_name.toLowerCase(), b.component_name.toLowerCase());
    return byName !== 0 ? byName : compareIds(a.component_id, b.component_id);
  });

  const adequate = breakdown.filter((entry) => entry.adequately_covered).length;
  const facts = [...caseFacts.values()];
  return {
    product_id: productId,
    total_components: linked.size,
    core_components: [...linked.values()].filter((component) => component.is_core).length,
    components_with_cases: breakdown.filter((entry) => entry.covered_case_ids.length > 0).length,
    adequately_covered_components: adequate,
    inadequately_covered_components: linked.size - adequate,
    uncovered_components: linked.size - adequate,
    high_risk_uncovered_components: breakdown.filter(
      (entry) => entry.uncovered && isHighRiskLevel(entry.risk_level),
    ).length,
    coverage_score_total: breakdown.reduce((sum, entry) => sum + entry.coverage_score, 0),
    required_coverage_score_total: breakdown.reduce(
      (sum, entry) => sum + entry.required_coverage_score,
      0,
    ),
    total_cases: facts.length,
    mandatory_release_cases: facts.filter((f) => f.mandatory).length,
    smoke_cases: facts.filter((f) => f.smoke).length,
    regression_cases: facts.filter((f) => f.regressionOrSmoke).length,
    deep_cases: facts.length,
    manual_cases: facts.filter((f) => !f.automated).length,
    automated_cases: facts.filter((f) => f.automated).length,
    per_component_breakdown: breakdown,
  };
}

/** The five `summary_snapshot` figures of a product summary. */
export function buildSummarySnapshot(summary: ProductSummary): ProductSummarySnapshot {
  return {
    total_components: summary.total_components,
    adequately_covered_components: summary.adequately_covered_components,
    uncovered_components: summary.uncovered_components,
    high_risk_uncovered_components: summary.high_risk_uncovered_components,
    mandatory_release_cases: summary.mandatory_release_cases,
  };
}

// ---------------------------------------------------------------------------------------------
// Plan generation preview (§9.4)

/** `generation_config` of a product-generated plan. */
export interface PlanGenerationConfig {
  product_ids: string[];
  component_ids: string[];
  include_dependent_components: boolean;
  minimum_risk_level: RiskLevel | null;
  generation_mode: PlanGenerationMode;
  explicit_include_case_ids: string[];
  explicit_exclude_case_ids: string[];
}

/** The config with every default (also what a manual plan shows). */
export const DEFAULT_PLAN_GENERATION_CONFIG: Readonly<PlanGenerationConfig> = Object.freeze({
  product_ids: [],
  component_ids: [],
  include_dependent_components: false,
  minimum_risk_level: null,
  generation_mode: 'regression',
  explicit_include_case_ids: [],
  explicit_exclude_case_ids: [],
});

/**
 * Trims ids, lower-cases uuids (they are case-insensitive), drops empty ones and duplicates (first
 * occurrence kept).
 */
export function dedupeIds(ids: readonly string[] | null | undefined): string[] {
  const seen = new Set<string>();
  for (const raw of ids ?? []) {
    const trimmed = raw.trim();
    const id = isUuid(trimmed) ? trimmed.toLowerCase() : trimmed;
    if (id !== '') seen.add(id);
  }
  return [...seen];
}

/** A complete config: defaults for missing keys, id lists de-duplicated (step 1). */
export function normalizePlanGenerationConfig(
  config: Partial<PlanGenerationConfig> | null | undefined,
): PlanGenerationConfig {
  const c = config ?? {};
  return {
    product_ids: dedupeIds(c.product_ids),
    component_ids: dedupeIds(c.component_ids),
    include_dependent_components: c.include_dependent_components ?? false,
    minimum_risk_level: c.minimum_risk_level ?? null,
    generation_mode: c.generation_mode ?? 'regression',
    explicit_include_case_ids: dedupeIds(c.explicit_include_case_ids),
    explicit_exclude_case_ids: dedupeIds(c.explicit_exclude_case_ids),
  };
}

export interface PreviewProduct {
  id: string;
  /** Components linked to the product. */
  component_ids: readonly string[];
}

export interface PreviewComponent {
  id: string;
  risk_level: RiskLevel;
  risk_score: number;
}

export interface PreviewTestCase {
  id: string;
  key: string;
  priority: TestCasePriority | null;
  /** Only `active` cases are considered. */
  status: string;
}

export interface PreviewCoverage {
  test_case_id: string;
  component_id: string;
  coverage_strength: CoverageStrength;
  is_mandatory_for_release: boolean;
}

export interface PlanPreviewInput {
  config: Partial<PlanGenerationConfig>;
  /** Products of the project (at least the selected ones) with their component links. */
  products: readonly PreviewProduct[];
  /** Components of the project. */
  components: readonly PreviewComponent[];
  /** Dependency edges of the project (`[source, target]`, source depends on target). */
  dependencies: Iterable<DependencyEdge>;
  /** Test cases of the project (at least the covering and explicitly included ones). */
  testCases: readonly PreviewTestCase[];
  /** Coverages of the project's test cases (at least those of the resolved components). */
  coverages: readonly PreviewCoverage[];
}

export interface PreviewIncludedCase {
  test_case_id: string;
  /** Sorted alphabetically. */
  reason_codes: PlanReasonCode[];
  /** Sorted ascending. */
  matched_component_ids: string[];
  highest_component_risk_level: RiskLevel;
  highest_component_risk_score: number;
}

export interface PreviewExcludedCase {
  test_case_id: string;
  reason: 'explicit_exclude';
}

export interface PlanGenerationPreview {
  resolved_component_ids: string[];
  resolved_case_ids: string[];
  included_cases: PreviewIncludedCase[];
  excluded_cases: PreviewExcludedCase[];
  summary: {
    resolved_components: number;
    candidate_cases: number;
    included_cases: number;
    excluded_cases: number;
  };
}

export type PlanPreviewErrorCode = Extract<
  ErrorCode,
  'product_project_mismatch' | 'component_project_mismatch'
>;

export interface PlanPreviewFailure {
  ok: false;
  code: PlanPreviewErrorCode;
  detail: string;
  errors: Record<string, string[]>;
}

export type PlanPreviewResult = { ok: true; preview: PlanGenerationPreview } | PlanPreviewFailure;

interface Candidate {
  testCase: PreviewTestCase;
  components: Set<string>;
  reasons: Set<PlanReasonCode>;
  mandatory: boolean;
  hasSmoke: boolean;
  level: RiskLevel | null;
  score: number;
}

function newCandidate(testCase: PreviewTestCase): Candidate {
  return {
    testCase,
    components: new Set(),
    reasons: new Set(),
    mandatory: false,
    hasSmoke: false,
    level: null,
    score: 0,
  };
}

function priorityRank(priority: TestCasePriority | null): number {
  return priority ? TEST_CASE_PRIORITY_RANK[priority] : 0;
}

/**
 * Which cases a generated plan would contain (reference §9.4):
 * 1. id lists de-duplicated; 2. unknown/foreign products → `product_project_mismatch`, then
 * components → `component_project_mismatch`; 3. base components (products only → their linked
 * components; components only → those; both → the selected components linked to a selected
 * product; neither → none); 4. optionally add the transitive dependencies of the base;
 * 5. drop components below `minimum_risk_level`; 6. every active case covering a resolved
 * component is a candidate with its reasons, mandatory flag, smoke flag and highest risk;
 * 7. mode: `full` all, `regression` all (+`regression_rule`), `smoke` mandatory / smoke-covered /
 * high-or-critical ones (+`smoke_rule`); 8. explicit includes (active cases only) added with
 * `explicit_include`; 9. explicit excludes removed (listed only when they would have been included);
 * 10. order: mandatory first, highest component risk score desc, priority desc, key asc (natural),
 * id asc.
 */
export function buildPlanGenerationPreview(input: PlanPreviewInput): PlanPreviewResult {
  const config = normalizePlanGenerationConfig(input.config);
  const products = new Map(input.products.map((product) => [product.id, product]));
  const components = new Map(input.components.map((component) => [component.id, component]));

  const unknownProducts = config.product_ids.filter((id) => !products.has(id));
  if (unknownProducts.length > 0) {
    return {
      ok: false,
      code: 'product_project_mismatch',
      detail: 'Selected products must belong to the project',
      errors: { 'config.product_ids': unknownProducts.map((id) => `invalid product_id: ${id}`) },
    };
  }
  const unknownComponents = config.component_ids.filter((id) => !components.has(id));
  if (unknownComponents.length > 0) {
    return {
      ok: false,
      code: 'component_project_mismatch',
      detail: 'Selected components must belong to the project',
      errors: {
        'config.component_ids': unknownComponents.map((id) => `invalid component_id: ${id}`),
      },
    };
  }

  // 3. base components
  const productLinked = new Set<string>();
  for (const productId of config.product_ids) {
    for (const componentId of products.get(productId)?.component_ids ?? []) {
      if (components.has(componentId)) productLinked.add(componentId);
    }
  }
  let baseList: string[];
  if (config.product_ids.length > 0 && config.component_ids.length > 0) {
    baseList = config.component_ids.filter((id) => productLinked.has(id));
  } else if (config.product_ids.length > 0) {
    baseList = [...productLinked];
  } else {
    baseList = [...config.component_ids];
  }
  let base = new Set(baseList);

  // 4. dependencies
  let resolved = new Set(base);
  let dependencySet = new Set<string>();
  if (config.include_dependent_components && base.size > 0) {
    resolved = new Set(
      [...collectReachable(input.dependencies, base)].filter((id) => components.has(id)),
    );
    dependencySet = new Set([...resolved].filter((id) => !base.has(id)));
  }

  // 5. minimum risk level
  const minimum = config.minimum_risk_level;
  if (minimum) {
    const keep = (id: string): boolean => {
      const component = components.get(id);
      return component !== undefined && isRiskLevelAtLeast(component.risk_level, minimum);
    };
    resolved = new Set([...resolved].filter(keep));
    base = new Set([...base].filter(keep));
    dependencySet = new Set([...dependencySet].filter(keep));
  }

  // 6. candidates
  const activeCases = new Map(
    input.testCases
      .filter((testCase) => testCase.status === 'active')
      .map((testCase) => [testCase.id, testCase]),
  );
  const candidates = new Map<string, Candidate>();
  for (const coverage of input.coverages) {
    if (!resolved.has(coverage.component_id)) continue;
    const testCase = activeCases.get(coverage.test_case_id);
    if (!testCase) continue;
    let candidate = candidates.get(testCase.id);
    if (!candidate) candidates.set(testCase.id, (candidate = newCandidate(testCase)));
    candidate.components.add(coverage.component_id);
    if (base.has(coverage.component_id)) candidate.reasons.add('component_match');
    if (dependencySet.has(coverage.component_id)) candidate.reasons.add('dependency_match');
    if (config.product_ids.length > 0) candidate.reasons.add('product_match');
    if (minimum) candidate.reasons.add('risk_threshold');
    if (coverage.is_mandatory_for_release) {
      candidate.mandatory = true;
      candidate.reasons.add('mandatory_release');
    }
    if (coverage.coverage_strength === 'smoke') candidate.hasSmoke = true;
    const component = components.get(coverage.component_id) as PreviewComponent;
    const higher =
      candidate.level === null ||
      RISK_LEVEL_RANK[component.risk_level] > RISK_LEVEL_RANK[candidate.level] ||
      (component.risk_level === candidate.level && component.risk_score > candidate.score);
    if (higher) {
      candidate.level = component.risk_level;
      candidate.score = component.risk_score;
    }
  }

  // 7. mode
  const included = new Map<string, Candidate>();
  for (const candidate of candidates.values()) {
    if (config.generation_mode === 'full') {
      included.set(candidate.testCase.id, candidate);
    } else if (config.generation_mode === 'regression') {
      candidate.reasons.add('regression_rule');
      included.set(candidate.testCase.id, candidate);
    } else if (
      candidate.mandatory ||
      candidate.hasSmoke ||
      (candidate.level !== null && isHighRiskLevel(candidate.level))
    ) {
      candidate.reasons.add('smoke_rule');
      included.set(candidate.testCase.id, candidate);
    }
  }

  // 8. explicit includes
  const considered = new Set(candidates.keys());
  for (const id of config.explicit_include_case_ids) {
    const testCase = activeCases.get(id);
    if (!testCase) continue;
    const candidate = candidates.get(id) ?? newCandidate(testCase);
    candidate.reasons.add('explicit_include');
    included.set(id, candidate);
    considered.add(id);
  }

  // 9. explicit excludes
  const excluded: PreviewExcludedCase[] = [];
  for (const id of config.explicit_exclude_case_ids) {
    if (included.delete(id)) excluded.push({ test_case_id: id, reason: 'explicit_exclude' });
  }

  // 10. order
  const ordered = [...included.values()].sort(
    (a, b) =>
      Number(b.mandatory) - Number(a.mandatory) ||
      b.score - a.score ||
      priorityRank(b.testCase.priority) - priorityRank(a.testCase.priority) ||
      compareCaseKeys(a.testCase.key, b.testCase.key) ||
      compareIds(a.testCase.id, b.testCase.id),
  );

  const includedCases = ordered.map(
    (candidate): PreviewIncludedCase => ({
      test_case_id: candidate.testCase.id,
      reason_codes: [...candidate.reasons].sort(compareIds),
      matched_component_ids: [...candidate.components].sort(compareIds),
      highest_component_risk_level: candidate.level ?? 'low',
      highest_component_risk_score: candidate.score,
    }),
  );

  return {
    ok: true,
    preview: {
      resolved_component_ids: [...resolved].sort(compareIds),
      resolved_case_ids: includedCases.map((entry) => entry.test_case_id),
      included_cases: includedCases,
      excluded_cases: excluded,
      summary: {
        resolved_components: resolved.size,
        candidate_cases: considered.size,
        included_cases: includedCases.length,
        excluded_cases: excluded.length,
      },
    },
  };
}
