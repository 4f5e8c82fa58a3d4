/**
 * Flip counting of a case's history (issue #17 §3) and the flaky ranking (§4). Pure.
 *
 * - A *flip* is a change between passing (passed, xfailed) and failing (failure, error) from one
 *   run to the next; results with any other status are skipped over.
 * - `flip_rate = flips / (results_with_pass_or_fail - 1)`, 0 below two such results.
 * - `flaky_attempts`: results (a case in one run) an import marked flaky (passed after failed
 *   attempts).
 */
import { isFailing, isPassing } from './change-class';

/** Default and largest number of runs the stats look at. */
export const STATS_WINDOW_DEFAULT = 30;
export const STATS_WINDOW_MAX = 200;
/** Default least number of pass-or-fail results for a case to be listed as flaky. */
export const FLAKY_MIN_RUNS_DEFAULT = 5;

/** A case's result in one run of the window. */
export interface WindowResult {
  run_id: string;
  status: string;
  /** An import marked this result flaky (a row of it passed after failed attempts). */
  flaky: boolean;
}

export interface CaseStats {
  runs: number;
  passed: number;
  failing: number;
  flips: number;
  flip_rate: number;
  flaky_attempts: number;
  last_status: string | null;
  last_failure_run_id: string | null;
}

/** Number of passing↔failing changes in a sequence of statuses (in run order, either direction). */
export function countFlips(statuses: readonly string[]): number {
  let flips = 0;
  let previous: boolean | null = null;
  for (const status of statuses) {
    const failing = isFailing(status);
    if (!failing && !isPassing(status)) continue;
    if (previous !== null && previous !== failing) flips++;
    previous = failing;
  }
  return flips;
}

/** `flips / (passOrFail - 1)`, 0 below two pass-or-fail results. */
export function flipRate(flips: number, passOrFail: number): number {
  return passOrFail < 2 ? 0 : flips / (passOrFail - 1);
}

/** The stats of a window of results, newest first. */
export function caseStats(newestFirst: readonly WindowResult[]): CaseStats {
  const statuses = newestFirst.map((r) => r.status);
  const passed = statuses.filter(isPassing).length;
  const failing = statuses.filter(isFailing).length;
  const flips = countFlips(statuses);
  return {
    runs: newestFirst.length,
    passed,
    failing,
    flips,
    flip_rate: flipRate(flips, passed + failing),
    flaky_attempts: newestFirst.filter((r) => r.flaky).length,
    last_status: newestFirst[0]?.status ?? null,
    last_failure_run_id: newestFirst.find((r) => isFailing(r.status))?.run_id ?? null,
  };
}

/**
 * One letter per run item status: how the flaky list's SQL hands a case's window to
 * {@link windowFromLetters} (one letter per run, newest first; upper case: marked flaky).
 */
export const STATUS_LETTERS: Readonly<Record<string, string>> = {
  passed: 'p',
  xfailed: 'x',
  failure: 'f',
  error: 'e',
  skipped: 's',
  blocked: 'b',
  xpassed: 'y',
  untested: 'u',
  in_progress: 'i',
};

const STATUS_OF_LETTER = new Map(Object.entries(STATUS_LETTERS).map(([s, l]) => [l, s]));

/**
 * The window a letter string stands for, newest first. Run ids are not in the string: every result
 * gets `newestFailingRunId` when it is failing (only the first failing one is ever read, as
 * `last_failure_run_id`), else an empty id.
 */
export function windowFromLetters(
  letters: string,
  newestFailingRunId: string | null,
): WindowResult[] {
  return [...letters].map((letter) => {
    const status = STATUS_OF_LETTER.get(letter.toLowerCase());
    if (status === undefined) throw new Error(`unknown status letter ${letter}`);
    return {
      run_id: isFailing(status) ? (newestFailingRunId ?? '') : '',
      status,
      flaky: letter !== letter.toLowerCase(),
    };
  });
}

/** Outcome of a letter's status: failing, passing or neither. */
const FAILING_OUTCOME = 1;
const PASSING_OUTCOME = 2;
const OTHER_OUTCOME = 3;
/**
 * Per character code, the outcome of the status of that letter ({@link STATUS_LETTERS}, either
 * case), 0 for a character that is no letter: a table, so the flaky ranking reads thousands of
 * windows without a lookup by string per run.
 */
const OUTCOME_OF_CODE = new Uint8Array(128);
for (const [letter, status] of STATUS_OF_LETTER) {
  const outcome = isFailing(status)
    ? FAILING_OUTCOME
    : isPassing(status)
      ? PASSING_OUTCOME
      : OTHER_OUTCOME;
  OUTCOME_OF_CODE[letter.charCodeAt(0)] = outcome;
  OUTCOME_OF_CODE[letter.toUpperCase().charCodeAt(0)] = outcome;
}
const outcomeOf = (letters: string, i: number): number => {
  const code = letters.charCodeAt(i);
  const outcome = code < 128 ? OUTCOME_OF_CODE[code] : 0;
  if (outcome === 0) throw new Error(`unknown status letter ${letters[i]}`);
  return outcome;
};
/** Upper case letters are below `a`: the mark of a result flaky. */
const LOWER_A = 'a'.charCodeAt(0);

/**
 * {@link caseStats} of the window a letter string stands for (one letter per run, newest first,
 * upper case: marked flaky), read straight from the letters (the flaky list ranks thousands of
 * windows: no object per run). Run ids are not in the string: `last_failure_run_id` is null
 * ({@link lastFailureRunId} gives it from a window's run ids).
 */
export function statsFromLetters(letters: string): CaseStats {
  let passed = 0;
  let failing = 0;
  let flips = 0;
  let flaky = 0;
  let previous = 0;
  for (let i = 0; i < letters.length; i++) {
    const outcome = outcomeOf(letters, i);
    if (letters.charCodeAt(i) < LOWER_A) flaky++;
    if (outcome === OTHER_OUTCOME) continue;
    if (outcome === FAILING_OUTCOME) failing++;
    else passed++;
    if (previous !== 0 && previous !== outcome) flips++;
    previous = outcome;
  }
  return {
    runs: letters.length,
    passed,
    failing,
    flips,
    flip_rate: flipRate(flips, passed + failing),
    flaky_attempts: flaky,
    last_status:
      letters.length === 0 ? null : (STATUS_OF_LETTER.get(letters[0].toLowerCase()) ?? null),
    last_failure_run_id: null,
  };
}

/** The newest failing run of a window: its letters and its run ids (same order, newest first). */
export function lastFailureRunId(letters: string, runIds: readonly string[]): string | null {
  for (let i = 0; i < letters.length; i++) {
    if (outcomeOf(letters, i) === FAILING_OUTCOME) return runIds[i] ?? null;
  }
  return null;
}

/** A run of a flaky case's window as the list answers it (`recent`). */
export interface RecentResult {
  run_id: string;
  status: string;
}

/**
 * A window's `recent` entries, newest first: its letters ({@link STATUS_LETTERS}, the flaky mark
 * dropped) with the run ids `runIds` (same order, one per letter).
 */
export function recentFromLetters(letters: string, runIds: readonly string[]): RecentResult[] {
  if (runIds.length !== letters.length) {
    throw new Error(`${letters.length} status letters but ${runIds.length} run ids`);
  }
  return [...letters].map((letter, i) => {
    const status = STATUS_OF_LETTER.get(letter.toLowerCase());
    if (status === undefined) throw new Error(`unknown status letter ${letter}`);
    return { run_id: runIds[i], status };
  });
}

/**
 * The run ids of a window as the flaky list's SQL hands them: the uuids' 16 bytes each, one after
 * the other, in base64 (22 characters a run instead of 37 as text with a comma; line breaks are
 * skipped).
 */
export function runIdsFromBase64(encoded: string): string[] {
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length % 16 !== 0) throw new Error(`${bytes.length} bytes are not whole uuids`);
  const ids: string[] = [];
  for (let at = 0; at < bytes.length; at += 16) {
    const h = bytes.toString('hex', at, at + 16);
    ids.push(
      `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`,
    );
  }
  return ids;
}

/** A case's stats as the flaky list ranks them. */
export interface FlakyCandidate extends CaseStats {
  test_case_id: string;
  title: string;
}

/** Listed as flaky: at least `minRuns` pass-or-fail results and a score above zero. */
export function isFlaky(stats: CaseStats, minRuns: number): boolean {
  return (
    stats.passed + stats.failing >= minRuns && (stats.flip_rate > 0 || stats.flaky_attempts > 0)
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The flaky list's order: flip_rate descending, then flaky_attempts descending, then flips
 * descending, then title (case-insensitive) and test case id ascending (a total order).
 */
export function compareFlaky(a: FlakyCandidate, b: FlakyCandidate): number {
  return (
    b.flip_rate - a.flip_rate ||
    b.flaky_attempts - a.flaky_attempts ||
    b.flips - a.flips ||
    compareText(a.title.toLowerCase(), b.title.toLowerCase()) ||
    compareText(a.test_case_id, b.test_case_id)
  );
}

/** The flaky cases of a set of candidates, ranked. */
export function rankFlaky<T extends FlakyCandidate>(
  candidates: readonly T[],
  minRuns: number,
): T[] {
  // compareFlaky's order, with each title lowered once rather than at every comparison.
  return candidates
    .filter((c) => isFlaky(c, minRuns))
    .map((c) => ({ c, title: c.title.toLowerCase() }))
    .sort(
      (a, b) =>
        b.c.flip_rate - a.c.flip_rate ||
        b.c.flaky_attempts - a.c.flaky_attempts ||
        b.c.flips - a.c.flips ||
        compareText(a.title, b.title) ||
        compareText(a.c.test_case_id, b.c.test_case_id),
    )
    .map((x) => x.c);
}
