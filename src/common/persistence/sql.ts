/**
 * SQL for a `timestamptz` column rendered as the API writes instants: `toISOString()`'s form
 * (`2026-11-21T15:56:05.116Z`, UTC, milliseconds truncated like a JS Date). For reads of many rows
 * (the component graph: thousands of timestamps), where parsing each into a Date in JavaScript and
 * formatting it again was a fifth of the request's CPU. `column` is a code constant, never input.
 */
export function isoUtc(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** An instant as the API writes it, from a Date or from a column selected with {@link isoUtc}. */
export function isoOf(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}
