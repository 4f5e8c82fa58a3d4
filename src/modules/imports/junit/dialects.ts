/**
 * JUnit dialect mapping: pure rules that turn one raw `<testcase>` element (or the repeated elements
 * of the same test in one file) into a final result. No XML, no I/O — the streaming parser in
 * `junit-parser.ts` produces {@link RawTestcase} values and hands them to {@link foldRetries}.
 *
 * Rules (CONTRACT §6, reference runs-imports-plans.md §4.4/§4.6/§4.9):
 * - status precedence inside one element: `<failure>` → `failure` (or `xpassed` when the pytest
 *   message starts with `[XPASS(strict)]`); `<error>` → `error`; Surefire `<rerunFailure>` /
 *   `<rerunError>` without a primary element → the last rerun's kind; `<skipped>` → `skipped`
 *   (`xfailed` when `type` is `pytest.xfail` or `XFAIL`); a skip-like `status` attribute
 *   (`disabled`, `notrun`, …) → `skipped`, a failing one (`failed`, `errored`) → `failure`/`error`;
 *   else `passed`.
 * - Surefire `<flakyFailure>` / `<flakyError>`: earlier failed runs of a test that finally passed →
 *   final `passed`, `flaky: true`, every run listed in `attempts` and in the comment.
 * - Surefire `<rerunFailure>` / `<rerunError>` next to `<failure>` / `<error>`: the test failed on every
 *   rerun → final status of the primary element, every run listed.
 * - Repeated `<testcase>` elements with the same {@link retryKey} are retries of one test: one result
 *   whose final status, message, output and duration are those of the last element; attempts are
 *   concatenated in document order; flaky when an earlier attempt failed and the last one passed.
 */
import { blankToNull, cutText } from '../../../common/normalize';
import { storageAutomationId, storageSuitePath } from '../storage-form';

/** Re-exported for the parsers of this folder; the rule lives in common/normalize. */
export { blankToNull };

export const JUNIT_STATUSES = [
  'passed',
  'failure',
  'error',
  'skipped',
  'xfailed',
  'xpassed',
] as const;
export type JunitStatus = (typeof JUNIT_STATUSES)[number];

/** Child elements of `<testcase>` that carry an outcome. */
export const OUTCOME_KINDS = [
  'failure',
  'error',
  'skipped',
  'flakyFailure',
  'flakyError',
  'rerunFailure',
  'rerunError',
] as const;
export type OutcomeKind = (typeof OUTCOME_KINDS)[number];

const OUTCOME_KIND_SET: ReadonlySet<string> = new Set(OUTCOME_KINDS);

export function isOutcomeKind(name: string): name is OutcomeKind {
  return OUTCOME_KIND_SET.has(name);
}

/**
 * Property names the import understands. The parsers keep only these (any other property has no
 * effect, and is not kept: a Surefire report lists every system property on every suite).
 */
export const RECOGNISED_PROPERTIES = [
  'automation_id',
  'tms_test_title',
  'tms_suite_path',
  'tms_steps',
  'tms_preconditions',
  'tms_assertions',
  'tms_dataset_key',
  'dataset_key',
  'tms_dataset_name',
  'dataset_name',
  'tms_dataset_data',
  'dataset_data',
  'tms_dataset_source_ref',
  'dataset_source_ref',
] as const;

const RECOGNISED_PROPERTY_SET: ReadonlySet<string> = new Set(RECOGNISED_PROPERTIES);

export function isRecognisedProperty(name: string): boolean {
  return RECOGNISED_PROPERTY_SET.has(name);
}

/** One outcome element (`<failure>`, `<skipped>`, `<flakyFailure>`, …) of a testcase. */
export interface RawOutcome {
  kind: OutcomeKind;
  /** `message` attribute, trimmed; null when missing or blank. */
  message: string | null;
  /** `type` attribute, trimmed; null when missing or blank. */
  type: string | null;
  /** `time` attribute as written (Surefire rerun elements may carry one). */
  time: string | null;
  /** Element text (and `<stackTrace>` text for Surefire elements), trimmed; null when blank. */
  text: string | null;
  /** `<system-out>` / `<system-err>` nested in a Surefire flaky/rerun element. */
  system_out: string | null;
  system_err: string | null;
}

/** One `<testcase>` element as read from the document, before any dialect rule is applied. */
export interface RawTestcase {
  /** Position among the testcases taken from the document (0-based, document order). */
  index: number;
  /**
   * `name` attribute, trimmed, never empty: a testcase without a usable name gets a generated one
   * (its classname, else `(unnamed testcase N)`; see `junit-parser.ts`) and `generated_name`.
   */
  name: string;
  /** True when `name` was generated because the element had no usable name. */
  generated_name: boolean;
  classname: string | null;
  file: string | null;
  line: number | null;
  /** `time` attribute as written (seconds). */
  time: string | null;
  /** `status` attribute (tst, GoogleTest, Catch2: `run`, `disabled`, `notrun`, `failed`, …). */
  status_attr: string | null;
  /** `result` attribute (GoogleTest: `completed`, `skipped`, `suppressed`). */
  result_attr: string | null;
  /**
   * Names of the enclosing `<testsuites name>` / `<testsuite>` elements, blank names skipped, in the
   * stored form (`storage-form.ts`: at most 4 levels, deeper ones folded into the 4th, names ≤ 255
   * characters), which is all that matching and case creation look at.
   */
  suite_path: string[];
  /**
   * Effective recognised properties: root/suite properties inherited, testcase properties override
   * (one shared, frozen object for the testcases of a suite that have no properties of their own).
   */
  properties: Readonly<Record<string, string>>;
  outcomes: RawOutcome[];
  system_out: string | null;
  system_err: string | null;
  /** True when some captured text of this element was cut at the size cap. */
  truncated: boolean;
}

/** One execution of a test: a testcase element, or a Surefire flaky/rerun element inside one. */
export interface JunitAttempt {
  status: JunitStatus;
  /** Short description: the message, else the type, else the first line of the body. */
  message: string | null;
  duration_ms: number | null;
}

/** Dataset properties (reference §4.9); present only when a dataset key is given. */
export interface DatasetHint {
  /** The dataset key (reference §4.9); null when only a name was given. */
  key: string | null;
  name: string | null;
  /** `tms_dataset_data` parsed as a JSON object; null when absent or not a JSON object. */
  data: Record<string, unknown> | null;
  source_ref: string | null;
}

/** Final result of one test of the report (retries folded). */
export interface JunitResult {
  /** Raw testcase `name` (trimmed). */
  name: string;
  classname: string | null;
  /** `tms_test_title` property, else `name`. */
  title: string;
  /** `tms_suite_path` property (JSON array or `/`-separated), else the enclosing suite names. */
  suite_path: string[];
  /** Stable identity ({@link caseIdentity}): `automation_id` property, else `<classname>.<name>`. */
  automation_id: string | null;
  /** The `automation_id` property alone (null when the identity was derived from classname). */
  automation_id_property: string | null;
  file: string | null;
  line: number | null;
  /** Effective properties of the last attempt (shared, read-only object). */
  properties: Readonly<Record<string, string>>;
  status: JunitStatus;
  /** `message` attribute of the element that decided the status. */
  message: string | null;
  /** Body text of the element(s) that decided the status. */
  details: string | null;
  /** Row comment: attempts block (when retried/flaky) + `message\n\ndetails`. */
  comment: string | null;
  duration_ms: number | null;
  system_out: string | null;
  system_err: string | null;
  flaky: boolean;
  /** Every execution in order; length 1 for a plain testcase. */
  attempts: JunitAttempt[];
  /** Number of `<testcase>` elements folded into this result. */
  elements: number;
  dataset: DatasetHint | null;
  steps: string | null;
  preconditions: string | null;
  assertions: string | null;
  truncated: boolean;
  /** Index of the first element of this test in the document. */
  index: number;
}

const MAX_DURATION_MS = 2_147_483_647;
const XPASS_STRICT_PREFIX = '[XPASS(strict)]';
const XFAIL_TYPES: ReadonlySet<string> = new Set(['pytest.xfail', 'xfail']);
const SKIP_STATUS_ATTRS: ReadonlySet<string> = new Set([
  'disabled',
  'notrun',
  'not_run',
  'skipped',
  'skip',
  'ignored',
]);
const SKIP_RESULT_ATTRS: ReadonlySet<string> = new Set(['skipped', 'suppressed']);
const FAILURE_STATUS_ATTRS: ReadonlySet<string> = new Set(['failed', 'failure', 'fail']);
const ERROR_STATUS_ATTRS: ReadonlySet<string> = new Set(['errored', 'error']);
const FAILING: ReadonlySet<JunitStatus> = new Set<JunitStatus>(['failure', 'error']);
const MAX_ATTEMPT_LINES = 50;
const MAX_ATTEMPT_MESSAGE = 200;

/**
 * `time` attribute (seconds) → whole milliseconds, truncated like the reference (`int(s*1000)`),
 * computed on the decimal value so that `1.005` gives 1005. Unparsable, negative, non-finite or
 * beyond a 32-bit integer → null. Accepts `1,234.5` thousands separators.
 */
export function parseDurationMs(time: string | null | undefined): number | null {
  if (time === null || time === undefined) return null;
  let text = time.trim();
  if (!isPlainDecimal(text)) {
    if (/^\d{1,3}(,\d{3})+(\.\d*)?$/.test(text)) text = text.replace(/,/g, '');
    if (!/^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return null;
  }
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  const ms = Math.trunc(Math.round(seconds * 1_000_000) / 1000);
  return ms > MAX_DURATION_MS ? null : ms;
}

/**
 * `\d+(\.\d*)?`, the form nearly every `time` attribute has (`0.003`): one that the checks of
 * {@link parseDurationMs} let through unchanged, so it skips their regular expressions (read once
 * per testcase of a report).
 */
function isPlainDecimal(text: string): boolean {
  if (text === '') return false;
  let dot = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x2e && i > 0 && !dot) dot = true;
    else if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/** Reference §4.4 comment: `"<message>\n\n<details>"` when both exist, else whichever, else null. */
export function buildComment(message: string | null, details: string | null): string | null {
  if (message && details) return message === details ? message : `${message}\n\n${details}`;
  return message ?? details ?? null;
}

function casefold(value: string): string {
  // Full upper-casing then lower-casing approximates Unicode case folding (ß → ss, ς → σ).
  return value.toUpperCase().toLowerCase();
}

/**
 * Title normalisation for matching (reference §4.6): split camelCase at lowercase/digit → uppercase,
 * `_` and `-` → space, delete the standalone word `test` (any case), collapse whitespace, casefold.
 * `test_login_works` ≡ `Login works`; `shouldAuthenticateWithValid` → `should authenticate with valid`.
 */
export function normalizeTitle(value: string): string {
  return isAscii(value) ? normalizeAsciiTitle(value) : normalizeTitleByRules(value);
}

function isAscii(value: string): boolean {
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** `[A-Za-z0-9]`: what `[\p{L}\p{N}_]` is in ASCII once `_` has become a space. */
function isAsciiAlnum(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39)
  );
}

/** `\s` in ASCII: tab, line feed, vertical tab, form feed, carriage return, space. */
function isAsciiSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}

/**
 * Step 1 of {@link normalizeAsciiTitle} writes here (titles up to 2,048 characters): one array less
 * per title. Only read within the call that wrote it (nothing in between can call it again).
 */
const SPLIT_SCRATCH = new Uint16Array(4096);

/**
 * {@link normalizeTitleByRules} of an ASCII title in two passes over its character codes, without
 * regular expressions (matching normalises every candidate case and every result of an import:
 * 200,000 titles for a large one). Property-tested against the rules in `dialects.spec.ts`.
 */
export function normalizeAsciiTitle(value: string): string {
  // 1. camelCase split (a space before an upper-case letter that follows [a-z0-9]), `_`/`-` → space.
  // At most two codes per character; into the shared scratch array when they fit.
  const split =
    value.length * 2 <= SPLIT_SCRATCH.length ? SPLIT_SCRATCH : new Uint16Array(value.length * 2);
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0x41 && code <= 0x5a && i > 0) {
      const before = value.charCodeAt(i - 1);
      if ((before >= 0x61 && before <= 0x7a) || (before >= 0x30 && before <= 0x39))
        split[length++] = 0x20;
    }
    split[length++] = code === 0x5f || code === 0x2d ? 0x20 : code;
  }
  // 2. The standalone word `test` (any case) deleted — its neighbours are looked at in the split
  // text, as the rules' look-behind and look-ahead do —, whitespace collapsed and trimmed, lower case.
  // The codes are collected and made into a string at once ({@link stringOfCodes}): matching puts
  // every title in Maps and Sets.
  const out: number[] = [];
  let space = false;
  for (let i = 0; i < length; i++) {
    const code = split[i] as number;
    if (
      (code | 0x20) === 0x74 &&
      i + 4 <= length &&
      ((split[i + 1] as number) | 0x20) === 0x65 &&
      ((split[i + 2] as number) | 0x20) === 0x73 &&
      ((split[i + 3] as number) | 0x20) === 0x74 &&
      (i === 0 || !isAsciiAlnum(split[i - 1] as number)) &&
      (i + 4 === length || !isAsciiAlnum(split[i + 4] as number))
    ) {
      i += 3;
      continue;
    }
    if (isAsciiSpace(code)) {
      space = out.length > 0;
      continue;
    }
    if (space) out.push(0x20);
    space = false;
    out.push(code >= 0x41 && code <= 0x5a ? code + 0x20 : code);
  }
  return stringOfCodes(out);
}

/** Character codes passed to one `String.fromCharCode` call: well below engines' argument limits. */
const CODES_PER_CALL = 8192;

/**
 * The string of UTF-16 code units `codes`, built flat (made at once, not grown a character at a
 * time, so that hashing it in a Map or Set does not first have to flatten a chain of concatenations).
 */
export function stringOfCodes(codes: readonly number[]): string {
  if (codes.length <= CODES_PER_CALL) return String.fromCharCode(...codes);
  let text = '';
  for (let i = 0; i < codes.length; i += CODES_PER_CALL) {
    text += String.fromCharCode(...codes.slice(i, i + CODES_PER_CALL));
  }
  return text;
}

/** The normalisation as the reference states it (any title; {@link normalizeTitle} for ASCII ones). */
export function normalizeTitleByRules(value: string): string {
  let s = value.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  s = s.replace(/[_-]/g, ' ');
  s = s.replace(/(?<![\p{L}\p{N}_])test(?![\p{L}\p{N}_])/giu, '');
  s = s.replace(/\s+/gu, ' ').trim();
  return casefold(s);
}

/** Suite path normalisation for matching: each segment like a title, empty segments dropped. */
export function normalizeSuitePath(path: readonly string[]): string[] {
  return path.map(normalizeTitle).filter((segment) => segment !== '');
}

/**
 * Stable identity of a parsed testcase (CONTRACT §6): the `automation_id` property when present,
 * else `<classname>.<name>` when a classname exists, else null.
 */
export function caseIdentity(testcase: {
  name: string;
  classname: string | null;
  properties: Readonly<Record<string, string>>;
}): string | null {
  const fromProperty = blankToNull(testcase.properties['automation_id']);
  if (fromProperty !== null) return fromProperty;
  const classname = blankToNull(testcase.classname);
  const name = blankToNull(testcase.name);
  if (classname !== null && name !== null) return `${classname}.${name}`;
  return null;
}

/** `tms_suite_path`: a JSON array of strings, or a `/`-separated string; blank segments dropped. */
export function parseSuitePathProperty(value: string | null | undefined): string[] | null {
  const text = blankToNull(value);
  if (text === null) return null;
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) {
        const segments = parsed.map((item: string) => item.trim()).filter((item) => item !== '');
        return segments.length > 0 ? segments : null;
      }
    } catch {
      // not JSON: fall through to the `/`-separated form
    }
  }
  const segments = text
    .split('/')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return segments.length > 0 ? segments : null;
}

function parseJsonObject(value: string | null): Record<string, unknown> | null {
  if (value === null) return null;
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // not JSON
  }
  return null;
}

function prop(properties: Readonly<Record<string, string>>, ...names: string[]): string | null {
  for (const name of names) {
    const value = blankToNull(properties[name]);
    if (value !== null) return value;
  }
  return null;
}

/** Dataset properties (reference §4.9): `tms_dataset_*` first, then the unprefixed spelling. */
export function readDatasetHint(properties: Readonly<Record<string, string>>): DatasetHint | null {
  const key = prop(properties, 'tms_dataset_key', 'dataset_key');
  const name = prop(properties, 'tms_dataset_name', 'dataset_name');
  // A name alone still names the row (reference §4.10: the label is the dataset name, else the
  // key, else the testcase name), so parametrisations told apart by name are never folded.
  if (key === null && name === null) return null;
  return {
    key,
    name,
    data: parseJsonObject(prop(properties, 'tms_dataset_data', 'dataset_data')),
    source_ref: prop(properties, 'tms_dataset_source_ref', 'dataset_source_ref'),
  };
}

function statusOfKind(kind: OutcomeKind): JunitStatus {
  switch (kind) {
    case 'failure':
    case 'flakyFailure':
    case 'rerunFailure':
      return 'failure';
    case 'error':
    case 'flakyError':
    case 'rerunError':
      return 'error';
    case 'skipped':
      return 'skipped';
  }
}

function isXpassStrict(outcome: RawOutcome): boolean {
  const message = outcome.message ?? outcome.text ?? '';
  return message.trimStart().startsWith(XPASS_STRICT_PREFIX);
}

function isXfail(outcome: RawOutcome): boolean {
  return outcome.type !== null && XFAIL_TYPES.has(outcome.type.toLowerCase());
}

/** The first line of a text, trimmed; null when there is none (also used by the results JSON reader). */
export function firstLine(text: string | null): string | null {
  if (text === null) return null;
  const line = text.split('\n', 1)[0]?.trim() ?? '';
  return line === '' ? null : line;
}

function attemptOf(
  outcome: RawOutcome,
  status: JunitStatus,
  durationMs: number | null,
): JunitAttempt {
  return {
    status,
    message: outcome.message ?? outcome.type ?? firstLine(outcome.text),
    duration_ms: durationMs,
  };
}

function joinBodies(outcomes: readonly RawOutcome[]): string | null {
  const [first, ...rest] = outcomes;
  if (first === undefined) return null;
  const parts: string[] = [];
  if (first.text !== null) parts.push(first.text);
  for (const outcome of rest) {
    const part = [outcome.message, outcome.text].filter((p): p is string => p !== null);
    if (part.length > 0) parts.push(part.join('\n'));
  }
  return parts.length > 0 ? parts.join('\n\n') : null;
}

interface ElementVerdict {
  status: JunitStatus;
  message: string | null;
  details: string | null;
  attempts: JunitAttempt[];
}

/**
 * Applies the per-element rules to one testcase element whose `time` is `duration` (parsed once
 * by the caller, which keeps it for the result too).
 */
function judgeTestcase(raw: RawTestcase, duration: number | null): ElementVerdict {
  // Most elements have no outcome element: their verdict needs none of the lists below.
  if (raw.outcomes.length === 0) return attributeVerdict(raw, duration, []);
  const failures = raw.outcomes.filter((o) => o.kind === 'failure');
  const errors = raw.outcomes.filter((o) => o.kind === 'error');
  const skips = raw.outcomes.filter((o) => o.kind === 'skipped');
  const flakies = raw.outcomes.filter((o) => o.kind === 'flakyFailure' || o.kind === 'flakyError');
  const reruns = raw.outcomes.filter((o) => o.kind === 'rerunFailure' || o.kind === 'rerunError');
  const flakyAttempts = flakies.map((o) =>
    attemptOf(o, statusOfKind(o.kind), parseDurationMs(o.time)),
  );
  const rerunAttempts = reruns.map((o) =>
    attemptOf(o, statusOfKind(o.kind), parseDurationMs(o.time)),
  );

  const primary = failures.length > 0 ? failures : errors;
  const [head] = primary;
  if (head !== undefined) {
    const status: JunitStatus =
      head.kind === 'failure' ? (isXpassStrict(head) ? 'xpassed' : 'failure') : 'error';
    return {
      status,
      message: head.message,
      details: joinBodies(primary),
      // Surefire: flaky runs come before the final one; reruns come after the first (primary) run.
      attempts: [...flakyAttempts, attemptOf(head, status, duration), ...rerunAttempts],
    };
  }

  const lastRerun = reruns[reruns.length - 1];
  if (lastRerun !== undefined) {
    const status = statusOfKind(lastRerun.kind);
    return {
      status,
      message: lastRerun.message,
      details: lastRerun.text,
      attempts: [...flakyAttempts, ...rerunAttempts],
    };
  }

  const [skip] = skips;
  if (skip !== undefined) {
    const status: JunitStatus = isXfail(skip) ? 'xfailed' : 'skipped';
    return {
      status,
      message: skip.message,
      details: skip.text,
      attempts: [...flakyAttempts, attemptOf(skip, status, duration)],
    };
  }

  return attributeVerdict(raw, duration, flakyAttempts);
}

/**
 * The verdict of an element without primary, rerun or skip element: its `status` / `result`
 * attributes decide.
 */
function attributeVerdict(
  raw: RawTestcase,
  duration: number | null,
  flakyAttempts: JunitAttempt[],
): ElementVerdict {
  const statusAttr = raw.status_attr?.toLowerCase() ?? '';
  const resultAttr = raw.result_attr?.toLowerCase() ?? '';
  let status: JunitStatus = 'passed';
  if (SKIP_STATUS_ATTRS.has(statusAttr) || SKIP_RESULT_ATTRS.has(resultAttr)) status = 'skipped';
  else if (FAILURE_STATUS_ATTRS.has(statusAttr)) status = 'failure';
  else if (ERROR_STATUS_ATTRS.has(statusAttr)) status = 'error';
  const attempt: JunitAttempt = { status, message: null, duration_ms: duration };
  return {
    status,
    message: null,
    details: null,
    attempts: flakyAttempts.length === 0 ? [attempt] : [...flakyAttempts, attempt],
  };
}

function isFlaky(attempts: readonly JunitAttempt[]): boolean {
  const last = attempts[attempts.length - 1];
  if (last === undefined || last.status !== 'passed') return false;
  for (let i = 0; i < attempts.length - 1; i++) {
    if (FAILING.has((attempts[i] as JunitAttempt).status)) return true;
  }
  return false;
}

function clip(text: string, max: number): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${cutText(line, max)}…` : line;
}

/** The attempts block of a comment; null for a single attempt. */
export function describeAttempts(attempts: readonly JunitAttempt[], flaky: boolean): string | null {
  if (attempts.length < 2) return null;
  const last = attempts[attempts.length - 1];
  if (last === undefined) return null;
  const failed = attempts.filter((attempt) => FAILING.has(attempt.status)).length;
  const header = flaky
    ? `Flaky: passed after ${failed} failed attempt${failed === 1 ? '' : 's'} (${attempts.length} attempts), marked flaky`
    : `${attempts.length} attempts, final status: ${last.status}`;
  const lines = attempts.slice(0, MAX_ATTEMPT_LINES).map((attempt, i) => {
    const duration = attempt.duration_ms === null ? '' : ` (${attempt.duration_ms} ms)`;
    const message =
      attempt.message === null ? '' : ` — ${clip(attempt.message, MAX_ATTEMPT_MESSAGE)}`;
    return `Attempt ${i + 1}: ${attempt.status}${duration}${message}`;
  });
  if (attempts.length > MAX_ATTEMPT_LINES) {
    lines.push(`… ${attempts.length - MAX_ATTEMPT_LINES} more attempts`);
  }
  return [header, ...lines].join('\n');
}

function composeComment(
  attempts: readonly JunitAttempt[],
  flaky: boolean,
  message: string | null,
  details: string | null,
): string | null {
  const block = describeAttempts(attempts, flaky);
  const comment = buildComment(message, details);
  if (block === null || comment === null) return block ?? comment;
  return `${block}\n\n${comment}`;
}

/** What a result takes from its properties (computed once per properties object). */
interface PropertyFacts {
  title: string | null;
  /** `tms_suite_path`, in the stored form. */
  suite_path: string[] | null;
  automation_id: string | null;
  dataset: DatasetHint | null;
  steps: string | null;
  preconditions: string | null;
  assertions: string | null;
}

/**
 * The testcases of a suite share one properties object: what they take from it is read once, so a
 * long inherited property costs once per suite, not once per testcase.
 */
const propertyFacts = new WeakMap<object, PropertyFacts>();

function factsOf(properties: Readonly<Record<string, string>>): PropertyFacts {
  const known = propertyFacts.get(properties);
  if (known !== undefined) return known;
  const suitePath = parseSuitePathProperty(properties['tms_suite_path']);
  const facts: PropertyFacts = {
    title: prop(properties, 'tms_test_title'),
    suite_path: suitePath === null ? null : storageSuitePath(suitePath),
    automation_id: prop(properties, 'automation_id'),
    dataset: readDatasetHint(properties),
    steps: prop(properties, 'tms_steps'),
    preconditions: prop(properties, 'tms_preconditions'),
    assertions: prop(properties, 'tms_assertions'),
  };
  propertyFacts.set(properties, facts);
  return facts;
}

/** Maps one testcase element to a result (Surefire flaky/rerun elements already folded in). */
export function mapTestcase(raw: RawTestcase): JunitResult {
  const duration = parseDurationMs(raw.time);
  const verdict = judgeTestcase(raw, duration);
  const properties = raw.properties;
  const facts = factsOf(properties);
  const flaky = isFlaky(verdict.attempts);
  return {
    name: raw.name,
    classname: raw.classname,
    title: facts.title ?? raw.name,
    suite_path: facts.suite_path ?? raw.suite_path,
    // A generated name is no identity: such a result is matched by suite path and title.
    automation_id: raw.generated_name ? facts.automation_id : caseIdentity(raw),
    automation_id_property: facts.automation_id,
    file: raw.file,
    line: raw.line,
    properties,
    status: verdict.status,
    message: verdict.message,
    details: verdict.details,
    comment: composeComment(verdict.attempts, flaky, verdict.message, verdict.details),
    duration_ms: duration,
    system_out: raw.system_out,
    system_err: raw.system_err,
    flaky,
    attempts: verdict.attempts,
    elements: 1,
    dataset: facts.dataset,
    steps: facts.steps,
    preconditions: facts.preconditions,
    assertions: facts.assertions,
    truncated: raw.truncated,
    index: raw.index,
  };
}

/**
 * Key under which repeated testcase elements are retries of the same test: same suite path, same
 * `automation_id` property, classname, name and dataset key. (A shared automation id alone is not
 * enough: parametrised tests often share one but are distinct rows.) A long automation id or
 * dataset key enters the key in a hashed form (`storageAutomationId`), so that the key stays short
 * when many tests inherit one.
 */
export function retryKey(result: JunitResult): string {
  // `[<suite path>,…]`: the path's JSON is made once per path array (a suite's testcases share it).
  return `[${pathJson(result.suite_path)},${retryKeyRest(result).slice(1)}`;
}

/**
 * The parts of {@link retryKey} after the suite path, as a JSON array: `retryKey` is
 * `[<path JSON>,` followed by this without its `[`. The path's JSON is a complete JSON value, so
 * two results have the same key exactly when they have the same path JSON and the same rest.
 */
function retryKeyRest(result: JunitResult): string {
  return JSON.stringify([
    result.automation_id_property === null
      ? ''
      : storageAutomationId(result.automation_id_property),
    result.classname ?? '',
    result.name,
    // The row the result goes to (its label): the dataset's name, else its key.
    result.dataset === null
      ? ''
      : storageAutomationId(result.dataset.name ?? result.dataset.key ?? ''),
  ]);
}

/** JSON texts of suite path arrays already seen (the parsers give a suite's testcases one array). */
const pathJsons = new WeakMap<readonly string[], string>();

function pathJson(path: readonly string[]): string {
  let json = pathJsons.get(path);
  if (json === undefined) {
    json = JSON.stringify(path);
    pathJsons.set(path, json);
  }
  return json;
}

/**
 * Folds the results of repeated elements of one test (document order) into one: the last element
 * decides status, message, details, output, duration and properties; attempts are concatenated.
 */
export function foldAttempts(results: readonly JunitResult[]): JunitResult {
  const last = results[results.length - 1];
  const first = results[0];
  if (last === undefined || first === undefined) {
    throw new Error('foldAttempts needs at least one result');
  }
  if (results.length === 1) return last;
  const attempts = results.flatMap((result) => result.attempts);
  const flaky = isFlaky(attempts);
  return {
    ...last,
    attempts,
    flaky,
    elements: results.reduce((sum, result) => sum + result.elements, 0),
    comment: composeComment(attempts, flaky, last.message, last.details),
    truncated: results.some((result) => result.truncated),
    index: first.index,
  };
}

/**
 * Maps every raw testcase and folds retries: one result per {@link retryKey}, ordered by the first
 * occurrence of each test.
 */
export function foldRetries(raws: Iterable<RawTestcase>): JunitResult[] {
  // The groups in order of first occurrence; a test run once (the common case) keeps its result
  // alone, without a group array.
  const groups: Array<JunitResult | JunitResult[]> = [];
  // Group positions by retry key, taken in its two parts (see retryKeyRest): the suite path's JSON,
  // shared by a suite's testcases and so hashed once, then the rest. The same grouping as one map
  // by the whole key, without building and hashing a long new key for every testcase.
  const byPath = new Map<string, Map<string, number>>();
  for (const raw of raws) {
    const result = mapTestcase(raw);
    const path = pathJson(result.suite_path);
    let byRest = byPath.get(path);
    if (byRest === undefined) byPath.set(path, (byRest = new Map()));
    const rest = retryKeyRest(result);
    const position = byRest.get(rest);
    if (position === undefined) {
      byRest.set(rest, groups.length);
      groups.push(result);
      continue;
    }
    const group = groups[position] as JunitResult | JunitResult[];
    if (Array.isArray(group)) group.push(result);
    else groups[position] = [group, result];
  }
  return groups.map((group) => (Array.isArray(group) ? foldAttempts(group) : group));
}

/** Counts results per final status. */
export function countStatuses(results: readonly JunitResult[]): Record<JunitStatus, number> {
  const totals: Record<JunitStatus, number> = {
    passed: 0,
    failure: 0,
    error: 0,
    skipped: 0,
    xfailed: 0,
    xpassed: 0,
  };
  for (const result of results) totals[result.status] += 1;
  return totals;
}
