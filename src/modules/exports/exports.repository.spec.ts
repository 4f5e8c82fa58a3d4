import type { DataSource } from 'typeorm';
import { RunReportReader } from './exports.repository';

/**
 * The export slot of a report download is given back whatever happens while it opens (the
 * EXPORT_CONCURRENCY counter would otherwise lose a slot for good). A stand-in query runner whose
 * statements and release fail as told: the rule is about the slot, not about what is read.
 */
function dataSourceFailing(opts: { query: boolean; release: boolean }): DataSource {
  const runner = {
    connect: () => Promise.resolve(),
    query: () => (opts.query ? Promise.reject(new Error('query failed')) : Promise.resolve([])),
    release: () => (opts.release ? Promise.reject(new Error('release failed')) : Promise.resolve()),
  };
  return { createQueryRunner: () => runner } as unknown as DataSource;
}

describe('RunReportReader.open gives its slot back once', () => {
  it.each([
    ['a failing read', { query: true, release: false }, /query failed/],
    [
      'a failing read whose connection cannot be released',
      { query: true, release: true },
      /release failed|query failed/,
    ],
  ])('%s', async (_label, opts, error) => {
    let closed = 0;
    await expect(
      RunReportReader.open(dataSourceFailing(opts), 'run', () => (closed += 1)),
    ).rejects.toThrow(error);
    expect(closed).toBe(1);
  });

  it('a run that does not exist', async () => {
    let closed = 0;
    const reader = await RunReportReader.open(
      dataSourceFailing({ query: false, release: false }),
      'run',
      () => (closed += 1),
    );
    expect(reader).toBeNull();
    expect(closed).toBe(1);
  });

  it('a run that does not exist, its connection not released', async () => {
    let closed = 0;
    await expect(
      RunReportReader.open(
        dataSourceFailing({ query: false, release: true }),
        'run',
        () => (closed += 1),
      ),
    ).rejects.toThrow(/release failed/);
    expect(closed).toBe(1);
  });
});
