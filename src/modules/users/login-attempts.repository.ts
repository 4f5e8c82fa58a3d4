import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import type { LoginScope } from './login-throttle.policy';

/** One key of a login attempt: the username's (`user`) or the client address's (`ip`). */
export interface LoginKey {
  scope: LoginScope;
  key: string;
}

/** Expired rows deleted by one recorded failure, at most (the purge rides along, bounded). */
export const LOGIN_ATTEMPTS_PURGE_BATCH = 100;

/**
 * The keys' lockout still running, as whole seconds from now (rounded up), or nothing. The
 * database's clock decides, so every instance agrees.
 */
const RETRY_AFTER_SQL = `
  SELECT ceil(extract(epoch FROM max(blocked_until) - now()))::int AS retry_after
    FROM login_attempts
   WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))
     AND blocked_until > now()`;

/**
 * Counts one failure for each key, atomically (concurrent failures on any instance each count):
 * a new row, or the next failure of the key's window, or the first of a new window when the row has
 * expired. Purges up to LOGIN_ATTEMPTS_PURGE_BATCH other expired rows on the way (never the keys
 * being counted: one statement must not both delete and update a row).
 */
const RECORD_FAILURE_SQL = `
  WITH keys AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS k(scope, key)
  ), purged AS (
    DELETE FROM login_attempts
     WHERE (scope, key) IN (
       SELECT a.scope, a.key FROM login_attempts a
        WHERE a.expires_at <= now()
          AND (a.scope, a.key) NOT IN (SELECT scope, key FROM keys)
        ORDER BY a.expires_at
        LIMIT ${LOGIN_ATTEMPTS_PURGE_BATCH}
        FOR UPDATE SKIP LOCKED)
  )
  INSERT INTO login_attempts AS a (scope, key, window_start, failures, blocked_until, expires_at)
  SELECT scope, key, now(), 1, NULL, now() + make_interval(secs => $3::float8) FROM keys
  ON CONFLICT (scope, key) DO UPDATE SET
    failures = CASE WHEN a.expires_at <= now() THEN 1 ELSE a.failures + 1 END,
    window_start = CASE WHEN a.expires_at <= now() THEN now() ELSE a.window_start END,
    blocked_until = CASE WHEN a.expires_at <= now() THEN NULL ELSE a.blocked_until END,
    expires_at = CASE WHEN a.expires_at <= now() THEN now() + make_interval(secs => $3::float8)
                      ELSE a.expires_at END
  RETURNING a.scope, a.key, a.failures`;

/**
 * Locks a key for `$3` seconds from now (never shortening a running lockout); the count is then kept
 * until `$4` seconds (the window) after the lockout ends.
 */
const LOCK_SQL = `
  UPDATE login_attempts
     SET blocked_until = greatest(blocked_until, now() + make_interval(secs => $3::float8)),
         expires_at = greatest(expires_at, now() + make_interval(secs => $3::float8 + $4::float8))
   WHERE scope = $1 AND key = $2`;

/**
 * `login_attempts` (migration LoginAttempts): failed logins per username and per client address,
 * in PostgreSQL so that every instance of the service sees the same counts.
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
    const seconds = rows[0]?.retry_after ?? null;
    return seconds === null ? null : Math.max(1, seconds);
  }

  /** Counts a failure for each key; answers each key's failures in its window. */
  async recordFailure(
    keys: readonly LoginKey[],
    windowSeconds: number,
  ): Promise<Array<LoginKey & { failures: number }>> {
    return this.db.query<LoginKey & { failures: number }>(RECORD_FAILURE_SQL, [
      keys.map((k) => k.scope),
      keys.map((k) => k.key),
      windowSeconds,
    ]);
  }

  /** Locks `key` for `seconds` from now; its count then lives `windowSeconds` past the lockout. */
  async lock(key: LoginKey, seconds: number, windowSeconds: number): Promise<void> {
    await this.db.query(LOCK_SQL, [key.scope, key.key, seconds, windowSeconds]);
  }

  /** Forgets the key's failures (a successful login forgets its username's). */
  async reset(key: LoginKey): Promise<void> {
    await this.db.query('DELETE FROM login_attempts WHERE scope = $1 AND key = $2', [
      key.scope,
      key.key,
    ]);
  }
}
