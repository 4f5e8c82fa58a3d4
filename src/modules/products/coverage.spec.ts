import type { RiskLevel } from '../components/risk-score';
import {
  COVERAGE_STRENGTH_SCORE,
  CoverageStrength,
  DEFAULT_PLAN_GENERATION_CONFIG,
  PlanGenerationConfig,
  PlanPreviewInput,
  PreviewTestCase,
  REQUIRED_COVERAGE_SCORE,
  SummaryComponent,
  SummaryCoverage,
  buildPlanGenerationPreview,
  buildProductSummary,
  buildSummarySnapshot,
  compareCaseKeys,
  coverageStrengthScore,
  dedupeIds,
  isHighRiskLevel,
  normalizePlanGenerationConfig,
  requiredCoverageScore,
  summarizeComponentCoverage,
} from './coverage';

function component(
  id: string,
  name: string,
  risk_level: RiskLevel,
  risk_score: number,
  is_core = false,
): SummaryComponent {
  return {
    component_id: id,
    component_key: id,
    component_name: name,
    risk_level,
    risk_score,
    is_core,
  };
}

function coverage(
  component_id: string,
  test_case_id: string,
  coverage_strength: CoverageStrength,
  extra: Partial<SummaryCoverage> = {},
): SummaryCoverage {
  return {
    component_id,
    test_case_id,
    coverage_strength,
    is_mandatory_for_release: false,
    test_case_type: 'manual',
    ...extra,
  };
}

describe('constants', () => {
  it.each<[CoverageStrength, number]>([
    ['smoke', 1],
    ['regression', 2],
    ['deep', 3],
  ])('strength %s scores %d', (strength, score) => {
    expect(coverageStrengthScore(strength)).toBe(score);
    expect(COVERAGE_STRENGTH_SCORE[strength]).toBe(score);
  });

  it.each<[RiskLevel, number, boolean]>([
    ['low', 1, false],
    ['medium', 2, false],
    ['high', 4, true],
    ['critical', 6, true],
  ])('level %s requires %d (high risk: %s)', (level, required, high) => {
    expect(requiredCoverageScore(level)).toBe(required);
    expect(REQUIRED_COVERAGE_SCORE[level]).toBe(required);
    expect(isHighRiskLevel(level)).toBe(high);
  });
});

describe('summarizeComponentCoverage: adequacy at the required score', () => {
  it.each<[RiskLevel, [number, number, number], number, boolean]>([
    ['low', [0, 0, 0], 0, false],
    ['low', [1, 0, 0], 1, true],
    ['medium', [1, 0, 0], 1, false],
    ['medium', [0, 1, 0], 2, true],
    ['medium', [2, 0, 0], 2, true],
    ['high', [1, 0, 1], 4, true],
    ['high', [1, 1, 0], 3, false],
    ['high', [0, 2, 0], 4, true],
    ['critical', [0, 1, 1], 5, false],
    ['critical', [0, 0, 2], 6, true],
    ['critical', [6, 0, 0], 6, true],
    ['critical', [1, 0, 0], 1, false],
  ])(
    '%s with (smoke, regression, deep) = %j → score %d, adequate %s',
    (level, counts, score, ok) => {
      const [smoke, regression, deep] = counts;
      const entry = summarizeComponentCoverage(
        component('c1', 'C1', level, 50),
        { smoke_case_count: smoke, regression_case_count: regression, deep_case_count: deep },
        ['b', 'a', 'b'],
      );
      expect(entry).toMatchObject({
        coverage_score: score,
        required_coverage_score: REQUIRED_COVERAGE_SCORE[level],
        adequately_covered: ok,
        uncovered: !ok,
        covered_case_ids: ['a', 'b'],
      });
    },
  );
});

describe('buildProductSummary: reference examples (§9.3)', () => {
  it('one low-risk component and one active smoke mandatory case', () => {
    const summary = buildProductSummary(
      'p1',
      [component('c1', 'Checkout', 'low', 8)],
      [coverage('c1', 't1', 'smoke', { is_mandatory_for_release: true })],
    );
    expect(summary).toMatchObject({
      total_components: 1,
      components_with_cases: 1,
      adequately_covered_components: 1,
      inadequately_covered_components: 0,
      mandatory_release_cases: 1,
    });
  });

  it('one critical component (score 89) and one active smoke case', () => {
    const summary = buildProductSummary(
      'p1',
      [component('c1', 'Payments', 'critical', 89)],
      [coverage('c1', 't1', 'smoke')],
    );
    expect(summary).toMatchObject({
      adequately_covered_components: 0,
      inadequately_covered_components: 1,
      uncovered_components: 1,
      high_risk_uncovered_components: 1,
      coverage_score_total: 1,
      required_coverage_score_total: 6,
    });
    expect(summary.per_component_breakdown).toHaveLength(1);
    expect(summary.per_component_breakdown[0]).toMatchObject({
      coverage_score: 1,
      adequately_covered: false,
      uncovered: true,
    });
  });

  it('a product without links has all counters 0', () => {
    expect(buildProductSummary('p1', [], [coverage('c1', 't1', 'deep')])).toEqual({
      product_id: 'p1',
      total_components: 0,
      core_components: 0,
      components_with_cases: 0,
      adequately_covered_components: 0,
      inadequately_covered_components: 0,
      uncovered_components: 0,
      high_risk_uncovered_components: 0,
      coverage_score_total: 0,
      required_coverage_score_total: 0,
      total_cases: 0,
      mandatory_release_cases: 0,
      smoke_cases: 0,
      regression_cases: 0,
      deep_cases: 0,
      manual_cases: 0,
      automated_cases: 0,
      per_component_breakdown: [],
    });
  });
});

describe('buildProductSummary: every figure', () => {
  const components = [
    component('c-pay', 'payments', 'critical', 89, true),
    component('c-cat', 'Catalog', 'low', 10),
    component('c-srch', 'Search', 'high', 60, true),
    component('c-acc', 'accounts', 'medium', 30),
    component('c-pay', 'payments (duplicate link)', 'critical', 89, true),
  ];
  const coverages: SummaryCoverage[] = [
    coverage('c-pay', 't1', 'smoke', {
      is_mandatory_for_release: true,
      test_case_type: 'automated',
    }),
    coverage('c-pay', 't2', 'deep', { test_case_type: 'automated' }),
    coverage('c-pay', 't3', 'regression'),
    coverage('c-cat', 't1', 'regression', { test_case_type: 'automated' }),
    coverage('c-cat', 't4', 'deep', { test_case_type: null }),
    coverage('c-srch', 't5', 'smoke', { is_mandatory_for_release: true }),
    // ignored: inactive case, unlinked component
    coverage('c-srch', 't6', 'deep', { test_case_status: 'draft' }),
    coverage('c-other', 't7', 'deep'),
    // an active status given explicitly counts
    coverage('c-srch', 't8', 'regression', { test_case_status: 'active' }),
  ];
  const summary = buildProductSummary('prod', components, coverages);

  it.each<[keyof typeof summary, number]>([
    ['total_components', 4],
    ['core_components', 2],
    ['components_with_cases', 3],
    // pay 1+3+2=6 ≥ 6; cat 2+3=5 ≥ 1; search 1+2=3 < 4; accounts 0 < 2
    ['adequately_covered_components', 2],
    ['inadequately_covered_components', 2],
    ['uncovered_components', 2],
    ['high_risk_uncovered_components', 1],
    ['coverage_score_total', 14],
    ['required_coverage_score_total', 13],
    ['total_cases', 6],
    ['mandatory_release_cases', 2],
    ['smoke_cases', 2],
    ['regression_cases', 4],
    ['deep_cases', 6],
    ['manual_cases', 4],
    ['automated_cases', 2],
  ])('%s = %d', (key, value) => {
    expect(summary[key]).toBe(value);
  });

  it('breaks down per component, sorted by lower-cased name', () => {
    expect(summary.per_component_breakdown).toEqual([
      {
        component_id: 'c-acc',
        component_key: 'c-acc',
        component_name: 'accounts',
        risk_level: 'medium',
        risk_score: 30,
        coverage_score: 0,
        required_coverage_score: 2,
        adequately_covered: false,
        uncovered: true,
        smoke_case_count: 0,
        regression_case_count: 0,
        deep_case_count: 0,
        covered_case_ids: [],
      },
      {
        component_id: 'c-cat',
        component_key: 'c-cat',
        component_name: 'Catalog',
        risk_level: 'low',
        risk_score: 10,
        coverage_score: 5,
        required_coverage_score: 1,
        adequately_covered: true,
        uncovered: false,
        smoke_case_count: 0,
        regression_case_count: 1,
        deep_case_count: 1,
        covered_case_ids: ['t1', 't4'],
      },
      {
        component_id: 'c-pay',
        component_key: 'c-pay',
        component_name: 'payments',
        risk_level: 'critical',
        risk_score: 89,
        coverage_score: 6,
        required_coverage_score: 6,
        adequately_covered: true,
        uncovered: false,
        smoke_case_count: 1,
        regression_case_count: 1,
        deep_case_count: 1,
        covered_case_ids: ['t1', 't2', 't3'],
      },
      {
        component_id: 'c-srch',
        component_key: 'c-srch',
        component_name: 'Search',
        risk_level: 'high',
        risk_score: 60,
        coverage_score: 3,
        required_coverage_score: 4,
        adequately_covered: false,
        uncovered: true,
        smoke_case_count: 1,
        regression_case_count: 1,
        deep_case_count: 0,
        covered_case_ids: ['t5', 't8'],
      },
    ]);
  });

  it('snapshot carries the five list figures', () => {
    expect(buildSummarySnapshot(summary)).toEqual({
      total_components: 4,
      adequately_covered_components: 2,
      uncovered_components: 2,
      high_risk_uncovered_components: 1,
      mandatory_release_cases: 2,
    });
  });

  it('a repeated (component, case) row counts once with its strongest strength', () => {
    const result = buildProductSummary(
      'p',
      [component('c', 'C', 'high', 60)],
      [
        coverage('c', 't', 'smoke'),
        coverage('c', 't', 'deep', { is_mandatory_for_release: true }),
        coverage('c', 't', 'regression'),
      ],
    );
    expect(result.per_component_breakdown[0]).toMatchObject({
      coverage_score: 3,
      smoke_case_count: 0,
      deep_case_count: 1,
      covered_case_ids: ['t'],
    });
    expect(result).toMatchObject({ total_cases: 1, mandatory_release_cases: 1, smoke_cases: 1 });
  });

  it('components with the same name are ordered by id', () => {
    const result = buildProductSummary(
      'p',
      [component('b', 'Same', 'low', 1), component('a', 'same', 'low', 1)],
      [],
    );
    expect(result.per_component_breakdown.map((entry) => entry.component_id)).toEqual(['a', 'b']);
  });
});

describe('compareCaseKeys', () => {
  it.each<[string, string, number]>([
    ['TC-1', 'TC-2', -1],
    ['TC-2', 'TC-10', -1],
    ['TC-10', 'TC-9', 1],
    ['TC-10', 'TC-10', 0],
    ['TC-7', 'TC-07', -1],
    ['A-1', 'B-1', -1],
    ['TC-1', 'TC-1a', -1],
    ['TC-123456789012345678901', 'TC-99', 1],
  ])('%s vs %s → %d', (a, b, sign) => {
    expect(Math.sign(compareCaseKeys(a, b))).toBe(sign);
    expect(Math.sign(compareCaseKeys(b, a)) + sign).toBe(0);
  });
});

describe('normalizePlanGenerationConfig', () => {
  it('fills defaults', () => {
    expect(normalizePlanGenerationConfig(undefined)).toEqual(DEFAULT_PLAN_GENERATION_CONFIG);
    expect(normalizePlanGenerationConfig({})).toEqual(DEFAULT_PLAN_GENERATION_CONFIG);
  });

  it('de-duplicates ids keeping the first and drops blanks', () => {
    expect(dedupeIds(['b', '', 'a', ' b ', '  ', 'a', 'c'])).toEqual(['b', 'a', 'c']);
    expect(
      normalizePlanGenerationConfig({
        product_ids: ['p', 'p'],
        explicit_exclude_case_ids: ['', 'x'],
      }),
    ).toMatchObject({ product_ids: ['p'], explicit_exclude_case_ids: ['x'] });
  });

  it('lower-cases uuids (case-insensitive) and leaves other ids as they are', () => {
    const id = '01A1FDF8-B082-7064-BB98-4F20B925CE66';
    expect(dedupeIds([id, id.toLowerCase(), 'Not-A-Uuid'])).toEqual([
      id.toLowerCase(),
      'Not-A-Uuid',
    ]);
  });
});

describe('buildPlanGenerationPreview', () => {
  //   products: p1 → low, med; p2 → high, crit
  //   dependencies: med → dep → dep2
  const fixture: Omit<PlanPreviewInput, 'config'> = {
    products: [
      { id: 'p1', component_ids: ['low', 'med'] },
      { id: 'p2', component_ids: ['high', 'crit'] },
    ],
    components: [
      { id: 'low', risk_level: 'low', risk_score: 10 },
      { id: 'med', risk_level: 'medium', risk_score: 30 },
      { id: 'high', risk_level: 'high', risk_score: 60 },
      { id: 'crit', risk_level: 'critical', risk_score: 89 },
      { id: 'dep', risk_level: 'high', risk_score: 55 },
      { id: 'dep2', risk_level: 'low', risk_score: 5 },
    ],
    dependencies: [
      ['med', 'dep'],
      ['dep', 'dep2'],
    ],
    testCases: [
      tc('t1', 'TC-1', 'high'),
      tc('t2', 'TC-2', 'low'),
      tc('t3', 'TC-3', 'critical'),
      tc('t4', 'TC-4', 'high', 'draft'),
      tc('t5', 'TC-5', null),
      tc('t6', 'TC-6', 'medium'),
      tc('t10', 'TC-10', 'medium'),
      tc('t11', 'TC-11', null),
      tc('t12', 'TC-12', 'high', 'archived'),
    ],
    coverages: [
      cov('t1', 'low', 'regression'),
      cov('t2', 'med', 'smoke'),
      cov('t3', 'crit', 'deep', true),
      cov('t4', 'low', 'deep'),
      cov('t5', 'dep', 'regression'),
      cov('t6', 'dep2', 'deep'),
      cov('t10', 'high', 'regression'),
    ],
  };

  function tc(
    id: string,
    key: string,
    priority: PreviewTestCase['priority'],
    status = 'active',
  ): PreviewTestCase {
    return { id, key, priority, status };
  }
  function cov(test_case_id: string, component_id: string, strength: CoverageStrength, m = false) {
    return { test_case_id, component_id, coverage_strength: strength, is_mandatory_for_release: m };
  }
  function preview(config: Partial<PlanGenerationConfig>, input = fixture) {
    const result = buildPlanGenerationPreview({ ...input, config });
    if (!result.ok) throw new Error(`unexpected failure ${result.code}`);
    return result.preview;
  }

  type Row = [string, Partial<PlanGenerationConfig>, string[], string[], Record<string, string[]>];
  it.each<Row>([
    ['nothing selected', {}, [], [], {}],
    [
      'products only (regression)',
      { product_ids: ['p1'] },
      ['low', 'med'],
      ['t2', 't1'],
      {
        t2: ['component_match', 'product_match', 'regression_rule'],
        t1: ['component_match', 'product_match', 'regression_rule'],
      },
    ],
    [
      'components only (full)',
      { component_ids: ['high', 'crit'], generation_mode: 'full' },
      ['crit', 'high'],
      ['t3', 't10'],
      { t3: ['component_match', 'mandatory_release'], t10: ['component_match'] },
    ],
    [
      'products and components: intersection',
      { product_ids: ['p1'], component_ids: ['med', 'high'] },
      ['med'],
      ['t2'],
      { t2: ['component_match', 'product_match', 'regression_rule'] },
    ],
    [
      'include dependent components',
      { component_ids: ['med'], include_dependent_components: true },
      ['dep', 'dep2', 'med'],
      ['t5', 't2', 't6'],
      {
        t5: ['dependency_match', 'regression_rule'],
        t2: ['component_match', 'regression_rule'],
        t6: ['dependency_match', 'regression_rule'],
      },
    ],
    [
      'dependencies filtered by minimum risk level',
      { component_ids: ['med'], include_dependent_components: true, minimum_risk_level: 'high' },
      ['dep'],
      ['t5'],
      { t5: ['dependency_match', 'regression_rule', 'risk_threshold'] },
    ],
    [
      'minimum risk level on products',
      { product_ids: ['p1', 'p2'], minimum_risk_level: 'critical', generation_mode: 'full' },
      ['crit'],
      ['t3'],
      { t3: ['component_match', 'mandatory_release', 'product_match', 'risk_threshold'] },
    ],
    [
      'smoke mode keeps mandatory, smoke-covered and high-risk cases',
      { product_ids: ['p1', 'p2'], generation_mode: 'smoke' },
      ['crit', 'high', 'low', 'med'],
      ['t3', 't10', 't2'],
      {
        t3: ['component_match', 'mandatory_release', 'product_match', 'smoke_rule'],
        t10: ['component_match', 'product_match', 'smoke_rule'],
        t2: ['component_match', 'product_match', 'smoke_rule'],
      },
    ],
    [
      'explicit includes (active only, even without coverage)',
      { explicit_include_case_ids: ['t11', 't12', 't4', 'nope', 't11'] },
      [],
      ['t11'],
      { t11: ['explicit_include'] },
    ],
    [
      'explicit include of a candidate that smoke mode left out',
      { product_ids: ['p1'], generation_mode: 'smoke', explicit_include_case_ids: ['t1'] },
      ['low', 'med'],
      ['t2', 't1'],
      {
        t2: ['component_match', 'product_match', 'smoke_rule'],
        t1: ['component_match', 'explicit_include', 'product_match'],
      },
    ],
  ])('%s', (_label, config, components, cases, reasons) => {
    const result = preview(config);
    expect(result.resolved_component_ids).toEqual(components);
    expect(result.resolved_case_ids).toEqual(cases);
    expect(result.included_cases.map((entry) => entry.test_case_id)).toEqual(cases);
    for (const entry of result.included_cases) {
      expect(entry.reason_codes).toEqual(reasons[entry.test_case_id]);
    }
  });

  it('reports the highest component risk and matched components', () => {
    const input: Omit<PlanPreviewInput, 'config'> = {
      ...fixture,
      coverages: [
        cov('t1', 'dep', 'regression'),
        cov('t1', 'high', 'smoke'),
        cov('t1', 'low', 'deep'),
      ],
    };
    const result = preview({ component_ids: ['low', 'dep', 'high'] }, input);
    expect(result.included_cases).toEqual([
      {
        test_case_id: 't1',
        reason_codes: ['component_match', 'regression_rule'],
        matched_component_ids: ['dep', 'high', 'low'],
        highest_component_risk_level: 'high',
        highest_component_risk_score: 60,
      },
    ]);
  });

  it('an explicit include without coverage defaults to low / 0', () => {
    expect(preview({ explicit_include_case_ids: ['t11'] }).included_cases).toEqual([
      {
        test_case_id: 't11',
        reason_codes: ['explicit_include'],
        matched_component_ids: [],
        highest_component_risk_level: 'low',
        highest_component_risk_score: 0,
      },
    ]);
  });

  it('explicit excludes are removed and listed only when they were included', () => {
    const result = preview({
      product_ids: ['p1'],
      explicit_include_case_ids: ['t11'],
      explicit_exclude_case_ids: ['t2', 't6', 't11', 't2'],
    });
    expect(result.resolved_case_ids).toEqual(['t1']);
    expect(result.excluded_cases).toEqual([
      { test_case_id: 't2', reason: 'explicit_exclude' },
      { test_case_id: 't11', reason: 'explicit_exclude' },
    ]);
    expect(result.summary).toEqual({
      resolved_components: 2,
      candidate_cases: 3,
      included_cases: 1,
      excluded_cases: 2,
    });
  });

  it('orders by mandatory, risk score, priority, natural key, id', () => {
    const input: Omit<PlanPreviewInput, 'config'> = {
      ...fixture,
      testCases: [
        tc('a', 'TC-10', 'medium'),
        tc('b', 'TC-2', 'medium'),
        tc('c', 'TC-30', 'critical'),
        tc('d', 'TC-40', null),
        tc('e', 'TC-50', 'low'),
        tc('f', 'TC-1', null),
      ],
      coverages: [
        cov('a', 'low', 'regression'),
        cov('b', 'low', 'regression'),
        cov('c', 'low', 'regression'),
        cov('d', 'low', 'regression'),
        cov('e', 'low', 'smoke', true),
        cov('f', 'med', 'regression'),
      ],
    };
    // e: mandatory; f: score 30; c: critical priority; b before a: TC-2 < TC-10; d: no priority
    expect(preview({ component_ids: ['low', 'med'] }, input).resolved_case_ids).toEqual([
      'e',
      'f',
      'c',
      'b',
      'a',
      'd',
    ]);
  });

  it('counts candidates including explicit includes', () => {
    const result = preview({
      product_ids: ['p1'],
      generation_mode: 'smoke',
      explicit_include_case_ids: ['t11', 't1'],
    });
    expect(result.summary).toEqual({
      resolved_components: 2,
      candidate_cases: 3,
      included_cases: 3,
      excluded_cases: 0,
    });
  });

  it('full and regression include the same cases', () => {
    const full = preview({ product_ids: ['p1', 'p2'], generation_mode: 'full' });
    const regression = preview({ product_ids: ['p1', 'p2'], generation_mode: 'regression' });
    expect(full.resolved_case_ids).toEqual(regression.resolved_case_ids);
    expect(full.resolved_case_ids).toEqual(['t3', 't10', 't2', 't1']);
  });

  it.each<[string, Partial<PlanGenerationConfig>, string, Record<string, string[]>]>([
    [
      'unknown product',
      { product_ids: ['p1', 'px'], component_ids: ['cx'] },
      'product_project_mismatch',
      { 'config.product_ids': ['invalid product_id: px'] },
    ],
    [
      'unknown component',
      { product_ids: ['p1'], component_ids: ['low', 'cx', 'cy'] },
      'component_project_mismatch',
      { 'config.component_ids': ['invalid component_id: cx', 'invalid component_id: cy'] },
    ],
  ])('%s → %s', (_label, config, code, errors) => {
    const result = buildPlanGenerationPreview({ ...fixture, config });
    expect(result).toMatchObject({ ok: false, code, errors });
  });
});
