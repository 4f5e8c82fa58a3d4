import { DEFAULT_RUN_NAME, pickTargetRun, targetRunName } from './target-run';

describe('targetRunName (reference §4.12)', () => {
  it.each([
    ['Nightly', 'report.xml', 'Nightly'],
    ['  ', 'TEST-com.example.Foo.xml', 'TEST-com.example.Foo'],
    [null, 'junit', 'junit'],
    [null, '.xml', '.xml'],
    [null, '   ', DEFAULT_RUN_NAME],
    [null, null, DEFAULT_RUN_NAME],
  ])('report name %j, file %j → %j', (reportName, fileName, expected) => {
    expect(targetRunName(reportName, fileName)).toBe(expected);
  });

  it('clips to 255 characters', () => {
    expect(targetRunName('n'.repeat(300), null)).toHaveLength(255);
  });
});

describe('pickTargetRun', () => {
  const at = (iso: string) => ({ id: iso, created_at: new Date(iso) });
  const newestFirst = [
    at('2026-05-03T00:00:00Z'),
    at('2026-05-01T12:00:00Z'),
    at('2026-04-01T00:00:00Z'),
  ];

  it('is null without candidates', () => {
    expect(pickTargetRun([], null)).toBeNull();
  });

  it('takes the newest without a report timestamp', () => {
    expect(pickTargetRun(newestFirst, null)?.id).toBe('2026-05-03T00:00:00Z');
  });

  it('takes the closest within ±24 h of the report timestamp', () => {
    expect(pickTargetRun(newestFirst, new Date('2026-05-01T10:00:00Z'))?.id).toBe(
      '2026-05-01T12:00:00Z',
    );
  });

  it('takes the closest of all when none is within 24 h', () => {
    expect(pickTargetRun(newestFirst, new Date('2026-03-01T00:00:00Z'))?.id).toBe(
      '2026-04-01T00:00:00Z',
    );
  });
});
