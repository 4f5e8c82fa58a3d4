import { ConfigError, loadConfig } from '../../config/config';
import {
  DEFAULT_WEBHOOK_MAX_ATTEMPTS,
  DEFAULT_WEBHOOK_RETRY_BASE_SECONDS,
} from './webhook-policy';

const AUTH_SECRET = 'x'.repeat(40);

/** WEBHOOK_ALLOW_PRIVATE, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_BASE_SECONDS (issue #20). */
describe('webhook configuration', () => {
  it('defaults: private destinations refused, 8 attempts, 60 s before the first retry', () => {
    expect(loadConfig({ AUTH_SECRET }, { persistSecret: false }).webhooks).toEqual({
      allowPrivate: false,
      maxAttempts: DEFAULT_WEBHOOK_MAX_ATTEMPTS,
      retryBaseSeconds: DEFAULT_WEBHOOK_RETRY_BASE_SECONDS,
    });
    expect([DEFAULT_WEBHOOK_MAX_ATTEMPTS, DEFAULT_WEBHOOK_RETRY_BASE_SECONDS]).toEqual([8, 60]);
  });

  it.each([
    [{ WEBHOOK_ALLOW_PRIVATE: 'true' }, { allowPrivate: true }],
    [{ WEBHOOK_ALLOW_PRIVATE: '0' }, { allowPrivate: false }],
    [{ WEBHOOK_MAX_ATTEMPTS: '1' }, { maxAttempts: 1 }],
    [{ WEBHOOK_MAX_ATTEMPTS: '20' }, { maxAttempts: 20 }],
    [{ WEBHOOK_RETRY_BASE_SECONDS: '1' }, { retryBaseSeconds: 1 }],
    [{ WEBHOOK_RETRY_BASE_SECONDS: '86400' }, { retryBaseSeconds: 86400 }],
  ])('%j', (env, expected) => {
    expect(loadConfig({ AUTH_SECRET, ...env }, { persistSecret: false }).webhooks).toMatchObject(
      expected,
    );
  });

  it.each([
    ['WEBHOOK_ALLOW_PRIVATE', 'yes'],
    ['WEBHOOK_MAX_ATTEMPTS', '0'],
    ['WEBHOOK_MAX_ATTEMPTS', '21'],
    ['WEBHOOK_RETRY_BASE_SECONDS', '0'],
    ['WEBHOOK_RETRY_BASE_SECONDS', '86401'],
    ['WEBHOOK_RETRY_BASE_SECONDS', '1.5'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ AUTH_SECRET, [name]: value }, { persistSecret: false })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig({ AUTH_SECRET, [name]: value }, { persistSecret: false })).toThrow(
      new RegExp(name),
    );
  });
});
