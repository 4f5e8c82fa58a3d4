/** Smallest and largest values of a PostgreSQL `integer` column (int4). */
export const MIN_PG_INTEGER = -2_147_483_648;
export const MAX_PG_INTEGER = 2_147_483_647;

/** Largest value of a whole-number path parameter (a PostgreSQL integer). */
export const MAX_PATH_INTEGER = MAX_PG_INTEGER;

/**
 * A whole-number path parameter (such as `revision_number`): digits only, 1..MAX_PATH_INTEGER.
 * Declared per route with `@Endpoint({ pathIntegers })`, checked by the RolesGuard.
 */
export function isPathInteger(raw: unknown): raw is string {
  if (typeof raw !== 'string' || !/^\d{1,10}$/.test(raw)) return false;
  const n = Number(raw);
  return n >= 1 && n <= MAX_PATH_INTEGER;
}
