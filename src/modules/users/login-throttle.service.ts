import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { AppException } from '../../common/errors/app-exception';
import { LoginAttemptsRepository, LoginKey } from './login-attempts.repository';
import { lockoutSeconds, usernameKey } from './login-throttle.policy';

/**
 * Login throttling (issue #24 §2; policy in `LoginThrottleConfig` and `login-throttle.policy.ts`).
 * Runs around the login's transaction (see `LoginThrottleInterceptor`), so a failure is counted even
 * though the login's transaction rolls back, and on the pool's connection the login no longer holds.
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
   * hashed) while the username or the address is locked; otherwise runs it, counts an
   * `invalid_credentials` failure against both, and forgets the username's failures on success.
   * The answer is the same whether or not the username exists.
   */
  async guard<T>(username: string, address: string | undefined, attempt: () => Promise<T>): Promise<T> {
    const keys = this.keys(username, address);
    if (keys.length === 0) return attempt();
    const retryAfter = await this.attempts.retryAfterSeconds(keys);
    if (retryAfter !== null) throw tooManyAttempts(retryAfter);
    let result: T;
    try {
      result = await attempt();
    } catch (error) {
      if (error instanceof AppException && error.code === 'invalid_credentials') {
        await this.recordFailure(keys);
      }
      throw error;
    }
    const user = keys.find((k) => k.scope === 'user');
    if (user !== undefined) await this.attempts.reset(user);
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

  private async recordFailure(keys: LoginKey[]): Promise<void> {
    const t = this.config.loginThrottle;
    const counted = await this.attempts.recordFailure(keys, t.windowSeconds);
    for (const row of counted) {
      const max = row.scope === 'user' ? t.maxFailuresPerUser : t.maxFailuresPerAddress;
      const seconds = lockoutSeconds(row.failures, max, t.lockoutSeconds, t.maxLockoutSeconds);
      if (seconds === 0) continue;
      await this.attempts.lock(row, seconds, t.windowSeconds);
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
