/**
 * Response compression levels on a run list page: bytes saved against CPU ms per body, for brotli
 * qualities and gzip levels (node:zlib, one core, synchronous calls: the work the `compression`
 * middleware does per response). The page is what `GET /test-runs` answers at the bench's scale:
 * 50 runs, each with the 200-node environment snapshot of its own environment (the bench's
 * `list-runs-large` page), and the same page without snapshots (`fields` without
 * `environment_snapshot`). Run: `npm run build && node dist/bench/compression-levels.js` (not part of
 * `npm run bench`; about a minute on one core). Then brotli at the service's quality by window
 * size (`LGWIN`): bytes, CPU, and the memory 32 encoders hold at once, each compressing the page as
 * a streamed response does (in 64 KB writes), measured in a fresh process per window (its RSS
 * growth).
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants, createBrotliCompress, gzipSync } from 'node:zlib';
import { BROTLI_QUALITY } from '../src/common/http/compression';
import { buildSnapshot } from '../src/modules/environments/topology';
import { makeTopology } from './topology';

function runPage(withSnapshots: boolean): Buffer {
  const items = [];
  for (let i = 0; i < 50; i++) {
    const e = (i * 7) % 500;
    const r = (i % 3) + 1;
    const snap = buildSnapshot({
      project_id: '0190f3a4-0000-7000-8000-000000000001',
      name: `perf-env-${String(e).padStart(3, '0')}`,
      kind: 'performance',
      status: 'active',
      description: `Performance environment ${e}`,
      tags: ['bench', `region-${e % 4}`],
      use_cases: ['load', e % 2 ? 'soak' : 'stress'],
      topology: makeTopology(200, r),
      meta: { owner: 'perf-team', cost_center: `cc-${e % 10}` },
      extra: {},
    });
    const id = `0190f3a4-${String(1000 + i).padStart(4, '0')}-7000-8000-${String(i).padStart(12, '0')}`;
    items.push({
      id,
      project_id: '0190f3a4-0000-7000-8000-000000000001',
      name: `Bench run ${100000 - i}`,
      description: null,
      status: ['completed', 'in_progress', 'not_started'][i % 3],
      build: `build-${2000 + i}`,
      environment_id: `0190f3a4-0000-7000-8000-${String(e).padStart(12, '0')}`,
      environment_name: `perf-env-${String(e).padStart(3, '0')}`,
      environment_revision_id: `0190f3a4-0001-7000-8000-${String(e * 3 + r).padStart(12, '0')}`,
      environment_revision_number: r,
      environment_snapshot_hash: `sha256:${'0123456789abcdef'.repeat(4)}`,
      ...(withSnapshots ? { environment_snapshot: snap } : {}),
      milestone_id: null,
      milestone_name: null,
      assignee_id: null,
      planned_item_count: 120,
      created_by: '0190f3a4-0000-7000-8000-00000000beef',
      created_by_name: 'bench',
      started_at: '2026-11-20T10:00:00.000Z',
      completed_at: i % 3 === 0 ? '2026-11-20T11:00:00.000Z' : null,
      archived_at: null,
      created_at: '2026-11-20T09:59:00.000Z',
      updated_at: '2026-11-20T11:00:00.000Z',
      summary: { total: 120, passed: 100, failure: 10, error: 2, skipped: 8, pass_rate: 83.33 },
    });
  }
  return Buffer.from(
    JSON.stringify({ items, page: 1, page_size: 50, has_next: true, total: 100000 }),
    'utf8',
  );
}

function measure(label: string, body: Buffer, fn: (b: Buffer) => Buffer): string {
  fn(body); // warm-up
  const rounds = body.length > 1_000_000 ? 10 : 200;
  let out = 0;
  const start = performance.now();
  for (let i = 0; i < rounds; i++) out = fn(body).length;
  const ms = (performance.now() - start) / rounds;
  const saved = body.length - out;
  // Bytes saved per CPU ms spent: how much network one core-millisecond buys.
  return `| ${label} | ${out} | ${((out / body.length) * 100).toFixed(1)} % | ${ms.toFixed(2)} | ${Math.round(saved / 1024 / ms)} |`;
}

/** Child mode: 32 br encoders with window `lgwin` compress the page at once; prints RSS growth. */
async function encodersMemory(lgwin: number): Promise<void> {
  const page = runPage(true);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      const z = createBrotliCompress({
        params: {
          [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [constants.BROTLI_PARAM_LGWIN]: lgwin,
        },
      });
      z.resume();
      for (let at = 0; at < page.length; at += 64 * 1024) {
        if (!z.write(page.subarray(at, at + 64 * 1024))) {
          await new Promise((resolve) => z.once('drain', resolve));
        }
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      await new Promise((resolve) => z.end(resolve));
    }),
  );
  process.stdout.write(String(Math.round((peak - rss0) / 1e6)));
}

if (process.argv[2] === '--encoders-memory') {
  void encodersMemory(Number(process.argv[3]));
} else {
  levels();
  const page = runPage(true);
  process.stdout.write(
    `\nbr q${BROTLI_QUALITY} (the service's) by window (page with snapshots)\n\n| window | bytes | of original | CPU ms | KB saved per CPU ms | RSS of 32 encoders at once |\n|---|---|---|---|---|---|\n`,
  );
  for (const lgwin of [16, 18, 20, 22]) {
    const row = measure(`2^${lgwin}`, page, (b) =>
      brotliCompressSync(b, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [constants.BROTLI_PARAM_LGWIN]: lgwin,
        },
      }),
    );
    const mb = execFileSync(process.execPath, [__filename, '--encoders-memory', String(lgwin)], {
      encoding: 'utf8',
    });
    process.stdout.write(`${row} ${mb} MB |\n`);
  }
}

function levels(): void {
  for (const [name, body] of [
    ['page of 50 runs with snapshots', runPage(true)],
    ['page of 50 runs without snapshots', runPage(false)],
  ] as const) {
    process.stdout.write(`\n${name}: ${body.length} bytes\n\n`);
    process.stdout.write(
      '| coding | bytes | of original | CPU ms | KB saved per CPU ms |\n|---|---|---|---|---|\n',
    );
    for (const q of [1, 3, 4, 5, 6, 9]) {
      process.stdout.write(
        measure(`br q${q}`, body, (b) =>
          brotliCompressSync(b, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: q,
              [constants.BROTLI_PARAM_SIZE_HINT]: b.length,
            },
          }),
        ) + '\n',
      );
    }
    for (const level of [1, 4, 6, 9]) {
      process.stdout.write(measure(`gzip ${level}`, body, (b) => gzipSync(b, { level })) + '\n');
    }
  }
}
