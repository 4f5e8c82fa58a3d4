import { ConfigError, loadConfig } from './config';

/** loadConfig with a valid secret and no persisted state, plus `env`. */
function load(env: Record<string, string>) {
  return loadConfig({ AUTH_SECRET: 'x'.repeat(40), ...env }, { persistSecret: false });
}

describe('login throttling settings (issue #24 §2)', () => {
  it('defaults to 10 per username, 50 per address, a 900 s window, 60 s doubling to 3600 s', () => {
    expect(load({}).loginThrottle).toEqual({
      maxFailuresPerUser: 10,
      maxFailuresPerAddress: 50,
      windowSeconds: 900,
      lockoutSeconds: 60,
      maxLockoutSeconds: 3600,
    });
  });

  it('reads every variable', () => {
    expect(
      load({
        LOGIN_MAX_FAILURES: '0',
        LOGIN_MAX_FAILURES_PER_ADDRESS: '7',
        LOGIN_WINDOW_SECONDS: '1',
        LOGIN_LOCKOUT_SECONDS: '5',
        LOGIN_MAX_LOCKOUT_SECONDS: '5',
      }).loginThrottle,
    ).toEqual({
      maxFailuresPerUser: 0,
      maxFailuresPerAddress: 7,
      windowSeconds: 1,
      lockoutSeconds: 5,
      maxLockoutSeconds: 5,
    });
  });

  it('raises the default longest lockout to a longer first lockout', () => {
    expect(load({ LOGIN_LOCKOUT_SECONDS: '7200' }).loginThrottle.maxLockoutSeconds).toBe(7200);
  });

  it.each([
    ['LOGIN_MAX_FAILURES', '-1'],
    ['LOGIN_MAX_FAILURES', 'ten'],
    ['LOGIN_MAX_FAILURES_PER_ADDRESS', '1.5'],
    ['LOGIN_WINDOW_SECONDS', '0'],
    ['LOGIN_WINDOW_SECONDS', '86401'],
    ['LOGIN_LOCKOUT_SECONDS', '0'],
    ['LOGIN_MAX_LOCKOUT_SECONDS', '0'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(name);
  });

  it('refuses a longest lockout shorter than the first', () => {
    expect(() => load({ LOGIN_LOCKOUT_SECONDS: '120', LOGIN_MAX_LOCKOUT_SECONDS: '60' })).toThrow(
      'LOGIN_MAX_LOCKOUT_SECONDS (60) must be at least LOGIN_LOCKOUT_SECONDS (120)',
    );
  });
});

describe('TRUST_PROXY', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['FALSE', false],
    ['0', false],
    ['true', true],
    ['True', true],
    ['1', 1],
    ['2', 2],
    ['loopback', ['loopback']],
    ['10.0.0.0/8, 192.168.1.5', ['10.0.0.0/8', '192.168.1.5']],
    ['loopback,uniquelocal,fd00::/8', ['loopback', 'uniquelocal', 'fd00::/8']],
  ])('%j → %j', (value, expected) => {
    const env: Record<string, string> = value === undefined ? {} : { TRUST_PROXY: value };
    expect(load(env).trustProxy).toEqual(expected);
  });

  // The last ones passed the old pattern and stopped the start later with a stack (found by an audit).
  it.each(['yes', '101', 'proxy.example.com', '10.0.0.0/8,', '10.0.0.1;rm', '10.0.0.1/33', 'abc', '.', ':::::', '1.2.3', 'fd00::/129', '10.0.0.1/8/8'])('refuses %j', (value) => {
    expect(() => load({ TRUST_PROXY: value })).toThrow(/^TRUST_PROXY /);
  });
});
