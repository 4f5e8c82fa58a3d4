/**
 * Shared normalisation rules for string lists (CONTRACT §2).
 *
 * Lists called `tags`, `use_cases` or `endpoints` are normalised everywhere in the service by the
 * same rule, so this module is the single implementation of it.
 */

/**
 * The key two spellings share when they differ only in case: each code point lower-cased on its
 * own, the first code point of the result kept (Unicode's simple case mapping, as PostgreSQL's
 * `lower()` of the tags indexes applies it). `toLowerCase()` of the whole text applies the full,
 * context-dependent rules instead: 'ΟΔΟΣ' became 'οδος' (final sigma) where `lower()` gives
 * 'οδοσ', so a list kept both spellings that every tag filter and tag list treats as one.
 */
export function caseKey(text: string): string {
  let key = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    key += lower.length === ch.length ? lower : String.fromCodePoint(lower.codePointAt(0) ?? 0);
  }
  return key;
}

/**
 * Normalises a list of strings: trims every entry, drops entries that are empty after trimming,
 * removes case-insensitive duplicates keeping the first occurrence with its original spelling, and
 * keeps the original order. Values are never lower-cased.
 *
 * Example: `[' K8s', 'k8s', '', ' ', 'Prod']` → `['K8s', 'Prod']`.
 *
 * The input is not modified; a new array is always returned.
 */
export function normalizeStringList(values: readonly string[]): string[] {
  const result: string[] = [];
  const seen = new Set<string>();
  for (const value of values) {
    const trimmed = value.trim();
    if (trimmed === '') continue;
    const key = caseKey(trimmed);
    if (seen.has(key)) continue;
    seen.add(key);
    result.push(trimmed);
  }
  return result;
}

/**
 * Optional text: trimmed, and `null` when absent or blank after trimming (stored as NULL, never as
 * an empty string). DTO strings arrive trimmed already; parsed report fields do not.
 *
 * Example: `'  a '` → `'a'`; `'  '`, `''`, `null`, `undefined` → `null`.
 */
export function blankToNull(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a
 * lone surrogate cannot be written as UTF-8 (PostgreSQL refuses it in `jsonb`, and `text` would get
 * U+FFFD). Every cut of text read from a report goes through here.
 *
 * Example: `cutText('a😀', 2)` → `'a'`; `cutText('abc', 2)` → `'ab'`.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * `text` as a string of its own: equal to it, but sharing no memory with a longer string it was cut
 * from. A parser hands out text as substrings of the chunk it is reading, and V8 keeps a substring
 * of 13 or more characters as a view of its parent, so one stored failure message would keep its
 * whole 64 KB chunk of the report alive: a parsed JUnit report held about all of its upload's text
 * (13.4 of the 66 MB of the bench's 100,000 testcases; bench/README.md fix 63). Slicing a
 * concatenation makes V8 flatten it into a new string, which the slice then views: one copy of
 * `text`, one character longer. Texts too short to be views are returned as they are.
 */
export function ownText(text: string): string {
  return text.length < 13 ? text : (' ' + text).slice(1);
}
