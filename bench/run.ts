/**
 * `npm run bench`: seeds a realistic project in PostgreSQL, starts the BUILT service and a minimal
 * node:http + pg baseline as child processes, loads them with autocannon, imports JUnit reports,
 * prints a table and writes bench/results.json. See bench/README.md.
 */
import 'reflect-metadata';
import { execSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { BENCH_POSTGRES_FLAGS, migrateAndSeed } from './bench-database';
import { BenchConfig, loadBenchConfig, resultsTarget } from './config';
import { writeJunitReport, uploadJunit } from './junit';
import {
  LoadResult,
  LoadScenario,
  pick,
  RequestShape,
  round,
  runInterleaved,
  runSolo,
} from './load';
import { databaseNow, ImportLimitResult, measureImportLimit } from './import-limit';
import { fixed, mb, table } from './report';
import { BENCH_PASSWORD, BENCH_USERNAME, SeedResult } from './seed';
import {
  CpuWatch,
  freePort,
  MemoryWatch,
  productionNodeArgs,
  Server,
  startServer,
  waitIdle,
} from './servers';
import { makeTopology } from './topology';

const ROOT = resolve(__dirname, '..', '..');

/** The run fields the `*-fields` list scenarios ask for: a dashboard's columns, no snapshot. */
const LIST_FIELDS = 'id,name,status,build,environment_name,summary,created_at';

function log(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

interface ScenarioRecord {
  name: string;
  server: string;
  description: string;
  request: string;
  skipped?: string;
  /** At the configured connections (the figure the targets use). */
  result?: LoadResult;
  /** One connection: the service time of a request without queueing. */
  solo?: LoadResult;
  /** With BENCH_PG_STATEMENTS: the costliest statements of the scenario (all its servers). */
  statements?: StatementCost[];
}

interface ImportRecord {
  name: string;
  testcases: number;
  fileBytes: number;
  status: number;
  ms: number;
  startRss: number;
  peakRss: number;
  peakSource: string;
  serverCpuMs: number | null;
  dbCpuMs: number | null;
  otherCores: number | null;
  summary: unknown;
  error?: unknown;
  statements?: StatementCost[];
  /** The `import-limit` row: the same rows by bare COPY in one transaction (new-case imports). */
  limit?: ImportLimitResult & { ratio: number };
}

interface StatementCost {
  calls: number;
  total_ms: number;
  ms_per_call: number;
  rows: number;
  query: string;
}

/**
 * pg_stat_statements around a scenario (BENCH_PG_STATEMENTS=1): reset before, the ten statements
 * with the most execution time after. Nested statements count too (`track=all`: the foreign-key
 * checks and functions a statement runs; their time is also part of their caller's).
 */
class StatementStats {
  constructor(private readonly client: Client | null) {}

  async reset(): Promise<void> {
    if (this.client) await this.client.query('SELECT pg_stat_statements_reset()');
  }

  /** Prints the three costliest statements of a scenario. */
  static print(statements: StatementCost[] | undefined): void {
    for (const st of statements?.slice(0, 3) ?? []) {
      log(`    db ${fixed(st.total_ms, 0)} ms in ${st.calls} calls: ${st.query.slice(0, 110)}`);
    }
  }

  async top(): Promise<StatementCost[] | undefined> {
    if (!this.client) return undefined;
    const { rows } = await this.client.query<StatementCost>(
      `SELECT calls::int AS calls, round(total_exec_time::numeric, 1)::float8 AS total_ms,
              round((total_exec_time / calls)::numeric, 3)::float8 AS ms_per_call, rows::int AS rows,
              left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 300) AS query
         FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND query NOT LIKE '%pg_stat_statements%'
        ORDER BY total_exec_time DESC LIMIT 10`,
    );
    return rows;
  }
}

interface TargetRecord {
  target: string;
  measured: string;
  ok: boolean | null;
}

class Bench {
  private token = '';
  readonly scenarios: ScenarioRecord[] = [];
  readonly imports: ImportRecord[] = [];
  readonly checks: Record<string, unknown> = {};
  /** The database, for the `import-limit` rows (set by main). */
  databaseUrl = '';

  constructor(
    private readonly cfg: BenchConfig,
    private readonly seed: SeedResult,
    private readonly app: Server,
    private readonly baseline: Server,
    private readonly tmp: string,
    private readonly postmasterPid: number | null,
    private readonly stats: StatementStats,
  ) {}

  private selected(name: string): boolean {
    return this.cfg.only === null || this.cfg.only.some((o) => name === o || name.startsWith(o));
  }

  private async call(server: Server, r: RequestShape): Promise<{ status: number; body: unknown }> {
    const res = await fetch(server.url + r.path, {
      method: r.method,
      headers: {
        authorization: `Bearer ${this.token}`,
        'content-type': 'application/json',
        ...r.headers,
      },
      body: r.body,
    });
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) as unknown };
    } catch {
      return { status: res.status, body: text };
    }
  }

  get accessToken(): string {
    return this.token;
  }

  async login(): Promise<void> {
    const res = await fetch(`${this.app.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: BENCH_USERNAME, password: BENCH_PASSWORD }),
    });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || !body.access_token) {
      throw new Error(`login failed: ${res.status} ${JSON.stringify(body)}`);
    }
    this.token = body.access_token;
  }

  /** The service and the baseline must answer the same bodies, or the comparison means nothing. */
  async compareShapes(): Promise<void> {
    const sameRun: boolean[] = [];
    for (const id of [
      ...this.seed.runIds.slice(0, 3),
      ...this.seed.runIdsWithoutEnvironment.slice(0, 2),
    ]) {
      const r = { method: 'GET' as const, path: `/api/v1/test-runs/${id}` };
      const [a, b] = await Promise.all([this.call(this.app, r), this.call(this.baseline, r)]);
      sameRun.push(a.status === 200 && b.status === 200 && canonical(a.body) === canonical(b.body));
      if (a.status === 200 && b.status === 200 && canonical(a.body) !== canonical(b.body)) {
        this.checks.get_run_difference = diffKeys(a.body, b.body);
      }
    }
    const list = { method: 'GET' as const, path: this.listPath(this.seed.mainProjectId, 2) };
    const [la, lb] = await Promise.all([this.call(this.app, list), this.call(this.baseline, list)]);
    this.checks.same_body_get_run = sameRun.every(Boolean);
    this.checks.same_body_list_runs =
      la.status === 200 && lb.status === 200 && canonical(la.body) === canonical(lb.body);
    if (!this.checks.same_body_list_runs)
      this.checks.list_runs_difference = diffKeys(la.body, lb.body);
    log(
      `  same bodies: get ${String(this.checks.same_body_get_run)}, list ${String(this.checks.same_body_list_runs)}`,
    );
  }

  private listPath(projectId: string, page = 1, extra = ''): string {
    return `/api/v1/test-runs?project_id=${projectId}&page=${page}&page_size=50${extra}`;
  }

  deepListQuery(): { page: number; extra: string } {
    // Filtered (two statuses), sorted by name, a page about 5 % deep into the result.
    const page = Math.max(2, Math.floor(this.cfg.sizes.mainRuns / 1000));
    return { page, extra: '&status=completed&status=in_progress&sort_by=name&sort_order=asc' };
  }

  async load(
    name: string,
    servers: Server[],
    description: string,
    s: Omit<LoadScenario, 'name'>,
  ): Promise<void> {
    if (!this.selected(name)) return;
    const scenario: LoadScenario = { name, ...s };
    const live: Array<{ server: Server; record: ScenarioRecord }> = [];
    for (const server of servers) {
      const probe = s.next();
      const record: ScenarioRecord = {
        name,
        server: server.name,
        description,
        request: `${probe.method} ${probe.path.replace(/\?.*$/, (q) => (q.length > 140 ? q.slice(0, 140) + '…' : q))}`,
      };
      this.scenarios.push(record);
      const first = await this.call(server, probe);
      if (!s.expect.includes(first.status)) {
        record.skipped = `probe answered ${first.status}: ${JSON.stringify(first.body).slice(0, 300)}`;
        log(`  ${name} @ ${server.name}: SKIPPED (${record.skipped})`);
        continue;
      }
      live.push({ server, record });
    }
    if (live.length === 0) return;
    await this.stats.reset();
    const idle = async () => {
      for (const l of live) await waitIdle(l.server.pid, this.postmasterPid);
    };
    // One connection first: the service time of a request, which also sizes the warm-up of the
    // loaded run (the queue of `connections` requests must fill before measuring).
    let serviceMs = 0;
    for (const l of live) {
      await idle();
      const solo = await runSolo(
        l.server.url,
        this.token,
        scenario,
        { seconds: this.cfg.soloDuration, minRequests: 5, maxRequests: 2000 },
        () => new CpuWatch(l.server.pid, this.postmasterPid),
      );
      l.record.solo = solo;
      serviceMs = Math.max(serviceMs, solo.latencyMs.p50);
      log(
        `  ${name} @ ${l.server.name}, 1 connection: p50 ${solo.latencyMs.p50} ms, p99 ${solo.latencyMs.p99} ms, ` +
          `CPU/request ${fixed(solo.cpuMsPerRequest.server, 2)} ms + db ${fixed(solo.cpuMsPerRequest.db, 2)} ms`,
      );
    }
    const expectedLatency = (serviceMs * this.cfg.connections) / 2 / 1000;
    const warmup = Math.min(15, Math.max(this.cfg.warmup, 1.5 * expectedLatency));
    const results = await runInterleaved(
      live.map((l) => ({
        url: l.server.url,
        meter: () => new CpuWatch(l.server.pid, this.postmasterPid),
      })),
      this.token,
      scenario,
      { ...this.cfg, warmup, slices: live.length > 1 ? 2 : 1 },
      idle,
    );
    const statements = await this.stats.top();
    StatementStats.print(statements);
    for (const [k, l] of live.entries()) {
      const r = results[k];
      l.record.result = r;
      if (statements) l.record.statements = statements;
      log(
        `  ${name} @ ${l.server.name}: ${fixed(r.rps)} req/s, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, ` +
          `CPU/request ${fixed(r.cpuMsPerRequest.server, 2)} ms + db ${fixed(r.cpuMsPerRequest.db, 2)} ms, ` +
          `others ${fixed(r.otherCores, 2)} cores, errors ${r.errors}` +
          (r.errors ? ` ${JSON.stringify(r.statuses)}` : ''),
      );
    }
  }

  /**
   * A scenario the baseline answers too, then the machine's limit for it: the baseline's constant
   * body (`/bench/constant`) of as many bytes as the service's answer, i.e. the same bytes written
   * from memory with no authentication, database or JSON, at the same connections. No server can
   * answer that size faster on this machine, with the load driver sharing its cores.
   */
  async compared(name: string, description: string, s: Omit<LoadScenario, 'name'>): Promise<void> {
    await this.load(name, [this.app, this.baseline], description, s);
    if (!this.selected(name)) return;
    const probe = s.next();
    const res = await fetch(this.app.url + probe.path, {
      headers: { authorization: `Bearer ${this.token}` },
    });
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) return;
    await this.load(
      name,
      [{ ...this.baseline, name: 'limit' }],
      `the same number of bytes (${bytes}) written from memory by bare node:http: the machine's limit`,
      { next: () => ({ method: 'GET', path: `/bench/constant?bytes=${bytes}` }), expect: [200] },
    );
  }

  async runScenarios(): Promise<void> {
    const s = this.seed;
    const main = s.mainProjectId;
    const deep = this.deepListQuery();

    // Reads, side by side with the baseline.
    {
      await this.compared(
        'get-run',
        'GET /test-runs/{id}: a random run (with its 200-node environment snapshot)',
        {
          next: () => ({ method: 'GET', path: `/api/v1/test-runs/${pick(s.runIds)}` }),
          expect: [200],
        },
      );
    }
    if (this.selected('get-run-304')) {
      // The same runs re-read by a client that holds them: `If-None-Match` with each run's ETag,
      // answered 304 without a body (the snapshot bytes are neither hashed again nor sent).
      const held: Array<{ id: string; etag: string }> = [];
      for (const id of s.runIds.slice(0, 200)) {
        const res = await fetch(`${this.app.url}/api/v1/test-runs/${id}`, {
          headers: { authorization: `Bearer ${this.token}` },
        });
        await res.arrayBuffer();
        const etag = res.headers.get('etag');
        if (res.status === 200 && etag !== null) held.push({ id, etag });
      }
      if (held.length > 0) {
        await this.load(
          'get-run-304',
          [this.app],
          'GET /test-runs/{id} with a matching If-None-Match: 304, no body (compare get-run)',
          {
            next: () => {
              const h = pick(held);
              return {
                method: 'GET',
                path: `/api/v1/test-runs/${h.id}`,
                headers: { 'if-none-match': h.etag },
              };
            },
            expect: [304],
          },
        );
      }
    }
    {
      await this.compared(
        'get-run-no-env',
        'GET /test-runs/{id}: a random run without environment (1 KB body)',
        {
          next: () => ({
            method: 'GET',
            path: `/api/v1/test-runs/${pick(s.runIdsWithoutEnvironment)}`,
          }),
          expect: [200],
        },
      );
    }
    {
      await this.compared(
        'list-runs-deep',
        `GET /test-runs filtered (completed + in_progress), sorted by name, page ${deep.page} of 50`,
        {
          next: () => ({ method: 'GET', path: this.listPath(main, deep.page, deep.extra) }),
          expect: [200],
        },
      );
    }
    // Scale check: the default list (non-archived, newest first, page 1 of 50) in both projects.
    {
      await this.compared(
        'list-runs-small',
        `GET /test-runs default list, ${this.cfg.sizes.smallRuns} runs in the project`,
        {
          next: () => ({ method: 'GET', path: this.listPath(s.smallProjectId) }),
          expect: [200],
        },
      );
      await this.compared(
        'list-runs-large',
        `GET /test-runs default list, ${this.cfg.sizes.mainRuns} runs in the project`,
        {
          next: () => ({ method: 'GET', path: this.listPath(main) }),
          expect: [200],
        },
      );
    }
    // The same lists with sparse fields (issue #19 §4): no environment snapshot, so none is read
    // (database or cache) and the page is kilobytes. The service only: the baseline has no `fields`.
    {
      const fields = `&fields=${LIST_FIELDS}`;
      await this.load(
        'list-runs-deep-fields',
        [this.app],
        `list-runs-deep with fields=${LIST_FIELDS} (no environment_snapshot)`,
        {
          next: () => ({
            method: 'GET',
            path: this.listPath(main, deep.page, `${deep.extra}${fields}`),
          }),
          expect: [200],
        },
      );
      await this.load(
        'list-runs-large-fields',
        [this.app],
        `list-runs-large with fields=${LIST_FIELDS} (no environment_snapshot)`,
        {
          next: () => ({ method: 'GET', path: this.listPath(main, 1, fields) }),
          expect: [200],
        },
      );
    }
    // The default list as clients that accept a compressed answer get it (bench/README.md,
    // "Response compression levels"): a browser (`br` first) and a gzip-only client. The other
    // scenarios send no `Accept-Encoding`, as autocannon does; it counts the compressed bytes.
    for (const [coding, accept] of [
      ['br', 'br, gzip, deflate'],
      ['gzip', 'gzip, deflate'],
    ] as const) {
      await this.load(
        `list-runs-large-${coding}`,
        [this.app],
        `list-runs-large with Accept-Encoding: ${accept} (answered ${coding})`,
        {
          next: () => ({
            method: 'GET',
            path: this.listPath(main),
            headers: { 'accept-encoding': accept },
          }),
          expect: [200],
        },
      );
    }

    await this.load(
      'product-summary',
      [this.app],
      'GET /products/{id}/summary: a random product (20 components, ~270 cases)',
      {
        next: () => ({ method: 'GET', path: `/api/v1/products/${pick(s.productIds)}/summary` }),
        expect: [200],
      },
    );
    await this.insightsScenarios();
    await this.load(
      'components-graph',
      [this.app],
      `GET /components/graph: ${s.componentIds.length} components and their edges`,
      {
        next: () => ({ method: 'GET', path: `/api/v1/components/graph?project_id=${main}` }),
        expect: [200],
      },
    );

    // Cycle detection on the graph project: rejected replacements first (they write nothing), then
    // accepted ones (they keep the graph a DAG: targets always have a higher index).
    const g = s.graphComponentIds;
    await this.load(
      'dependency-cycle-rejected',
      [this.app],
      `PUT /components/{id}/dependencies closing a cycle (graph of ${g.length} components) → 422`,
      {
        next: () => {
          const [source, target] = pick(s.graphEdges);
          return {
            method: 'PUT',
            path: `/api/v1/components/${target}/dependencies`,
            body: JSON.stringify({ dependencies: [{ target_component_id: source }] }),
          };
        },
        expect: [422],
      },
    );
    await this.load(
      'dependency-cycle-accepted',
      [this.app],
      `PUT /components/{id}/dependencies, 5 acyclic targets deep in the graph of ${g.length} components`,
      { next: () => dagReplacement(g, Math.max(1, Math.floor(g.length / 10))), expect: [200] },
    );
    await this.load(
      'put-dependencies',
      [this.app],
      `PUT /components/{id}/dependencies, 5 acyclic targets (${s.componentIds.length} components)`,
      {
        next: () => dagReplacement(s.componentIds, Math.floor(s.componentIds.length * 0.9)),
        expect: [200],
      },
    );

    let generation = 0;
    const topology = JSON.stringify(makeTopology(this.cfg.sizes.topologyNodes, '__GEN__'));
    await this.load(
      'patch-environment',
      [this.app],
      `PATCH /environments/{id} with a new ${this.cfg.sizes.topologyNodes}-node topology (a new revision each time)`,
      {
        next: () => ({
          method: 'PATCH',
          path: `/api/v1/environments/${pick(s.environmentIds)}`,
          body: `{"topology":${topology.replace('"__GEN__"', String(++generation))}}`,
        }),
        expect: [200],
      },
    );
    let n = 0;
    await this.load(
      'create-run',
      [this.app],
      'POST /test-runs with environment (captures its 200-node revision) and milestone',
      {
        next: () => ({
          method: 'POST',
          path: '/api/v1/test-runs',
          body: JSON.stringify({
            project_id: main,
            name: `Bench run ${++n}`,
            environment_id: pick(s.environmentIds),
            milestone_id: s.milestoneIds.length ? pick(s.milestoneIds) : null,
            build: `v9.${n}`,
          }),
        }),
        expect: [201],
      },
    );
  }

  /**
   * Issue #17's reads: the comparison of the two 10,000-item runs, the flaky list over the main
   * project's run items, a case's history and release readiness. The baseline answers none of them.
   * Before the load, one answer of each is recorded in `checks.insights` (the compare counts show
   * every change class occurs; the flaky list's total shows the ranking is not trivially empty).
   */
  private async insightsScenarios(): Promise<void> {
    const s = this.seed;
    const main = s.mainProjectId;
    const [base, run] = s.compareRunIds;
    const comparePath = `/api/v1/test-runs/${run}/compare?base_run_id=${base}`;
    const flakyPath = `/api/v1/test-cases/flaky?project_id=${main}`;
    const readinessPath = (id: string) => `/api/v1/products/${id}/readiness`;
    const historyPath = (id: string) => `/api/v1/test-cases/${id}/history`;
    const names = ['compare-runs', 'flaky-list', 'case-history', 'readiness', 'readiness-all'];
    if (names.some((n) => this.selected(n))) {
      const get = (path: string) => this.call(this.app, { method: 'GET', path });
      const cmp = await get(comparePath);
      const flaky = await get(flakyPath);
      const ready = await get(readinessPath(s.productIds[0]));
      const readyAll = await get(`${readinessPath(s.productIds[0])}?min_risk_level=low`);
      const hist = await get(historyPath(s.caseIds[0]));
      const field = (r: { body: unknown }, k: string) =>
        r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>)[k] : undefined;
      this.checks.insights = {
        compare: { status: cmp.status, counts: field(cmp, 'counts'), total: field(cmp, 'total') },
        flaky: { status: flaky.status, total: field(flaky, 'total') },
        readiness: {
          status: ready.status,
          verdict: field(ready, 'verdict'),
          counts: field(ready, 'counts'),
        },
        readiness_all: {
          status: readyAll.status,
          verdict: field(readyAll, 'verdict'),
          counts: field(readyAll, 'counts'),
        },
        history: { status: hist.status, total: field(hist, 'total'), stats: field(hist, 'stats') },
      };
      log(`  insights: ${JSON.stringify(this.checks.insights)}`);
    }
    await this.load(
      'compare-runs',
      [this.app],
      `GET /test-runs/{id}/compare?base_run_id=…: two runs of ${this.cfg.sizes.compareItems} items, environment revision 2 → 3, first page of 50`,
      { next: () => ({ method: 'GET', path: comparePath }), expect: [200] },
    );
    await this.load(
      'flaky-list',
      [this.app],
      `GET /test-cases/flaky?project_id=…: the main project's cases ranked over their last 30 runs (all its run items)`,
      { next: () => ({ method: 'GET', path: flakyPath }), expect: [200] },
    );
    await this.load(
      'case-history',
      [this.app],
      'GET /test-cases/{id}/history: a random case of the main project, first page and stats',
      { next: () => ({ method: 'GET', path: historyPath(pick(s.caseIds)) }), expect: [200] },
    );
    await this.load(
      'readiness',
      [this.app],
      'GET /products/{id}/readiness: a random product (20 components; default min_risk_level high)',
      { next: () => ({ method: 'GET', path: readinessPath(pick(s.productIds)) }), expect: [200] },
    );
    await this.load(
      'readiness-all',
      [this.app],
      'GET /products/{id}/readiness?min_risk_level=low: every component of a random product',
      {
        next: () => ({
          method: 'GET',
          path: `${readinessPath(pick(s.productIds))}?min_risk_level=low`,
        }),
        expect: [200],
      },
    );
  }

  async runImports(): Promise<void> {
    const sizes = this.cfg.sizes;
    // The first import the service runs since it started: its upload, parse, plan and write code
    // is still interpreted (not yet optimised by V8). The load scenarios all have a warm-up; this
    // one is measured cold on purpose, and `junit-import-small-warm` is the same import again.
    await this.importOnce('junit-import-small', sizes.junitSmall, 'small');
    await this.importOnce('junit-reimport-small', sizes.junitSmall, 'small');
    // New cases again (other testcase names: results match by name across suites), now that the
    // import code has run twice: what every later import of a running service costs.
    await this.importOnce('junit-import-small-warm', sizes.junitSmall, 'warm', 1, 'warm_case');
    await this.importOnce('junit-import-large', sizes.junitLarge, 'large');
    // A Surefire directory in one request (issue #18 §2): 300 files of 100 testcases, one import.
    await this.importOnce('junit-import-300-files', 300 * 100, 'surefire', 300);
  }

  /**
   * Imports `testcases` testcases, in one file or in `files` files of one request, named after
   * `title` (writeJunitReport).
   */
  private async importOnce(
    name: string,
    testcases: number,
    family: string,
    files = 1,
    title?: string,
  ): Promise<void> {
    if (!this.selected(name)) return;
    const file =
      files === 1
        ? join(this.tmp, `junit-${family}-${testcases}.xml`)
        : Array.from({ length: files }, (_, i) => join(this.tmp, `TEST-${family}-${i}.xml`));
    let fileBytes = 0;
    for (const [i, path] of (typeof file === 'string' ? [file] : file).entries()) {
      // One family per file: each file's classnames are its own (no two files share a test).
      fileBytes += await writeJunitReport(
        path,
        testcases / files,
        files === 1 ? family : `${family}${i}`,
        title,
      );
    }
    const run = await this.call(this.app, {
      method: 'POST',
      path: '/api/v1/test-runs',
      body: JSON.stringify({ project_id: this.seed.mainProjectId, name: `JUnit ${name}` }),
    });
    const runId = (run.body as { id?: string }).id;
    if (run.status !== 201 || !runId)
      throw new Error(`could not create a run for ${name}: ${run.status}`);
    const since = await databaseNow(this.databaseUrl);
    await this.stats.reset();
    const watch = new MemoryWatch(this.app.pid);
    const cpu = new CpuWatch(this.app.pid, this.postmasterPid);
    let up: Awaited<ReturnType<typeof uploadJunit>>;
    try {
      up = await uploadJunit(
        `${this.app.url}/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
        this.token,
        file,
      );
    } catch (err) {
      watch.stop();
      throw err;
    }
    const mem = watch.stop();
    const used = cpu.stop();
    const body = up.body as { summary?: unknown };
    const record: ImportRecord = {
      name,
      testcases,
      fileBytes,
      status: up.status,
      ms: up.ms,
      startRss: mem.startRss,
      peakRss: mem.peakRss,
      peakSource: mem.peakSource,
      serverCpuMs: used.serverMs,
      dbCpuMs: used.dbMs,
      otherCores: used.otherCores === null ? null : round(used.otherCores, 2),
      summary: body && typeof body === 'object' ? (body.summary ?? null) : null,
    };
    if (up.status !== 201)
      record.error = typeof up.body === 'string' ? up.body.slice(0, 500) : up.body;
    const statements = await this.stats.top();
    if (statements) record.statements = statements;
    this.imports.push(record);
    log(
      `  ${name}: ${testcases} testcases (${mb(fileBytes)}) → ${up.status} in ${(up.ms / 1000).toFixed(2)} s, ` +
        `peak RSS ${mb(mem.peakRss)} (from ${mb(mem.startRss)}), ` +
        `CPU ${fixed((used.serverMs ?? 0) / 1000)} s + db ${fixed((used.dbMs ?? 0) / 1000)} s`,
    );
    StatementStats.print(statements);
    // Only an import of new cases has a limit row: `junit-import-300-files` imports cases that
    // exist by then, and its "limit" was the bare COPY of a hundred run items (×98 of it).
    const created = (record.summary as { created_test_cases?: number } | null)?.created_test_cases;
    if (up.status === 201 && name.startsWith('junit-import') && (created ?? 0) > 0)
      await this.importLimit(record, runId, since);
  }

  /**
   * The `import-limit` row of a new-case import: the rows it wrote, written again by bare COPY
   * into a new run of the same project in one transaction (bench/import-limit.ts).
   */
  private async importLimit(record: ImportRecord, importRun: string, since: Date): Promise<void> {
    const run = await this.call(this.app, {
      method: 'POST',
      path: '/api/v1/test-runs',
      body: JSON.stringify({ project_id: this.seed.mainProjectId, name: `Limit ${record.name}` }),
    });
    const limitRunId = (run.body as { id?: string }).id;
    if (run.status !== 201 || !limitRunId) throw new Error(`could not create the limit's run`);
    const limit = await measureImportLimit(
      this.databaseUrl,
      this.seed.mainProjectId,
      importRun,
      limitRunId,
      since,
    );
    record.limit = { ...limit, ratio: round(record.ms / limit.ms, 2) };
    log(
      `  import-limit (${record.name}): bare COPY of ${JSON.stringify(limit.rows)} ` +
        `(${mb(limit.bytes)}) in one transaction: ${(limit.ms / 1000).toFixed(2)} s; ` +
        `the service ×${record.limit.ratio}`,
    );
  }
}

function dagReplacement(ids: readonly string[], maxSource: number): RequestShape {
  const i = Math.floor(Math.random() * maxSource);
  const targets = new Set<string>();
  const span = Math.min(200, ids.length - i - 1);
  while (span > 0 && targets.size < Math.min(5, span)) {
    targets.add(ids[i + 1 + Math.floor(Math.random() * span)]);
  }
  return {
    method: 'PUT',
    path: `/api/v1/components/${ids[i]}/dependencies`,
    body: JSON.stringify({ dependencies: [...targets].map((t) => ({ target_component_id: t })) }),
  };
}

function canonical(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (x && typeof x === 'object') {
      return Object.fromEntries(
        Object.keys(x as Record<string, unknown>)
          .sort()
          .map((k) => [k, sort((x as Record<string, unknown>)[k])]),
      );
    }
    return x;
  };
  return JSON.stringify(sort(v));
}

function diffKeys(a: unknown, b: unknown): string[] {
  const out: string[] = [];
  const walk = (x: unknown, y: unknown, path: string) => {
    if (out.length > 20) return;
    if (x && y && typeof x === 'object' && typeof y === 'object') {
      const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
      for (const k of keys) {
        walk(
          (x as Record<string, unknown>)[k],
          (y as Record<string, unknown>)[k],
          path ? `${path}.${k}` : k,
        );
      }
    } else if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(`${path}: ${JSON.stringify(x)?.slice(0, 80)} ≠ ${JSON.stringify(y)?.slice(0, 80)}`);
    }
  };
  walk(a, b, '');
  return out;
}

function findResult(b: Bench, name: string, server: string): LoadResult | undefined {
  return b.scenarios.find((s) => s.name === name && s.server === server)?.result;
}

function evaluate(
  b: Bench,
  cfg: BenchConfig,
): { targets: TargetRecord[]; ratios: Record<string, unknown> } {
  const targets: TargetRecord[] = [];
  const ratios: Record<string, unknown> = {};
  for (const name of [
    'get-run',
    'get-run-no-env',
    'list-runs-deep',
    'list-runs-large',
    'list-runs-small',
  ]) {
    const ours = findResult(b, name, 'service');
    const base = findResult(b, name, 'baseline');
    if (!ours || !base) continue;
    const rpsRatio = round(ours.rps / base.rps, 3);
    // CPU (server + database) per request: what the throughput ratio would be on a machine the
    // bench had to itself, when CPU is the limit.
    const cpu = (r: LoadResult) =>
      (r.cpuMsPerRequest.server ?? NaN) + (r.cpuMsPerRequest.db ?? NaN);
    const cpuRatio = round(cpu(base) / cpu(ours), 3);
    ratios[name] = {
      rps: rpsRatio,
      cpu_per_request: Number.isFinite(cpuRatio) ? cpuRatio : null,
      p50: round(ours.latencyMs.p50 / Math.max(base.latencyMs.p50, 0.001), 2),
      p99: round(ours.latencyMs.p99 / Math.max(base.latencyMs.p99, 0.001), 2),
    };
    targets.push({
      target: `${name}: ≥ 50 % of the baseline's throughput at ${cfg.connections} connections`,
      measured:
        `${fixed(ours.rps)} vs ${fixed(base.rps)} req/s = ${(rpsRatio * 100).toFixed(0)} %` +
        (Number.isFinite(cpuRatio) ? ` (by CPU per request ${(cpuRatio * 100).toFixed(0)} %)` : ''),
      ok: rpsRatio >= 0.5,
    });
    const limit = findResult(b, name, 'limit');
    if (limit) {
      (ratios[name] as Record<string, unknown>).limit = {
        rps: round(ours.rps / limit.rps, 3),
        p99: round(ours.latencyMs.p99 / Math.max(limit.latencyMs.p99, 0.001), 2),
      };
    }
    targets.push({
      target: `${name}: p99 < 50 ms at ${cfg.connections} connections`,
      measured:
        `p99 ${ours.latencyMs.p99} ms (baseline ${base.latencyMs.p99} ms` +
        (limit ? `; the same bytes from memory ${limit.latencyMs.p99} ms)` : ')'),
      ok: ours.latencyMs.p99 < 50 && ours.errors === 0,
    });
  }
  for (const server of ['service', 'baseline']) {
    const small = b.scenarios.find((s) => s.name === 'list-runs-small' && s.server === server);
    const large = b.scenarios.find((s) => s.name === 'list-runs-large' && s.server === server);
    if (!small?.solo || !large?.solo || !small.result || !large.result) continue;
    const solo = round(large.solo.latencyMs.p50 / Math.max(small.solo.latencyMs.p50, 0.001), 2);
    const loaded = round(
      large.result.latencyMs.avg / Math.max(small.result.latencyMs.avg, 0.001),
      2,
    );
    ratios[`scale_${server}`] = { p50_one_connection: solo, mean_at_connections: loaded };
    if (server !== 'service') continue;
    targets.push({
      target: `list at ${cfg.sizes.mainRuns} runs ≤ 1.5× slower than at ${cfg.sizes.smallRuns}`,
      measured:
        `p50 ×${solo} at 1 connection (${small.solo.latencyMs.p50} → ${large.solo.latencyMs.p50} ms); ` +
        `mean ×${loaded} at ${cfg.connections}`,
      ok: solo <= 1.5,
    });
  }
  const smallImport = b.imports.find((i) => i.name === 'junit-import-small');
  if (smallImport) {
    targets.push({
      target: `${cfg.sizes.junitSmall}-testcase import < 5 s`,
      measured:
        smallImport.status === 201
          ? `${(smallImport.ms / 1000).toFixed(2)} s`
          : `status ${smallImport.status}`,
      ok: smallImport.status === 201 && smallImport.ms < 5000,
    });
  }
  const largeImport = b.imports.find((i) => i.name === 'junit-import-large');
  if (largeImport) {
    targets.push({
      target: `${cfg.sizes.junitLarge}-testcase import < 512 MB peak memory`,
      measured:
        largeImport.status === 201
          ? `${mb(largeImport.peakRss)} peak RSS`
          : `status ${largeImport.status}`,
      ok: largeImport.status === 201 && largeImport.peakRss < 512 * 1024 * 1024,
    });
  }
  for (const i of b.imports) {
    if (i.limit) ratios[i.name] = { import_limit: i.limit.ratio };
  }
  return { targets, ratios };
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

async function main(): Promise<void> {
  const cfg = loadBenchConfig(process.env, join(ROOT, 'bench', 'results.json'));
  const started = new Date();
  const load0 = loadavg();
  log(
    `tms bench: scale ${cfg.scale}, ${cfg.duration} s per scenario at ${cfg.connections} connections ` +
      `(warm-up ${cfg.warmup} s), ${cpus().length} CPUs, load average ${load0.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const tmp = mkdtempSync(join(tmpdir(), 'tms-bench-'));
  chmodSync(tmp, 0o755); // the embedded server runs as the `postgres` user when we are root
  const cleanups: Array<() => Promise<void>> = [];
  let failed = false;
  try {
    let url = cfg.databaseUrl;
    let postmasterPid: number | null = null;
    if (!url) {
      const port = await freePort();
      log(`starting embedded PostgreSQL on 127.0.0.1:${port} (data in ${tmp}/db)`);
      const pg = await startEmbeddedPostgres({
        dataDir: join(tmp, 'db'),
        port,
        database: 'tms_bench',
        postgresFlags: [
          ...BENCH_POSTGRES_FLAGS,
          ...(cfg.pgStatements
            ? [
                '-c',
                'shared_preload_libraries=pg_stat_statements',
                '-c',
                'pg_stat_statements.track=all',
              ]
            : []),
          ...(cfg.pgSlowMs !== null
            ? [
                '-c',
                `log_min_duration_statement=${cfg.pgSlowMs}`,
                '-c',
                'log_autovacuum_min_duration=-1',
              ]
            : []),
        ],
        onLog:
          cfg.pgSlowMs !== null ? (line) => appendFileSync(cfg.pgLogPath, line + '\n') : undefined,
      });
      cleanups.push(() => pg.stop());
      url = pg.url;
      postmasterPid =
        Number(readFileSync(join(tmp, 'db', 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) ||
        null;
    }
    const { seed, secret, pgVersion } = await migrateAndSeed(url, cfg.sizes, log);
    log(`seeded in ${(seed.totalMs / 1000).toFixed(1)} s: ${JSON.stringify(seed.counts)}`);

    const appPort = await freePort();
    const basePort = await freePort();
    const common = {
      PATH: process.env.PATH,
      DATABASE_URL: url,
      AUTH_SECRET: secret,
      DB_POOL_SIZE: String(cfg.poolSize),
    };
    if (cfg.cpuProfDir) mkdirSync(cfg.cpuProfDir, { recursive: true });
    const app = await startServer({
      name: 'service',
      args: [
        ...(cfg.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cfg.cpuProfDir}`] : []),
        ...productionNodeArgs(ROOT),
        ...cfg.serviceNodeArgs,
        join(ROOT, 'dist', 'src', 'main.js'),
      ],
      env: {
        ...common,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        PORT: String(appPort),
        HOST: '127.0.0.1',
        DATA_DIR: join(tmp, 'app-data'),
      },
      port: appPort,
      readyPath: '/readyz',
    });
    cleanups.push(() => app.stop());
    const baseline = await startServer({
      name: 'baseline',
      args: [join(ROOT, 'dist', 'bench', 'baseline-server.js')],
      env: { ...common, NODE_ENV: 'production', PORT: String(basePort), HOST: '127.0.0.1' },
      port: basePort,
      readyPath: '/healthz',
    });
    cleanups.push(() => baseline.stop());

    let statsClient: Client | null = null;
    if (cfg.pgStatements) {
      statsClient = new Client({ connectionString: url, application_name: 'tms-bench-stats' });
      await statsClient.connect();
      const c = statsClient;
      cleanups.push(() => c.end());
      // An external database must already load the library (shared_preload_libraries).
      await statsClient.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      log('pg_stat_statements: on (BENCH_PG_STATEMENTS); figures include its overhead');
    }
    const bench = new Bench(
      cfg,
      seed,
      app,
      baseline,
      tmp,
      postmasterPid,
      new StatementStats(statsClient),
    );
    bench.databaseUrl = url;
    await bench.login();
    await bench.compareShapes();
    if (process.env.BENCH_HOLD === '1') {
      // Debugging: keep everything running and print how to reach it; Ctrl-C ends the bench.
      log(
        `HOLD service ${app.url} (pid ${app.pid}), baseline ${baseline.url} (pid ${baseline.pid}), db ${url}`,
      );
      log(`HOLD token ${bench.accessToken}`);
      log(
        `HOLD seed ${JSON.stringify({ main: seed.mainProjectId, small: seed.smallProjectId, graph: seed.graphProjectId, run: seed.runIds[0] })}`,
      );
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
    log('load scenarios');
    await bench.runScenarios();
    log('imports');
    await bench.runImports();

    const { targets, ratios } = evaluate(bench, cfg);
    const load1 = loadavg();
    const results = {
      started: started.toISOString(),
      finished: new Date().toISOString(),
      commit: gitCommit(),
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? null,
        memory_bytes: totalmem(),
        node: process.version,
        postgres: pgVersion,
        load_average_start: load0.map((l) => round(l, 2)),
        load_average_end: load1.map((l) => round(l, 2)),
      },
      settings: {
        scale: cfg.scale,
        duration_s: cfg.duration,
        warmup_s: cfg.warmup,
        connections: cfg.connections,
        pool_size: cfg.poolSize,
        service_node_args: [...productionNodeArgs(ROOT), ...cfg.serviceNodeArgs],
        external_database: cfg.databaseUrl !== null,
        pg_statements: cfg.pgStatements,
      },
      sizes: cfg.sizes,
      seed: { total_ms: seed.totalMs, steps_ms: seed.timings, rows: seed.counts },
      checks: bench.checks,
      scenarios: bench.scenarios,
      ratios_to_baseline: ratios,
      imports: bench.imports,
      targets,
    };
    const target = resultsTarget(cfg, bench.scenarios.length + bench.imports.length);
    if (target !== null) writeFileSync(target, JSON.stringify(results, null, 2) + '\n');
    printSummary(bench, targets);
    log(
      target !== null
        ? `\nresults written to ${target}`
        : `\nno scenario or import ran: ${cfg.resultsPath} left as it was (BENCH_RESULTS names a file to write anyway)`,
    );
  } catch (err) {
    failed = true;
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  } finally {
    for (const c of cleanups.reverse()) {
      await c().catch((e: unknown) => process.stderr.write(`cleanup: ${String(e)}\n`));
    }
    if (!cfg.keep) rmSync(tmp, { recursive: true, force: true });
    else log(`kept ${tmp}`);
  }
  process.exit(failed ? 1 : 0);
}

function printSummary(b: Bench, targets: TargetRecord[]): void {
  log('');
  log(
    table(
      [
        'scenario',
        'server',
        'req/s',
        'p50 ms',
        'p99 ms',
        'max ms',
        'errors',
        '× baseline',
        'CPU ms/req',
        'db ms/req',
        'others (cores)',
      ],
      b.scenarios.map((s) => {
        const r = s.result;
        const base = s.server === 'service' ? findResult(b, s.name, 'baseline') : undefined;
        return [
          s.name,
          s.server,
          r ? fixed(r.rps) : `skipped`,
          r?.latencyMs.p50,
          r?.latencyMs.p99,
          r?.latencyMs.max,
          r?.errors,
          r && base ? fixed(r.rps / base.rps, 2) : null,
          fixed(r?.cpuMsPerRequest.server, 2),
          fixed(r?.cpuMsPerRequest.db, 2),
          fixed(r?.otherCores, 2),
        ];
      }),
    ),
  );
  if (b.imports.length) {
    log('');
    log(
      table(
        [
          'import',
          'testcases',
          'file',
          'status',
          'seconds',
          'peak RSS',
          'RSS before',
          'CPU s',
          'db CPU s',
          'others (cores)',
          'import-limit s',
          '× import-limit',
        ],
        b.imports.map((i) => [
          i.name,
          i.testcases,
          mb(i.fileBytes),
          i.status,
          fixed(i.ms / 1000, 2),
          mb(i.peakRss),
          mb(i.startRss),
          fixed((i.serverCpuMs ?? 0) / 1000, 1),
          fixed((i.dbCpuMs ?? 0) / 1000, 1),
          fixed(i.otherCores, 2),
          i.limit ? fixed(i.limit.ms / 1000, 2) : null,
          i.limit ? fixed(i.limit.ratio, 2) : null,
        ]),
      ),
    );
  }
  log('');
  log(
    table(
      ['target', 'measured', 'holds'],
      targets.map((t) => [t.target, t.measured, t.ok === null ? '?' : t.ok ? 'yes' : 'NO']),
    ),
  );
}

void main();
