import { lockoutSchedule, lockoutSeconds, usernameKey } from './login-throttle.policy';

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
    // Case is folded by PostgreSQL's lower() in the statements (as the login's lookup does).
    ['Alice', 'Alice'],
    ['  ALICE ', 'ALICE'],
    ['alice', 'alice'],
    // Form C, as names are stored: both spellings of zoë are one key.
    ['zoe\u0308', 'zo\u00eb'],
  ])('%j → %j', (input, expected) => {
    expect(usernameKey(input)).toBe(expected);
  });
});

describe('lockoutSchedule', () => {
  it.each([
    [60, 3600, [60, 120, 240, 480, 960, 1920, 3600]],
    [30, 200, [30, 60, 120, 200]],
    [5, 5, [5]],
    [
      1,
      86_400,
      [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 86_400],
    ],
  ])('lockout %i, cap %i → %j', (lockout, cap, expected) => {
    expect(lockoutSchedule(lockout, cap)).toEqual(expected);
  });

  it.each([
    [1, 60, 3600],
    [10, 60, 3600],
    [3, 1, 100],
    [50, 7, 86_400],
  ])(
    'gives lockoutSeconds for every failure from max %i on (lockout %i, cap %i)',
    (max, lockout, cap) => {
      const schedule = lockoutSchedule(lockout, cap);
      for (let failures = max; failures < max + 100; failures++) {
        const nth = Math.min(failures - max, schedule.length - 1);
        expect(schedule[nth]).toBe(lockoutSeconds(failures, max, lockout, cap));
      }
    },
  );
});
