/**
 * Datetime inputs (CONTRACT §2: "Datetime inputs accept any ISO 8601 offset; a date-only value is
 * accepted where api.md says so").
 *
 * Accepted: the ISO 8601 extended calendar form `YYYY-MM-DDTHH:MM[:SS[.fraction]][offset]`, the
 * offset being `Z`, `±HH`, `±HHMM` or `±HH:MM`; a space may stand for the `T`, a comma for the
 * decimal point. Without an offset the time is UTC (never the server's local time zone). Everything
 * the JavaScript `Date` cannot read the same way is refused here, so that no such value reaches
 * PostgreSQL as an invalid date: week dates (`2026-W01-1`), ordinal dates (`2026-032`), the basic
 * format (`20260501T100000Z`), reduced precision (`2026`, `2026-05`, `2026-05-01T10`), and
 * impossible values (`2026-02-30`, `25:00`, offsets beyond ±23:59), and instants outside years
 * 1–9999 in UTC (`0001-01-01T00:00+01:00`, `9999-12-31T23:00-05:00`).
 */
import { buildMessage, ValidateBy } from 'class-validator';

const DATETIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Longest text a datetime (or date) field can match: `YYYY-MM-DDTHH:MM:SS.fffffffff+HH:MM`. */
export const DATETIME_MAX_LENGTH = 35;

/** The instant of a UTC calendar date and time, or null when a field is out of its range. */
function utc(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  ms = 0,
): Date | null {
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // setUTCFullYear: years 1..99 are not 1901..1999
  if (date.getUTCMonth() !== month - 1) return null; // 2026-02-30 rolled over into March
  date.setUTCHours(hour, minute, second, ms);
  return date;
}

/** Offset in minutes east of UTC (`Z`/absent → 0), or null when out of range. */
function offsetMinutes(offset: string | undefined): number | null {
  if (offset === undefined || offset.toUpperCase() === 'Z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return null;
  return (offset.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

/** The instant an accepted datetime names, or null when the value is not one (see the module). */
export function parseDateTime(value: string): Date | null {
  const m = DATETIME_RE.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, fraction, offset] = m;
  const ms = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));
  const local = utc(+y, +mo, +d, +h, +mi, s === undefined ? 0 : +s, ms);
  const shift = offsetMinutes(offset);
  if (local === null || shift === null) return null;
  const instant = new Date(local.getTime() - shift * 60_000);
  // The offset may carry the instant out of years 1..9999 (`9999-12-31T23:00-05:00`), which no
  // answer could write as `YYYY-…Z` (`toISOString` gives `+010000-…`).
  const year = instant.getUTCFullYear();
  return year < 1 || year > 9999 ? null : instant;
}

/** A date `YYYY-MM-DD` as its first instant (00:00 UTC), or null. */
export function parseDate(value: string): Date | null {
  const m = DATE_RE.exec(value);
  return m ? utc(+m[1], +m[2], +m[3]) : null;
}

/** A datetime, or a date as its 00:00 UTC, or null (filters where api.md allows a date). */
export function parseDateOrDateTime(value: string): Date | null {
  return parseDate(value) ?? parseDateTime(value);
}

/** True for a date-only value `YYYY-MM-DD` (a valid one). */
export function isDateOnly(value: string): boolean {
  return parseDate(value) !== null;
}

/**
 * The instant of a value that passed {@link IsDateTime} (or {@link IsDateOrDateTime}). Throws on
 * anything else: a caller that skipped validation is a programming error, not a user's.
 */
export function toInstant(value: string): Date {
  const date = parseDateOrDateTime(value);
  if (date === null) throw new Error(`not a validated datetime: ${JSON.stringify(value)}`);
  return date;
}

/** Body or query field holding an ISO 8601 datetime (see the module); null/absent are left to others. */
export function IsDateTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isDateTime',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && parseDateTime(value) !== null,
      defaultMessage: buildMessage(
        (each) =>
          `${each}$property must be an ISO 8601 datetime such as 2026-05-01T10:00:00Z (an offset is optional; without one the time is UTC)`,
      ),
    },
  });
}

/** As {@link IsDateTime}, or a date `YYYY-MM-DD`. */
export function IsDateOrDateTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isDateOrDateTime',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && parseDateOrDateTime(value) !== null,
      defaultMessage: buildMessage(
        (each) => `${each}$property must be a date (YYYY-MM-DD) or an ISO 8601 datetime`,
      ),
    },
  });
}
