/**
 * Pure rules that match parsed JUnit results to test cases and plan the cases an import creates
 * (reference runs-imports-plans.md §4.6–4.8, CONTRACT §6). No I/O: the service loads the project's
 * candidate cases and suites with one query each and hands them here.
 *
 * Matching, first applicable rule per result:
 * 1. `automation_id` (the stable identity: `automation_id` property, else `<classname>.<name>`):
 *    exactly one active case with it → matched by automation_id; several → ambiguous.
 * 2. Non-empty suite path: active cases whose normalised suite path and normalised title equal the
 *    result's → one: matched by name; several: ambiguous.
 * 3. Normalised title over the whole project → one: matched by name; several: ambiguous; none:
 *    unmatched.
 *
 * Values are brought to what the database can store before they are compared, the same way they
 * are stored when a case is created (titles ≤ 500 characters, automation ids ≤ 255, suite names ≤
 * 255, suite trees ≤ 4 levels deep), so that a report imported twice matches what the first import
 * created.
 */
import type { JunitResult } from './junit/dialects';
import { normalizeSuitePath, normalizeTitle, stringOfCodes } from './junit/dialects';
import { DEFAULT_MAX_TEXT_CHARS, DEFAULT_MAX_TOTAL_TEXT_CHARS } from './junit/junit-parser';
import { storageAutomationId, storageSuitePath, storageTitle } from './storage-form';

export {
  FOLDED_SUITE_SEPARATOR,
  MAX_AUTOMATION_ID_CHARS,
  MAX_SUITE_DEPTH,
  MAX_SUITE_NAME_CHARS,
  MAX_TITLE_CHARS,
  clipText,
  storageAutomationId,
  storageSuitePath,
  storageTitle,
} from './storage-form';

/** Fixed reasons of the issue lists (reference §8, compared verbatim). */
export const REASONS = {
  noCase: 'no matching test case found',
  ambiguousAutomationId: 'multiple test cases matched by automation_id',
  ambiguousSuiteAndName: 'multiple test cases matched by suite and name',
  ambiguousName: 'multiple test cases matched by name',
  noRunItem: 'no matching run item found',
  ambiguousRunItemAutomationId: 'multiple run items matched by automation_id',
  ambiguousRunItemName: 'multiple run items matched by name',
  notInRun: 'matching test case is not part of the target run',
  /** Reference §4.9's "matched test case disappeared": deleted or archived while the import ran. */
  caseGone: 'matched test case was deleted or archived while the import ran',
  automationIdTaken:
    'automation_id is already used by a draft or archived test case of the project',
  /** Warnings (issue #22): a testcase without a name is imported under a generated one. */
  nameless: 'testcase without a name: imported under a generated name',
  truncated: `text cut at the size limit (${DEFAULT_MAX_TEXT_CHARS} characters per text, ${DEFAULT_MAX_TOTAL_TEXT_CHARS} per report): the stored text ends with a [truncated: …] note`,
} as const;

/** What matching needs of a project's test case. */
export interface CandidateCase {
  id: string;
  title: string;
  automation_id: string | null;
  suite_id: string | null;
  status: string;
}

export interface SuiteRow {
  id: string;
  parent_id: string | null;
  name: string;
}

/** The parts of a parsed result that matching looks at. */
export type MatchableResult = Pick<JunitResult, 'title' | 'suite_path' | 'automation_id'>;

export type MatchKind = 'automation_id' | 'name';

export type MatchOutcome =
  | { type: 'matched'; caseId: string; by: MatchKind }
  | { type: 'ambiguous'; reason: string; by: MatchKind }
  | { type: 'unmatched'; reason: string };

/** Chain of suite names from the root to `suiteId` (empty for no suite; cycles are cut). */
export function suitePathOf(
  suiteId: string | null,
  suites: ReadonlyMap<string, SuiteRow>,
): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  let current = suiteId === null ? undefined : suites.get(suiteId);
  while (current !== undefined && !seen.has(current.id)) {
    seen.add(current.id);
    names.unshift(current.name);
    current = current.parent_id === null ? undefined : suites.get(current.parent_id);
  }
  return names;
}

/**
 * `JSON.stringify([normalizeSuitePath(path), t])` is this head followed by `,JSON.stringify(t)]`;
 * null when the normalised path is empty (rule 2 does not apply).
 */
function keyHeadOf(path: readonly string[]): string | null {
  const normalized = normalizeSuitePath(path);
  return normalized.length > 0 ? `[${JSON.stringify(normalized)}` : null;
}

/** A parsed suite path in the forms matching compares (computed once per path array). */
export interface PathForms {
  /** As stored ({@link storageSuitePath}). */
  stored: string[];
  /** Whether the normalised stored path has a segment (rule 2 applies). */
  normalized: boolean;
  /** `JSON.stringify([normalised path, t])` is this followed by `,JSON.stringify(t)]`. */
  keyHead: string;
}

/**
 * The forms of a parsed result's suite path, memoised by the path array: the parsers give every
 * testcase of a suite the same array, so a report of 100,000 testcases in 1,000 suites normalises
 * 1,000 paths instead of 300,000 segments (the answer is the same as computing it each time).
 */
const pathForms = new WeakMap<readonly string[], PathForms>();

function formsOf(path: readonly string[]): PathForms {
  let forms = pathForms.get(path);
  if (forms === undefined) {
    const stored = storageSuitePath(path);
    const normalized = normalizeSuitePath(stored);
    forms = {
      stored,
      normalized: normalized.length > 0,
      keyHead: `[${JSON.stringify(normalized)}`,
    };
    pathForms.set(path, forms);
  }
  return forms;
}

/** `storageSuitePath(path)` of a parsed path, memoised by the array (shared: do not change it). */
export function storedSuitePathOf(path: readonly string[]): string[] {
  return formsOf(path).stored;
}

/** The byPathTitle key (`JSON.stringify([normalised path, normalised title])`) from a path's memoised forms. */
function formsKey(forms: PathForms, normalizedTitle: string): string {
  return `${forms.keyHead},${JSON.stringify(normalizedTitle)}]`;
}

/**
 * Case ids under one key: the id itself while there is one (most keys of a project), an array from
 * the second on — no array per case and key.
 */
type Ids = string | string[];

function push(map: Map<string, Ids>, key: string, id: string): void {
  const ids = map.get(key);
  if (ids === undefined) map.set(key, id);
  else if (typeof ids === 'string') map.set(key, [ids, id]);
  else ids.push(id);
}

/** Several cases under one key. */
const MANY = Symbol('many');

/** The one case under a key, null for none, or {@link MANY} (distinct ones when `distinct`). */
function verdict(ids: Ids | undefined, distinct: boolean): string | null | typeof MANY {
  if (ids === undefined) return null;
  if (typeof ids === 'string') return ids;
  if (!distinct) return MANY;
  const first = ids[0] as string;
  return ids.every((id) => id === first) ? first : MANY;
}

/** What matching compares of a result, computed once per result ({@link matchKeysOf}). */
export interface MatchKeys {
  /** The identity as stored ({@link storageAutomationId}), null without one. */
  automationId: string | null;
  /** The normalised title as stored. */
  title: string;
  forms: PathForms;
}

export function matchKeysOf(result: MatchableResult): MatchKeys {
  return {
    automationId: result.automation_id === null ? null : storageAutomationId(result.automation_id),
    title: normalizeTitle(storageTitle(result.title)),
    forms: formsOf(result.suite_path),
  };
}

/**
 * The characters a title probe keeps: ASCII lower-case letters and digits other than `t`, `e` and
 * `s` (the letters of the word `test`, which normalisation deletes only where it stands alone).
 */
const PROBE_KEPT = 'abcdfghijklmnopqruvwxyz0123456789';
const PROBE_KEEPS = new Uint8Array(128);
for (const c of PROBE_KEPT) PROBE_KEEPS[c.charCodeAt(0)] = 1;

/**
 * The title probe of a normalised title: a coarser key that the database computes from a stored
 * title (`test_case_title_probe(title)`, indexed with the project), so an import
 * reads only the cases whose probe is one of its results' instead of every case of the project.
 *
 * In SQL, an ASCII title's probe is its characters, upper case lowered, without those outside
 * {@link PROBE_KEPT}; a title with other characters has the probe `''`. For an ASCII title `x`
 * that equals `titleProbe(normalizeTitle(x))`: normalisation only lowers ASCII letters, turns
 * `_`/`-` into spaces, adds and collapses whitespace and deletes some `t`, `e`, `s` letters, all of
 * which the probe drops anyway. So two titles with the same normalised form have the same probe,
 * and a case the rules could match is never left out; `''` is always looked up, for the others.
 */
export function titleProbe(normalized: string): string {
  const kept: number[] = [];
  for (let i = 0; i < normalized.length; i++) {
    const code = normalized.charCodeAt(i);
    if (code < 128 && PROBE_KEEPS[code] === 1) kept.push(code);
  }
  // Made at once, flat: every probe of a report is put in a Set.
  return stringOfCodes(kept);
}

/** What the database is asked for: the cases under these automation ids or title probes. */
export interface CandidateFilter {
  automationIds: string[];
  titleProbes: string[];
}

/** The candidate filter of a report's wanted keys ({@link titleProbe}; `''` always included). */
export function candidateFilterOf(wanted: WantedKeys): CandidateFilter {
  const probes = new Set<string>(['']);
  for (const title of wanted.titles) probes.add(titleProbe(title));
  return { automationIds: [...wanted.automationIds], titleProbes: [...probes] };
}

/**
 * Whether an import reads its candidates by key ({@link CandidateFilter}, two index lookups per
 * key) rather than all of the project's cases (one sequential read). Measured on the embedded
 * PostgreSQL 18 (bench/README.md, fix 37): about 6.5 µs a key against 3 µs a case, so by key when
 * the keys are fewer than half the cases the project ever had (its key counter, an upper bound).
 */
export function readsByKeys(filter: CandidateFilter, casesEver: number): boolean {
  return Math.max(filter.automationIds.length, filter.titleProbes.length) * 2 < casesEver;
}

/** The keys a report's results look up: an index built for them keeps only the cases under them. */
export interface WantedKeys {
  automationIds: ReadonlySet<string>;
  titles: ReadonlySet<string>;
}

export function wantedKeysOf(keys: Iterable<MatchKeys>): WantedKeys {
  const automationIds = new Set<string>();
  const titles = new Set<string>();
  for (const k of keys) {
    if (k.automationId !== null) automationIds.add(k.automationId);
    titles.add(k.title);
  }
  return { automationIds, titles };
}

/**
 * Lookup tables over the project's active cases. Built with the {@link WantedKeys} of a report, it
 * holds only the cases a result of that report can find (every rule looks up one of the result's
 * own keys, so the answers for those results are the same as with every case): a report of 500
 * results in a project of 200,000 cases indexes a few hundred, not 200,000 (bench/README.md fix 34).
 */
export class MatchIndex {
  private readonly byAutomationId = new Map<string, Ids>();
  /**
   * Normalised suite path ({@link keyHeadOf}) → normalised title → ids: two lookups of strings
   * that are already hashed (a suite's head is shared by its cases, a title is also looked up in
   * `byTitle`) instead of one of a new concatenated key per case.
   */
  private readonly byPathTitle = new Map<string, Map<string, Ids>>();
  private readonly byTitle = new Map<string, Ids>();
  /** Automation ids held by cases that are not active (they cannot be matched nor reused). */
  private readonly inactiveAutomationIds = new Set<string>();

  constructor(
    cases: readonly CandidateCase[],
    suites: readonly SuiteRow[],
    private readonly wanted: WantedKeys | null = null,
  ) {
    const suiteMap = new Map(suites.map((suite) => [suite.id, suite]));
    // The cases of a suite share its path: normalised once per suite, not once per case.
    const heads = new Map<string | null, string | null>();
    for (const c of cases) {
      const automationId =
        c.automation_id !== null && this.wants(c.automation_id) ? c.automation_id : null;
      if (c.status !== 'active') {
        if (automationId !== null) this.inactiveAutomationIds.add(automationId);
        continue;
      }
      if (automationId !== null) push(this.byAutomationId, automationId, c.id);
      const title = normalizeTitle(c.title);
      if (wanted !== null && !wanted.titles.has(title)) continue;
      let head = heads.get(c.suite_id);
      if (head === undefined) {
        head = keyHeadOf(suitePathOf(c.suite_id, suiteMap));
        heads.set(c.suite_id, head);
      }
      this.addTitle(c.id, title, head);
    }
  }

  private wants(automationId: string): boolean {
    return this.wanted === null || this.wanted.automationIds.has(automationId);
  }

  /** Adds an active case (also used for cases created by the import being planned). */
  add(
    c: Pick<CandidateCase, 'id' | 'title' | 'automation_id'>,
    suitePath: readonly string[],
  ): void {
    if (c.automation_id !== null) push(this.byAutomationId, c.automation_id, c.id);
    this.addTitle(c.id, normalizeTitle(c.title), keyHeadOf(suitePath));
  }

  /** `title`: normalised; `head`: {@link keyHeadOf} the case's suite path. */
  private addTitle(id: string, title: string, head: string | null): void {
    if (head !== null) {
      let titles = this.byPathTitle.get(head);
      if (titles === undefined) this.byPathTitle.set(head, (titles = new Map()));
      push(titles, title, id);
    }
    push(this.byTitle, title, id);
  }

  /** Whether a case holds the automation id (one of the wanted ones, when built for a report). */
  isAutomationIdTaken(automationId: string): boolean {
    return this.inactiveAutomationIds.has(automationId) || this.byAutomationId.has(automationId);
  }

  /** Applies the three matching rules to one result. */
  match(result: MatchableResult): MatchOutcome {
    return this.matchKeys(matchKeysOf(result));
  }

  /** {@link match} of the result whose keys these are. */
  matchKeys({ automationId, title, forms }: MatchKeys): MatchOutcome {
    if (automationId !== null) {
      // Every case added under the id counts (one case added twice is ambiguous).
      const found = verdict(this.byAutomationId.get(automationId), false);
      if (found === MANY) {
        return { type: 'ambiguous', reason: REASONS.ambiguousAutomationId, by: 'automation_id' };
      }
      if (found !== null) return { type: 'matched', caseId: found, by: 'automation_id' };
    }
    if (forms.normalized) {
      const found = verdict(this.byPathTitle.get(forms.keyHead)?.get(title), true);
      if (found === MANY)
        return { type: 'ambiguous', reason: REASONS.ambiguousSuiteAndName, by: 'name' };
      if (found !== null) return { type: 'matched', caseId: found, by: 'name' };
    }
    const found = verdict(this.byTitle.get(title), true);
    if (found === MANY) return { type: 'ambiguous', reason: REASONS.ambiguousName, by: 'name' };
    if (found !== null) return { type: 'matched', caseId: found, by: 'name' };
    return { type: 'unmatched', reason: REASONS.noCase };
  }
}

/**
 * Issue reasons of a run-level import without case creation (reference §4.8): the report is matched
 * against the run, so "no test case" reads "no run item".
 */
export function runLevelReason(outcome: Exclude<MatchOutcome, { type: 'matched' }>): string {
  if (outcome.type === 'unmatched') return REASONS.noRunItem;
  return outcome.by === 'automation_id'
    ? REASONS.ambiguousRunItemAutomationId
    : REASONS.ambiguousRunItemName;
}

/** A case the import will create. */
export interface PlannedCase {
  /** Index of the first result that asked for it. */
  resultIndex: number;
  title: string;
  automation_id: string | null;
  /** Suite path as stored (≤ 4 levels). */
  suite_path: string[];
  steps: string | null;
  preconditions: string | null;
  assertions: string | null;
}

/**
 * Identity under which results of one import share a created case: the automation id, else the
 * normalised suite path and title.
 */
export function creationKey(result: MatchableResult): string {
  return creationKeyOf(matchKeysOf(result));
}

/** {@link creationKey} of the result whose keys these are. */
export function creationKeyOf(keys: MatchKeys): string {
  if (keys.automationId !== null) return `a:${keys.automationId}`;
  return `n:${formsKey(keys.forms, keys.title)}`;
}

/**
 * A map keyed by {@link creationKeyOf} that never builds the key: it holds the key's parts — the
 * automation id, or the suite path's {@link PathForms.keyHead} and the normalised title — which
 * matching has hashed already (the head is shared by a suite's results), where a key string would be
 * new, long and hashed once more for each result of a large import. `…Named` methods use the key
 * the result would have without automation id.
 */
export class CreationKeyMap<V> {
  private readonly byAutomationId = new Map<string, V>();
  private readonly byPathTitle = new Map<string, Map<string, V>>();

  get(keys: MatchKeys): V | undefined {
    return keys.automationId !== null
      ? this.byAutomationId.get(keys.automationId)
      : this.getNamed(keys);
  }

  set(keys: MatchKeys, value: V): void {
    if (keys.automationId !== null) this.byAutomationId.set(keys.automationId, value);
    else this.setNamed(keys, value);
  }

  getNamed(keys: MatchKeys): V | undefined {
    return this.byPathTitle.get(keys.forms.keyHead)?.get(keys.title);
  }

  hasNamed(keys: MatchKeys): boolean {
    return this.byPathTitle.get(keys.forms.keyHead)?.has(keys.title) ?? false;
  }

  setNamed(keys: MatchKeys, value: V): void {
    let titles = this.byPathTitle.get(keys.forms.keyHead);
    if (titles === undefined) this.byPathTitle.set(keys.forms.keyHead, (titles = new Map()));
    titles.set(keys.title, value);
  }
}

/** A new suite: its position in the list of planned suites and its parent (existing id or index). */
export interface PlannedSuite {
  name: string;
  parent: { existing: string } | { planned: number } | null;
  /** Full path of this suite (as stored). */
  path: string[];
}

/** Resolves suite paths against the existing tree, planning the suites that are missing. */
export class SuitePlanner {
  private readonly children = new Map<string, string>();
  readonly planned: PlannedSuite[] = [];
  private readonly plannedByPath = new Map<string, number>();
  /** Answers of {@link resolve} by path array (the plan passes the same array for a suite's cases). */
  private readonly resolved = new WeakMap<
    readonly string[],
    { existing: string } | { planned: number } | null
  >();

  /** Names of the existing suites by id. */
  private readonly names = new Map<string, string>();

  constructor(suites: readonly SuiteRow[]) {
    // Exact name under the same parent; the oldest suite wins when names repeat (input order).
    for (const suite of suites) {
      this.names.set(suite.id, suite.name);
      const key = JSON.stringify([suite.parent_id, suite.name]);
      if (!this.children.has(key)) this.children.set(key, suite.id);
    }
  }

  /** The name of a suite that {@link resolve} answered (existing or planned), null for none. */
  nameOf(suite: { existing: string } | { planned: number } | null): string | null {
    if (suite === null) return null;
    if ('existing' in suite) return this.names.get(suite.existing) ?? null;
    return this.planned[suite.planned]?.name ?? null;
  }

  /**
   * The existing suite id, or the planned suite index, at the end of `path` (already as stored).
   * Null for an empty path.
   */
  resolve(path: readonly string[]): { existing: string } | { planned: number } | null {
    // Resolving a path again gives the same answer (its missing suites are planned the first time).
    const known = this.resolved.get(path);
    if (known !== undefined) return known;
    const found = this.resolveOnce(path);
    this.resolved.set(path, found);
    return found;
  }

  private resolveOnce(path: readonly string[]): { existing: string } | { planned: number } | null {
    let parent: { existing: string } | { planned: number } | null = null;
    for (let depth = 0; depth < path.length; depth++) {
      const name = path[depth] ?? '';
      if (parent === null || 'existing' in parent) {
        const parentId = parent === null ? null : parent.existing;
        const existing = this.children.get(JSON.stringify([parentId, name]));
        if (existing !== undefined) {
          parent = { existing };
          continue;
        }
      }
      const prefix = path.slice(0, depth + 1);
      const key = JSON.stringify(prefix);
      let index = this.plannedByPath.get(key);
      if (index === undefined) {
        index = this.planned.length;
        this.planned.push({ name, parent, path: prefix });
        this.plannedByPath.set(key, index);
      }
      parent = { planned: index };
    }
    return parent;
  }
}
