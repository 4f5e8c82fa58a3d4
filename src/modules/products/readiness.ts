/**
 * Release readiness of a product (issue #17 §5): pure rules, no NestJS, no database.
 *
 * For each linked component at or above the minimum risk level, its mandatory covering cases (the
 * coverage rules of the product summary: `is_mandatory_for_release` coverages by **active** test
 * cases) and each case's latest result decide its class, in this order:
 * - `uncovered`: no mandatory covering case;
 * - `failing`: the latest result of at least one of them is failing (`failure`, `error`);
 * - `not_run`: otherwise, at least one has no passing latest result (no result at all, or
 *   `untested`, `in_progress`, `blocked`, `skipped`, `xpassed`);
 * - `passing`: every one passed (`passed`, `xfailed`).
 * Every class but `passing` is a blocker; the product is `ready` exactly when there is none.
 */
import { RISK_LEVEL_RANK, RiskLevel } from '../components/risk-score';
import type { SummaryComponent, SummaryCoverage } from './coverage';

/** The default `min_risk_level`. */
export const DEFAULT_MIN_RISK_LEVEL: RiskLevel = 'high';

/** Results that fail a case. */
export const READINESS_FAILING_STATUSES: readonly string[] = ['failure', 'error'];
/** Results that pass a case; anything else (or no result) is `not_run`. */
export const READINESS_PASSING_STATUSES: readonly string[] = ['passed', 'xfailed'];

export type BlockerReason = 'uncovered' | 'failing' | 'not_run';
export type ReadinessVerdict = 'ready' | 'not_ready';

export interface ReadinessBlocker {
  component_id: string;
  component_name: string;
  risk_level: RiskLevel;
  risk_score: number;
  reason: BlockerReason;
  /** The cases behind the reason (failing ones, or not-run ones; none when uncovered), sorted. */
  test_case_ids: string[];
}

export interface ReadinessCounts {
  components: number;
  uncovered: number;
  failing: number;
  not_run: number;
  passing: number;
}

export interface ReadinessEvaluation {
  verdict: ReadinessVerdict;
  counts: ReadinessCounts;
  blockers: ReadinessBlocker[];
}

/** True when `level` is at or above `min`. */
export function atLeastRiskLevel(level: RiskLevel, min: RiskLevel): boolean {
  return RISK_LEVEL_RANK[level] >= RISK_LEVEL_RANK[min];
}

/**
 * Evaluates the components (all linked ones; those below `minLevel` are left out here) against
 * their coverages (all active coverages; non-mandatory ones are ignored here) and the latest
 * status of each case (absent: never run under the criteria). Blockers are sorted by risk score
 * (highest first), then component name and id.
 */
export function evaluateReadiness(
  components: readonly SummaryComponent[],
  coverages: readonly SummaryCoverage[],
  latestStatus: ReadonlyMap<string, string>,
  minLevel: RiskLevel,
): ReadinessEvaluation {
  const mandatory = new Map<string, Set<string>>();
  for (const c of coverages) {
    if (!c.is_mandatory_for_release) continue;
    if (c.test_case_status !== undefined && c.test_case_status !== 'active') continue;
    let cases = mandatory.get(c.component_id);
    if (!cases) mandatory.set(c.component_id, (cases = new Set()));
    cases.add(c.test_case_id);
  }

  const counts: ReadinessCounts = {
    components: 0,
    uncovered: 0,
    failing: 0,
    not_run: 0,
    passing: 0,
  };
  const blockers: ReadinessBlocker[] = [];
  for (const component of components) {
    if (!atLeastRiskLevel(component.risk_level, minLevel)) continue;
    counts.components += 1;
    const cases = [...(mandatory.get(component.component_id) ?? [])].sort(compareText);
    const failing = cases.filter((id) =>
      READINESS_FAILING_STATUSES.includes(latestStatus.get(id) ?? ''),
    );
    const notRun = cases.filter(
      (id) => !READINESS_PASSING_STATUSES.includes(latestStatus.get(id) ?? ''),
    );
    const [reason, ids]: [BlockerReason | 'passing', string[]] =
      cases.length === 0
        ? ['uncovered', []]
        : failing.length > 0
          ? ['failing', failing]
          : notRun.length > 0
            ? ['not_run', notRun]
            : ['passing', []];
    counts[reason] += 1;
    if (reason === 'passing') continue;
    blockers.push({
      component_id: component.component_id,
      component_name: component.component_name,
      risk_level: component.risk_level,
      risk_score: component.risk_score,
      reason,
      test_case_ids: ids,
    });
  }
  blockers.sort(
    (a, b) =>
      b.risk_score - a.risk_score ||
      compareText(a.component_name.toLowerCase(), b.component_name.toLowerCase()) ||
      compareText(a.component_id, b.component_id),
  );
  return { verdict: blockers.length === 0 ? 'ready' : 'not_ready', counts, blockers };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * How the latest results are read (a plan choice, never a different answer). Reading each item's
 * run by its key costs about four times a run of the project scanned for a hash join (measured at
 * bench scale: 3.4 µs an item against 0.7–0.9 µs a run), so it is chosen while the cases have at
 * most a quarter as many items as the project has runs. PostgreSQL's own choice rests on its
 * sampled count of distinct cases among the items, which on a large table can be several times
 * too low (3,400 for 13,134 at bench scale): it then expects hundreds of items a case where there
 * are a few and hashes every run of the project (100 ms instead of 1 ms).
 */
export const RUNS_PER_ITEM_BY_KEY = 4;

/**
 * True when the cases' `items` are few enough beside the project's non-archived `runs` to read each
 * item's run by key. (The repository counts items only up to `runs / RUNS_PER_ITEM_BY_KEY + 1`, the
 * first count that answers false.) With an `environment_id` or `build` the runs are found through
 * their indexes first and PostgreSQL's plan stays: the caller asks only without them.
 */
export function readsRunsByKey(items: number, runs: number): boolean {
  return items * RUNS_PER_ITEM_BY_KEY <= runs;
}
