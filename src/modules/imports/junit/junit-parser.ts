/**
 * Streaming JUnit XML parser (CONTRACT §6, reference runs-imports-plans.md §4.4).
 *
 * Built on `sax` in strict mode: the document is never held as a DOM. Only the data of each testcase
 * is accumulated (attributes, recognised properties, outcome elements, captured text), and every
 * captured text is capped (64 Ki characters per field by default, plus a budget for the whole
 * document), so memory stays proportional to the number of testcases, not to the size of their output.
 *
 * Bounded work per byte, whatever the shape of the input (issue #22): nothing here recurses over the
 * nesting of the document; a suite's path is built once, from its parent's, in the stored form
 * (at most 4 levels of at most 255 characters, `storage-form.ts`), so it costs the same at any depth;
 * inherited properties are merged once per suite, iteratively, and only the recognised ones are kept.
 * The limits below are refused with a {@link JunitParseError} naming them as soon as they are passed.
 *
 * Refused (`JunitParseError`, whose `reason` goes into `errors.file`): malformed XML, a root other
 * than `<testsuites>`/`<testsuite>`, any DOCTYPE / DTD / `<!ENTITY` / other `<!…>` declaration
 * (rejected as soon as the parser enters it; entities are never expanded), any entity reference
 * other than the five XML built-ins and numeric character references, bytes that are not valid in
 * the document's encoding, any of the limits below, and — with `namelessTestcases: 'reject'` — a
 * testcase without a name (by default such a testcase is kept under a generated name, see
 * {@link generatedTestcaseName}).
 */
import { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import * as sax from 'sax';

import { cutText, ownText } from '../../../common/normalize';
import { extendStoragePath } from '../storage-form';
import {
  JunitResult,
  JunitStatus,
  RawOutcome,
  RawTestcase,
  blankToNull,
  countStatuses,
  foldRetries,
  isOutcomeKind,
  isRecognisedProperty,
  OutcomeKind,
} from './dialects';

/** Characters kept per captured text (outputs, outcome bodies and messages): 64 Ki, then cut. */
export const DEFAULT_MAX_TEXT_CHARS = 64 * 1024;
/** Characters of captured text kept over a whole report: 16 Mi, then cut. */
export const DEFAULT_MAX_TOTAL_TEXT_CHARS = 16 * 1024 * 1024;
/** `<testsuite>` elements nested in one another (the root one included): deeper → refused. */
export const MAX_JUNIT_SUITE_DEPTH = 64;
/** Elements of any kind nested in one another: deeper → refused. */
export const MAX_JUNIT_ELEMENT_DEPTH = 256;
/** `<testcase>` elements in one report: more → refused. */
export const MAX_JUNIT_TESTCASES = 250_000;
/** Elements of any kind (suites, testcases, properties, …) in one report: more → refused. */
export const MAX_JUNIT_ELEMENTS = 1_000_000;
/** Attributes on one element: more → refused. */
export const MAX_JUNIT_ATTRIBUTES_PER_ELEMENT = 256;
/**
 * Characters of one attribute value (`name`, `classname`, `message`, …), attribute or element name,
 * comment or processing instruction: longer → refused (sax's own buffer limit, `sax.MAX_BUFFER_LENGTH`).
 * Element text has no such limit: it is captured up to {@link DEFAULT_MAX_TEXT_CHARS} and cut.
 */
export const MAX_JUNIT_ATTRIBUTE_CHARS = 64 * 1024;
/**
 * Characters kept of a recognised property value (`automation_id`, `tms_steps`, …): longer values are
 * cut there (the result is marked truncated). Properties are inherited by every testcase of a suite.
 */
export const MAX_JUNIT_PROPERTY_CHARS = 4096;

/** Reasons shared with the reference implementation, word for word. */
export const UNSUPPORTED_ROOT_REASON = 'unsupported JUnit XML root element';
export const NAMELESS_TESTCASE_REASON = 'testcase without a name';
export const DECLARATION_REASON = 'DTD, DOCTYPE and entity declarations are not allowed';
export const NO_ROOT_REASON = 'document has no root element';
export const SUITE_DEPTH_REASON = `testsuite elements nested more than ${MAX_JUNIT_SUITE_DEPTH} levels deep (limit: ${MAX_JUNIT_SUITE_DEPTH})`;
export const ELEMENT_DEPTH_REASON = `elements nested more than ${MAX_JUNIT_ELEMENT_DEPTH} levels deep (limit: ${MAX_JUNIT_ELEMENT_DEPTH})`;
export const TESTCASES_REASON = `more than ${MAX_JUNIT_TESTCASES} testcase elements (limit: ${MAX_JUNIT_TESTCASES})`;
export const ELEMENTS_REASON = `more than ${MAX_JUNIT_ELEMENTS} elements (limit: ${MAX_JUNIT_ELEMENTS})`;
export const ATTRIBUTES_REASON = `more than ${MAX_JUNIT_ATTRIBUTES_PER_ELEMENT} attributes on one element (limit: ${MAX_JUNIT_ATTRIBUTES_PER_ELEMENT})`;

/** Reason for a value longer than {@link MAX_JUNIT_ATTRIBUTE_CHARS} (`what`: "attribute value", …). */
export function tooLongReason(what: string): string {
  return `${what} longer than ${MAX_JUNIT_ATTRIBUTE_CHARS} characters (limit: ${MAX_JUNIT_ATTRIBUTE_CHARS})`;
}

/**
 * Name given to a testcase without a usable name (missing, empty or blank `name`; Surefire writes
 * `name=""` when a JUnit 5 `@BeforeAll` fails): its classname; else `(unnamed testcase N)`, N
 * counting the nameless testcases without classname of the same suite path (1-based, document
 * order). A second nameless testcase of the same classname and suite path gets
 * `<classname> (unnamed testcase N)`, N counting that classname's. Stable: the same report gives the
 * same names, so importing it again matches the same cases.
 */
export function generatedTestcaseName(classname: string | null, position: number): string {
  if (classname === null) return `(unnamed testcase ${position})`;
  return position === 1 ? classname : `${classname} (unnamed testcase ${position})`;
}

export class JunitParseError extends Error {
  override readonly name = 'JunitParseError';

  constructor(
    /** Human-readable reason, suitable for `errors.file`. */
    readonly reason: string,
    /** 1-based line of the problem, when known. */
    readonly line: number | null = null,
    readonly column: number | null = null,
  ) {
    super(line === null ? reason : `${reason} (line ${line}, column ${column ?? 0})`);
  }
}

export interface ParseJunitOptions {
  /** Characters kept per captured text (outputs, outcome bodies, property text). Default 64 Ki. */
  maxTextChars?: number;
  /** Characters of captured text kept over the whole document. Default 16 Mi. */
  maxTotalTextChars?: number;
  /**
   * What to do with a `<testcase>` whose `name` is missing or blank. `'name'` (default): keep it under
   * a generated name ({@link generatedTestcaseName}) and list it in `nameless_testcases` (issue #22:
   * real tools write such testcases; a result is never dropped); `'reject'`: throw
   * `JunitParseError('testcase without a name')` like the reference.
   */
  namelessTestcases?: 'name' | 'reject';
}

/** A testcase that had no usable name, kept under a generated one. */
export interface NamelessTestcase {
  /** Position among all `<testcase>` elements of the document (0-based). */
  element_index: number;
  /** The generated name (also the result's `name` and, without `tms_test_title`, its title). */
  name: string;
  classname: string | null;
  suite_path: string[];
  line: number;
  reason: string;
}

/** Output captured on a `<testsuite>` (or the `<testsuites>` root). */
export interface SuiteLog {
  suite_path: string[];
  system_out: string | null;
  system_err: string | null;
}

export interface ParsedReport {
  /** Root `name`, else the first suite's name (used as run name by project-level import). */
  name: string | null;
  /** Root `timestamp`, else the first suite's parsable one (naive times are taken as UTC). */
  timestamp: Date | null;
  /** Root element; `results_json` for a Karvio results JSON report (no XML root). */
  root: 'testsuites' | 'testsuite' | 'results_json';
  /** Number of `<testsuite>` elements read (nested ones included). */
  suites: number;
  /** Every `<testcase>` element of the document, before retry folding (MANIFEST count). */
  testcase_elements: number;
  /** `<testcase>` elements outside any `<testsuite>` (e.g. directly under `<testsuites>`): ignored. */
  ignored_testcases: number;
  /** Testcases without a usable name, kept under a generated name (they are in `results` too). */
  nameless_testcases: NamelessTestcase[];
  /** One result per test, retries folded, in order of first appearance. */
  results: JunitResult[];
  totals: Record<JunitStatus, number> & { total: number; flaky: number };
  /** Suites that carry `<system-out>` / `<system-err>`. */
  suite_logs: SuiteLog[];
  /** True when some captured text was cut at a size cap. */
  truncated: boolean;
}

/** True when the upload is empty or only whitespace (an optional UTF-8 BOM included). */
export function isBlank(input: Buffer | Uint8Array | string): boolean {
  if (typeof input === 'string') return input.replace(/^\uFEFF/, '').trim() === '';
  let i = 0;
  if (input.length >= 3 && input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf) i = 3;
  for (; i < input.length; i++) {
    const byte = input[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Text capture

/** Characters of captured text left for the whole report (shared by its sinks). */
export interface Budget {
  remaining: number;
}

/** Captures one text field up to a cap and a shared budget (also used by the results JSON reader). */
export class TextSink {
  private text = '';
  private dropped = 0;

  constructor(
    private readonly cap: number,
    private readonly budget: Budget,
  ) {}

  append(chunk: string): void {
    const room = Math.min(this.cap - this.text.length, this.budget.remaining);
    if (room >= chunk.length) {
      this.text += chunk;
      this.budget.remaining -= chunk.length;
      return;
    }
    const kept = cutText(chunk, Math.max(room, 0)).length;
    if (kept > 0) {
      this.text += chunk.slice(0, kept);
      this.budget.remaining -= kept;
    }
    this.dropped += chunk.length - kept;
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  /**
   * Trimmed text kept (null when blank), without any note. Like {@link finish}, a string of its own
   * (`ownText`): the parser's chunk it came from is not kept alive by it.
   */
  finishPlain(): string | null {
    const text = this.text.trim();
    return text === '' ? null : ownText(text);
  }

  /** Trimmed text (null when blank) with a note when something was cut; a string of its own. */
  finish(): string | null {
    const text = this.text.trim();
    if (this.dropped === 0) return text === '' ? null : ownText(text);
    return ownText(`${text}\n[truncated: ${this.dropped} more characters not stored]`);
  }
}

// ---------------------------------------------------------------------------------------------
// Document model kept while streaming (only what results need)

interface SuiteNode {
  parent: SuiteNode | null;
  /** Suite path in the stored form (≤ 4 levels), built once from the parent's. */
  path: string[];
  /** `<testsuite>` elements from the root to this one (0 for the `<testsuites>` container). */
  depth: number;
  /** JSON of `path`, computed when a nameless testcase needs it. */
  pathKey: string | null;
  ownProperties: Record<string, string> | null;
  effective: Readonly<Record<string, string>> | null;
  systemOut: string | null;
  systemErr: string | null;
}

interface PendingCase {
  index: number;
  suite: SuiteNode;
  name: string;
  generatedName: boolean;
  classname: string | null;
  file: string | null;
  line: number | null;
  time: string | null;
  statusAttr: string | null;
  resultAttr: string | null;
  ownProperties: Record<string, string> | null;
  outcomes: RawOutcome[];
  systemOut: string | null;
  systemErr: string | null;
  truncated: boolean;
}

interface PendingOutcome {
  kind: OutcomeKind;
  attrs: Record<string, string>;
  text: TextSink;
  systemOut: string | null;
  systemErr: string | null;
}

type PropertyOwner = { ownProperties: Record<string, string> | null };

type Frame =
  | { kind: 'container' | 'suite'; node: SuiteNode }
  | { kind: 'testcase'; tc: PendingCase }
  | { kind: 'outcome'; outcome: PendingOutcome; tc: PendingCase }
  | { kind: 'properties'; owner: PropertyOwner }
  | {
      kind: 'property';
      owner: PropertyOwner;
      name: string;
      value: string | null;
      /** Null for a property the import does not read (its text is not captured). */
      sink: TextSink | null;
    }
  | { kind: 'output'; sink: TextSink; assign: (text: string | null, truncated: boolean) => void }
  | { kind: 'other'; sink: TextSink | null };

const EMPTY_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A suite's properties with those of its ancestors (the nearer ones win), computed once per suite
 * and shared by its testcases. Iterative: walks up to the nearest suite already computed, then down.
 */
function effectiveProperties(node: SuiteNode): Readonly<Record<string, string>> {
  if (node.effective !== null) return node.effective;
  const chain: SuiteNode[] = [];
  let current: SuiteNode | null = node;
  while (current !== null && current.effective === null) {
    chain.push(current);
    current = current.parent;
  }
  let inherited = current?.effective ?? EMPTY_PROPERTIES;
  for (let i = chain.length - 1; i >= 0; i--) {
    const suite = chain[i] as SuiteNode;
    suite.effective =
      suite.ownProperties === null
        ? inherited
        : Object.freeze({ ...inherited, ...suite.ownProperties });
    inherited = suite.effective;
  }
  return inherited;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

function attr(attrs: Record<string, string>, name: string): string | null {
  const value = attrs[name];
  return value === undefined ? null : value;
}

function parseLine(value: string | null): number | null {
  const text = blankToNull(value);
  if (text === null || !/^\d{1,9}$/.test(text)) return null;
  return Number(text);
}

/**
 * ISO 8601 timestamp → Date (`2020-09-04T16:18:04.966371`, `…Z`, `…+02:00`, date only). A time
 * without offset is read as UTC. Anything else, and an instant outside years 1–9999 in UTC, → null.
 */
export function parseTimestamp(value: string | null | undefined): Date | null {
  const text = blankToNull(value);
  if (text === null) return null;
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/.exec(
      text,
    );
  if (match === null) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  const ms = Number((frac + '000').slice(0, 3));
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day); // not Date.UTC: it reads years 0..99 as 1900..1999
  if (local.getUTCDate() !== day) return null; // 31 February and the like
  local.setUTCHours(hour, minute, second, ms);
  let time = local.getTime();
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    time -= sign * offsetMinutes * 60_000;
  }
  const date = new Date(time);
  // Years 1..9999 in UTC only: an answer writes every instant as `YYYY-…Z`.
  const utcYear = date.getUTCFullYear();
  return Number.isNaN(time) || utcYear < 1 || utcYear > 9999 ? null : date;
}

// ---------------------------------------------------------------------------------------------
// Builder: reacts to sax events

class ReportBuilder {
  private readonly maxText: number;
  private readonly budget: Budget;
  private readonly rejectNameless: boolean;
  private readonly stack: Frame[] = [];
  private readonly cases: PendingCase[] = [];
  private readonly nameless: NamelessTestcase[] = [];
  private readonly suiteLogs: SuiteLog[] = [];
  private root: 'testsuites' | 'testsuite' | null = null;
  private rootName: string | null = null;
  private rootTimestamp: Date | null = null;
  private firstSuiteName: string | null = null;
  private firstSuiteTimestamp: Date | null = null;
  private suiteCount = 0;
  private testcaseElements = 0;
  private elementCount = 0;
  /** Nameless testcases seen per suite path (and classname): the N of their generated names. */
  private readonly namelessSeen = new Map<string, number>();
  /**
   * One string per distinct `classname` and `file` value: the testcases of a class repeat them, and
   * sax reads every attribute into a string of its own (4.7 of the 54 MB a parsed report of the
   * bench's 100,000 testcases took; bench/README.md fix 63). Dropped with the builder.
   */
  private readonly shared = new Map<string, string>();
  private anyTruncated = false;

  constructor(
    options: ParseJunitOptions,
    private readonly position: () => { line: number; column: number },
  ) {
    this.maxText = Math.max(0, options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS);
    this.budget = {
      remaining: Math.max(0, options.maxTotalTextChars ?? DEFAULT_MAX_TOTAL_TEXT_CHARS),
    };
    this.rejectNameless = options.namelessTestcases === 'reject';
  }

  /** Counts an attribute of the element being opened (sax reports them before the element). */
  checkAttributeCount(count: number): void {
    if (count > MAX_JUNIT_ATTRIBUTES_PER_ELEMENT) this.fail(ATTRIBUTES_REASON);
  }

  private fail(reason: string): never {
    const { line, column } = this.position();
    throw new JunitParseError(reason, line, column);
  }

  private sink(): TextSink {
    return new TextSink(this.maxText, this.budget);
  }

  private finishSink(sink: TextSink): string | null {
    if (sink.truncated) this.anyTruncated = true;
    return sink.finish();
  }

  get sawRoot(): boolean {
    return this.root !== null;
  }

  openTag(rawName: string, attrs: Record<string, string>): void {
    const name = localName(rawName);
    this.elementCount += 1;
    if (this.elementCount > MAX_JUNIT_ELEMENTS) this.fail(ELEMENTS_REASON);
    if (this.stack.length >= MAX_JUNIT_ELEMENT_DEPTH) this.fail(ELEMENT_DEPTH_REASON);
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) {
      this.openRoot(name, attrs);
      return;
    }
    this.stack.push(this.childFrame(parent, name, attrs));
  }

  private openRoot(name: string, attrs: Record<string, string>): void {
    if (this.root !== null) this.fail('more than one root element');
    if (name === 'testsuites') {
      this.root = 'testsuites';
      const suiteName = blankToNull(attr(attrs, 'name'));
      this.rootName = suiteName;
      this.rootTimestamp = parseTimestamp(attr(attrs, 'timestamp'));
      const node = this.newNode(null, suiteName, 0);
      this.stack.push({ kind: 'container', node });
    } else if (name === 'testsuite') {
      this.root = 'testsuite';
      this.rootName = blankToNull(attr(attrs, 'name'));
      this.rootTimestamp = parseTimestamp(attr(attrs, 'timestamp'));
      this.stack.push({ kind: 'suite', node: this.openSuite(null, attrs) });
    } else {
      this.fail(UNSUPPORTED_ROOT_REASON);
    }
  }

  private newNode(parent: SuiteNode | null, name: string | null, depth: number): SuiteNode {
    const base = parent?.path ?? [];
    return {
      parent,
      path: name === null ? base : extendStoragePath(base, name),
      depth,
      pathKey: null,
      ownProperties: null,
      effective: null,
      systemOut: null,
      systemErr: null,
    };
  }

  private openSuite(parent: SuiteNode | null, attrs: Record<string, string>): SuiteNode {
    const depth = (parent?.depth ?? 0) + 1;
    if (depth > MAX_JUNIT_SUITE_DEPTH) this.fail(SUITE_DEPTH_REASON);
    const name = blankToNull(attr(attrs, 'name'));
    this.suiteCount += 1;
    if (this.suiteCount === 1) this.firstSuiteName = name;
    if (this.firstSuiteTimestamp === null) {
      this.firstSuiteTimestamp = parseTimestamp(attr(attrs, 'timestamp'));
    }
    return this.newNode(parent, name, depth);
  }

  private childFrame(parent: Frame, name: string, attrs: Record<string, string>): Frame {
    if (name === 'testcase') {
      this.testcaseElements += 1;
      if (this.testcaseElements > MAX_JUNIT_TESTCASES) this.fail(TESTCASES_REASON);
    }
    switch (parent.kind) {
      case 'container':
        // Reference: only direct <testsuite> children of <testsuites> are read; testcases placed
        // directly under <testsuites> (and nested <testsuites>) are ignored.
        if (name === 'testsuite')
          return { kind: 'suite', node: this.openSuite(parent.node, attrs) };
        if (name === 'properties') return { kind: 'properties', owner: parent.node };
        if (name === 'system-out' || name === 'system-err') {
          return this.suiteOutput(parent.node, name);
        }
        return { kind: 'other', sink: null };
      case 'suite':
        if (name === 'testsuite')
          return { kind: 'suite', node: this.openSuite(parent.node, attrs) };
        if (name === 'testcase') return this.openTestcase(parent.node, attrs);
        if (name === 'properties') return { kind: 'properties', owner: parent.node };
        if (name === 'system-out' || name === 'system-err') {
          return this.suiteOutput(parent.node, name);
        }
        return { kind: 'other', sink: null };
      case 'testcase':
        return this.testcaseChild(parent.tc, name, attrs);
      case 'outcome':
        return this.outcomeChild(parent.outcome, name);
      case 'properties':
        if (name === 'property') {
          const propertyName = (attr(attrs, 'name') ?? '').trim();
          const recognised = isRecognisedProperty(propertyName);
          return {
            kind: 'property',
            owner: parent.owner,
            name: recognised ? propertyName : '',
            value: recognised ? attr(attrs, 'value') : null,
            sink: recognised ? new TextSink(MAX_JUNIT_PROPERTY_CHARS, this.budget) : null,
          };
        }
        return { kind: 'other', sink: null };
      case 'property':
        return { kind: 'other', sink: parent.sink };
      case 'output':
        return { kind: 'other', sink: parent.sink };
      case 'other':
        return { kind: 'other', sink: parent.sink };
    }
  }

  private suiteOutput(node: SuiteNode, name: 'system-out' | 'system-err'): Frame {
    return {
      kind: 'output',
      sink: this.sink(),
      assign: (text) => {
        if (text === null) return;
        if (name === 'system-out') node.systemOut = appendText(node.systemOut, text);
        else node.systemErr = appendText(node.systemErr, text);
      },
    };
  }

  /** The generated name of the next nameless testcase of `suite` ({@link generatedTestcaseName}). */
  private nameFor(suite: SuiteNode, classname: string | null): string {
    suite.pathKey ??= JSON.stringify(suite.path);
    const key = classname === null ? suite.pathKey : `${suite.pathKey}\u0000${classname}`;
    const position = (this.namelessSeen.get(key) ?? 0) + 1;
    this.namelessSeen.set(key, position);
    return generatedTestcaseName(classname, position);
  }

  /** The string kept for an attribute value many testcases repeat (see `shared`). */
  private share(value: string | null): string | null {
    if (value === null) return null;
    const kept = this.shared.get(value);
    if (kept !== undefined) return kept;
    this.shared.set(value, value);
    return value;
  }

  private openTestcase(suite: SuiteNode, attrs: Record<string, string>): Frame {
    const given = blankToNull(attr(attrs, 'name'));
    const classname = this.share(blankToNull(attr(attrs, 'classname')));
    let name = given;
    if (name === null) {
      if (this.rejectNameless) this.fail(NAMELESS_TESTCASE_REASON);
      name = this.nameFor(suite, classname);
      this.nameless.push({
        element_index: this.testcaseElements - 1,
        name,
        classname,
        suite_path: suite.path,
        line: this.position().line,
        reason: NAMELESS_TESTCASE_REASON,
      });
    }
    const tc: PendingCase = {
      index: this.cases.length,
      suite,
      name,
      generatedName: given === null,
      classname,
      file: this.share(blankToNull(attr(attrs, 'file'))),
      line: parseLine(attr(attrs, 'line')),
      time: attr(attrs, 'time'),
      statusAttr: blankToNull(attr(attrs, 'status')),
      resultAttr: blankToNull(attr(attrs, 'result')),
      ownProperties: null,
      outcomes: [],
      systemOut: null,
      systemErr: null,
      truncated: false,
    };
    this.cases.push(tc);
    return { kind: 'testcase', tc };
  }

  private testcaseChild(tc: PendingCase, name: string, attrs: Record<string, string>): Frame {
    if (isOutcomeKind(name)) {
      return {
        kind: 'outcome',
        tc,
        outcome: { kind: name, attrs, text: this.sink(), systemOut: null, systemErr: null },
      };
    }
    if (name === 'properties') return { kind: 'properties', owner: tc };
    if (name === 'system-out' || name === 'system-err') {
      return {
        kind: 'output',
        sink: this.sink(),
        assign: (text, truncated) => {
          if (truncated) tc.truncated = true;
          if (text === null) return;
          if (name === 'system-out') tc.systemOut = appendText(tc.systemOut, text);
          else tc.systemErr = appendText(tc.systemErr, text);
        },
      };
    }
    return { kind: 'other', sink: null };
  }

  private outcomeChild(outcome: PendingOutcome, name: string): Frame {
    if (name === 'system-out' || name === 'system-err') {
      return {
        kind: 'output',
        sink: this.sink(),
        assign: (text) => {
          if (text === null) return;
          if (name === 'system-out') outcome.systemOut = appendText(outcome.systemOut, text);
          else outcome.systemErr = appendText(outcome.systemErr, text);
        },
      };
    }
    // <stackTrace> (Surefire) and any other markup inside an outcome feed the outcome body.
    return { kind: 'other', sink: outcome.text };
  }

  text(chunk: string): void {
    const top = this.stack[this.stack.length - 1];
    if (top === undefined) return;
    switch (top.kind) {
      case 'outcome':
        top.outcome.text.append(chunk);
        return;
      case 'property':
      case 'output':
      case 'other':
        top.sink?.append(chunk);
        return;
      default:
        return;
    }
  }

  closeTag(): void {
    const frame = this.stack.pop();
    if (frame === undefined) return;
    switch (frame.kind) {
      case 'container':
      case 'suite': {
        const node = frame.node;
        if (node.systemOut !== null || node.systemErr !== null) {
          this.suiteLogs.push({
            suite_path: node.path,
            system_out: node.systemOut,
            system_err: node.systemErr,
          });
        }
        return;
      }
      case 'outcome': {
        const { outcome, tc } = frame;
        if (outcome.text.truncated) tc.truncated = true;
        const message = blankToNull(attr(outcome.attrs, 'message'));
        if (message !== null && message.length > this.maxText) {
          tc.truncated = true;
          this.anyTruncated = true;
        }
        tc.outcomes.push({
          kind: outcome.kind,
          message:
            message === null || message.length <= this.maxText
              ? message
              : `${message.slice(0, this.maxText)}\n[truncated: ${message.length - this.maxText} more characters not stored]`,
          type: blankToNull(attr(outcome.attrs, 'type')),
          time: attr(outcome.attrs, 'time'),
          text: this.finishSink(outcome.text),
          system_out: outcome.systemOut,
          system_err: outcome.systemErr,
        });
        return;
      }
      case 'property': {
        if (frame.name === '' || frame.sink === null) return;
        const valueAttr = frame.value === null ? '' : frame.value.trim();
        const text = frame.sink.finishPlain();
        let value = valueAttr !== '' ? valueAttr : (text ?? '');
        if (frame.sink.truncated || value.length > MAX_JUNIT_PROPERTY_CHARS) {
          this.anyTruncated = true;
          value = cutText(value, MAX_JUNIT_PROPERTY_CHARS).trim();
        }
        frame.owner.ownProperties ??= {};
        frame.owner.ownProperties[frame.name] = value;
        return;
      }
      case 'output': {
        const truncated = frame.sink.truncated;
        frame.assign(this.finishSink(frame.sink), truncated);
        return;
      }
      default:
        return;
    }
  }

  finish(): ParsedReport {
    if (this.root === null) throw new JunitParseError(NO_ROOT_REASON);
    // Each pending testcase is mapped and let go as the fold reads it, so that the pending, raw and
    // final forms of 100,000 testcases are never all alive at once.
    const pending = this.cases;
    const taken = pending.length;
    function* raws(): Generator<RawTestcase> {
      for (let i = 0; i < pending.length; i++) {
        const tc = pending[i] as PendingCase;
        (pending as Array<PendingCase | undefined>)[i] = undefined;
        yield toRawTestcase(tc);
      }
      pending.length = 0;
    }
    const results = foldRetries(raws());
    const totals = countStatuses(results);
    return {
      name: this.rootName ?? this.firstSuiteName,
      timestamp: this.rootTimestamp ?? this.firstSuiteTimestamp,
      root: this.root,
      suites: this.suiteCount,
      testcase_elements: this.testcaseElements,
      ignored_testcases: this.testcaseElements - taken,
      nameless_testcases: this.nameless,
      results,
      totals: {
        ...totals,
        total: results.length,
        flaky: results.filter((result) => result.flaky).length,
      },
      suite_logs: this.suiteLogs,
      truncated: this.anyTruncated,
    };
  }
}

function appendText(existing: string | null, text: string): string {
  return existing === null ? text : `${existing}\n${text}`;
}

function toRawTestcase(tc: PendingCase): RawTestcase {
  const inherited = effectiveProperties(tc.suite);
  return {
    index: tc.index,
    name: tc.name,
    generated_name: tc.generatedName,
    classname: tc.classname,
    file: tc.file,
    line: tc.line,
    time: tc.time,
    status_attr: tc.statusAttr,
    result_attr: tc.resultAttr,
    suite_path: tc.suite.path,
    properties:
      tc.ownProperties === null ? inherited : Object.freeze({ ...inherited, ...tc.ownProperties }),
    outcomes: tc.outcomes,
    system_out: tc.systemOut,
    system_err: tc.systemErr,
    truncated: tc.truncated,
  };
}

// ---------------------------------------------------------------------------------------------
// Bytes → text

/** Characters XML 1.0 forbids; replaced by U+FFFD so they never reach the database. */
export const FORBIDDEN_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
const SNIFF_BYTES = 1024;

class Decoder {
  private head: Buffer | null = Buffer.alloc(0);
  private decoder: TextDecoder | null = null;

  push(bytes: Uint8Array): string {
    if (this.head !== null) {
      this.head = Buffer.concat([this.head, bytes]);
      if (this.head.length < SNIFF_BYTES) return '';
      const head = this.head;
      this.head = null;
      this.decoder = chooseDecoder(head);
      return this.decode(head, true);
    }
    return this.decode(bytes, true);
  }

  end(): string {
    if (this.head !== null) {
      const head = this.head;
      this.head = null;
      this.decoder = chooseDecoder(head);
      return this.decode(head, false);
    }
    return this.decode(new Uint8Array(0), false);
  }

  private decode(bytes: Uint8Array, stream: boolean): string {
    if (this.decoder === null) return '';
    try {
      return this.decoder.decode(bytes, { stream });
    } catch {
      throw new JunitParseError(`invalid byte sequence for encoding ${this.decoder.encoding}`);
    }
  }
}

function chooseDecoder(head: Buffer): TextDecoder {
  const b0 = head[0];
  const b1 = head[1];
  if (b0 === 0xef && b1 === 0xbb && head[2] === 0xbf) {
    return new TextDecoder('utf-8', { fatal: true });
  }
  if (b0 === 0xff && b1 === 0xfe) return new TextDecoder('utf-16le', { fatal: true });
  if (b0 === 0xfe && b1 === 0xff) return new TextDecoder('utf-16be', { fatal: true });
  if (b0 === 0x3c && b1 === 0x00) return new TextDecoder('utf-16le', { fatal: true });
  if (b0 === 0x00 && b1 === 0x3c) return new TextDecoder('utf-16be', { fatal: true });
  const declaration = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(
    head.toString('latin1'),
  );
  const label = declaration?.[1]?.toLowerCase() ?? 'utf-8';
  // A UTF-16 declaration in an ASCII-compatible byte stream cannot be right; read it as UTF-8.
  if (label.startsWith('utf-16') || label === 'unicode') {
    return new TextDecoder('utf-8', { fatal: true });
  }
  try {
    return new TextDecoder(label, { fatal: true });
  } catch {
    throw new JunitParseError(`unsupported encoding "${declaration?.[1] ?? label}"`);
  }
}

// ---------------------------------------------------------------------------------------------
// sax plumbing

/** Internals of sax's parser that its typings do not declare. */
interface SaxInternals {
  state: number;
  doctype: string | boolean | undefined;
  sgmlDecl: string | undefined;
}

const SAX_STATES = (sax as unknown as { STATE: Record<string, number> }).STATE;
const DOCTYPE_STATES: ReadonlySet<number> = new Set(
  ['DOCTYPE', 'DOCTYPE_QUOTED', 'DOCTYPE_DTD', 'DOCTYPE_DTD_QUOTED']
    .map((state) => SAX_STATES[state])
    .filter((state): state is number => state !== undefined),
);
const SGML_STATES: ReadonlySet<number> = new Set(
  ['SGML_DECL', 'SGML_DECL_QUOTED']
    .map((state) => SAX_STATES[state])
    .filter((state): state is number => state !== undefined),
);
const DECLARATION_KEYWORD = /^(ENTITY|ELEMENT|ATTLIST|NOTATION)/i;

/** True while sax is inside a DOCTYPE or an `<!ENTITY …>`-like declaration. */
function inDeclaration(internals: SaxInternals): boolean {
  if (DOCTYPE_STATES.has(internals.state) || (internals.doctype ?? '') !== '') return true;
  return SGML_STATES.has(internals.state) && DECLARATION_KEYWORD.test(internals.sgmlDecl ?? '');
}

/**
 * sax keeps a literal `<` inside an attribute value, which XML forbids. To tell it apart from `&lt;`
 * / `&#60;`, those references decode to this sentinel (U+FFFF cannot occur in the input: it is
 * replaced with U+FFFD before parsing) and are turned back into `<` afterwards.
 */
const LT_SENTINEL = '\uFFFF';
const LT_SENTINEL_ALL = /\uFFFF/g;

function isLtReference(entity: string): boolean {
  if (entity === 'lt') return true;
  const match = /^#(?:[xX]([0-9a-fA-F]{1,8})|(\d{1,10}))$/.exec(entity);
  if (match === null) return false;
  const code = match[1] !== undefined ? parseInt(match[1], 16) : Number(match[2]);
  return code === 0x3c;
}

function restoreLt(text: string): string {
  return text.includes(LT_SENTINEL) ? text.replace(LT_SENTINEL_ALL, '<') : text;
}

const WRITE_CHARS = 64 * 1024;
const YIELD_EVERY_CHARS = 1024 * 1024;

/** What sax's buffers hold, for its "Max buffer length exceeded: <buffer>" refusal. */
const SAX_BUFFERS: Readonly<Record<string, string>> = {
  attribValue: 'attribute value',
  attribName: 'attribute name',
  tagName: 'element name',
  comment: 'comment',
  procInstName: 'processing instruction',
  procInstBody: 'processing instruction',
  entity: 'entity reference',
};

function saxFailure(error: Error): JunitParseError {
  const [message = 'malformed XML', ...rest] = error.message.split('\n');
  const line = /^Line: (\d+)$/.exec(rest.find((l) => l.startsWith('Line:')) ?? '');
  const column = /^Column: (\d+)$/.exec(rest.find((l) => l.startsWith('Column:')) ?? '');
  const buffer = /^Max buffer length exceeded: (\w+)$/.exec(message)?.[1];
  return new JunitParseError(
    buffer === undefined
      ? `malformed XML: ${message}`
      : tooLongReason(SAX_BUFFERS[buffer] ?? 'markup'),
    line?.[1] === undefined ? null : Number(line[1]) + 1,
    column?.[1] === undefined ? null : Number(column[1]),
  );
}

function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Parses a JUnit XML report from a stream, a buffer or a string. Resolves with the folded results;
 * rejects with {@link JunitParseError} for any refusal (other errors are bugs or stream failures).
 */
export async function parseJunit(
  input: Readable | Buffer | Uint8Array | string,
  options: ParseJunitOptions = {},
): Promise<ParsedReport> {
  const saxOptions: sax.SAXOptions & { strictEntities: boolean } = {
    // only the five XML entities are known; anything else is "Invalid character entity"
    strictEntities: true,
    position: true,
    trim: false,
    normalize: false,
  };
  const parser = sax.parser(true, saxOptions);
  const internals = parser as unknown as SaxInternals;
  const builder = new ReportBuilder(options, () => ({
    line: parser.line + 1,
    column: parser.column,
  }));
  const entities = parser.ENTITIES;
  parser.ENTITIES = new Proxy(entities, {
    get: (target, key, receiver): unknown =>
      typeof key === 'string' && isLtReference(key)
        ? LT_SENTINEL
        : Reflect.get(target, key, receiver),
  });
  const refuseDeclaration = (): never => {
    throw new JunitParseError(DECLARATION_REASON, parser.line + 1, parser.column);
  };

  parser.onerror = (error: Error) => {
    throw saxFailure(error);
  };
  parser.ondoctype = refuseDeclaration;
  parser.onsgmldeclaration = refuseDeclaration;
  let attributeCount = 0;
  parser.onopentagstart = () => {
    attributeCount = 0;
  };
  parser.onattribute = () => {
    attributeCount += 1;
    builder.checkAttributeCount(attributeCount);
  };
  parser.onopentag = (tag: sax.Tag | sax.QualifiedTag) => {
    const attributes = tag.attributes as Record<string, string>;
    for (const key of Object.keys(attributes)) {
      const value = attributes[key] ?? '';
      if (value.length > MAX_JUNIT_ATTRIBUTE_CHARS) {
        throw new JunitParseError(tooLongReason('attribute value'), parser.line + 1, parser.column);
      }
      if (value.includes('<')) {
        throw new JunitParseError(
          `malformed XML: unescaped '<' in attribute value (${key})`,
          parser.line + 1,
          parser.column,
        );
      }
      attributes[key] = restoreLt(value);
    }
    builder.openTag(tag.name, attributes);
  };
  parser.onclosetag = () => builder.closeTag();
  parser.ontext = (text: string) => builder.text(restoreLt(text));
  parser.oncdata = (text: string) => builder.text(text);

  let sinceYield = 0;
  const feed = async (text: string): Promise<void> => {
    for (let offset = 0; offset < text.length; offset += WRITE_CHARS) {
      const slice = text.slice(offset, offset + WRITE_CHARS).replace(FORBIDDEN_CHARS, '\uFFFD');
      parser.write(slice);
      if (inDeclaration(internals)) refuseDeclaration();
      sinceYield += slice.length;
      if (sinceYield >= YIELD_EVERY_CHARS) {
        sinceYield = 0;
        await nextTick(); // keep the event loop responsive on big in-memory inputs
      }
    }
  };

  try {
    if (typeof input === 'string') {
      await feed(input);
    } else if (input instanceof Uint8Array) {
      const decoder = new Decoder();
      for (let offset = 0; offset < input.length; offset += WRITE_CHARS) {
        await feed(decoder.push(input.subarray(offset, offset + WRITE_CHARS)));
      }
      await feed(decoder.end());
    } else {
      const decoder = new Decoder();
      for await (const chunk of input as AsyncIterable<unknown>) {
        if (typeof chunk === 'string') await feed(chunk);
        else if (chunk instanceof Uint8Array) await feed(decoder.push(chunk));
        else throw new TypeError('parseJunit: stream chunks must be strings or bytes');
      }
      await feed(decoder.end());
    }
    if (!builder.sawRoot) throw new JunitParseError(NO_ROOT_REASON);
    parser.close();
  } catch (error) {
    if (error instanceof JunitParseError) throw error;
    if (error instanceof Error && parser.error === error) throw saxFailure(error);
    throw error;
  }
  return builder.finish();
}
