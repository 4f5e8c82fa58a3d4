/**
 * Keys of products and components (reference products-auth-errors.md §7.3): a slug of the given key
 * or of the name, made unique per project by a numeric suffix. Products and components have
 * separate key namespaces.
 */

/** Longest key. */
export const KEY_MAX_LENGTH = 100;

/** How many candidates are tried: `base`, `base-2` … `base-1000`. */
export const KEY_MAX_CANDIDATES = 1000;

/** Slug used when nothing usable is left of the source. */
export const EMPTY_KEY_SLUG = 'item';

/**
 * Lower-cased slug: every run of characters outside `[a-z0-9]` becomes one `-`, leading and
 * trailing `-` are stripped, the result is cut to 100 characters (`item` when empty).
 * `'My Key!'` → `'my-key'`, `'WEB'` → `'web'`, `'!!!'` → `'item'`, `'Über Cart'` → `'ber-cart'`.
 */
export function slugifyKey(source: string): string {
  const slug = source
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, KEY_MAX_LENGTH)
    .replace(/-+$/, '');
  return slug === '' ? EMPTY_KEY_SLUG : slug;
}

/**
 * The candidates for `base`, in order: `base`, `base-2`, … `base-1000`. A suffixed candidate cuts
 * the base so that the whole key stays within 100 characters.
 */
export function keyCandidates(base: string, count = KEY_MAX_CANDIDATES): string[] {
  const out: string[] = [base];
  for (let n = 2; n <= count; n++) {
    const suffix = `-${n}`;
    const head = base.slice(0, KEY_MAX_LENGTH - suffix.length).replace(/-+$/, '');
    out.push(`${head === '' ? EMPTY_KEY_SLUG : head}${suffix}`);
  }
  return out;
}

/** First candidate not in `taken`, or `null` when all 1000 are taken. */
export function firstFreeKey(base: string, taken: ReadonlySet<string>): string | null {
  for (const candidate of keyCandidates(base)) {
    if (!taken.has(candidate)) return candidate;
  }
  return null;
}
