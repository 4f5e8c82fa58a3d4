/**
 * Well-formed UTF-16 (issue #22, defect 4): a JSON string may hold an unpaired surrogate escape
 * (`"\ud800"`). Such a string cannot be encoded as UTF-8 (PostgreSQL would receive U+FFFD, so
 * what is stored is not what was sent) and makes some validators throw (class-validator's
 * `isEmail` calls `decodeURI`, a URIError → 500). Every string of a request body or query, keys
 * included, is checked before any validator runs; one that is not well-formed is a 422.
 *
 * `String.prototype.isWellFormed` exists on Node 20 but not in this project's TypeScript lib
 * (ES2023), so the same rule is spelled as a regular expression.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** True when `value` holds no unpaired UTF-16 surrogate. */
export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** `value` with every unpaired surrogate replaced by U+FFFD (what `toWellFormed` does). */
export function toWellFormedText(value: string): string {
  return value.replace(LONE_SURROGATES, '\ufffd');
}

/** The message of the rule, in the style of the other field messages. */
export const NOT_WELL_FORMED = 'must not contain unpaired UTF-16 surrogates';
