/**
 * Checks that a JSON value received in a request can be stored in PostgreSQL and hashed exactly
 * as received, so a write never fails with a 500 and a stored snapshot re-hashes to the same value.
 *
 * PostgreSQL rejects NUL characters in `text` and `jsonb`; lone UTF-16 surrogates would be stored
 * as U+FFFD (so the stored snapshot would no longer match its hash); numbers that overflowed to
 * ±Infinity while parsing (`1e999`) cannot be serialised at all; and `jsonb` refuses nesting
 * beyond the server's stack depth. Pure function, no NestJS.
 */
import { ValidationIssue } from './topology';

/** Deepest nesting accepted inside one field (the field itself is depth 0). */
export const MAX_JSON_DEPTH = 64;

/**
 * Returns every problem found in `value` (strings, object keys, numbers and nesting depth), each
 * with the dot path of the offending value below `path`. At most `limit` issues are reported.
 * Iterative, so hostile nesting cannot overflow the call stack.
 */
export function jsonSafetyIssues(value: unknown, path: string, limit = 20): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path, depth: 0 }];
  while (stack.length > 0 && issues.length < limit) {
    const item = stack.pop() as { value: unknown; path: string; depth: number };
    const v = item.value;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) issues.push({ path: item.path, message: `${label(item.path)} ${problem}` });
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        issues.push({ path: item.path, message: `${label(item.path)} is out of range` });
      }
    } else if (v !== null && typeof v === 'object') {
      if (item.depth >= MAX_JSON_DEPTH) {
        issues.push({
          path: item.path,
          message: `${label(item.path)} is nested more than ${MAX_JSON_DEPTH} levels deep`,
        });
        continue;
      }
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i -= 1) {
          stack.push({ value: v[i], path: `${item.path}.${i}`, depth: item.depth + 1 });
        }
      } else {
        const keys = Object.keys(v);
        for (let i = keys.length - 1; i >= 0; i -= 1) {
          const key = keys[i];
          const childPath = `${item.path}.${key}`;
          const keyProblem = stringProblem(key);
          if (keyProblem) {
            issues.push({ path: childPath, message: `key ${keyProblem}` });
            continue;
          }
          stack.push({
            value: (v as Record<string, unknown>)[key],
            path: childPath,
            depth: item.depth + 1,
          });
        }
      }
    }
  }
  return issues;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(value)) return 'must not contain unpaired UTF-16 surrogates';
  return null;
}

function label(path: string): string {
  const segments = path.split('.');
  const last = segments[segments.length - 1];
  return /^\d+$/.test(last) && segments.length > 1
    ? `${segments[segments.length - 2]}[${last}]`
    : last;
}
