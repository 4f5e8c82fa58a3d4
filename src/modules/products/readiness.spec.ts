import type { RiskLevel } from '../components/risk-score';
import type { SummaryComponent, SummaryCoverage } from './coverage';
import {
  atLeastRiskLevel,
  evaluateReadiness,
  readsRunsByKey,
  RUNS_PER_ITEM_BY_KEY,
} from './readiness';

const comp = (id: string, level: RiskLevel, score: number, name = id): SummaryComponent => ({
  component_id: id,
  component_key: id,
  component_name: name,
  risk_level: level,
  risk_score: score,
  is_core: false,
});
const cov = (
  component: string,
  testCase: string,
  mandatory = true,
  status?: string,
): SummaryCoverage => ({
  component_id: component,
  test_case_id: testCase,
  coverage_strength: 'regression',
  is_mandatory_for_release: mandatory,
  test_case_type: 'automated',
  ...(status === undefined ? {} : { test_case_status: status }),
});

describe('atLeastRiskLevel', () => {
  it.each([
    ['low', 'low', true],
    ['medium', 'high', false],
    ['high', 'high', true],
    ['critical', 'high', true],
    ['high', 'critical', false],
  ] as const)('%s at least %s: %s', (level, min, expected) => {
    expect(atLeastRiskLevel(level, min)).toBe(expected);
  });
});

describe('evaluateReadiness', () => {
  const A = comp('a', 'high', 60);
  const cases: Array<{
    name: string;
    coverages: SummaryCoverage[];
    latest: Record<string, string>;
    reason: string | null;
    ids?: string[];
  }> = [
    { name: 'no coverage: uncovered', coverages: [], latest: {}, reason: 'uncovered', ids: [] },
    {
      name: 'only non-mandatory coverage: uncovered',
      coverages: [cov('a', 'c1', false)],
      latest: { c1: 'passed' },
      reason: 'uncovered',
      ids: [],
    },
    {
      name: 'an inactive case does not cover',
      coverages: [cov('a', 'c1', true, 'draft')],
      latest: { c1: 'passed' },
      reason: 'uncovered',
      ids: [],
    },
    {
      name: 'never run: not_run',
      coverages: [cov('a', 'c1')],
      latest: {},
      reason: 'not_run',
      ids: ['c1'],
    },
    ...['untested', 'in_progress', 'blocked', 'skipped', 'xpassed'].map((status) => ({
      name: `${status}: not_run`,
      coverages: [cov('a', 'c1')],
      latest: { c1: status },
      reason: 'not_run',
      ids: ['c1'],
    })),
    ...['failure', 'error'].map((status) => ({
      name: `${status}: failing`,
      coverages: [cov('a', 'c1'), cov('a', 'c2')],
      latest: { c1: 'passed', c2: status },
      reason: 'failing',
      ids: ['c2'],
    })),
    {
      name: 'failing wins over not_run; only the failing cases are listed',
      coverages: [cov('a', 'c3'), cov('a', 'c1'), cov('a', 'c2')],
      latest: { c1: 'failure', c3: 'error' },
      reason: 'failing',
      ids: ['c1', 'c3'],
    },
    ...['passed', 'xfailed'].map((status) => ({
      name: `${status}: passing`,
      coverages: [cov('a', 'c1')],
      latest: { c1: status },
      reason: null,
    })),
  ];

  it.each(cases)('$name', ({ coverages, latest, reason, ids }) => {
    const result = evaluateReadiness([A], coverages, new Map(Object.entries(latest)), 'high');
    expect(result.counts.components).toBe(1);
    if (reason === null) {
      expect(result).toEqual({
        verdict: 'ready',
        counts: { components: 1, uncovered: 0, failing: 0, not_run: 0, passing: 1 },
        blockers: [],
      });
    } else {
      expect(result.verdict).toBe('not_ready');
      expect(result.counts[reason as 'uncovered']).toBe(1);
      expect(result.blockers).toEqual([
        {
          component_id: 'a',
          component_name: 'a',
          risk_level: 'high',
          risk_score: 60,
          reason,
          test_case_ids: ids,
        },
      ]);
    }
  });

  it('leaves out components below the minimum level and sorts blockers by risk score', () => {
    const result = evaluateReadiness(
      [
        comp('low', 'low', 5),
        comp('h1', 'high', 55, 'Beta'),
        comp('c', 'critical', 90),
        comp('h2', 'high', 55, 'alpha'),
      ],
      [],
      new Map(),
      'high',
    );
    expect(result.counts).toEqual({
      components: 3,
      uncovered: 3,
      failing: 0,
      not_run: 0,
      passing: 0,
    });
    expect(result.blockers.map((b) => b.component_id)).toEqual(['c', 'h2', 'h1']);
  });

  it('no component at or above the level: ready', () => {
    expect(evaluateReadiness([comp('m', 'medium', 30)], [], new Map(), 'high')).toEqual({
      verdict: 'ready',
      counts: { components: 0, uncovered: 0, failing: 0, not_run: 0, passing: 0 },
      blockers: [],
    });
  });
});

describe('readsRunsByKey', () => {
  it.each([
    [0, 0, true],
    [0, 10, true],
    [1, 3, false],
    [1, RUNS_PER_ITEM_BY_KEY, true],
    [25, 100, true],
    [26, 100, false],
    [82, 90_102, true],
    [10_757, 90_102, true],
    [30_000, 90_102, false],
    [3, 3, false],
  ])('%i items beside %i runs: by key %s', (items, runs, want) => {
    expect(readsRunsByKey(items, runs)).toBe(want);
  });
});
