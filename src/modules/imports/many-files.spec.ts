import { createHash } from 'node:crypto';
import type { ParsedReport } from './junit/junit-parser';
import { combinedSha256, fileSummary, mergeReports, prefersAsync } from './imports.service';
import { isGzip } from './upload';
import {
  MAX_PENDING_CHUNKS,
  storingSink,
  UploadChunkQueue,
  UPLOAD_CHUNK_BYTES,
} from './upload-store';

/** Pure rules of many-file and background imports (issue #18 §2, §3). */
describe('prefersAsync (Prefer: respond-async, RFC 7240)', () => {
  it.each<[string | string[] | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['respond-async', true],
    ['Respond-Async', true],
    ['  respond-async  ', true],
    ['return=minimal, respond-async', true],
    ['respond-async; foo=bar', true],
    ['wait=10, respond-async, handling=lenient', true],
    [['return=minimal', 'respond-async'], true],
    ['respond-asynchronously', false],
    ['return=minimal', false],
    ['x-respond-async', false],
  ])('%j → %s', (header, expected) => {
    expect(prefersAsync(header)).toBe(expected);
  });
});

describe('combinedSha256', () => {
  const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
  it('keeps the digest of a single file', () => {
    expect(combinedSha256([sha('a')])).toBe(sha('a'));
  });
  it.each([[['a', 'b']], [['a', 'b', 'c']], [['b', 'a']]])(
    'hashes the digests of %j, each followed by a line feed, in order',
    (names) => {
      const digests = names.map(sha);
      expect(combinedSha256(digests)).toBe(sha(digests.map((d) => `${d}\n`).join('')));
    },
  );
  it('depends on the order of the files', () => {
    expect(combinedSha256([sha('a'), sha('b')])).not.toBe(combinedSha256([sha('b'), sha('a')]));
  });
});

function report(
  results: number,
  totals: Partial<ParsedReport['totals']>,
  extra: Partial<ParsedReport> = {},
): ParsedReport {
  return {
    name: null,
    timestamp: null,
    root: 'testsuite',
    suites: 1,
    testcase_elements: results,
    ignored_testcases: 0,
    nameless_testcases: [],
    results: Array.from({ length: results }, (_, index) => ({
      index,
      name: `t${index}`,
    })) as unknown as ParsedReport['results'],
    totals: {
      passed: 0,
      failure: 0,
      error: 0,
      skipped: 0,
      xfailed: 0,
      xpassed: 0,
      total: results,
      flaky: 0,
      ...totals,
    },
    suite_logs: [],
    truncated: false,
    ...extra,
  };
}

describe('fileSummary', () => {
  it.each<[Partial<ParsedReport['totals']>, { passed: number; failed: number; skipped: number }]>([
    [{ passed: 3 }, { passed: 3, failed: 0, skipped: 0 }],
    [
      { failure: 1, error: 2 },
      { passed: 0, failed: 3, skipped: 0 },
    ],
    [
      { xpassed: 1, failure: 1 },
      { passed: 0, failed: 2, skipped: 0 },
    ],
    [
      { skipped: 1, xfailed: 2 },
      { passed: 0, failed: 0, skipped: 3 },
    ],
    [
      { passed: 2, flaky: 1 },
      { passed: 2, failed: 0, skipped: 0 },
    ],
  ])('%j → %j', (totals, counts) => {
    expect(fileSummary('a.xml', report(3, totals))).toEqual({
      name: 'a.xml',
      testcases: 3,
      ...counts,
    });
  });
});

describe('mergeReports', () => {
  it('answers a single report as it is', () => {
    const one = report(2, { passed: 2 });
    expect(mergeReports([one])).toBe(one);
  });

  it('concatenates results in file order with positions shifted, and sums the counters', () => {
    const a = report(
      2,
      { passed: 1, failure: 1 },
      { name: 'first', ignored_testcases: 1, suites: 2 },
    );
    const b = report(3, { skipped: 3 }, { name: 'second', truncated: true });
    const merged = mergeReports([a, b]);
    expect(merged.name).toBe('first');
    expect(merged.results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(merged.results.map((r) => r.name)).toEqual(['t0', 't1', 't0', 't1', 't2']);
    expect(merged.totals).toMatchObject({ passed: 1, failure: 1, skipped: 3, total: 5 });
    expect(merged).toMatchObject({
      suites: 3,
      ignored_testcases: 1,
      truncated: true,
      testcase_elements: 5,
    });
    // The inputs are left alone.
    expect(b.results.map((r) => r.index)).toEqual([0, 1, 2]);
  });

  it('refuses no report', () => {
    expect(() => mergeReports([])).toThrow();
  });
});

describe('isGzip (the magic bytes decide, not the name)', () => {
  it.each<[number[], boolean]>([
    [[0x1f, 0x8b, 0x08], true],
    [[0x1f, 0x8b], true],
    [[0x1f], false],
    [[], false],
    [[0x3c, 0x3f], false],
    [[0x8b, 0x1f], false],
  ])('%j → %s', (bytes, expected) => {
    expect(isGzip(Buffer.from(bytes))).toBe(expected);
  });
});

describe('storingSink and UploadChunkQueue', () => {
  it('cuts a file into chunks of at least UPLOAD_CHUNK_BYTES (the last one shorter), in order', async () => {
    const queue = new UploadChunkQueue();
    const sink = storingSink(queue, 3);
    const got: Array<{ fileIndex: number; seq: number; length: number }> = [];
    const draining = (async () => {
      for await (const c of queue)
        got.push({ fileIndex: c.fileIndex, seq: c.seq, length: c.data.length });
    })();
    const piece = Buffer.alloc(UPLOAD_CHUNK_BYTES / 4, 1);
    for (let i = 0; i < 9; i++) await sink.write(piece);
    await sink.end();
    queue.close();
    await draining;
    expect(got).toEqual([
      { fileIndex: 3, seq: 0, length: UPLOAD_CHUNK_BYTES },
      { fileIndex: 3, seq: 1, length: UPLOAD_CHUNK_BYTES },
      { fileIndex: 3, seq: 2, length: UPLOAD_CHUNK_BYTES / 4 },
    ]);
  });

  it('stores nothing for an empty file', async () => {
    const queue = new UploadChunkQueue();
    await storingSink(queue, 0).end();
    queue.close();
    const got: unknown[] = [];
    for await (const c of queue) got.push(c);
    expect(got).toEqual([]);
  });

  it('makes the producer wait once MAX_PENDING_CHUNKS wait for the database', async () => {
    const queue = new UploadChunkQueue();
    const chunk = (seq: number) => ({ fileIndex: 0, seq, data: Buffer.alloc(1) });
    for (let i = 0; i < MAX_PENDING_CHUNKS - 1; i++) expect(queue.push(chunk(i))).toBeNull();
    const wait = queue.push(chunk(MAX_PENDING_CHUNKS - 1));
    expect(wait).toBeInstanceOf(Promise);
    let released = false;
    void wait?.then(() => {
      released = true;
    });
    const iterator = queue[Symbol.asyncIterator]();
    await iterator.next(); // the consumer takes one: room again
    await Promise.resolve();
    expect(released).toBe(true);
  });

  it('drops chunks and releases producers once the consumer failed', async () => {
    const queue = new UploadChunkQueue();
    const chunk = (seq: number) => ({ fileIndex: 0, seq, data: Buffer.alloc(1) });
    let wait: Promise<void> | null = null;
    for (let i = 0; i < MAX_PENDING_CHUNKS; i++) wait = queue.push(chunk(i));
    queue.fail();
    await expect(wait).resolves.toBeUndefined();
    expect(queue.push(chunk(99))).toBeNull();
    const got: unknown[] = [];
    for await (const c of queue) got.push(c);
    expect(got).toEqual([]);
  });
});
