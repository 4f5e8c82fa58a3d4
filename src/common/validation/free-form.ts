/**
 * Keys of free-form JSON objects (environment `meta`/`extra`, topology extras, `metadata`,
 * `resources`; issue #22, defect 6). They are stored and answered verbatim, and end up in exports,
 * logs and other tools' queries, so they are restricted to a safe character set: no `$ne`-style
 * operators, no quotes, brackets, control or format characters. Letters and digits of any script
 * are fine (`ключ`), as are the separators of usual identifiers (`app.kubernetes.io/name`,
 * `ext:payments`, `cpu-cores`, `os version`, `__proto__`). Pure functions, no NestJS.
 */

/** One problem: the dot path of the object holding the key, and a message. */
export interface FreeFormIssue {
  path: string;
  message: string;
}

/** Longest key of a free-form object, in characters. */
export const FREE_FORM_KEY_MAX = 100;

/** Most keys one free-form object (each nested object counted on its own) may have. */
export const FREE_FORM_KEYS_MAX = 200;

/**
 * A key: 1 to {@link FREE_FORM_KEY_MAX} characters; letters (with their combining marks), digits,
 * spaces and `_ . : / @ -`; it starts with a letter, a digit, `_` or `@` and does not end with a
 * space.
 */
export const FREE_FORM_KEY_RE =
  /^(?=.{1,100}$)[\p{L}\p{N}_@](?:[\p{L}\p{M}\p{N}_.:/@ -]*[\p{L}\p{M}\p{N}_.:/@-])?$/u;

/** The rule, in words, for messages and the OpenAPI descriptions. */
export const FREE_FORM_KEY_RULE =
  `keys are 1–${FREE_FORM_KEY_MAX} characters: letters, digits, spaces and _ . : / @ -, ` +
  'starting with a letter, a digit, _ or @, not ending with a space';

/** True when `key` may name a field of a free-form object. */
export function isFreeFormKey(key: string): boolean {
  return FREE_FORM_KEY_RE.test(key);
}

/**
 * Every key problem of a free-form value, at every nesting level: keys outside
 * {@link FREE_FORM_KEY_RE}, objects with more than `maxKeys` keys. Each issue carries the path of
 * the object holding the key (`meta.headers`; the key itself may be anything, so it is quoted,
 * shortened, in the message). At most `limit` issues; iterative, so nesting cannot overflow the
 * stack.
 */
export function freeFormIssues(
  value: unknown,
  path: string,
  maxKeys = FREE_FORM_KEYS_MAX,
  limit = 20,
): FreeFormIssue[] {
  const issues: FreeFormIssue[] = [];
  // Paths and labels are built only for an issue: a valid 60 KB topology walks thousands of keys.
  const stack: WalkNode[] = [{ value, parent: null, key: path }];
  while (stack.length > 0 && issues.length < limit) {
    const node = stack.pop() as WalkNode;
    const v = node.value;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i -= 1) stack.push({ value: v[i], parent: node, key: i });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > maxKeys) {
      const at = pathOf(node);
      issues.push({
        path: at,
        message: `${labelOf(at)} has ${keys.length} keys; at most ${maxKeys} are allowed`,
      });
    }
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const key = keys[i];
      if (!isFreeFormKey(key)) {
        if (issues.length < limit) {
          const at = pathOf(node);
          issues.push({
            path: at,
            message: `${labelOf(at)} has a key that is not allowed (${quote(key)}): ${FREE_FORM_KEY_RULE}`,
          });
        }
        continue;
      }
      stack.push({ value: (v as Record<string, unknown>)[key], parent: node, key });
    }
  }
  return issues;
}

/** A value of the walk: its key (an index in an array) under its parent; the root's is its path. */
interface WalkNode {
  value: unknown;
  parent: WalkNode | null;
  key: string | number;
}

/** The dot path of a node: its ancestors' keys after the root's path (`meta.headers`). */
function pathOf(node: WalkNode): string {
  const keys: string[] = [];
  let at: WalkNode | null = node;
  for (; at !== null && at.parent !== null; at = at.parent) keys.push(String(at.key));
  const root = String(at?.key ?? '');
  if (root !== '') keys.push(root);
  return keys.reverse().join('.');
}

function quote(key: string): string {
  const chars = [...key];
  return JSON.stringify(chars.length > 40 ? `${chars.slice(0, 40).join('')}…` : key);
}

function labelOf(path: string): string {
  if (path === '') return 'value';
  const segments = path.split('.');
  const last = segments[segments.length - 1];
  return /^\d+$/.test(last) && segments.length > 1
    ? `${segments[segments.length - 2]}[${last}]`
    : last;
}
