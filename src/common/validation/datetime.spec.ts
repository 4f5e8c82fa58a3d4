import { validate } from 'class-validator';
import {
  IsDateOrDateTime,
  IsDateTime,
  isDateOnly,
  parseDate,
  parseDateOrDateTime,
  parseDateTime,
  toInstant,
} from './datetime';

const iso = (value: string) => parseDateTime(value)?.toISOString() ?? null;

describe('parseDateTime', () => {
  it.each([
    ['2026-05-01T10:00:00.000Z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T10:00:00Z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01t10:00:00z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T10:00Z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01 10:00:00Z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T12:00:00+02:00', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T12:00:00+0200', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T12:00:00+02', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T04:30:00-05:30', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T00:30:00+01:00', '2026-04-30T23:30:00.000Z'],
    // Without an offset: UTC, whatever the server's time zone.
    ['2026-05-01T10:00:00', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T10:00:00.5Z', '2026-05-01T10:00:00.500Z'],
    ['2026-05-01T10:00:00,25Z', '2026-05-01T10:00:00.250Z'],
    ['2026-05-01T10:00:00.966371Z', '2026-05-01T10:00:00.966Z'],
    ['2026-05-01T10:00:00.999999999Z', '2026-05-01T10:00:00.999Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0099-12-31T23:59:59Z', '0099-12-31T23:59:59.000Z'],
    ['0001-01-01T00:00:00-01:00', '0001-01-01T01:00:00.000Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
    ['9999-12-31T23:00:00+05:00', '9999-12-31T18:00:00.000Z'],
  ])('%s → %s', (value, expected) => {
    expect(iso(value)).toBe(expected);
  });

  it.each([
    '2026-W01-1', // week date
    '2026-W18-5T10:00:00Z',
    '2026-032T10:00:00Z', // ordinal date
    '20260501T100000Z', // basic format
    '2026',
    '2026-05',
    '2026-05-01', // a date alone is not a datetime
    '2026-05-01T10',
    '2026-05-01T10Z',
    '2026-02-30T10:00:00Z',
    '2025-02-29T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-10T10:00:00Z',
    '0000-01-01T00:00:00Z',
    // The offset carries the instant out of years 1..9999 in UTC.
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:00:00-05:00',
    '9999-12-31T23:59:59.999-00:01',
    '2026-05-01T24:00:00Z',
    '2026-05-01T10:60:00Z',
    '2026-05-01T10:00:60Z',
    '2026-05-01T10:00:00+24:00',
    '2026-05-01T10:00:00+02:60',
    '2026-05-01T10:00:00+2:00',
    '2026-05-01T10:00:00.Z',
    '2026-05-01T10:00:00.1234567890Z',
    ' 2026-05-01T10:00:00Z',
    '2026-05-01T10:00:00Z ',
    'tomorrow',
    '',
  ])('refuses %j', (value) => {
    expect(parseDateTime(value)).toBeNull();
  });
});

describe('dates', () => {
  it('reads a date as its 00:00 UTC and refuses impossible ones', () => {
    expect(parseDate('2026-05-01')?.toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(parseDate('2026-02-29')).toBeNull();
    expect(parseDate('2026-05-01T00:00:00Z')).toBeNull();
    expect(isDateOnly('2026-05-01')).toBe(true);
    expect(isDateOnly('2026-05-01T00:00:00Z')).toBe(false);
    expect(parseDateOrDateTime('2026-05-01')?.toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(parseDateOrDateTime('2026-05-01T10:00:00+02:00')?.toISOString()).toBe(
      '2026-05-01T08:00:00.000Z',
    );
    expect(parseDateOrDateTime('2026-W01-1')).toBeNull();
  });

  it('toInstant throws on a value that was not validated', () => {
    expect(toInstant('2026-05-01T10:00:00+02:00').toISOString()).toBe('2026-05-01T08:00:00.000Z');
    expect(() => toInstant('2026-W01-1')).toThrow('not a validated datetime');
  });
});

describe('IsDateTime / IsDateOrDateTime', () => {
  class Body {
    @IsDateTime()
    at!: unknown;

    @IsDateOrDateTime()
    from!: unknown;
  }
  const errorsOf = async (at: unknown, from: unknown) => {
    const body = Object.assign(new Body(), { at, from });
    return (await validate(body)).map((e) => [e.property, Object.values(e.constraints ?? {})]);
  };

  it('accepts datetimes, and a date only where allowed', async () => {
    expect(await errorsOf('2026-05-01T10:00:00+02', '2026-05-01')).toEqual([]);
    expect(await errorsOf('2026-05-01T10:00:00Z', '2026-05-01T10:00:00')).toEqual([]);
  });

  it('refuses the rest with a message naming the field', async () => {
    expect(await errorsOf('2026-05-01', '2026-W01-1')).toEqual([
      ['at', [expect.stringMatching(/^at must be an ISO 8601 datetime/)]],
      ['from', ['from must be a date (YYYY-MM-DD) or an ISO 8601 datetime']],
    ]);
    expect(await errorsOf(20260501, null)).toHaveLength(2);
  });
});
