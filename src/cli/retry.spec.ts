import {
  BACKOFF_MAX_MS,
  backoffDelayMs,
  isRetryableStatus,
  parseRetryAfter,
  retryDelayMs,
} from './retry';

describe('isRetryableStatus', () => {
  it.each<[number, string | null, boolean]>([
    [429, 'too_many_requests', true],
    [500, 'internal_error', true],
    [502, null, true],
    [503, null, true],
    [599, null, true],
    [409, 'idempotency_request_in_progress', true],
    [409, 'run_import_not_allowed', false],
    [409, null, false],
    [400, null, false],
    [401, 'unauthorized', false],
    [404, 'project_not_found', false],
    [413, 'payload_too_large', false],
    [422, 'idempotency_key_reused', false],
    [200, null, false],
    [201, null, false],
  ])('%i %s → %s', (status, code, expected) => {
    expect(isRetryableStatus(status, code)).toBe(expected);
  });
});

describe('backoffDelayMs', () => {
  it.each<[number, number, number]>([
    [1, 0, 250],
    [1, 0.999999, 500],
    [2, 0, 500],
    [2, 0.5, 750],
    [3, 1, 2000],
    [4, 1, 4000],
    [7, 1, 30000],
    [20, 0, 15000],
    [20, 1, 30000],
  ])('retry %i with random %d → %i ms', (retry, random, expected) => {
    expect(backoffDelayMs(retry, random)).toBe(expected);
  });

  it('never exceeds the cap and never goes below half of it once reached', () => {
    for (let retry = 1; retry <= 40; retry += 1) {
      for (const r of [0, 0.3, 0.99]) {
        const d = backoffDelayMs(retry, r);
        expect(d).toBeLessThanOrEqual(BACKOFF_MAX_MS);
        expect(d).toBeGreaterThan(0);
      }
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-24T21:00:00Z');
  it.each<[string | null, number | null]>([
    [null, null],
    ['', null],
    ['0', 0],
    ['3', 3000],
    [' 7 ', 7000],
    ['3600', BACKOFF_MAX_MS],
    ['-1', null],
    ['1.5', null],
    ['soon', null],
    ['Tue, 24 Nov 2026 21:00:10 GMT', 10000],
    ['Tue, 24 Nov 2026 20:59:00 GMT', 0],
    ['Wed, 25 Nov 2026 21:00:00 GMT', BACKOFF_MAX_MS],
  ])('%p → %p', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('retryDelayMs', () => {
  it('waits the server’s Retry-After when it is longer than the backoff', () => {
    expect(retryDelayMs(1, '2', 0, 0)).toBe(2000);
    expect(retryDelayMs(1, null, 0, 0)).toBe(250);
    expect(retryDelayMs(3, 'garbage', 0, 1)).toBe(2000);
  });

  it.each<[number, string, number]>([
    // 409 idempotency_request_in_progress answers Retry-After: 1; the backoff still grows.
    [1, '1', 1000],
    [3, '1', 2000],
    [4, '1', 4000],
    [7, '1', 30000],
    [4, '0', 4000],
    [2, 'Tue, 24 Nov 2026 20:59:00 GMT', 1000],
  ])('retry %i with Retry-After %p → the longer of both: %i ms', (retry, header, expected) => {
    expect(retryDelayMs(retry, header, Date.parse('2026-11-24T21:00:00Z'), 1)).toBe(expected);
  });
});
