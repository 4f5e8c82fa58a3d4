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
