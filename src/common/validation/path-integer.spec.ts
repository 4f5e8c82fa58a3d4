import { isPathInteger, MAX_PATH_INTEGER } from './path-integer';

describe('isPathInteger', () => {
  it.each(['1', '42', '0042', String(MAX_PATH_INTEGER)])('accepts %s', (raw) => {
    expect(isPathInteger(raw)).toBe(true);
  });
  it.each(['0', '-1', '1.5', 'abc', '', ' 1', '1e3', String(MAX_PATH_INTEGER + 1), '99999999999'])(
    'refuses %j',
    (raw) => {
      expect(isPathInteger(raw)).toBe(false);
    },
  );
  it('refuses a missing parameter', () => {
    expect(isPathInteger(undefined)).toBe(false);
  });
});
