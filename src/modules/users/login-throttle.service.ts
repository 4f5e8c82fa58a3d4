import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { AppException } from '../../common/errors/app-exception';
import { LoginAttemptsRepository, LoginKey, LoginReservation } from './login-attempts.repository';
import { lockoutSchedule, lockoutSeconds, usernameKey } from './login-throttle.policy';

/**
 * Login throttling (issue #24 §2; policy in `LoginThrottleConfig` and `login-throttle.policy.ts`).
 * Runs around the login's transaction (see `LoginThrottleInterceptor`), so a failure stays counted
 * even though the login's transaction rolls back, and on the pool's connection the login no longer
 * holds.
 *
 * An attempt is counted before its password is checked: one statement
 * (`LoginAttemptsRepository.reserve`) refuses it while its username or its address is locked, or
 * else counts it on both as a failure, and the attempt that brings a key's count to its maximum
 * starts the key's lockout right then. So on any number of instances at most the maximum of
 * attempts per key are ever counted in a window before the key is locked, and only they reach the
 * password hash. A key that reaches its maximum while earlier attempts are still running: those
 * finish normally (each answered as its password deserves: a 401 stays counted, a success or
 * another refusal is taken back, below), and every new attempt is refused with 429 until the
 * lockout ends, even if the running ones turn out to succeed. An attempt that does not fail with
 * `invalid_credentials` (a success; `user_disabled`, which only the right password gets; an
 * outage) is taken back: its count on each key goes down by one and the lockout it started, if it
 * started one, is lifted; a success also forgets the username's count, as before.
 */
@Injectable()
export class LoginThrottleService {
  private readonly logger = new Logger('LoginThrottle');

  constructor(
    private readonly attempts: LoginAttemptsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Refuses the attempt (429 `too_many_attempts`, before `attempt` and so before any password is
   * hashed) while the username or the address is locked; otherwise counts it against both and runs
   * it, keeps it counted when it fails with `invalid_credentials`, takes it back otherwise, and
   * forgets the username's count on success. The answer is the same whether or not the username
   * exists.
   */
  async guard<T>(
    username: string,
    address: string | undefined,
    attempt: () => Promise<T>,
  ): Promise<T> {
    const keys = this.keys(username, address);
    if (keys.length === 0) return attempt();
    const reserved = await this.reserve(keys);
    let result: T;
    try {
      result = await attempt();
    } catch (error) {
      if (error instanceof AppException && error.code === 'invalid_credentials') {
        this.logLockouts(reserved);
      } else {
        await this.attempts.release(reserved).catch((releaseError: unknown) => {
          // The attempt's own error is the answer; the reservation then stays counted.
          this.logger.warn(`Could not take back a login attempt: ${String(releaseError)}`);
        });
      }
      throw error;
    }
    await this.attempts.release(
      reserved.filter((r) => r.scope !== 'user'),
      keys.filter((k) => k.scope === 'user'),
    );
    return result;
  }

  private keys(username: string, address: string | undefined): LoginKey[] {
    const t = this.config.loginThrottle;
    const keys: LoginKey[] = [];
    if (t.maxFailuresPerUser > 0) keys.push({ scope: 'user', key: usernameKey(username) });
    if (t.maxFailuresPerAddress > 0 && address !== undefined && address !== '') {
      keys.push({ scope: 'ip', key: address });
    }
    return keys;
  }

  /** Counts the attempt on every key, or throws 429 while one of them is locked. */
  private async reserve(keys: LoginKey[]): Promise<LoginReservation[]> {
    const t = this.config.loginThrottle;
    const { reserved, retryAfter } = await this.attempts.reserve(keys, {
      maxFailuresPerUser: t.maxFailuresPerUser,
      maxFailuresPerAddress: t.maxFailuresPerAddress,
      lockouts: lockoutSchedule(t.lockoutSeconds, t.maxLockoutSeconds),
      windowSeconds: t.windowSeconds,
    });
    if (reserved.length === keys.length) return reserved;
    // A key was locked: by then nothing was reserved, or (locked by another instance while the
    // statement ran) only the other keys were, which are taken back.
    if (reserved.length > 0) await this.attempts.release(reserved);
    throw tooManyAttempts(retryAfter ?? (await this.attempts.retryAfterSeconds(keys)) ?? 1);
  }

  private logLockouts(reserved: LoginReservation[]): void {
    const t = this.config.loginThrottle;
    for (const row of reserved) {
      if (row.lockedUntil === null) continue;
      const max = row.scope === 'user' ? t.maxFailuresPerUser : t.maxFailuresPerAddress;
      const seconds = lockoutSeconds(row.failures, max, t.lockoutSeconds, t.maxLockoutSeconds);
      this.logger.warn(
        `Login locked for ${seconds} s after ${row.failures} failed attempts (${row.scope} ${row.key})`,
      );
    }
  }
}

function tooManyAttempts(retryAfter: number): AppException {
  return new AppException(
    'too_many_attempts',
    `Too many failed login attempts; try again in ${retryAfter} s (Retry-After).`,
    undefined,
    { 'Retry-After': String(retryAfter) },
  );
}
