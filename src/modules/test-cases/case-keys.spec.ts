import { formatCaseKey, TEST_CASE_KEY_COUNTER } from './case-keys';

describe('case keys', () => {
  it.each([
    [1, 'TC-1'],
    [42, 'TC-42'],
    [100000, 'TC-100000'],
  ])('key number %d → %s', (n, key) => {
    expect(formatCaseKey(n)).toBe(key);
  });
  it('uses one counter name per project', () => {
    expect(TEST_CASE_KEY_COUNTER).toBe('test_case_key');
  });
});
