import { isoOf, isoUtc } from './sql';

describe('isoUtc / isoOf', () => {
  it('renders a column in UTC with milliseconds, like toISOString', () => {
    expect(isoUtc('c.created_at')).toBe(
      `to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
    );
  });
  it('passes ISO text through and formats a Date', () => {
    expect(isoOf('2026-11-21T15:56:05.116Z')).toBe('2026-11-21T15:56:05.116Z');
    expect(isoOf(new Date(Date.UTC(2026, 10, 21, 15, 56, 5, 116)))).toBe('2026-11-21T15:56:05.116Z');
  });
});
