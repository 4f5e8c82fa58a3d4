import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, request, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The `tms` command (issue #18 §4), spawned as a separate process against a real test server.
 *
 * What is spawned is src/cli as it is now, transpiled file by file with the TypeScript API into a
 * temporary directory (the way `npm run build` would emit it, without the type check that
 * `npm run typecheck` does), so these tests never run a stale `dist/` and need no build before
 * `npm test`. The child resolves `commander` through NODE_PATH, and gets a clean environment (no
 * CI variables of the machine running the tests).
 */
const ROOT = resolve(__dirname, '..', '..');
const API = '/api/v1';

type Json = Record<string, unknown>;
interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function transpileCli(outDir: string): string {
  const srcDir = join(ROOT, 'src', 'cli');
  for (const name of readdirSync(srcDir)) {
    if (!name.endsWith('.ts') || name.endsWith('.spec.ts')) continue;
    const { outputText } = ts.transpileModule(readFileSync(join(srcDir, name), 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
      fileName: name,
    });
    writeFileSync(join(outDir, name.replace(/\.ts$/, '.js')), outputText);
  }
  return join(outDir, 'tms.js');
}

const report = (suite: string, cases: Record<string, 'pass' | 'fail'>) =>
  `<?xml version="1.0"?>\n<testsuite name="${suite}" tests="${Object.keys(cases).length}">\n` +
  Object.entries(cases)
    .map(
      ([name, r]) =>
        `  <testcase classname="shop.${suite}" name="${name}">` +
        (r === 'fail' ? '<failure message="boom">stack</failure>' : '') +
        '</testcase>\n',
    )
    .join('') +
  '</testsuite>\n';

const GITHUB_ENV = {
  GITHUB_ACTIONS: 'true',
  GITHUB_RUN_NUMBER: '871',
  GITHUB_RUN_ID: '9876543210',
  GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567',
  GITHUB_REF_NAME: 'main',
};

type Failure = '503' | 'drop' | 'lost';

describe('tms (the command-line client) against a test server', () => {
  let t: TestApp;
  let cli: string;
  let work: string;
  let url: string;
  let apiKey: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tms-cli-e2e-'));
    mkdirSync(join(work, 'bin'));
    cli = transpileCli(join(work, 'bin'));
    t = await createTestApp();
    url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
    const key = await t
      .req('post', `${API}/users/me/api-keys`, t.adminToken)
      .send({ name: 'ci' })
      .expect(201);
    apiKey = key.body.api_key as string;
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  function tms(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, [cli, ...args], {
        cwd: work,
        env: {
          PATH: process.env.PATH ?? '',
          NODE_PATH: join(ROOT, 'node_modules'),
          TMS_URL: url,
          TMS_API_KEY: apiKey,
          ...env,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  }

  function file(name: string, content: string): string {
    writeFileSync(join(work, name), content);
    return name;
  }

  /** How many import records the project has (synchronous and background ones). */
  async function importCount(projectId: string): Promise<number> {
    const rows: Array<{ n: number }> = await t.db.query(
      'SELECT count(*)::int AS n FROM junit_imports WHERE project_id = $1',
      [projectId],
    );
    return rows[0].n;
  }

  async function runsNamed(projectId: string, name: string): Promise<Json[]> {
    const res = await t
      .req(
        'get',
        `${API}/test-runs?project_id=${projectId}&search=${encodeURIComponent(name)}`,
        t.adminToken,
      )
      .expect(200);
    return (res.body.items as Json[]).filter((r) => r.name === name);
  }

  const noStack = (o: Outcome) => expect(o.stderr).not.toMatch(/\n\s+at /);

  /** The ids of the project's runs named `name`, whatever their status, oldest first. */
  async function runIdsNamed(projectId: string, name: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await t.db.query(
      'SELECT id FROM test_runs WHERE project_id = $1 AND name = $2 ORDER BY created_at, id',
      [projectId, name],
    );
    return rows.map((r) => r.id);
  }

  type Closing = 'completed' | 'archived' | 'deleted';

  /** Ends a run as its users would: completed (through in_progress), then archived; or deletes it. */
  async function closeRun(runId: string, how: Closing): Promise<void> {
    if (how === 'deleted') {
      await t.req('delete', `${API}/test-runs/${runId}`, t.adminToken).expect(204);
      return;
    }
    const run = await t.req('get', `${API}/test-runs/${runId}`, t.adminToken).expect(200);
    const steps = ['in_progress', 'completed', ...(how === 'archived' ? ['archived'] : [])];
    for (const status of steps.slice(run.body.status === 'not_started' ? 0 : 1)) {
      await t.req('patch', `${API}/test-runs/${runId}`, t.adminToken).send({ status }).expect(200);
    }
  }

  /** `tms import <file> --project <p> --run-name nightly --create-missing-cases --json …more`. */
  const nightly = (xml: string, projectId: string, ...more: string[]) => [
    'import',
    xml,
    '--project',
    projectId,
    '--run-name',
    'nightly',
    '--create-missing-cases',
    '--json',
    ...more,
  ];

  it('--help exits 0 and lists the commands, the configuration and the exit codes', async () => {
    const o = await tms(['--help']);
    expect(o.code).toBe(0);
    expect(o.stdout).toMatch(/^Usage: tms /);
    for (const s of [
      'import [options] <files...>',
      'compare [options] <run>',
      'readiness [options] <product>',
      'TMS_URL',
      'TMS_API_KEY',
      'Exit codes:',
    ]) {
      expect(o.stdout).toContain(s);
    }
  });

  it('import --run-name creates the run with the CI build, prints --json; a second run of the step creates no second run and no case twice', async () => {
    const projectId = await t.createProject();
    const xml = file('run-name.xml', report('Checkout', { pays: 'pass', refunds: 'fail' }));
    const args = [
      'import',
      xml,
      '--project',
      projectId,
      '--run-name',
      'CI main',
      '--create-missing-cases',
      '--json',
    ];

    const first = await tms(args, GITHUB_ENV);
    expect(first).toMatchObject({ code: 0 });
    const body = JSON.parse(first.stdout) as Json;
    expect(body).toMatchObject({
      status: 'completed',
      source_filename: 'run-name.xml',
      summary: expect.objectContaining({ total_cases: 2, created_test_cases: 2 }),
      statuses: expect.objectContaining({ passed: 1, failure: 1 }),
    });
    const runs = await runsNamed(projectId, 'CI main');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: body.test_run_id, build: 'main #871 (0123456789ab)' });
    expect(first.stderr).toContain(
      `created run "CI main" (${String(body.test_run_id)}) build main #871 (0123456789ab)`,
    );

    const again = await tms(args, GITHUB_ENV);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    // The same key: the server answers the stored import (Idempotent-Replayed) instead of applying it again.
    expect(JSON.parse(again.stdout)).toEqual(body);
    expect(await runsNamed(projectId, 'CI main')).toHaveLength(1);
    const counts = await t.db.query(
      `SELECT (SELECT count(*) FROM test_cases WHERE project_id = $1)::int AS cases,
              (SELECT count(*) FROM junit_imports WHERE project_id = $1)::int AS imports`,
      [projectId],
    );
    expect(counts[0]).toEqual({ cases: 2, imports: 1 });
  });

  it('import --run-name into a project whose open run of that name was imported into before: the same run', async () => {
    const projectId = await t.createProject();
    const a = file('open-a.xml', report('Open', { pays: 'pass' }));
    const b = file('open-b.xml', report('Open', { refunds: 'fail' }));
    const first = await tms(nightly(a, projectId));
    expect(first.code).toBe(0);
    const runId = (JSON.parse(first.stdout) as Json).test_run_id;
    const second = await tms(nightly(b, projectId));
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(second.stdout)).toMatchObject({
      test_run_id: runId,
      summary: expect.objectContaining({ created_test_cases: 1 }),
    });
    expect(await runIdsNamed(projectId, 'nightly')).toEqual([runId]);
    expect(await importCount(projectId)).toBe(2);
  });

  // The run's Idempotency-Key is derived from its name and metadata: within IDEMPOTENCY_TTL_HOURS the
  // server answers the stored 201 of the first run, which took no import any more (409
  // run_import_not_allowed, or 404 once deleted). Found by an audit.
  it.each<[Closing]>([['completed'], ['archived'], ['deleted']])(
    'import --run-name after the run it created was %s: a new run of that name takes the report, and again after that one is',
    async (how) => {
      const projectId = await t.createProject();
      const a = file(`closed-${how}-a.xml`, report('Closed', { pays: 'pass' }));
      const b = file(`closed-${how}-b.xml`, report('Closed', { refunds: 'pass' }));
      const c = file(`closed-${how}-c.xml`, report('Closed', { ships: 'fail' }));
      const first = await tms(nightly(a, projectId));
      expect(first.code).toBe(0);
      const r1 = (JSON.parse(first.stdout) as Json).test_run_id as string;
      await closeRun(r1, how);

      const second = await tms(nightly(b, projectId));
      expect(second.code).toBe(0);
      const body = JSON.parse(second.stdout) as Json;
      const r2 = body.test_run_id as string;
      expect(r2).not.toBe(r1);
      expect(body).toMatchObject({
        status: 'completed',
        summary: expect.objectContaining({ total_cases: 1, created_test_cases: 1 }),
        statuses: expect.objectContaining({ passed: 1 }),
      });
      expect(second.stderr).toContain(
        `tms: run "nightly" (${r1}) created earlier is ${how}: creating a new one`,
      );
      expect(second.stderr).toContain(`tms: created run "nightly" (${r2})`);
      noStack(second);

      // The same step again: the open run is found, the import is the stored one.
      const again = await tms(nightly(b, projectId));
      expect(again).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(again.stdout)).toEqual(body);

      // That run closed too: a third one (a chain of two closed runs).
      await closeRun(r2, how);
      const third = await tms(nightly(c, projectId));
      expect(third.code).toBe(0);
      const r3 = (JSON.parse(third.stdout) as Json).test_run_id as string;
      expect([r1, r2]).not.toContain(r3);
      const kept = how === 'deleted' ? [r3] : [r1, r2, r3];
      expect(await runIdsNamed(projectId, 'nightly')).toEqual(kept);
      expect(await importCount(projectId)).toBe(how === 'deleted' ? 1 : 3);
    },
  );

  it('import --run-name: the table says the run was created by this step, and existing on the next', async () => {
    const projectId = await t.createProject();
    const xml = file('table-run.xml', report('TableRun', { one: 'pass' }));
    const args = [
      'import',
      xml,
      '--project',
      projectId,
      '--run-name',
      'table-run',
      '--create-missing-cases',
    ];
    // tms creates the run, then imports into it (the import's own answer says `existing`).
    const first = await tms(args);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Run: table-run \([0-9a-f-]{36}, created\)\n/);
    const next = await tms([...args.slice(0, -1), '--build', 'next']);
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/^Run: table-run \([0-9a-f-]{36}, existing\)\n/);
  });

  it('import into the project prints the table; --fail-on-failures exits 1 when the report has failures', async () => {
    const projectId = await t.createProject();
    const xml = file('payments.xml', report('Payments', { charge: 'pass', refund: 'fail' }));
    const table = await tms(['import', xml, '--project', projectId, '--create-missing-cases']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /^Run: Payments \([0-9a-f-]{36}, created\)\nfile\s+status\s+tests\s+passed\s+failed/,
    );
    expect(table.stdout).toMatch(/payments\.xml\s+completed\s+2\s+1\s+1\s/);

    const gated = await tms(['import', xml, '--project', projectId, '--fail-on-failures']);
    expect(gated.code).toBe(1);
    expect(gated.stderr).toContain('1 failing test (--fail-on-failures)');
    const green = file('green.xml', report('Payments', { charge: 'pass' }));
    expect((await tms(['import', green, '--project', projectId, '--fail-on-failures'])).code).toBe(
      0,
    );
  });

  it.each<[string, () => string[], RegExp]>([
    [
      'an invalid report',
      () => ['import', file('broken.xml', '<testsuite name="x"><testcase'), '--project', '%P'],
      /tms: .+ \(422 invalid_junit_xml\)\n {2}\S/,
    ],
    [
      'an unknown project',
      () => [
        'import',
        file('ok.xml', report('A', { a: 'pass' })),
        '--project',
        '0192f3a4-0000-7000-8000-000000000000',
      ],
      /tms: .+ \(404 project_not_found\)\n {2}\S/,
    ],
    [
      'a wrong API key',
      () => [
        'import',
        file('ok2.xml', report('A', { a: 'pass' })),
        '--project',
        '%P',
        '--api-key',
        'tms_wrong',
      ],
      /tms: .+ \(401 \w+\)/,
    ],
  ])(
    '%s is refused: exit 2, the problem on stderr, no stack trace',
    async (_name, argv, message) => {
      const projectId = await t.createProject();
      const o = await tms(argv().map((a) => (a === '%P' ? projectId : a)));
      expect(o.code).toBe(2);
      expect(o.stderr).toMatch(message);
      expect(o.stdout).toBe('');
      noStack(o);
      const imports = await importCount(projectId);
      expect(imports).toBe(0);
    },
  );

  it('import sends every file in one request: one import listing each file', async () => {
    const projectId = await t.createProject();
    const a = file('multi-a.xml', report('Multi', { one: 'pass', two: 'fail' }));
    const b = file('multi-b.xml', report('Multi', { three: 'pass' }));
    const o = await tms([
      'import',
      a,
      b,
      '--project',
      projectId,
      '--create-missing-cases',
      '--json',
    ]);
    expect(o.code).toBe(0);
    const body = JSON.parse(o.stdout) as { summary: { total_cases: number; files: Json[] } };
    expect(body.summary.total_cases).toBe(3);
    expect(body.summary.files.map((f) => f.name)).toEqual(['multi-a.xml', 'multi-b.xml']);
    const imports = await importCount(projectId);
    expect(imports).toBe(1);
  });

  it('import --async --wait: a background import followed to its end (GET /imports/{id})', async () => {
    const projectId = await t.createProject();
    const a = file('bg-a.xml', report('Background', { one: 'pass', two: 'fail' }));
    const b = file('bg-b.xml', report('Background', { three: 'pass' }));
    const args = ['import', a, b, '--project', projectId, '--create-missing-cases', '--async'];
    const waited = await tms([...args, '--wait', '--json']);
    expect(waited.code).toBe(0);
    const body = JSON.parse(waited.stdout) as Json;
    expect(body).toMatchObject({
      status: 'completed',
      summary: expect.objectContaining({ total_cases: 3, created_test_cases: 3 }),
      statuses: expect.objectContaining({ passed: 2, failure: 1 }),
    });
    const records = await t.db.query('SELECT id, status FROM junit_imports WHERE project_id = $1', [
      projectId,
    ]);
    expect(records).toEqual([{ id: body.id, status: 'succeeded' }]);
    // The table too, and --fail-on-failures on the waited result.
    const gated = await tms([...args, '--wait', '--fail-on-failures']);
    expect(gated.code).toBe(1);
    // A row per file (it was one row named after the first file, with every file's counts), then
    // the import's total.
    expect(gated.stdout).toMatch(/\nbg-a\.xml\s+completed\s+2\s+1\s+1\s+0\s+-/);
    expect(gated.stdout).toMatch(/\nbg-b\.xml\s+completed\s+1\s+1\s+0\s+0\s+-/);
    expect(gated.stdout).toMatch(/\ntotal\s+3\s+2\s+1\s+0\s+0\s+3\s+0\s+0\n$/);
    // Without --wait: queued, the record's location on stderr.
    const c = file('bg-c.xml', report('Background', { four: 'pass' }));
    const queued = await tms(['import', c, '--project', projectId, '--async']);
    expect(queued.code).toBe(0);
    expect(queued.stderr).toMatch(/bg-c\.xml: queued at \/api\/v1\/imports\/[0-9a-f-]{36}/);
  });

  it('import --async --wait of a refused report: exit 2 with the problem of the failed import', async () => {
    const projectId = await t.createProject();
    const broken = file('bg-broken.xml', '<testsuite name="x"><testcase');
    const o = await tms(['import', broken, '--project', projectId, '--async', '--wait']);
    expect(o.code).toBe(2);
    expect(o.stderr).toMatch(/tms: .+ \(422 invalid_junit_xml\)/);
    noStack(o);
    const records = await t.db.query('SELECT status FROM junit_imports WHERE project_id = $1', [
      projectId,
    ]);
    expect(records).toEqual([{ status: 'failed' }]);
  });

  it('an unreachable server: exit 3 after the retries', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const o = await tms([
      'readiness',
      '0192f3a4-0000-7000-8000-000000000000',
      '--url',
      `http://127.0.0.1:${port}`,
      '--retries',
      '0',
    ]);
    expect(o.code).toBe(3);
    expect(o.stderr).toContain(`cannot reach http://127.0.0.1:${port}/api/v1/products/`);
    noStack(o);
  });

  describe('retries through a flaky proxy', () => {
    let proxy: Server;
    let proxyUrl: string;
    const seen: { method: string; path: string; key: string | undefined }[] = [];
    let upstream: URL;
    let sabotage:
      | ((req: IncomingMessage, res: import('node:http').ServerResponse) => boolean)
      | null = null;

    beforeAll(async () => {
      upstream = new URL(url);
      proxy = createServer((req, res) => {
        seen.push({
          method: req.method ?? '',
          path: req.url ?? '',
          key: req.headers['idempotency-key'] as string | undefined,
        });
        if (sabotage?.(req, res)) return;
        forward(req, (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        });
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise<void>((r) => proxy.close(() => r()));
    });

    /** Sends the request on to the server; `onAnswer` gets its answer. */
    function forward(req: IncomingMessage, onAnswer: (answer: IncomingMessage) => void): void {
      const up = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        onAnswer,
      );
      req.pipe(up);
    }

    /** Forwards the request (the server applies it), then closes the connection instead of answering. */
    function forwardLosingAnswer(req: IncomingMessage): void {
      forward(req, (ur) => {
        ur.resume();
        ur.on('end', () => req.socket.destroy());
      });
    }

    /**
     * Fails the first `n` import uploads: `503` and `drop` (connection closed) before they reach the
     * server; `lost` forwards the upload (the server applies it) and closes the connection instead of
     * passing the answer on, as a proxy timing out would.
     */
    function failImports(n: number, how: Failure) {
      let left = n;
      sabotage = (req, res) => {
        if (req.method !== 'POST' || !/\/imports\/junit$/.test(req.url ?? '') || left === 0)
          return false;
        left -= 1;
        if (how === 'drop') {
          req.socket.destroy();
          return true;
        }
        if (how === 'lost') {
          forwardLosingAnswer(req);
          return true;
        }
        req.resume();
        req.on('end', () => {
          res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
          res.end(
            JSON.stringify({
              type: 'about:blank',
              title: 'Service Unavailable',
              status: 503,
              code: 'unavailable',
            }),
          );
        });
        return true;
      };
    }

    it.each<[Failure]>([['503'], ['drop'], ['lost']])(
      'a failed upload (%s) is sent again with the same Idempotency-Key and applied once',
      async (how) => {
        const projectId = await t.createProject();
        seen.length = 0;
        failImports(2, how);
        const xml = file(`retry-${how}.xml`, report('Retry', { one: 'pass', two: 'pass' }));
        const o = await tms([
          'import',
          xml,
          '--project',
          projectId,
          '--url',
          proxyUrl,
          '--create-missing-cases',
          '--json',
        ]);
        expect(o).toMatchObject({ code: 0, stderr: expect.stringContaining('retry') });
        expect(o.stderr).toMatch(/retry 1\/4[\s\S]*retry 2\/4/);
        const uploads = seen.filter((s) => s.method === 'POST');
        expect(uploads).toHaveLength(3);
        expect(uploads[0].key).toMatch(/^tms-[0-9a-f]{64}$/);
        expect(new Set(uploads.map((u) => u.key)).size).toBe(1);
        const runs = await t.db.query(
          'SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1',
          [projectId],
        );
        const imports = await importCount(projectId);
        expect([runs[0].n, imports]).toEqual([1, 1]);
        expect(JSON.parse(o.stdout)).toMatchObject({
          summary: expect.objectContaining({ created_test_cases: 2 }),
        });
      },
    );

    /**
     * Loses the answer of the first run creation (POST /test-runs) under each of the first `keys`
     * Idempotency-Keys; with `hideRuns`, every run list answers an empty page, as if the open run had
     * not been found (the step tried again).
     */
    function loseRunCreations(keys: number, hideRuns = false) {
      const lost = new Set<string>();
      sabotage = (req, res) => {
        const path = req.url ?? '';
        if (hideRuns && req.method === 'GET' && /\/test-runs\?/.test(path)) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ items: [], page: 1, has_next: false }));
          return true;
        }
        const key = String(req.headers['idempotency-key']);
        if (req.method !== 'POST' || !/\/test-runs$/.test(path)) return false;
        if (lost.has(key) || lost.size >= keys) return false;
        lost.add(key);
        forwardLosingAnswer(req);
        return true;
      };
    }

    const runCreationKeys = () =>
      seen.filter((s) => s.method === 'POST' && /\/test-runs$/.test(s.path)).map((s) => s.key);

    it('the answer of the run creation lost: the retry gets the stored 201 of the open run and imports into it', async () => {
      const projectId = await t.createProject();
      seen.length = 0;
      loseRunCreations(1);
      const xml = file('lost-run.xml', report('Lost', { one: 'pass' }));
      const o = await tms(nightly(xml, projectId, '--url', proxyUrl));
      expect(o.code).toBe(0);
      const runId = (JSON.parse(o.stdout) as Json).test_run_id as string;
      expect(o.stderr).toContain(`tms: using run "nightly" (${runId}), created by an earlier tms`);
      const keys = runCreationKeys();
      expect(keys).toHaveLength(2);
      expect(new Set(keys).size).toBe(1);
      expect(await runIdsNamed(projectId, 'nightly')).toEqual([runId]);
      expect(await importCount(projectId)).toBe(1);
    });

    it('after a completed run: a retried step, even one that does not find the new open run, lands on that run', async () => {
      const projectId = await t.createProject();
      const a = file('chain-a.xml', report('Chain', { one: 'pass' }));
      const b = file('chain-b.xml', report('Chain', { two: 'pass' }));
      const first = await tms(nightly(a, projectId));
      const r1 = (JSON.parse(first.stdout) as Json).test_run_id as string;
      await closeRun(r1, 'completed');

      // The stored run is closed: another key; the answer of that creation lost, then replayed.
      seen.length = 0;
      loseRunCreations(2);
      const second = await tms(nightly(b, projectId, '--url', proxyUrl));
      expect(second.code).toBe(0);
      const body = JSON.parse(second.stdout) as Json;
      const r2 = body.test_run_id as string;
      expect(r2).not.toBe(r1);
      const secondKeys = runCreationKeys();
      // The first key twice (its answer lost, then the replay of r1), the next one twice.
      expect(secondKeys).toHaveLength(4);
      expect(secondKeys[0]).toBe(secondKeys[1]);
      expect(secondKeys[2]).toBe(secondKeys[3]);
      expect(secondKeys[2]).not.toBe(secondKeys[0]);
      expect(secondKeys[2]).toMatch(/^tms-[0-9a-f]{64}$/);

      // The step again without seeing r2 in the run list: the same keys, the same run, no import twice.
      seen.length = 0;
      loseRunCreations(0, true);
      const again = await tms(nightly(b, projectId, '--url', proxyUrl));
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual(body);
      expect(runCreationKeys()).toEqual([secondKeys[0], secondKeys[2]]);
      expect(await runIdsNamed(projectId, 'nightly')).toEqual([r1, r2]);
      expect(await importCount(projectId)).toBe(2);
    });

    it('a server that keeps failing: exit 3 after --retries, nothing applied', async () => {
      const projectId = await t.createProject();
      failImports(3, '503');
      const xml = file('down.xml', report('Down', { one: 'pass' }));
      const o = await tms([
        'import',
        xml,
        '--project',
        projectId,
        '--url',
        proxyUrl,
        '--retries',
        '2',
      ]);
      expect(o.code).toBe(3);
      expect(o.stderr).toContain('tms: Service Unavailable (503 unavailable)');
      noStack(o);
      const imports = await importCount(projectId);
      expect(imports).toBe(0);
    });
  });

  it('compare: newly failing and fixed tests; --fail-on-new-failures exits 1 when a test newly fails', async () => {
    const projectId = await t.createProject();
    const before = file('before.xml', report('Cart', { add: 'pass', remove: 'fail' }));
    const after = file('after.xml', report('Cart', { add: 'fail', remove: 'pass' }));
    const imp = async (xml: string, runName: string) => {
      const o = await tms([
        'import',
        xml,
        '--project',
        projectId,
        '--run-name',
        runName,
        '--create-missing-cases',
        '--json',
      ]);
      expect(o.code).toBe(0);
      return (JSON.parse(o.stdout) as Json).test_run_id as string;
    };
    const base = await imp(before, 'Nightly 1');
    const run = await imp(after, 'Nightly 2');

    const gated = await tms(['compare', run, '--previous', '--fail-on-new-failures']);
    expect(gated.code).toBe(1);
    expect(gated.stdout).toMatch(
      /Newly failing \(1\):\ntest\s+base\s+now\n[- ]+\nadd\s+passed\s+failure\n/,
    );
    expect(gated.stdout).toMatch(
      /Fixed \(1\):\ntest\s+base\s+now\n[- ]+\nremove\s+failure\s+passed\n/,
    );
    expect(gated.stderr).toContain('1 newly failing test (--fail-on-new-failures)');

    const plain = await tms(['compare', run, '--base', base, '--json']);
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({
      run: { id: run },
      base: { id: base },
      counts: expect.objectContaining({ newly_failing: 1, fixed: 1 }),
    });

    const reversed = await tms(['compare', base, '--base', run, '--fail-on-new-failures']);
    expect(reversed.code).toBe(1);
    const none = await tms(['compare', base, '--previous']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/\(404 no_previous_run\)/);
  });

  it('readiness: exit 0 when ready, 1 with the blockers when not', async () => {
    const projectId = await t.createProject();
    const product = async (componentIds: string[]) => {
      const p = await t
        .req('post', `${API}/products`, t.adminToken)
        .send({ project_id: projectId, name: t.unique('Product ') })
        .expect(201);
      await t
        .req('put', `${API}/products/${String(p.body.id)}/components`, t.adminToken)
        .send({ links: componentIds.map((component_id) => ({ component_id })) })
        .expect(200);
      return p.body.id as string;
    };
    const c = await t
      .req('post', `${API}/components`, t.adminToken)
      .send({
        project_id: projectId,
        name: 'Payments API',
        business_criticality: 5,
        change_frequency: 4,
        integration_complexity: 4,
        defect_density: 4,
        production_incident_score: 5,
        automation_confidence: 1,
      })
      .expect(201);

    const ready = await tms(['readiness', await product([])]);
    expect(ready.code).toBe(0);
    expect(ready.stdout).toMatch(/^Verdict: READY\n/);

    const blocked = await product([c.body.id as string]);
    const notReady = await tms(['readiness', blocked, '--build', '2.4.0']);
    expect(notReady.code).toBe(1);
    expect(notReady.stdout).toMatch(
      /^Verdict: NOT READY\nCriteria: min risk level high, build 2\.4\.0\n/,
    );
    expect(notReady.stdout).toMatch(/Payments API\s+critical\s+\d+\s+uncovered\s+0\n/);
    const asJson = await tms(['readiness', blocked, '--json']);
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      verdict: 'not_ready',
      blockers: [expect.objectContaining({ reason: 'uncovered' })],
    });
  });
});
