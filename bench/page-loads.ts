/**
 * Page loads of the dashboard (issue #21) on the bench's seeded data, in a real headless Chromium.
 *
 * Seeds the data of `npm run bench` (same `Seeder`, same BENCH_SCALE / BENCH_DATABASE_URL), builds
 * the web app with Vite into a temp dir (or serves BENCH_WEB_DIR; several builds separated by commas
 * are measured one after the other on the same data, for a before/after comparison side by side),
 * starts the BUILT service the way the bench does, signs in once through the API and hands the
 * token to every browser context (the dashboard keeps it in sessionStorage). Then each page is loaded BENCH_PAGE_LOADS times: the first
 * in a new browser context (empty HTTP cache: "cold"), the others in that same context ("warm":
 * hashed assets come from the cache, index.html and the API calls do not).
 *
 * What is timed, per load: from the navigation start of the page's document (performance's time
 * origin, a full document load, not a hash change) until its content is rendered, i.e. the time of
 * the LAST DOM change (a MutationObserver installed before the page's own scripts), read once the
 * page is settled: every ready selector of the page (a selector that only matches data: a table row,
 * the verdict, the diff) is visible and the network has been idle for 500 ms (Playwright's
 * `networkidle`). The API requests each load made come from the browser's resource timing (start
 * and duration relative to the navigation start, body bytes).
 *
 * Prints a table (cold, warm p50 and max per page, and the API call that ended last in the median
 * warm load) and the median warm load's API calls, and writes everything to BENCH_PAGE_RESULTS
 * (default test-output/page-loads.json). It asserts nothing about the figures.
 *
 *   npx tsc -p tsconfig.build.json --outDir /tmp/x && BENCH_SCALE=small node /tmp/x/bench/page-loads.js
 */
import 'reflect-metadata';
import { execFileSync, execSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { BENCH_POSTGRES_FLAGS, migrateAndSeed } from './bench-database';
import { loadBenchConfig } from './config';
import { fixed, table } from './report';
import { BENCH_PASSWORD, BENCH_USERNAME, SeedResult } from './seed';
import { freePort, productionNodeArgs, startServer } from './servers';

/** The package root (package.json, node_modules, web/): upwards from here, else the cwd. */
function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'web'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

const ROOT = packageRoot();
/** The build this script belongs to (dist/ or any --outDir): its service is the one started. */
const BUILD = resolve(__dirname, '..');

/** Loads per page (the first one cold); BENCH_PAGE_LOADS overrides. */
const DEFAULT_LOADS = 10;
/** Longest wait for one page to settle. */
const LOAD_TIMEOUT_MS = 30_000;
const VIEWPORT = { width: 1280, height: 900 };

function log(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

interface PageSpec {
  name: string;
  /** The hash route under /app/. */
  hash: string;
  /** Every one must be visible (and the network idle) before the page counts as rendered. */
  ready: string[];
}

function pagesOf(seed: SeedResult): PageSpec[] {
  const main = seed.mainProjectId;
  const run = seed.runIds[0];
  return [
    { name: 'projects', hash: '#/projects', ready: ['main table tbody tr a'] },
    {
      name: 'runs',
      hash: `#/projects/${main}/runs`,
      ready: ['table.runs tbody tr', '.chart canvas'],
    },
    { name: 'run', hash: `#/runs/${run}`, ready: ['table.items tbody tr', '.chart canvas'] },
    {
      name: 'run-compare',
      hash: `#/runs/${run}?compare=previous`,
      ready: ['table.items tbody tr', 'section.comparison .figures'],
    },
    {
      name: 'flaky',
      hash: `#/projects/${main}/flaky`,
      ready: ['table.flaky tbody tr:first-child ol.strip'],
    },
    {
      name: 'environment',
      hash: `#/environments/${seed.environmentIds[0]}`,
      ready: ['ul.tree', 'table.diff tbody tr'],
    },
    {
      name: 'product',
      hash: `#/products/${seed.productIds[0]}`,
      ready: ['.verdict', 'table tbody tr'],
    },
  ];
}

interface ApiCall {
  /** Path and query under /api/v1. */
  path: string;
  start_ms: number;
  duration_ms: number;
  end_ms: number;
  /** Decoded body bytes. */
  bytes: number;
}

interface LoadRecord {
  cold: boolean;
  /** Navigation start → last DOM change of the settled page. */
  content_ms: number;
  dom_content_loaded_ms: number;
  /** Bytes of scripts and styles fetched over the network (0 when all came from the cache). */
  asset_transfer_bytes: number;
  api: ApiCall[];
  error?: string;
}

/**
 * Installed in every document before its scripts (through the DevTools protocol, so the page's
 * CSP does not apply): remembers when the DOM last changed.
 */
const MUTATION_WATCH = `(() => {
  window.__tmsLastMutation = 0;
  new MutationObserver(() => { window.__tmsLastMutation = performance.now(); })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();`;

/** Read from the settled page (a string: this file is compiled without the DOM library). */
const READ_TIMINGS = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  const r = (n) => Math.round(n * 10) / 10;
  return {
    content: window.__tmsLastMutation,
    dcl: nav ? nav.domContentLoadedEventEnd : 0,
    assetBytes: resources
      .filter((e) => e.initiatorType !== 'fetch' && e.initiatorType !== 'xmlhttprequest')
      .reduce((s, e) => s + e.transferSize, 0),
    api: resources
      .filter((e) => e.name.includes('/api/v1/'))
      .map((e) => ({
        path: e.name.slice(e.name.indexOf('/api/v1/') + 7),
        start_ms: r(e.startTime),
        duration_ms: r(e.duration),
        end_ms: r(e.responseEnd),
        bytes: e.decodedBodySize,
      })),
  };
})()`;

async function newContext(
  browser: Browser,
  session: { token: string; user: string },
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  // Signed in once (POST /auth/login below); each context gets the session the sign-in page
  // would have stored, in the app's own sessionStorage keys.
  await context.addInitScript(
    `if (location.pathname.startsWith('/app')) {
       sessionStorage.setItem('tms.dashboard.token', ${JSON.stringify(session.token)});
       sessionStorage.setItem('tms.dashboard.user', ${JSON.stringify(session.user)});
     }`,
  );
  await context.addInitScript(MUTATION_WATCH);
  return context;
}

async function measurePage(
  browser: Browser,
  baseUrl: string,
  session: { token: string; user: string },
  spec: PageSpec,
  loads: number,
): Promise<LoadRecord[]> {
  const context = await newContext(browser, session);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const records: LoadRecord[] = [];
  try {
    for (let i = 0; i < loads; i++) {
      errors.length = 0;
      // From another document: a hash change alone would not load the page again.
      await page.goto('about:blank');
      try {
        await page.goto(`${baseUrl}/app/${spec.hash}`);
        for (const sel of spec.ready) {
          await page.locator(sel).first().waitFor({ state: 'visible', timeout: LOAD_TIMEOUT_MS });
        }
        await page.waitForLoadState('networkidle', { timeout: LOAD_TIMEOUT_MS });
        const t = await page.evaluate<{
          content: number;
          dcl: number;
          assetBytes: number;
          api: ApiCall[];
        }>(READ_TIMINGS);
        records.push({
          cold: i === 0,
          content_ms: Math.round(t.content),
          dom_content_loaded_ms: Math.round(t.dcl),
          asset_transfer_bytes: t.assetBytes,
          api: t.api,
          ...(errors.length ? { error: errors.join('; ') } : {}),
        });
      } catch (err) {
        const alert = await page
          .locator('[role=alert]')
          .first()
          .textContent({ timeout: 500 })
          .catch(() => null);
        records.push({
          cold: i === 0,
          content_ms: NaN,
          dom_content_loaded_ms: NaN,
          asset_transfer_bytes: 0,
          api: [],
          error: `${err instanceof Error ? err.message.split('\n')[0] : String(err)}${alert ? ` (page says: ${alert})` : ''}`,
        });
      }
    }
  } finally {
    await context.close();
  }
  return records;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

interface PageSummary {
  page: string;
  route: string;
  cold_ms: number;
  warm_p50_ms: number;
  warm_max_ms: number;
  warm_loads: number;
  errors: number;
  /** The warm load at the median: its API calls show where the time goes. */
  median_load: LoadRecord | null;
}

function summarise(spec: PageSpec, loads: LoadRecord[]): PageSummary {
  const warm = loads.filter((l) => !l.cold && Number.isFinite(l.content_ms));
  const sorted = warm.map((l) => l.content_ms).sort((a, b) => a - b);
  const p50 = quantile(sorted, 0.5);
  const cold = loads.find((l) => l.cold);
  return {
    page: spec.name,
    route: spec.hash,
    cold_ms: cold?.content_ms ?? NaN,
    warm_p50_ms: p50,
    warm_max_ms: sorted.length ? sorted[sorted.length - 1] : NaN,
    warm_loads: warm.length,
    errors: loads.filter((l) => l.error).length,
    median_load: warm.find((l) => l.content_ms === p50) ?? null,
  };
}

/** An API path for the table: ids shortened, long queries cut. */
function shortPath(path: string): string {
  const s = path.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{id}');
  return s.length > 90 ? `${s.slice(0, 87)}...` : s;
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function gitCommit(): string | null {
  try {
    return execSync('git rev-parse --short HEAD', {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

/** Signs in once through the API: the session the sign-in page would store. */
async function signIn(baseUrl: string): Promise<{ token: string; user: string }> {
  const res = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: BENCH_USERNAME, password: BENCH_PASSWORD }),
  });
  const login = (await res.json()) as {
    access_token?: string;
    user?: { username: string; display_name: string | null };
  };
  if (res.status !== 200 || !login.access_token || !login.user) {
    throw new Error(`login failed: ${res.status} ${JSON.stringify(login)}`);
  }
  return {
    token: login.access_token,
    user: JSON.stringify({
      username: login.user.username,
      displayName: login.user.display_name ?? login.user.username,
    }),
  };
}

function printSummaries(summaries: PageSummary[]): void {
  log(
    table(
      [
        'page',
        'cold ms',
        'warm p50 ms',
        'warm max ms',
        'API calls',
        'API bytes',
        'last API call to end (median load)',
        'its ms',
      ],
      summaries.map((s) => {
        const api = s.median_load?.api ?? [];
        const last = [...api].sort((a, b) => b.end_ms - a.end_ms)[0];
        return [
          s.page,
          s.cold_ms,
          s.warm_p50_ms,
          s.warm_max_ms,
          api.length,
          kb(api.reduce((n, a) => n + a.bytes, 0)),
          last ? shortPath(last.path) : null,
          last ? fixed(last.duration_ms, 0) : null,
        ];
      }),
    ),
  );
  log('API calls of each page’s median warm load (start → end ms after navigation start):');
  for (const s of summaries) {
    log(`  ${s.page} (${s.warm_p50_ms} ms):`);
    for (const a of s.median_load?.api ?? []) {
      log(
        `    ${fixed(a.start_ms, 0).padStart(5)} → ${fixed(a.end_ms, 0).padStart(5)}  ${fixed(a.duration_ms, 0).padStart(4)} ms  ${kb(a.bytes).padStart(9)}  GET ${shortPath(a.path)}`,
      );
    }
  }
}

async function main(): Promise<void> {
  const cfg = loadBenchConfig(process.env, join(ROOT, 'bench', 'results.json'));
  const loads = Math.max(2, Math.round(Number(process.env.BENCH_PAGE_LOADS) || DEFAULT_LOADS));
  const resultsPath = resolve(
    process.env.BENCH_PAGE_RESULTS?.trim() || join(ROOT, 'test-output', 'page-loads.json'),
  );
  const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  const started = new Date();
  log(
    `tms page loads: scale ${cfg.scale}, ${loads} loads per page (1 cold), ${cpus().length} CPUs, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const tmp = mkdtempSync(join(tmpdir(), 'tms-pages-'));
  chmodSync(tmp, 0o755); // the embedded server runs as the `postgres` user when we are root
  const cleanups: Array<() => Promise<void>> = [];
  let failed = false;
  try {
    // Several builds (BENCH_WEB_DIR=before,after) are measured one after the other on the same
    // data, each with a service of its own: a before/after comparison side by side.
    const webDirs = (process.env.BENCH_WEB_DIR ?? '')
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean);
    if (webDirs.length === 0) {
      const webDir = join(tmp, 'web');
      log(`building the web app into ${webDir}`);
      execFileSync(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
          'build',
          '--config',
          join(ROOT, 'web', 'vite.config.mts'),
          '--outDir',
          webDir,
          '--emptyOutDir',
        ],
        {
          cwd: ROOT,
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, NODE_ENV: 'production' },
        },
      );
      webDirs.push(webDir);
    }
    for (const d of webDirs) {
      if (!existsSync(join(d, 'index.html'))) throw new Error(`no web app build in ${d}`);
    }

    let url = cfg.databaseUrl;
    if (!url) {
      const port = await freePort();
      log(`starting embedded PostgreSQL on 127.0.0.1:${port}`);
      const pg = await startEmbeddedPostgres({
        dataDir: join(tmp, 'db'),
        port,
        database: 'tms_bench',
        postgresFlags: [...BENCH_POSTGRES_FLAGS],
      });
      cleanups.push(() => pg.stop());
      url = pg.url;
    }
    const { seed, secret } = await migrateAndSeed(url, cfg.sizes, log);
    log(`seeded in ${(seed.totalMs / 1000).toFixed(1)} s`);

    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    cleanups.push(() => browser.close());
    const specs = pagesOf(seed);
    const variants: Array<{
      webDir: string;
      summaries: PageSummary[];
      loads: Record<string, LoadRecord[]>;
    }> = [];
    for (const webDir of webDirs) {
      log(`\nweb app ${webDir}`);
      const appPort = await freePort();
      const app = await startServer({
        name: 'service',
        args: [...productionNodeArgs(ROOT), join(BUILD, 'src', 'main.js')],
        env: {
          PATH: process.env.PATH,
          NODE_PATH: process.env.NODE_PATH,
          DATABASE_URL: url,
          AUTH_SECRET: secret,
          DB_POOL_SIZE: String(cfg.poolSize),
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          PORT: String(appPort),
          HOST: '127.0.0.1',
          DATA_DIR: join(tmp, 'app-data'),
          WEB_DIR: webDir,
        },
        port: appPort,
        readyPath: '/readyz',
      });
      try {
        const session = await signIn(app.url);
        const summaries: PageSummary[] = [];
        const all: Record<string, LoadRecord[]> = {};
        for (const spec of specs) {
          const records = await measurePage(browser, app.url, session, spec, loads);
          all[spec.name] = records;
          const s = summarise(spec, records);
          summaries.push(s);
          log(
            `  ${spec.name}: cold ${s.cold_ms} ms, warm p50 ${s.warm_p50_ms} ms, max ${s.warm_max_ms} ms` +
              (s.errors ? ` (${s.errors} failed: ${records.find((r) => r.error)?.error})` : ''),
          );
        }
        variants.push({ webDir, summaries, loads: all });
      } finally {
        await app.stop();
      }
    }

    for (const v of variants) {
      log(`\nweb app ${v.webDir}`);
      printSummaries(v.summaries);
    }
    if (variants.length > 1) {
      log('\nside by side (ms, first build → last build):');
      const a = variants[0].summaries;
      const b = variants[variants.length - 1].summaries;
      log(
        table(
          ['page', 'cold', 'warm p50', 'warm max', 'API calls (median load)'],
          a.map((x, i) => [
            x.page,
            `${x.cold_ms} → ${b[i].cold_ms}`,
            `${x.warm_p50_ms} → ${b[i].warm_p50_ms}`,
            `${x.warm_max_ms} → ${b[i].warm_max_ms}`,
            `${x.median_load?.api.length ?? '–'} → ${b[i].median_load?.api.length ?? '–'}`,
          ]),
        ),
      );
    }

    mkdirSync(dirname(resultsPath), { recursive: true });
    writeFileSync(
      resultsPath,
      JSON.stringify(
        {
          started: started.toISOString(),
          finished: new Date().toISOString(),
          commit: gitCommit(),
          scale: cfg.scale,
          loads_per_page: loads,
          viewport: VIEWPORT,
          definition:
            'content_ms: navigation start → the last DOM change, once every ready selector is visible and the network has been idle for 500 ms',
          ready: Object.fromEntries(
            specs.map((p) => [p.name, { route: p.hash, selectors: p.ready }]),
          ),
          builds: variants.map((v) => ({
            web_dir: v.webDir,
            pages: v.summaries.map(({ median_load: _m, ...x }) => x),
            loads: v.loads,
          })),
        },
        null,
        2,
      ) + '\n',
    );
    log(`\nresults written to ${resultsPath}`);
    if (variants.some((v) => v.summaries.some((x) => x.errors > 0))) failed = true;
  } catch (err) {
    failed = true;
    process.stderr.write(
      `page loads failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  } finally {
    for (const c of cleanups.reverse()) {
      await c().catch((e: unknown) => process.stderr.write(`cleanup: ${String(e)}\n`));
    }
    rmSync(tmp, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

void main();
