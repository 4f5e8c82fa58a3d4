import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import type { LoginScope } from './login-throttle.policy';

/** One key of a login attempt: the username's (`user`) or the client address's (`ip`). */
export interface LoginKey {
  scope: LoginScope;
  key: string;
}

/** Expired rows deleted by one reservation, at most (the purge rides along, bounded). */
export const LOGIN_ATTEMPTS_PURGE_BATCH = 100;

/**
 * The keys' lockout still running, as whole seconds from now (rounded up), or nothing. The
 * database's clock decides, so every instance agrees. "Now" is `clock_timestamp()`, not the
 * transaction's start: a lockout another transaction set (from its own, later start) and committed
 * before this statement's snapshot then never reads as longer than the lockout itself.
 */
export const RETRY_AFTER_SQL = `
  SELECT ceil(extract(epoch FROM max(blocked_until) - clock_timestamp()))::int AS retry_after
    FROM login_attempts
   WHERE (scope, key) IN (${storedKeys('$1', '$2')})
     AND blocked_until > now()`;

/**
 * The keys `scopes`, `keys` (two text arrays) as stored: a username lower-cased by PostgreSQL's
 * `lower()`, as the login's lookup compares it (`lower(username) = lower($1)`), so every spelling
 * that logs in as one user counts on one key (JavaScript's `toLowerCase()` maps `İ` and a final `Σ`
 * otherwise, and `kİrill` escaped the lockout of `kirill`); an address as it is.
 */
function storedKeys(scopes: string, keys: string): string {
  return `SELECT s, CASE s WHEN 'user' THEN lower(k) ELSE k END
            FROM unnest(${scopes}::text[], ${keys}::text[]) AS u(s, k)`;
}

/**
 * The lockout (an interval) that the `count`-th failure of a key whose maximum is `max` starts, or
 * NULL below the maximum: the entry of the schedule `$5` (`lockoutSchedule`, the policy's) for that
 * failure, its last entry beyond.
 */
function lockoutSql(count: string, max: string): string {
  return `CASE WHEN ${count} >= ${max}
            THEN make_interval(secs => ($5::int[])[least(${count} - ${max} + 1, cardinality($5::int[]))])
          END`;
}

/**
 * Reserves one attempt on every key, atomically, or on none while one of them is locked: one
 * statement that checks the lockout and counts the attempt as a failure before its password is
 * checked (a new row; the next count of the key's window; or the first of a new window when the row
 * has expired), and starts the key's lockout when the count reaches the key's maximum (`$3` per
 * username, `$4` per address), so that no attempt beyond the maximum is ever reserved, on any
 * instance. The row lock of the upsert serialises concurrent reservations of a key; keys are taken
 * in their given order (username, then address), so that two reservations cannot deadlock.
 *
 * Answers one row: `retry_after` (seconds, the database's clock, as in RETRY_AFTER_SQL) when a
 * key was locked when the statement started, and nothing reserved; otherwise one row per reserved
 * key, with the count it reached, its window's start and the lockout it started, if any (as text,
 * exact to the microsecond, for {@link RELEASE_SQL}). A key locked by another instance after the
 * statement started is skipped by the upsert's WHERE (evaluated on the newest row): the caller then
 * sees fewer keys than it asked for, and takes the others back. Purges up to
 * LOGIN_ATTEMPTS_PURGE_BATCH other expired rows on the way (never the keys being counted: one
 * statement must not both delete and update a row).
 */
export const RESERVE_SQL = `
  WITH keys AS (
    SELECT k.scope, CASE k.scope WHEN 'user' THEN lower(k.key) ELSE k.key END AS key, k.ord,
           CASE k.scope WHEN 'user' THEN $3::int ELSE $4::int END AS max_failures
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(scope, key, ord)
  ), purged AS (
    DELETE FROM login_attempts
     WHERE (scope, key) IN (
       SELECT a.scope, a.key FROM login_attempts a
        WHERE a.expires_at <= now()
          AND (a.scope, a.key) NOT IN (SELECT scope, key FROM keys)
        ORDER BY a.expires_at
        LIMIT ${LOGIN_ATTEMPTS_PURGE_BATCH}
        FOR UPDATE SKIP LOCKED)
  ), locked AS (
    SELECT max(a.blocked_until) AS until
      FROM login_attempts a JOIN keys k ON a.scope = k.scope AND a.key = k.key
     WHERE a.blocked_until > now()
  ), reserved AS (
    INSERT INTO login_attempts AS a (scope, key, window_start, failures, blocked_until, expires_at)
    SELECT k.scope, k.key, now(), 1, now() + l.lockout,
           greatest(now(), now() + l.lockout) + make_interval(secs => $6::float8)
      FROM keys k CROSS JOIN LATERAL (SELECT ${lockoutSql('1', 'k.max_failures')} AS lockout) l
     WHERE (SELECT until FROM locked) IS NULL
     ORDER BY k.ord
    ON CONFLICT (scope, key) DO UPDATE SET (failures, window_start, blocked_until, expires_at) = (
      SELECT n.failures, n.window_start, coalesce(now() + n.lockout, n.blocked_until),
             greatest(n.expires_at, now() + n.lockout + make_interval(secs => $6::float8))
        FROM (SELECT c.*, ${lockoutSql('c.failures', 'c.max_failures')} AS lockout
                FROM (SELECT CASE WHEN a.expires_at <= now() THEN 1 ELSE a.failures + 1 END AS failures,
                             CASE WHEN a.expires_at <= now() THEN now() ELSE a.window_start END
                               AS window_start,
                             CASE WHEN a.expires_at <= now() THEN NULL ELSE a.blocked_until END
                               AS blocked_until,
                             CASE WHEN a.expires_at <= now()
                                  THEN now() + make_interval(secs => $6::float8) ELSE a.expires_at END
                               AS expires_at,
                             CASE a.scope WHEN 'user' THEN $3::int ELSE $4::int END AS max_failures) c
             ) n)
     WHERE a.blocked_until IS NULL OR a.blocked_until <= now()
    RETURNING a.scope, a.key, a.failures, a.window_start::text AS window_start,
              CASE WHEN a.blocked_until > now() THEN a.blocked_until::text END AS locked_until
  )
  SELECT ceil(extract(epoch FROM l.until - clock_timestamp()))::int AS retry_after,
         r.scope, r.key, r.failures, r.window_start, r.locked_until
    FROM locked l LEFT JOIN reserved r ON true`;

/**
 * Takes reservations back (`$1`..`$4`: scope, key, window start, lockout started) and forgets the
 * keys `$5`, `$6` (a successful login forgets its username's count). A reservation is taken back
 * only from the window it was counted in: its count goes down by one (the row goes when it was the
 * only one), and the lockout it started, if still the key's, is lifted (a later lockout stays). The
 * expiry the lockout extended stays: the count is then kept at most one lockout longer.
 */
const RELEASE_SQL = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[])
      AS r(scope, key, window_start, locked_until)
  ), forgotten AS (
    DELETE FROM login_attempts WHERE (scope, key) IN (${storedKeys('$5', '$6')})
  ), dropped AS (
    DELETE FROM login_attempts a USING r
     WHERE a.scope = r.scope AND a.key = r.key AND a.window_start = r.window_start AND a.failures = 1
  )
  UPDATE login_attempts a
     SET failures = a.failures - 1,
         blocked_until = CASE WHEN a.blocked_until = r.locked_until THEN NULL ELSE a.blocked_until END
    FROM r
   WHERE a.scope = r.scope AND a.key = r.key AND a.window_start = r.window_start AND a.failures > 1`;

/** The limits one reservation applies (`LoginThrottleConfig`, the policy's lockouts). */
export interface ReserveLimits {
  maxFailuresPerUser: number;
  maxFailuresPerAddress: number;
  /** `lockoutSchedule(lockoutSeconds, maxLockoutSeconds)`. */
  lockouts: readonly number[];
  windowSeconds: number;
}

/** One attempt counted on one key before its password was checked. */
export interface LoginReservation extends LoginKey {
  /** The key's count in its window, this attempt included. */
  failures: number;
  /** The start of the window the attempt was counted in (the database's text, exact). */
  windowStart: string;
  /** The end of the lockout this attempt started (its count reached the maximum), or null. */
  lockedUntil: string | null;
}

/** A reservation: every key reserved, or none and the seconds until the keys' lockout ends. */
export interface ReserveResult {
  reserved: LoginReservation[];
  retryAfter: number | null;
}

/**
 * `login_attempts` (migration LoginAttempts): login attempts per username and per client address,
 * counted as failures when they start and taken back when they turn out not to be, in PostgreSQL
 * so that every instance of the service sees the same counts.
 */
@Injectable()
export class LoginAttemptsRepository {
  constructor(private readonly db: Db) {}

  /** Seconds until the longest running lockout of `keys` ends, or null when none is locked. */
  async retryAfterSeconds(keys: readonly LoginKey[]): Promise<number | null> {
    const rows = await this.db.prepared<{ retry_after: number | null }>(
      'login_attempts_retry_after',
      RETRY_AFTER_SQL,
      [keys.map((k) => k.scope), keys.map((k) => k.key)],
    );
    return wholeSeconds(rows[0]?.retry_after ?? null);
  }

  /**
   * Reserves an attempt on every key (see RESERVE_SQL); `reserved` has fewer keys than asked for
   * when one was locked meanwhile (the caller takes the others back).
   */
  async reserve(keys: readonly LoginKey[], limits: ReserveLimits): Promise<ReserveResult> {
    const rows = await this.db.prepared<{
      retry_after: number | null;
      scope: LoginKey['scope'] | null;
      key: string | null;
      failures: number | null;
      window_start: string | null;
      locked_until: string | null;
    }>('login_attempts_reserve', RESERVE_SQL, [
      keys.map((k) => k.scope),
      keys.map((k) => k.key),
      limits.maxFailuresPerUser,
      limits.maxFailuresPerAddress,
      limits.lockouts,
      limits.windowSeconds,
    ]);
    const reserved: LoginReservation[] = [];
    for (const row of rows) {
      if (
        row.scope === null ||
        row.key === null ||
        row.failures === null ||
        row.window_start === null
      ) {
        continue;
      }
      reserved.push({
        scope: row.scope,
        key: row.key,
        failures: row.failures,
        windowStart: row.window_start,
        lockedUntil: row.locked_until,
      });
    }
    return { reserved, retryAfter: wholeSeconds(rows[0]?.retry_after ?? null) };
  }

  /**
   * Takes `reservations` back (the attempts did not fail) and forgets the keys `forget` (a
   * successful login forgets its username's count); see RELEASE_SQL.
   */
  async release(
    reservations: readonly LoginReservation[],
    forget: readonly LoginKey[] = [],
  ): Promise<void> {
    if (reservations.length === 0 && forget.length === 0) return;
    await this.db.prepared('login_attempts_release', RELEASE_SQL, [
      reservations.map((r) => r.scope),
      reservations.map((r) => r.key),
      reservations.map((r) => r.windowStart),
      reservations.map((r) => r.lockedUntil),
      forget.map((k) => k.scope),
      forget.map((k) => k.key),
    ]);
  }
}

/** Whole seconds, at least 1 (a lockout ending within the second still refuses), or null. */
function wholeSeconds(seconds: number | null): number | null {
  return seconds === null ? null : Math.max(1, seconds);
}
