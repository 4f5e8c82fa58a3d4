import { lockoutSeconds, usernameKey } from './login-throttle.policy';

describe('lockoutSeconds', () => {
  it.each([
    // failures, max, lockout, maxLockout, expected
    [0, 10, 60, 3600, 0],
    [1, 10, 60, 3600, 0],
    [9, 10, 60, 3600, 0],
    [10, 10, 60, 3600, 60],
    [11, 10, 60, 3600, 120],
    [12, 10, 60, 3600, 240],
    [15, 10, 60, 3600, 1920],
    [16, 10, 60, 3600, 3600],
    [17, 10, 60, 3600, 3600],
    [10_000, 10, 60, 3600, 3600],
    [1, 1, 5, 5, 5],
    [2, 1, 5, 5, 5],
    [3, 3, 1, 100, 1],
    [4, 3, 1, 100, 2],
    [5, 3, 1, 100, 4],
    // max 0: the scope is not throttled
    [0, 0, 60, 3600, 0],
    [500, 0, 60, 3600, 0],
  ])('failures %i, max %i, lockout %i, cap %i → %i s', (failures, max, lockout, cap, expected) => {
    expect(lockoutSeconds(failures, max, lockout, cap)).toBe(expected);
  });
});

describe('usernameKey', () => {
  it.each([
    ['Alice', 'alice'],
    ['  ALICE ', 'alice'],
    ['alice', 'alice'],
  ])('%j → %j', (input, expected) => {
    expect(usernameKey(input)).toBe(expected);
  });
});
