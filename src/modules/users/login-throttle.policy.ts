/**
 * The pure rules of login throttling (issue #24 §2); the counting itself is
 * `LoginAttemptsRepository`'s, in PostgreSQL.
 *
 * "Slowed, then refused" is a progressive lockout, never a server-side delay (a delay would hold a
 * connection and a transaction open for the attacker): the failure that brings a count to its
 * maximum locks the key for the first lockout, each further failure (possible only once a lockout
 * has ended) for twice the previous one, up to the longest lockout.
 *
 * An attempt is counted when it starts, before its password is checked (see
 * `LoginThrottleService`), so the lockout starts with the attempt that brings the count to its
 * maximum, and is taken back with the attempt's count when that attempt turns out not to fail.
 */

/** Both scopes of a login attempt: the username and the client address. */
export type LoginScope = 'user' | 'ip';

/**
 * The key of a username: without its outer blanks, as the login looks it up. The letter case is
 * folded by the database (`lower()` in the throttle's statements, as in the login's lookup), so the
 * key is the same for every spelling that logs in as one user, `İ` and final `Σ` included.
 */
export function usernameKey(username: string): string {
  // Form C, as names are stored: both spellings of `josé` count on one key.
  return username.trim().normalize('NFC');
}

/**
 * Seconds the key is locked after its `failures`-th failure in the window: 0 below `maxFailures`,
 * `lockoutSeconds` on reaching it, doubling with each further failure, at most `maxLockoutSeconds`.
 * `maxFailures` 0 means the scope is not throttled.
 */
export function lockoutSeconds(
  failures: number,
  maxFailures: number,
  lockout: number,
  maxLockout: number,
): number {
  if (maxFailures <= 0 || failures < maxFailures) return 0;
  const doublings = failures - maxFailures;
  // 2^31 times any lockout is beyond every accepted maximum; avoids huge powers.
  if (doublings >= 31) return maxLockout;
  return Math.min(lockout * 2 ** doublings, maxLockout);
}

/**
 * Every lockout {@link lockoutSeconds} can answer, in order: entry `i` is the lockout after the
 * `(maxFailures + i)`-th failure, whatever `maxFailures` (> 0) is; the last entry holds for every
 * later failure. The reservation statement (`LoginAttemptsRepository.reserve`) reads the lockout it
 * starts from this list, so that the rule stays here.
 */
export function lockoutSchedule(lockout: number, maxLockout: number): number[] {
  const schedule: number[] = [];
  for (let failures = 1; ; failures++) {
    const seconds = lockoutSeconds(failures, 1, lockout, maxLockout);
    schedule.push(seconds);
    if (seconds >= maxLockout || failures > 31) return schedule;
  }
}
