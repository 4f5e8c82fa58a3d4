import { loadConfig } from '../../config/config';
import { AppException } from '../../common/errors/app-exception';
import type { LoginAttemptsRepository, LoginKey } from './login-attempts.repository';
import { LoginThrottleService } from './login-throttle.service';

/** An in-memory stand-in for the repository that records its calls. */
function fakeRepo(opts: { retryAfter?: number | null; failures?: Record<string, number> } = {}) {
  const calls: string[] = [];
  const repo = {
    retryAfterSeconds: jest.fn(async (keys: readonly LoginKey[]) => {
      calls.push(`check ${keys.map((k) => `${k.scope}:${k.key}`).join(',')}`);
      return opts.retryAfter ?? null;
    }),
    recordFailure: jest.fn(async (keys: readonly LoginKey[]) => {
      calls.push(`fail ${keys.map((k) => `${k.scope}:${k.key}`).join(',')}`);
      return keys.map((k) => ({ ...k, failures: opts.failures?.[k.scope] ?? 1 }));
    }),
    lock: jest.fn(async (key: LoginKey, seconds: number) => {
      calls.push(`lock ${key.scope}:${key.key} ${seconds}`);
    }),
    reset: jest.fn(async (key: LoginKey) => {
      calls.push(`reset ${key.scope}:${key.key}`);
    }),
  };
  return { repo, calls };
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
    expect(calls).toEqual(['check user:alice,ip:10.0.0.1']);
  });

  it('counts a wrong password against the username and the address, then rethrows the 401', async () => {
    const { repo, calls } = fakeRepo();
    await expect(service(repo).guard('Alice', '10.0.0.1', wrong)).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
    expect(calls).toEqual(['check user:alice,ip:10.0.0.1', 'fail user:alice,ip:10.0.0.1']);
  });

  it.each([
    // failures per scope → the locks set (LOGIN_LOCKOUT_SECONDS 60, doubling)
    [{ user: 2, ip: 4 }, []],
    [{ user: 3, ip: 4 }, ['lock user:alice 60']],
    [{ user: 4, ip: 5 }, ['lock user:alice 120', 'lock ip:10.0.0.1 60']],
    [{ user: 1, ip: 7 }, ['lock ip:10.0.0.1 240']],
  ])('failures %j lock %j', async (failures, locks) => {
    const { repo, calls } = fakeRepo({ failures });
    await expect(service(repo).guard('alice', '10.0.0.1', wrong)).rejects.toBeInstanceOf(AppException);
    expect(calls.filter((c) => c.startsWith('lock'))).toEqual(locks);
  });

  it('does not count other refusals (a disabled user gave the right password)', async () => {
    const { repo, calls } = fakeRepo();
    const disabled = () => Promise.reject(new AppException('user_disabled', 'The user account is disabled'));
    await expect(service(repo).guard('alice', '10.0.0.1', disabled)).rejects.toMatchObject({
      code: 'user_disabled',
    });
    expect(calls).toEqual(['check user:alice,ip:10.0.0.1']);
  });

  it("forgets the username's failures on success, not the address's", async () => {
    const { repo, calls } = fakeRepo();
    await expect(service(repo).guard('Alice', '10.0.0.1', async () => 'token')).resolves.toBe('token');
    expect(calls).toEqual(['check user:alice,ip:10.0.0.1', 'reset user:alice']);
  });

  it('leaves out a scope whose maximum is 0, and an unknown address', async () => {
    const a = fakeRepo();
    await service(a.repo, { LOGIN_MAX_FAILURES: '0' }).guard('alice', '10.0.0.1', wrong).catch(() => undefined);
    expect(a.calls).toEqual(['check ip:10.0.0.1', 'fail ip:10.0.0.1']);
    const b = fakeRepo();
    await service(b.repo).guard('alice', undefined, wrong).catch(() => undefined);
    expect(b.calls).toEqual(['check user:alice', 'fail user:alice']);
    const c = fakeRepo();
    const off = service(c.repo, { LOGIN_MAX_FAILURES: '0', LOGIN_MAX_FAILURES_PER_ADDRESS: '0' });
    await expect(off.guard('alice', '10.0.0.1', async () => 'token')).resolves.toBe('token');
    expect(c.calls).toEqual([]);
  });
});
