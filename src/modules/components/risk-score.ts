/**
 * Component risk: weighted sum of six 0..5 factors scaled to an integer 0..100 and a level
 * (reference products-auth-errors.md §8.1–8.2, CONTRACT §9).
 */

/** Risk levels, lowest to highest. */
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Rank of each level (low 1 … critical 4), used for "at least this level" comparisons. */
export const RISK_LEVEL_RANK: Readonly<Record<RiskLevel, number>> = {
  low: 1,
  medium: 2,
  high: 3,
  critical: 4,
};

/** Type guard for a risk level string. */
export function isRiskLevel(value: unknown): value is RiskLevel {
  return typeof value === 'string' && (RISK_LEVELS as readonly string[]).includes(value);
}

/** The six risk factor fields of a component. */
export const RISK_FACTOR_KEYS = [
  'business_criticality',
  'change_frequency',
  'integration_complexity',
  'defect_density',
  'production_incident_score',
  'automation_confidence',
] as const;
export type RiskFactorKey = (typeof RISK_FACTOR_KEYS)[number];
export type RiskFactors = Record<RiskFactorKey, number>;

/** Inclusive bounds of every factor. */
export const RISK_FACTOR_MIN = 0;
export const RISK_FACTOR_MAX = 5;

/** Factor values of a new component when not given (high automation confidence = low risk). */
export const DEFAULT_RISK_FACTORS: Readonly<RiskFactors> = {
  business_criticality: 0,
  change_frequency: 0,
  integration_complexity: 0,
  defect_density: 0,
  production_incident_score: 0,
  automation_confidence: 5,
};

/** Weight of each factor. `automation_confidence` is inverted: it contributes `5 − value`. */
export const RISK_WEIGHTS: Readonly<RiskFactors> = {
  business_criticality: 3,
  change_frequency: 2,
  integration_complexity: 2,
  defect_density: 2,
  production_incident_score: 3,
  automation_confidence: 1,
};

/** Largest possible weighted sum (every factor at its riskiest value): 65. */
export const MAX_WEIGHTED_RISK = 65;

/** Lowest score of each level above `low` (score ≤ 24 low, 25..49 medium, 50..74 high, ≥ 75 critical). */
export const RISK_LEVEL_MIN_SCORE: Readonly<Record<RiskLevel, number>> = {
  low: 0,
  medium: 25,
  high: 50,
  critical: 75,
};

export interface RiskAssessment {
  /** Integer 0..100. */
  risk_score: number;
  risk_level: RiskLevel;
}

export interface RiskValidationFailure {
  ok: false;
  code: 'validation_error';
  detail: string;
  errors: Record<string, string[]>;
}

/** Message used for an out-of-range factor (same text as the reference, without pydantic prefix). */
export const RISK_FACTOR_RANGE_MESSAGE = 'risk factors must be between 0 and 5';

/** True when `value` is an integer within 0..5. */
export function isValidRiskFactor(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= RISK_FACTOR_MIN &&
    value <= RISK_FACTOR_MAX
  );
}

/**
 * Checks the factors present in `factors` (absent keys are fine; `null` is not, CONTRACT §2).
 * Returns a `validation_error` keyed by factor name, or `null`.
 */
export function validateRiskFactors(
  factors: Partial<Record<RiskFactorKey, number | null>>,
): RiskValidationFailure | null {
  const errors: Record<string, string[]> = {};
  for (const key of RISK_FACTOR_KEYS) {
    if (!(key in factors) || factors[key] === undefined) continue;
    if (!isValidRiskFactor(factors[key])) errors[key] = [RISK_FACTOR_RANGE_MESSAGE];
  }
  if (Object.keys(errors).length === 0) return null;
  return { ok: false, code: 'validation_error', detail: 'Request contains invalid fields', errors };
}

/** Complete factors: `patch` values over `base` (defaults when omitted); `undefined` is ignored. */
export function mergeRiskFactors(
  patch: Partial<RiskFactors>,
  base: RiskFactors = DEFAULT_RISK_FACTORS,
): RiskFactors {
  const result = { ...base };
  for (const key of RISK_FACTOR_KEYS) {
    const value = patch[key];
    if (value !== undefined) result[key] = value;
  }
  return result;
}

/**
 * Weighted sum 0..65: 3·bc + 2·cf + 2·ic + 2·dd + 3·pis + 1·(5 − ac).
 * Throws a `RangeError` for a factor outside 0..5 (a programming error: validate input first).
 */
export function computeWeightedRisk(factors: RiskFactors): number {
  let weighted = 0;
  for (const key of RISK_FACTOR_KEYS) {
    const value = factors[key];
    if (!isValidRiskFactor(value)) {
      throw new RangeError(`${key} must be an integer between 0 and 5, got ${String(value)}`);
    }
    const contribution = key === 'automation_confidence' ? RISK_FACTOR_MAX - value : value;
    weighted += RISK_WEIGHTS[key] * contribution;
  }
  return weighted;
}

/** Level of a 0..100 score: ≤ 24 low, 25..49 medium, 50..74 high, ≥ 75 critical. */
export function riskLevelForScore(score: number): RiskLevel {
  if (score >= RISK_LEVEL_MIN_SCORE.critical) return 'critical';
  if (score >= RISK_LEVEL_MIN_SCORE.high) return 'high';
  if (score >= RISK_LEVEL_MIN_SCORE.medium) return 'medium';
  return 'low';
}

/**
 * Risk score and level of a component: `round(weighted / 65 × 100)` as an integer 0..100.
 * weighted×100/65 = weighted×20/13 is never exactly x.5, so the rounding mode does not matter.
 */
export function computeRisk(factors: RiskFactors): RiskAssessment {
  const weighted = computeWeightedRisk(factors);
  const riskScore = Math.round((weighted * 100) / MAX_WEIGHTED_RISK);
  return { risk_score: riskScore, risk_level: riskLevelForScore(riskScore) };
}

/** Orders levels: negative when `a` is lower than `b`, 0 when equal, positive when higher. */
export function compareRiskLevels(a: RiskLevel, b: RiskLevel): number {
  return RISK_LEVEL_RANK[a] - RISK_LEVEL_RANK[b];
}

/** True when `level` is `minimum` or higher. */
export function isRiskLevelAtLeast(level: RiskLevel, minimum: RiskLevel): boolean {
  return compareRiskLevels(level, minimum) >= 0;
}
