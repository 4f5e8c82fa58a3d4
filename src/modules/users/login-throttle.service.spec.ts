import { Logger } from '@nestjs/common';
import { loadConfig } from '../../config/config';
import { AppException } from '../../common/errors/app-exception';
import type {
  LoginAttemptsRepository,
  LoginKey,
  LoginReservation,
  ReserveLimits,
} from './login-attempts.repository';
import { LoginThrottleService } from './login-throttle.service';

const keyText = (k: LoginKey) => `${k.scope}:${k.key}`;

/**
 * An in-memory stand-in for the repository that records its calls (the counting itself, in
 * PostgreSQL, is proven by test/e2e/login-throttling.e2e-spec.ts). `reserve` answers the keys'
 * reservations, or only `reserveOnly` of them, or none and `retryAfter`.
 */
function fakeRepo(
  opts: {
    retryAfter?: number | null;
    reserveOnly?: Array<LoginKey['scope']>;
    lockedUntil?: Partial<Record<LoginKey['scope'], string>>;
    failures?: Partial<Record<LoginKey['scope'], number>>;
    releaseFails?: boolean;
  } = {},
) {
  const calls: string[] = [];
  const limits: ReserveLimits[] = [];
  const repo = {
    reserve: jest.fn(async (keys: readonly LoginKey[], l: ReserveLimits) => {
      calls.push(`reserve ${keys.map(keyText).join(',')}`);
      limits.push(l);
      if (opts.retryAfter != null) return { reserved: [], retryAfter: opts.retryAfter };
      const reserved: LoginReservation[] = keys
        .filter((k) => opts.reserveOnly === undefined || opts.reserveOnly.includes(k.scope))
        .map((k) => ({
          ...k,
          failures: opts.failures?.[k.scope] ?? 1,
          windowStart: '2026-01-01 00:00:00.123456+00',
          lockedUntil: opts.lockedUntil?.[k.scope] ?? null,
        }));
      return { reserved, retryAfter: null };
    }),
    release: jest.fn(async (reserved: readonly LoginReservation[], forget: readonly LoginKey[] = []) => {
      calls.push(`release ${reserved.map(keyText).join(',')} forget ${forget.map(keyText).join(',')}`);
      if (opts.releaseFails) throw new Error('connection lost');
    }),
    retryAfterSeconds: jest.fn(async (keys: readonly LoginKey[]) => {
      calls.push(`check ${keys.map(keyText).join(',')}`);
      return 7;
    }),
  };
  return { repo, calls, limits };
}

function service(repo: unknown, env: Record<string, string> = {}) {
  const config = loadConfig(
    { AUTH_SECRET: 'x'.repeat(40), LOGIN_MAX_FAILURES: '3', LOGIN_MAX_FAILURES_PER_ADDRESS: '5', ...env },
    { persistSecret: false },
  );
  return new LoginThrottleService(repo as LoginAttemptsRepository, config);
}

const wrong = () => Promise.reject(new AppException('invalid_credentials', 'Invalid username or password'));

describe('LoginThrottleService.guard', () => {
  it('refuses a locked attempt with 429 and Retry-After without running it (no password check)', async () => {
    const { repo, calls } = fakeRepo({ retryAfter: 42 });
    const attempt = jest.fn(async () => 'token');
    const error = await service(repo).guard(' Alice ', '10.0.0.1', attempt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppException);
    expect(error).toMatchObject({ code: 'too_many_attempts', status: 429, headers: { 'Retry-After': '42' } });
    expect(attempt).not.toHaveBeenCalled();
    expect(calls).toEqual(['reserve user:Alice,ip:10.0.0.1']);  // trimmed; the case is folded by the database's lower()
  });

  it('reserves with the configured limits and the policy’s lockouts before running the attempt', async () => {
    const { repo, limits } = fakeRepo();
    const attempt = jest.fn(async () => {
      expect(repo.reserve).toHaveBeenCalledTimes(1);
      return 'token';
    });
    const env = { LOGIN_LOCKOUT_SECONDS: '30', LOGIN_MAX_LOCKOUT_SECONDS: '200', LOGIN_WINDOW_SECONDS: '600' };
    await expect(service(repo, env).guard('alice', '10.0.0.1', attempt)).resolves.toBe('token');
    expect(limits).toEqual([
      { maxFailuresPerUser: 3, maxFailuresPerAddress: 5, lockouts: [30, 60, 120, 200], windowSeconds: 600 },
    ]);
  });

  it('keeps a wrong password counted against the username and the address, and rethrows the 401', async () => {
    const { repo, calls } = fakeRepo();
    await expect(service(repo).guard('Alice', '10.0.0.1', wrong)).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
    expect(calls).toEqual(['reserve user:Alice,ip:10.0.0.1']);
  });

  it('logs the lockouts a failed attempt started', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const { repo } = fakeRepo({ failures: { user: 4, ip: 2 }, lockedUntil: { user: 'later' } });
      await expect(service(repo).guard('alice', '10.0.0.1', wrong)).rejects.toBeInstanceOf(AppException);
      expect(warn.mock.calls.map((c) => c[0])).toEqual([
        'Login locked for 120 s after 4 failed attempts (user alice)',
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it.each([
    ['a disabled user gave the right password', new AppException('user_disabled', 'The user account is disabled')],
    ['the database failed', new Error('database_unavailable')],
  ])('takes back the attempt when it fails otherwise (%s)', async (_why, thrown) => {
    const { repo, calls } = fakeRepo();
    await expect(service(repo).guard('alice', '10.0.0.1', () => Promise.reject(thrown))).rejects.toBe(thrown);
    expect(calls).toEqual(['reserve user:alice,ip:10.0.0.1', 'release user:alice,ip:10.0.0.1 forget ']);
  });

  it("answers the attempt's own error when taking it back fails", async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const { repo } = fakeRepo({ releaseFails: true });
      const disabled = new AppException('user_disabled', 'The user account is disabled');
      await expect(service(repo).guard('alice', '10.0.0.1', () => Promise.reject(disabled))).rejects.toBe(disabled);
    } finally {
      warn.mockRestore();
    }
  });

  it("on success forgets the username's count and takes back the address's reservation", async () => {
    const { repo, calls } = fakeRepo();
    await expect(service(repo).guard('Alice', '10.0.0.1', async () => 'token')).resolves.toBe('token');
    expect(calls).toEqual(['reserve user:Alice,ip:10.0.0.1', 'release ip:10.0.0.1 forget user:Alice']);
  });

  it('takes back a partial reservation (a key locked meanwhile) and refuses with the lockout', async () => {
    const { repo, calls } = fakeRepo({ reserveOnly: ['user'] });
    const attempt = jest.fn(async () => 'token');
    const error = await service(repo).guard('alice', '10.0.0.1', attempt).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'Retry-After': '7' } });
    expect(attempt).not.toHaveBeenCalled();
    expect(calls).toEqual([
      'reserve user:alice,ip:10.0.0.1',
      'release user:alice forget ',
      'check user:alice,ip:10.0.0.1',
    ]);
  });

  it('leaves out a scope whose maximum is 0, and an unknown address', async () => {
    const a = fakeRepo();
    await service(a.repo, { LOGIN_MAX_FAILURES: '0' }).guard('alice', '10.0.0.1', wrong).catch(() => undefined);
    expect(a.calls).toEqual(['reserve ip:10.0.0.1']);
    const b = fakeRepo();
    await service(b.repo).guard('alice', undefined, wrong).catch(() => undefined);
    expect(b.calls).toEqual(['reserve user:alice']);
    const c = fakeRepo();
    const off = service(c.repo, { LOGIN_MAX_FAILURES: '0', LOGIN_MAX_FAILURES_PER_ADDRESS: '0' });
    await expect(off.guard('alice', '10.0.0.1', async () => 'token')).resolves.toBe('token');
    expect(c.calls).toEqual([]);
  });
});
