/**
 * Karvio results JSON, the import's alternative to JUnit XML (reference runs-imports-plans.md §4.5).
 *
 * Pure rules: bytes → text (UTF-8 only), text → document (`JSON.parse`), document → the same
 * {@link ParsedReport} the XML parser produces, so that matching, case creation, dry runs, applying
 * and the answer are shared by both formats.
 *
 * ```json
 * { "format": "karvio-results", "version": 1, "run_name": "Nightly", "timestamp": "2026-05-01T10:00:00Z",
 *   "cases": [ { "name": "test_login", "classname": "tests.auth", "status": "xfailed", "duration_ms": 12,
 *                "message": "known bug", "details": "Traceback…", "suite_path": ["auth"], … } ] }
 * ```
 *
 * Case fields map onto what the XML path reads from a testcase and its properties: `automation_id`,
 * `title` (`tms_test_title`), `suite_path` (`tms_suite_path`), `steps` / `preconditions` / `assertions`
 * (`tms_steps` …), `dataset_key` / `dataset_name` / `dataset_data` / `dataset_source_ref`
 * (`tms_dataset_*`); `message` + `details` → comment like a `<failure message>` and its text;
 * `system_out` / `system_err` like the elements; the stable identity is the same ({@link caseIdentity}).
 * Repeated cases of one test (same suite path, automation id, classname, name and dataset key) are
 * retries and fold into one result like repeated `<testcase>` elements.
 *
 * Refused (`ResultsJsonError`, all 422 `invalid_tms_results_json`): bytes that are not UTF-8, malformed
 * JSON, anything but an object at the top (an array included), `cases` missing, not an array or
 * empty, a case that is not an object, a blank or missing `name`, a missing or unknown `status`, and
 * any field of the wrong type. Unknown keys are ignored.
 *
 * Bounded work per byte (issue #22): before `JSON.parse` builds anything, one linear scan of the text
 * ({@link checkJsonShape}) refuses nesting deeper than {@link MAX_RESULTS_JSON_DEPTH} and more than
 * {@link MAX_RESULTS_JSON_VALUES} values, so that what the parse allocates is bounded and nothing
 * later (`JSON.stringify` of `dataset_data`) recurses deeper than that. At most
 * {@link MAX_JUNIT_TESTCASES} cases; string fields other than the four texts (which are cut) at most
 * {@link MAX_RESULTS_JSON_FIELD_CHARS} characters.
 */
import { TextDecoder } from 'node:util';
import {
  blankToNull,
  caseIdentity,
  buildComment,
  countStatuses,
  firstLine,
  foldAttempts,
  JUNIT_STATUSES,
  type JunitResult,
  type JunitStatus,
  readDatasetHint,
  retryKey,
} from '../junit/dialects';
import {
  type Budget,
  DEFAULT_MAX_TEXT_CHARS,
  DEFAULT_MAX_TOTAL_TEXT_CHARS,
  FORBIDDEN_CHARS,
  MAX_JUNIT_TESTCASES,
  parseTimestamp,
  type ParsedReport,
  TextSink,
} from '../junit/junit-parser';

/** Largest `duration_ms` accepted (the XML path's bound for `time`, about 24.8 days). */
export const MAX_JSON_DURATION_MS = 2_147_483_647;
/** At most this many problems are listed in `errors.file`. */
export const MAX_LISTED_PROBLEMS = 20;

export const NOT_UTF8_REASON = 'the file is not valid UTF-8';
/** Arrays and objects nested in one another: deeper → refused. */
export const MAX_RESULTS_JSON_DEPTH = 64;
/** Values (objects, arrays, strings, numbers, literals; keys not counted) in one report: more → refused. */
export const MAX_RESULTS_JSON_VALUES = 1_000_000;
/** Characters of a string field other than `message`, `details`, `system_out`, `system_err`. */
export const MAX_RESULTS_JSON_FIELD_CHARS = 64 * 1024;
export const JSON_DEPTH_REASON = `nesting deeper than ${MAX_RESULTS_JSON_DEPTH} levels (limit: ${MAX_RESULTS_JSON_DEPTH})`;
export const JSON_VALUES_REASON = `more than ${MAX_RESULTS_JSON_VALUES} values (limit: ${MAX_RESULTS_JSON_VALUES})`;
/** Fields cut at the text limit like XML text, rather than refused when long. */
const TEXT_FIELDS: ReadonlySet<string> = new Set([
  'message',
  'details',
  'system_out',
  'system_err',
]);

export class ResultsJsonError extends Error {
  override readonly name = 'ResultsJsonError';

  constructor(
    /** Human-readable problems, each `<field path>: <problem>`, suitable for `errors.file`. */
    readonly reasons: string[],
  ) {
    super(reasons.join('; '));
  }

  /** First problem, for the problem detail. */
  get reason(): string {
    return this.reasons[0] ?? 'invalid results JSON';
  }
}

export interface ResultsJsonOptions {
  /** Characters kept per text field (`message`, `details`, `system_out`, `system_err`). Default 64 Ki. */
  maxTextChars?: number;
  /** Characters of those fields kept over the whole report. Default 16 Mi. */
  maxTotalTextChars?: number;
}

/**
 * Streaming UTF-8 decoder for an upload: bytes in, text out, {@link ResultsJsonError} on the first
 * invalid sequence. A leading UTF-8 byte order mark is dropped.
 */
export class Utf8Text {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private text = '';
  private failed = false;

  /** Decodes a chunk; false once the bytes are known not to be UTF-8 (the rest is ignored). */
  push(chunk: Uint8Array): boolean {
    if (this.failed) return false;
    try {
      this.text += this.decoder.decode(chunk, { stream: true });
      return true;
    } catch {
      this.fail();
      return false;
    }
  }

  /** The whole text (handed over: this object keeps no copy). */
  end(): string {
    if (!this.failed) {
      try {
        this.text += this.decoder.decode();
      } catch {
        this.fail();
      }
    }
    if (this.failed) throw new ResultsJsonError([NOT_UTF8_REASON]);
    const text = this.text;
    this.text = '';
    return text;
  }

  private fail(): void {
    this.failed = true;
    this.text = '';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** End of a number or literal: whitespace or a structural character. */
function endsScalar(c: number): boolean {
  return isWhitespace(c) || c === 0x2c || c === 0x5d || c === 0x7d || c === 0x3a;
}

/**
 * One linear pass over JSON text, without building anything: refuses nesting deeper than
 * {@link MAX_RESULTS_JSON_DEPTH} and more than {@link MAX_RESULTS_JSON_VALUES} values. It does not
 * check the syntax (`JSON.parse` does, afterwards); on malformed text its counts are approximate.
 */
export function checkJsonShape(text: string): void {
  const objects: boolean[] = [];
  let values = 0;
  let expectKey = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      if (!expectKey) values += 1;
      let from = i + 1;
      i = n;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) break;
        let backslashes = 0;
        while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
        if (backslashes % 2 === 0) {
          i = quote + 1;
          break;
        }
        from = quote + 1;
      }
    } else if (c === 0x7b || c === 0x5b) {
      values += 1;
      if (objects.length >= MAX_RESULTS_JSON_DEPTH) throw new ResultsJsonError([JSON_DEPTH_REASON]);
      objects.push(c === 0x7b);
      expectKey = c === 0x7b;
      i += 1;
    } else if (c === 0x7d || c === 0x5d) {
      objects.pop();
      expectKey = false;
      i += 1;
    } else if (c === 0x2c) {
      expectKey = objects[objects.length - 1] === true;
      i += 1;
    } else if (c === 0x3a || isWhitespace(c)) {
      if (c === 0x3a) expectKey = false;
      i += 1;
    } else {
      values += 1;
      i += 1;
      while (i < n && !endsScalar(text.charCodeAt(i))) i += 1;
    }
    if (values > MAX_RESULTS_JSON_VALUES) throw new ResultsJsonError([JSON_VALUES_REASON]);
  }
}

/**
 * {@link checkJsonShape}, `JSON.parse` and {@link mapResultsJson}; malformed JSON or a limit passed
 * → {@link ResultsJsonError}.
 */
export function parseResultsJson(text: string, options: ResultsJsonOptions = {}): ParsedReport {
  let doc: unknown;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  checkJsonShape(body);
  try {
    doc = JSON.parse(body);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ResultsJsonError([`malformed JSON: ${message}`]);
  }
  return mapResultsJson(doc, options);
}

// ---------------------------------------------------------------------------------------------
// Validation

const STATUS_SET: ReadonlySet<string> = new Set(JUNIT_STATUSES);
const STRING_FIELDS = [
  'title',
  'classname',
  'automation_id',
  'preconditions',
  'steps',
  'assertions',
  'dataset_key',
  'dataset_name',
  'dataset_source_ref',
  'message',
  'details',
  'system_out',
  'system_err',
] as const;
type StringField = (typeof STRING_FIELDS)[number];
function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Text as stored: characters XML and PostgreSQL refuse become U+FFFD (as on the XML path). */
function clean(text: string): string {
  return text.replace(FORBIDDEN_CHARS, '\uFFFD');
}

class Problems {
  readonly list: string[] = [];
  add(path: string, problem: string): void {
    this.list.push(`${path}: ${problem}`);
  }
}

/** An optional string: absent/null → null; trimmed, blank → null; any other type is a problem. */
function optionalString(
  value: unknown,
  path: string,
  problems: Problems,
): string | null | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    problems.add(path, `must be a string, not ${kindOf(value)}`);
    return undefined;
  }
  if (
    value.length > MAX_RESULTS_JSON_FIELD_CHARS &&
    !TEXT_FIELDS.has(path.slice(path.lastIndexOf('.') + 1))
  ) {
    problems.add(
      path,
      `must be at most ${MAX_RESULTS_JSON_FIELD_CHARS} characters, not ${value.length}`,
    );
    return undefined;
  }
  return blankToNull(clean(value));
}

interface JsonCase {
  name: string;
  status: JunitStatus;
  strings: Record<StringField, string | null>;
  suite_path: string[];
  dataset_data: Record<string, unknown> | null;
  duration_ms: number | null;
}

function readCase(raw: unknown, path: string, problems: Problems): JsonCase | null {
  if (!isObject(raw)) {
    problems.add(path, `must be an object, not ${kindOf(raw)}`);
    return null;
  }
  const before = problems.list.length;
  const name = optionalString(raw['name'], `${path}.name`, problems);
  if (name === null) problems.add(`${path}.name`, 'is required and must not be blank');

  let status: JunitStatus | null = null;
  const rawStatus = raw['status'];
  if (rawStatus === undefined || rawStatus === null) {
    problems.add(`${path}.status`, `is required (one of ${JUNIT_STATUSES.join(', ')})`);
  } else if (typeof rawStatus !== 'string' || !STATUS_SET.has(rawStatus.trim())) {
    const shown = typeof rawStatus === 'string' ? JSON.stringify(rawStatus) : kindOf(rawStatus);
    problems.add(`${path}.status`, `must be one of ${JUNIT_STATUSES.join(', ')}, not ${shown}`);
  } else {
    status = rawStatus.trim() as JunitStatus;
  }

  const strings = {} as Record<StringField, string | null>;
  for (const field of STRING_FIELDS) {
    strings[field] = optionalString(raw[field], `${path}.${field}`, problems) ?? null;
  }

  let suitePath: string[] = [];
  const rawPath = raw['suite_path'];
  if (rawPath !== undefined && rawPath !== null) {
    if (!Array.isArray(rawPath)) {
      problems.add(`${path}.suite_path`, `must be an array of strings, not ${kindOf(rawPath)}`);
    } else {
      rawPath.forEach((segment: unknown, i) => {
        if (typeof segment !== 'string') {
          problems.add(`${path}.suite_path.${i}`, `must be a string, not ${kindOf(segment)}`);
        } else if (segment.length > MAX_RESULTS_JSON_FIELD_CHARS) {
          problems.add(
            `${path}.suite_path.${i}`,
            `must be at most ${MAX_RESULTS_JSON_FIELD_CHARS} characters, not ${segment.length}`,
          );
        }
      });
      suitePath = rawPath
        .filter((segment: unknown): segment is string => typeof segment === 'string')
        .map((segment) => clean(segment).trim())
        .filter((segment) => segment !== '');
    }
  }

  let datasetData: Record<string, unknown> | null = null;
  const rawData = raw['dataset_data'];
  if (rawData !== undefined && rawData !== null) {
    if (isObject(rawData)) datasetData = rawData;
    else problems.add(`${path}.dataset_data`, `must be an object, not ${kindOf(rawData)}`);
  }

  let duration: number | null = null;
  const rawDuration = raw['duration_ms'];
  if (rawDuration !== undefined && rawDuration !== null) {
    if (
      typeof rawDuration === 'number' &&
      Number.isInteger(rawDuration) &&
      rawDuration >= 0 &&
      rawDuration <= MAX_JSON_DURATION_MS
    ) {
      duration = rawDuration;
    } else {
      problems.add(
        `${path}.duration_ms`,
        `must be a whole number of milliseconds from 0 to ${MAX_JSON_DURATION_MS}, not ${
          typeof rawDuration === 'number' ? String(rawDuration) : kindOf(rawDuration)
        }`,
      );
    }
  }

  if (problems.list.length > before || name === null || name === undefined || status === null) {
    return null;
  }
  return {
    name,
    status,
    strings,
    suite_path: suitePath,
    dataset_data: datasetData,
    duration_ms: duration,
  };
}

// ---------------------------------------------------------------------------------------------
// Mapping

/**
 * The case's fields under the property names of the XML path (`automation_id`, `tms_test_title`,
 * `tms_dataset_key`, …), so that identity and dataset rules are literally the same functions.
 */
function propertiesOf(c: JsonCase): Readonly<Record<string, string>> {
  const properties: Record<string, string> = {};
  const set = (name: string, value: string | null): void => {
    if (value !== null) properties[name] = value;
  };
  set('automation_id', c.strings.automation_id);
  set('tms_test_title', c.strings.title);
  if (c.suite_path.length > 0) properties['tms_suite_path'] = JSON.stringify(c.suite_path);
  set('tms_steps', c.strings.steps);
  set('tms_preconditions', c.strings.preconditions);
  set('tms_assertions', c.strings.assertions);
  set('tms_dataset_key', c.strings.dataset_key);
  set('tms_dataset_name', c.strings.dataset_name);
  if (c.dataset_data !== null) properties['tms_dataset_data'] = JSON.stringify(c.dataset_data);
  set('tms_dataset_source_ref', c.strings.dataset_source_ref);
  return Object.freeze(properties);
}

/** One valid case → the result the XML path would produce for the equivalent testcase. */
function toResult(
  c: JsonCase,
  index: number,
  capped: (text: string | null) => { text: string | null; truncated: boolean },
): JunitResult {
  const properties = propertiesOf(c);
  const message = capped(c.strings.message);
  const details = capped(c.strings.details);
  const systemOut = capped(c.strings.system_out);
  const systemErr = capped(c.strings.system_err);
  const classname = c.strings.classname;
  const dataset = readDatasetHint(properties);
  return {
    name: c.name,
    classname,
    title: c.strings.title ?? c.name,
    suite_path: c.suite_path,
    automation_id: caseIdentity({ name: c.name, classname, properties }),
    automation_id_property: c.strings.automation_id,
    file: null,
    line: null,
    properties,
    status: c.status,
    message: message.text,
    details: details.text,
    comment: buildComment(message.text, details.text),
    duration_ms: c.duration_ms,
    system_out: systemOut.text,
    system_err: systemErr.text,
    flaky: false,
    attempts: [
      {
        status: c.status,
        message: message.text ?? firstLine(details.text),
        duration_ms: c.duration_ms,
      },
    ],
    elements: 1,
    // `dataset_data` stays the object it was (readDatasetHint re-reads the JSON text of it).
    dataset: dataset === null ? null : { ...dataset, data: c.dataset_data },
    steps: c.strings.steps,
    preconditions: c.strings.preconditions,
    assertions: c.strings.assertions,
    truncated: message.truncated || details.truncated || systemOut.truncated || systemErr.truncated,
    index,
  };
}

/**
 * A parsed results JSON document → {@link ParsedReport}. Every problem of the document is collected
 * (the first {@link MAX_LISTED_PROBLEMS} are listed) before {@link ResultsJsonError} is thrown.
 */
export function mapResultsJson(doc: unknown, options: ResultsJsonOptions = {}): ParsedReport {
  const problems = new Problems();
  if (!isObject(doc)) {
    throw new ResultsJsonError([
      `the report must be a JSON object with a "cases" array, not ${kindOf(doc)}`,
    ]);
  }
  const name = optionalString(doc['run_name'], 'run_name', problems) ?? null;
  let timestamp: Date | null = null;
  const rawTimestamp = doc['timestamp'];
  if (rawTimestamp !== undefined && rawTimestamp !== null) {
    if (typeof rawTimestamp !== 'string') {
      problems.add(
        'timestamp',
        `must be an ISO 8601 date-time string, not ${kindOf(rawTimestamp)}`,
      );
    } else if (rawTimestamp.trim() !== '') {
      timestamp = parseTimestamp(rawTimestamp);
      if (timestamp === null) {
        problems.add(
          'timestamp',
          `must be an ISO 8601 date-time, not ${JSON.stringify(rawTimestamp)}`,
        );
      }
    }
  }
  const rawCases = doc['cases'];
  const cases: JsonCase[] = [];
  if (rawCases === undefined || rawCases === null) {
    problems.add('cases', 'is required (a non-empty array of cases)');
  } else if (!Array.isArray(rawCases)) {
    problems.add('cases', `must be an array, not ${kindOf(rawCases)}`);
  } else if (rawCases.length === 0) {
    problems.add('cases', 'must contain at least one case');
  } else if (rawCases.length > MAX_JUNIT_TESTCASES) {
    problems.add(
      'cases',
      `must contain at most ${MAX_JUNIT_TESTCASES} cases, not ${rawCases.length}`,
    );
  } else {
    rawCases.forEach((raw: unknown, i) => {
      const c = readCase(raw, `cases.${i}`, problems);
      if (c !== null) cases.push(c);
    });
  }
  if (problems.list.length > 0) {
    const listed = problems.list.slice(0, MAX_LISTED_PROBLEMS);
    const more = problems.list.length - listed.length;
    if (more > 0) listed.push(`… and ${more} more problem${more === 1 ? '' : 's'}`);
    throw new ResultsJsonError(listed);
  }

  const maxText = Math.max(0, options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS);
  const budget: Budget = {
    remaining: Math.max(0, options.maxTotalTextChars ?? DEFAULT_MAX_TOTAL_TEXT_CHARS),
  };
  let anyTruncated = false;
  const capped = (text: string | null): { text: string | null; truncated: boolean } => {
    if (text === null) return { text: null, truncated: false };
    const sink = new TextSink(maxText, budget);
    sink.append(text);
    if (sink.truncated) anyTruncated = true;
    return { text: sink.finish(), truncated: sink.truncated };
  };

  // Retries fold like repeated <testcase> elements: one result per test, in order of first appearance.
  const groups = new Map<string, JunitResult[]>();
  cases.forEach((c, index) => {
    const result = toResult(c, index, capped);
    const key = retryKey(result);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [result]);
    else group.push(result);
  });
  const results = [...groups.values()].map(foldAttempts);
  return {
    name,
    timestamp,
    root: 'results_json',
    suites: 0,
    testcase_elements: cases.length,
    ignored_testcases: 0,
    nameless_testcases: [],
    results,
    totals: {
      ...countStatuses(results),
      total: results.length,
      flaky: results.filter((r) => r.flaky).length,
    },
    suite_logs: [],
    truncated: anyTruncated,
  };
}
