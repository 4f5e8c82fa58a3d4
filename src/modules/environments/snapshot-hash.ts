/**
 * Canonical JSON and the environment snapshot hash (CONTRACT §8, reference
 * environments-datasets-cases.md §1.4).
 *
 * The canonical form is byte-for-byte what Python's
 * `json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=True)` produces, because
 * that is the reference implementation:
 *
 * - object keys sorted recursively by Unicode code point (not by UTF-16 code unit);
 * - no whitespace at all;
 * - every character outside printable ASCII (U+0020..U+007E) escaped as `\uXXXX` with lower-case
 *   hex — this includes U+007F (DEL), and characters above U+FFFF become a surrogate pair of two
 *   escapes; `"` and `\` are backslash-escaped, `\n \r \t \b \f` use their short forms and `/` is
 *   not escaped;
 * - integers as plain digits, non-integral numbers as Python's `repr(float)` (for example `1e-05`,
 *   `1.5e-07`, `0.30000000000000004`).
 *
 * Integral numbers below 1e21 in magnitude are written as integers (`-0` as `0`), because that is
 * how `JSON.stringify` sends them and so how Python would have parsed them (as an `int`). From 1e21
 * on, `JSON.stringify` sends exponent notation, which Python parses as a float, so those are written
 * as Python's float repr (`1e+21`).
 *
 * A JavaScript number cannot tell `1.0` from `1` (JSON.parse turns both into `1`), so an integral
 * number is always written as an integer. Wrap a value in {@link JsonFloat} when it is known to be a
 * float and must be written the Python way (`1.0`); the service itself never needs to.
 *
 * Pure functions only: no NestJS, no database.
 */
import { createHash } from 'node:crypto';

/** Prefix of every snapshot hash, naming the algorithm (CONTRACT §8). */
export const SNAPSHOT_HASH_PREFIX = 'sha256:';

/**
 * Marks a number as a float for {@link canonicalJson}, so it is written as Python writes a float
 * (`1.0`, `1e+16`) instead of as an integer. `JSON.stringify` writes the plain number.
 */
export class JsonFloat {
  /** @param value the float value; must be finite to be serialised canonically */
  constructor(readonly value: number) {}

  /** Plain JSON representation (used by `JSON.stringify`, for example when storing). */
  toJSON(): number {
    return this.value;
  }
}

/**
 * Serialises a JSON value canonically (see the module comment for the exact rules).
 *
 * Like `JSON.stringify`, object properties whose value is `undefined` are left out, `undefined`
 * inside arrays becomes `null`, and objects with a `toJSON()` method (such as `Date`) are replaced by
 * its result. Unlike `JSON.stringify`, values that JSON cannot carry (a top-level `undefined`,
 * functions, symbols, bigints, `NaN`, `±Infinity`) and circular structures throw a `TypeError`
 * instead of being dropped or mangled, so a hash never silently covers something else.
 *
 * Recursive up to 512 levels of nesting and iterative beyond, so arbitrarily deep nesting does not
 * overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  const top = resolveToJson(value, '');
  if (top === undefined) throw new TypeError('canonicalJson: value is not JSON-serialisable');
  try {
    return writeShallow(top, 0);
  } catch (error) {
    if (error === TOO_DEEP) return canonicalJsonIterative(value);
    throw error;
  }
}

/**
 * Nesting the recursive writer below goes to before it hands the value to the iterative one: far
 * deeper than any request body may be (64 levels), far below what overflows the call stack. A
 * circular structure gets this deep too, and the iterative writer names it.
 */
const FAST_DEPTH = 512;
const TOO_DEEP: unique symbol = Symbol('too deep');

/**
 * {@link canonicalJson} of a value already passed through toJSON(), recursively, as one string
 * (about twice as fast as the iterative writer on a 60 KB topology: no frames, no entry arrays,
 * no set of open containers). Throws TOO_DEEP below FAST_DEPTH levels.
 */
function writeShallow(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object' || value instanceof JsonFloat) {
    return serializeScalar(value);
  }
  if (depth >= FAST_DEPTH) throw TOO_DEEP;
  if (Array.isArray(value)) {
    const items = value as readonly unknown[];
    let text = '[';
    for (let i = 0; i < items.length; i += 1) {
      if (i > 0) text += ',';
      // Like JSON.stringify, an undefined array item is written as null.
      const item = resolveToJson(items[i], i);
      text += item === undefined ? 'null' : writeShallow(item, depth + 1);
    }
    return text + ']';
  }
  const record = value as Record<string, unknown>;
  let text = '{';
  let first = true;
  for (const key of sortedKeys(record)) {
    const member = resolveToJson(record[key], key);
    if (member === undefined) continue;
    text += (first ? '' : ',') + quoteString(key) + ':' + writeShallow(member, depth + 1);
    first = false;
  }
  return text + '}';
}

// A UTF-16 surrogate: the one case where code unit order differs from code point order.
const SURROGATE = /[\ud800-\udfff]/;

/**
 * The own keys of an object in code point order: UTF-16 order (an insertion sort, about twice as
 * fast as `sort()` on the few keys of an object) unless a key has a surrogate.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length < 2) return keys;
  for (const key of keys) if (SURROGATE.test(key)) return keys.sort(compareCodePoints);
  for (let i = 1; i < keys.length; i += 1) {
    const key = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > key; j -= 1) keys[j + 1] = keys[j];
    keys[j + 1] = key;
  }
  return keys;
}

/** {@link canonicalJson} without recursion, for values nested deeper than FAST_DEPTH. */
function canonicalJsonIterative(value: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = new Set<object>();

  // `current` always holds a value already passed through toJSON().
  let current: unknown = resolveToJson(value, '');
  if (current === undefined) throw new TypeError('canonicalJson: value is not JSON-serialisable');
  let pending = true;

  for (;;) {
    if (pending) {
      pending = false;
      if (current === null || typeof current !== 'object' || current instanceof JsonFloat) {
        out.push(serializeScalar(current));
      } else {
        if (open.has(current)) throw new TypeError('canonicalJson: circular structure');
        open.add(current);
        if (Array.isArray(current)) {
          out.push('[');
          stack.push({ kind: 'array', container: current, items: current, index: 0 });
        } else {
          const record = current as Record<string, unknown>;
          const entries = Object.keys(record)
            .map((key): [string, unknown] => [key, resolveToJson(record[key], key)])
            .filter(([, member]) => member !== undefined)
            .sort(([a], [b]) => compareCodePoints(a, b));
          out.push('{');
          stack.push({ kind: 'object', container: record, entries, index: 0 });
        }
      }
    }

    const frame = stack[stack.length - 1];
    if (frame === undefined) break;

    if (frame.kind === 'array') {
      if (frame.index < frame.items.length) {
        if (frame.index > 0) out.push(',');
        // Like JSON.stringify, an undefined array item is written as null.
        current = resolveToJson(frame.items[frame.index], String(frame.index)) ?? null;
        frame.index += 1;
        pending = true;
      } else {
        out.push(']');
        open.delete(frame.container);
        stack.pop();
      }
    } else if (frame.index < frame.entries.length) {
      const [key, member] = frame.entries[frame.index];
      out.push(frame.index > 0 ? ',' : '', quoteString(key), ':');
      current = member;
      frame.index += 1;
      pending = true;
    } else {
      out.push('}');
      open.delete(frame.container);
      stack.pop();
    }
  }

  return out.join('');
}

/**
 * True when two values have the same canonical JSON (`canonicalJson(a) === canonicalJson(b)`),
 * decided without writing either while both are plain JSON data (null, booleans, finite numbers,
 * strings, arrays, objects without toJSON() and without undefined members) and stopping at the
 * first difference; anything else is left to the writer. Numbers compare by value: their canonical
 * texts are equal exactly when they are (`-0` and `0` both write `0`).
 */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  return equalPlain(a, b, 0) ?? canonicalJson(a) === canonicalJson(b);
}

type PlainKind = 'scalar' | 'array' | 'object' | 'other';

function plainKind(value: unknown): PlainKind {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return 'scalar';
  if (typeof value === 'number') return Number.isFinite(value) ? 'scalar' : 'other';
  if (typeof value !== 'object') return 'other';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return 'other';
  return Array.isArray(value) ? 'array' : 'object';
}

/** {@link sameCanonicalJson} on plain data; undefined when the canonical writer must decide. */
function equalPlain(a: unknown, b: unknown, depth: number): boolean | undefined {
  const kind = plainKind(a);
  const other = plainKind(b);
  if (kind === 'other' || other === 'other') return undefined;
  if (kind !== other) return false;
  if (kind === 'scalar' || a === b) return a === b;
  if (depth >= FAST_DEPTH) return undefined;
  if (kind === 'array') {
    const x = a as readonly unknown[];
    const y = b as readonly unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i += 1) {
      const same = equalPlain(x[i], y[i], depth + 1);
      if (same !== true) return same;
    }
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  // Different key sets may still write the same text (an undefined member is left out).
  if (keys.length !== Object.keys(y).length) return undefined;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(y, key)) return undefined;
    const same = equalPlain(x[key], y[key], depth + 1);
    if (same !== true) return same;
  }
  return true;
}

/**
 * Hash of an environment snapshot: `'sha256:'` followed by the 64 lower-case hex digits of the
 * SHA-256 of the UTF-8 bytes of {@link canonicalJson}(snapshot) (CONTRACT §8).
 */
export function snapshotHash(snapshot: unknown): string {
  const digest = createHash('sha256').update(canonicalJson(snapshot), 'utf8').digest('hex');
  return SNAPSHOT_HASH_PREFIX + digest;
}

// ---------------------------------------------------------------------------------------------
// internals

type Frame =
  | { kind: 'array'; container: object; items: readonly unknown[]; index: number }
  | { kind: 'object'; container: object; entries: [string, unknown][]; index: number };

/** `value.toJSON(key)` when it has one (as JSON.stringify calls it), else the value. */
function resolveToJson(value: unknown, key: string | number): unknown {
  if (value !== null && typeof value === 'object' && !(value instanceof JsonFloat)) {
    const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      return (toJSON as (key: string) => unknown).call(value, String(key));
    }
  }
  return value;
}

function serializeScalar(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof JsonFloat) return pythonFloatRepr(value.value);
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isInteger(value) && Math.abs(value) < 1e21
        ? String(value + 0)
        : pythonFloatRepr(value);
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} is not JSON-serialisable`);
  }
}

/**
 * Python's `repr(float)`: the shortest round-tripping digits (the same digits JavaScript picks),
 * positional for decimal exponents -4..15, otherwise scientific with a signed exponent of at least
 * two digits; an integral value keeps a trailing `.0`.
 */
function pythonFloatRepr(value: number): string {
  if (!Number.isFinite(value)) {
    throw new TypeError(`canonicalJson: ${String(value)} is not JSON-serialisable`);
  }
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  // toExponential() without an argument yields the shortest round-tripping digits.
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);

  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
    const intPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    const fraction = digits.slice(exponent + 1) || '0';
    return `${sign}${intPart}.${fraction}`;
  }
  const scientificMantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const exponentSign = exponent < 0 ? '-' : '+';
  return `${sign}${scientificMantissa}e${exponentSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

// Printable ASCII except `"` and `\`: such strings need no escaping at all.
const PLAIN_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x08: '\\b',
  0x0c: '\\f',
};

/** Quotes a string the way Python's `ensure_ascii=True` encoder does. */
function quoteString(value: string): string {
  if (PLAIN_STRING.test(value)) return `"${value}"`;
  let result = '"';
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    const short = SHORT_ESCAPES[code];
    if (short !== undefined) {
      result += short;
    } else if (code < 0x20 || code > 0x7e) {
      // UTF-16 code units, so astral characters come out as a surrogate pair of escapes.
      result += '\\u' + code.toString(16).padStart(4, '0');
    } else {
      result += value[i];
    }
  }
  return result + '"';
}

/**
 * Orders strings by Unicode code point, as Python sorts `str` keys. Plain `<` compares UTF-16 code
 * units, which would put astral characters (stored as surrogate pairs, 0xD800..0xDFFF) before
 * U+E000..U+FFFF. A lone surrogate is its own code point, exactly as in Python. Usable as an
 * `Array.prototype.sort` comparator.
 */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(j) ?? 0;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length - i - (b.length - j);
}
