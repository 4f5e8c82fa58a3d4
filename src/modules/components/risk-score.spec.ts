import {
  DEFAULT_RISK_FACTORS,
  RISK_FACTOR_KEYS,
  RISK_LEVELS,
  RiskFactors,
  RiskLevel,
  compareRiskLevels,
  computeRisk,
  computeWeightedRisk,
  isRiskLevel,
  isRiskLevelAtLeast,
  mergeRiskFactors,
  riskLevelForScore,
  validateRiskFactors,
} from './risk-score';

type Tuple = [number, number, number, number, number, number];

/** (bc, cf, ic, dd, pis, ac) → factors. */
function f([bc, cf, ic, dd, pis, ac]: Tuple): RiskFactors {
  return {
    business_criticality: bc,
    change_frequency: cf,
    integration_complexity: ic,
    defect_density: dd,
    production_incident_score: pis,
    automation_confidence: ac,
  };
}

describe('computeRisk: worked examples of the reference (§8.2)', () => {
  it.each<[Tuple, number, number, RiskLevel]>([
    [[0, 0, 0, 0, 0, 5], 0, 0, 'low'],
    [[5, 4, 4, 3, 4, 1], 53, 82, 'critical'],
    [[4, 0, 0, 0, 4, 5], 24, 37, 'medium'],
    [[5, 0, 0, 0, 5, 5], 30, 46, 'medium'],
    [[5, 4, 4, 4, 5, 1], 58, 89, 'critical'],
    [[0, 0, 0, 0, 0, 0], 5, 8, 'low'],
  ])('%j → weighted %d, score %d, %s', (factors, weighted, score, level) => {
    expect(computeWeightedRisk(f(factors))).toBe(weighted);
    expect(computeRisk(f(factors))).toEqual({ risk_score: score, risk_level: level });
  });

  it('defaults are the all-zero / full-confidence component', () => {
    expect(computeRisk(DEFAULT_RISK_FACTORS)).toEqual({ risk_score: 0, risk_level: 'low' });
  });
});

describe('computeRisk: boundaries between levels', () => {
  it.each<[Tuple, number, number, RiskLevel]>([
    [[5, 0, 0, 0, 0, 5], 15, 23, 'low'],
    [[5, 0, 0, 0, 0, 4], 16, 25, 'medium'],
    [[5, 0, 0, 0, 5, 3], 32, 49, 'medium'],
    [[5, 0, 0, 0, 5, 2], 33, 51, 'high'],
    [[5, 5, 4, 0, 5, 5], 48, 74, 'high'],
    [[5, 5, 4, 0, 5, 4], 49, 75, 'critical'],
    [[5, 5, 5, 5, 5, 0], 65, 100, 'critical'],
    [[0, 0, 0, 0, 0, 4], 1, 2, 'low'],
    [[1, 0, 0, 0, 0, 5], 3, 5, 'low'],
  ])('%j → weighted %d, score %d, %s', (factors, weighted, score, level) => {
    expect(computeWeightedRisk(f(factors))).toBe(weighted);
    expect(computeRisk(f(factors))).toEqual({ risk_score: score, risk_level: level });
  });

  it.each<[number, RiskLevel]>([
    [0, 'low'],
    [24, 'low'],
    [25, 'medium'],
    [49, 'medium'],
    [50, 'high'],
    [74, 'high'],
    [75, 'critical'],
    [100, 'critical'],
  ])('riskLevelForScore(%d) = %s', (score, level) => {
    expect(riskLevelForScore(score)).toBe(level);
  });

  it('every one of the 46,656 factor combinations gives an integer 0..100 with the right level', () => {
    const levelOfWeighted = (w: number): RiskLevel =>
      w <= 15 ? 'low' : w <= 32 ? 'medium' : w <= 48 ? 'high' : 'critical';
    let count = 0;
    const mismatches: string[] = [];
    const values = [0, 1, 2, 3, 4, 5];
    for (const bc of values)
      for (const cf of values)
        for (const ic of values)
          for (const dd of values)
            for (const pis of values)
              for (const ac of values) {
                const weighted = 3 * bc + 2 * cf + 2 * ic + 2 * dd + 3 * pis + (5 - ac);
                const { risk_score, risk_level } = computeRisk(f([bc, cf, ic, dd, pis, ac]));
                const ok =
                  Number.isInteger(risk_score) &&
                  risk_score === Math.round((weighted / 65) * 100) &&
                  risk_score >= 0 &&
                  risk_score <= 100 &&
                  risk_level === levelOfWeighted(weighted);
                if (!ok)
                  mismatches.push(`${bc}${cf}${ic}${dd}${pis}${ac}: ${risk_score} ${risk_level}`);
                count++;
              }
    expect(mismatches).toEqual([]);
    expect(count).toBe(46656);
  });
});

describe('factor validation', () => {
  it.each<[string, Partial<Record<string, number | null>>, string[]]>([
    ['all valid', f([0, 1, 2, 3, 4, 5]), []],
    ['empty patch', {}, []],
    ['above 5', { change_frequency: 6 }, ['change_frequency']],
    ['below 0', { defect_density: -1 }, ['defect_density']],
    ['fraction', { business_criticality: 2.5 }, ['business_criticality']],
    ['null', { automation_confidence: null }, ['automation_confidence']],
    ['NaN', { integration_complexity: Number.NaN }, ['integration_complexity']],
    [
      'several',
      { business_criticality: 9, production_incident_score: -2, change_frequency: 3 },
      ['business_criticality', 'production_incident_score'],
    ],
  ])('%s', (_label, factors, invalid) => {
    const result = validateRiskFactors(factors);
    if (invalid.length === 0) {
      expect(result).toBeNull();
    } else {
      expect(result).toMatchObject({ ok: false, code: 'validation_error' });
      expect(Object.keys(result?.errors ?? {}).sort()).toEqual([...invalid].sort());
      for (const key of invalid) {
        expect(result?.errors[key]).toEqual(['risk factors must be between 0 and 5']);
      }
    }
  });

  it.each<[string, Partial<RiskFactors>]>([
    ['6', { business_criticality: 6 }],
    ['-1', { automation_confidence: -1 }],
    ['1.5', { defect_density: 1.5 }],
  ])('computeRisk throws a RangeError for a factor of %s', (_label, bad) => {
    expect(() => computeRisk({ ...DEFAULT_RISK_FACTORS, ...bad })).toThrow(RangeError);
  });
});

describe('helpers', () => {
  it('mergeRiskFactors applies a partial patch over the defaults or a base', () => {
    expect(mergeRiskFactors({ business_criticality: 4 })).toEqual({
      ...DEFAULT_RISK_FACTORS,
      business_criticality: 4,
    });
    const base = f([1, 2, 3, 4, 5, 0]);
    expect(mergeRiskFactors({ automation_confidence: 5, defect_density: undefined }, base)).toEqual(
      f([1, 2, 3, 4, 5, 5]),
    );
    expect(RISK_FACTOR_KEYS).toHaveLength(6);
  });

  it.each<[RiskLevel, RiskLevel, boolean]>([
    ['low', 'low', true],
    ['low', 'medium', false],
    ['medium', 'low', true],
    ['high', 'critical', false],
    ['critical', 'high', true],
    ['critical', 'critical', true],
  ])('isRiskLevelAtLeast(%s, %s) = %s', (level, minimum, expected) => {
    expect(isRiskLevelAtLeast(level, minimum)).toBe(expected);
  });

  it('orders levels low < medium < high < critical', () => {
    const shuffled: RiskLevel[] = ['high', 'low', 'critical', 'medium'];
    expect([...shuffled].sort(compareRiskLevels)).toEqual([...RISK_LEVELS]);
    expect(isRiskLevel('high')).toBe(true);
    expect(isRiskLevel('severe')).toBe(false);
  });
});
