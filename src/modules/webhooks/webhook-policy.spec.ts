import {
  afterAttempt,
  isDeliverySuccess,
  retryDelaySeconds,
  shouldRetry,
  WEBHOOK_DISABLE_AFTER_FAILURES,
} from './webhook-policy';

describe('webhook delivery rules', () => {
  it.each([
    [200, true],
    [204, true],
    [299, true],
    [301, false],
    [302, false],
    [400, false],
    [500, false],
    [null, false],
  ])('status %s is success: %s', (status, ok) => {
    expect(isDeliverySuccess(status)).toBe(ok);
  });

  it.each([
    [1, 60, 60],
    [2, 60, 120],
    [3, 60, 240],
    [7, 60, 3840],
    [1, 1, 1],
    [3, 1, 4],
  ])('after failed attempt %i with base %i s the next waits %i s', (attempt, base, delay) => {
    expect(retryDelaySeconds(attempt, base)).toBe(delay);
  });

  it.each([
    ['event', 1, 8, true, true],
    ['retry', 7, 8, true, true],
    ['retry', 8, 8, true, false],
    ['event', 1, 1, true, false],
    ['event', 1, 8, false, false],
    ['redeliver', 1, 8, true, false],
    ['ping', 1, 8, true, false],
  ] as const)(
    '%s, automatic attempt %i of %i (active %s) is retried: %s',
    (trigger, automaticAttempts, maxAttempts, active, retried) => {
      expect(shouldRetry({ trigger, automaticAttempts, maxAttempts, active })).toBe(retried);
    },
  );

  it('disables after 20 consecutive failures; a success resets the count', () => {
    expect(WEBHOOK_DISABLE_AFTER_FAILURES).toBe(20);
    expect(afterAttempt(18, false)).toEqual({ consecutiveFailures: 19, disable: false });
    expect(afterAttempt(19, false)).toEqual({ consecutiveFailures: 20, disable: true });
    expect(afterAttempt(19, true)).toEqual({ consecutiveFailures: 0, disable: false });
  });
});
