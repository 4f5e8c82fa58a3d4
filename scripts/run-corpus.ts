import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp, prepareDatabase } from '../src/bootstrap';
import { loadConfig } from '../src/config/config';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';

/**
 * JUnit corpus check (CONTRACT §6, junit-corpus/README.md):
 *
 *   npm run test:corpus -- <corpus dir>
 *
 * Starts its own embedded PostgreSQL on a free port in a temporary directory, boots the real
 * application on it, then for every row of `<dir>/MANIFEST.tsv`:
 * - `ok`: a dry run first (201 `preview`, nothing written), then imports the file into a fresh run of
 *   a fresh project with `create_missing_cases=true` (201; as many cases created as the dry run
 *   announced), imports it again (201) and checks that no test case was created the second time,
 *   then imports it at project level (201, again no new case);
 * - `invalid`: checks the import is refused with 422 `invalid_junit_xml` and that nothing changed, at
 *   run level and at project level;
 * - a file of the directory that MANIFEST.tsv does not list must import like an `ok` file or be refused
 *   like an `invalid` one;
 * - any 5xx is a failure.
 * Prints one line per failure and "N passed, M failed"; exits 1 on any failure.
 */

interface ManifestRow {
  file: string;
  /** `unlisted`: a file of the directory that MANIFEST.tsv does not name (must be 201 or 422). */
  expect: 'ok' | 'invalid' | 'unlisted';
}

interface Api {
  token: string;
  server: ReturnType<INestApplication['getHttpServer']>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function readManifest(dir: string): ManifestRow[] {
  const lines = readFileSync(join(dir, 'MANIFEST.tsv'), 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '');
  const [header, ...rows] = lines;
  const columns = (header ?? '').split('\t');
  const fileAt = columns.indexOf('file');
  const expectAt = columns.indexOf('expect');
  if (fileAt < 0 || expectAt < 0)
    throw new Error('MANIFEST.tsv needs the columns "file" and "expect"');
  return rows.map((line) => {
    const cells = line.split('\t');
    const expect = cells[expectAt];
    if (expect !== 'ok' && expect !== 'invalid')
      throw new Error(`MANIFEST.tsv: bad expect "${expect}" in: ${line}`);
    return { file: cells[fileAt] ?? '', expect };
  });
}

async function post(api: Api, url: string, body: object): Promise<Record<string, unknown>> {
  const res = await request(api.server)
    .post(url)
    .set('Authorization', `Bearer ${api.token}`)
    .send(body);
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

function upload(api: Api, url: string, content: Buffer, fileName: string): request.Test {
  return request(api.server)
    .post(url)
    .set('Authorization', `Bearer ${api.token}`)
    .attach('file', content, fileName);
}

/** Row counts of everything an import may write in a project, plus the run's state. */
async function snapshot(db: DataSource, projectId: string, runId: string): Promise<string> {
  const rows = await db.query<Array<Record<string, unknown>>>(
    `SELECT (SELECT count(*) FROM test_cases WHERE project_id = $1)::int AS cases,
            (SELECT count(*) FROM suites WHERE project_id = $1)::int AS suites,
            (SELECT count(*) FROM test_runs WHERE project_id = $1)::int AS runs,
            (SELECT count(*) FROM run_items WHERE project_id = $1)::int AS items,
            (SELECT count(*) FROM run_item_rows WHERE project_id = $1)::int AS rows,
            (SELECT count(*) FROM run_item_history WHERE project_id = $1)::int AS history,
            (SELECT count(*) FROM junit_imports WHERE project_id = $1)::int AS imports,
            (SELECT status || ' ' || updated_at::text FROM test_runs WHERE id = $2) AS run`,
    [projectId, runId],
  );
  return JSON.stringify(rows[0]);
}

async function countCases(db: DataSource, projectId: string): Promise<number> {
  const rows = await db.query<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1`,
    [projectId],
  );
  return rows[0]?.n ?? 0;
}

async function checkFile(
  api: Api,
  db: DataSource,
  dir: string,
  row: ManifestRow,
): Promise<string | null> {
  const content = readFileSync(join(dir, row.file));
  const name = basename(row.file);
  const project = await post(api, '/api/v1/projects', {
    name: `corpus ${randomBytes(6).toString('hex')}`,
  });
  const projectId = String(project.id);
  const run = await post(api, '/api/v1/test-runs', {
    project_id: projectId,
    name: `corpus ${name}`.slice(0, 200),
  });
  const runId = String(run.id);
  const url = `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`;

  const projectUrl = `/api/v1/projects/${projectId}/imports/junit?create_missing_cases=true`;

  if (row.expect === 'unlisted') {
    const before = await snapshot(db, projectId, runId);
    const probe = await upload(api, `${url}&dry_run=true`, content, name);
    const refused =
      probe.status === 422 && (probe.body as { code?: unknown }).code === 'invalid_junit_xml';
    if (!refused && probe.status !== 201) {
      return `expected 201 or 422 invalid_junit_xml, got ${probe.status} ${JSON.stringify(probe.body).slice(0, 300)}`;
    }
    if (refused) {
      const after = await snapshot(db, projectId, runId);
      return after === before ? null : `a refused import changed data: ${before} → ${after}`;
    }
  }

  if (row.expect === 'invalid') {
    const before = await snapshot(db, projectId, runId);
    for (const target of [url, projectUrl]) {
      const res = await upload(api, target, content, name);
      if (res.status !== 422 || (res.body as { code?: unknown }).code !== 'invalid_junit_xml') {
        return `${target}: expected 422 invalid_junit_xml, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      }
      const after = await snapshot(db, projectId, runId);
      if (after !== before) return `a refused import changed data: ${before} → ${after}`;
    }
    return null;
  }

  const beforeDry = await snapshot(db, projectId, runId);
  const dry = await upload(api, `${url}&dry_run=true`, content, name);
  if (dry.status !== 201 || (dry.body as { status?: unknown }).status !== 'preview') {
    return `dry run: expected 201 preview, got ${dry.status} ${JSON.stringify(dry.body).slice(0, 300)}`;
  }
  const afterDry = await snapshot(db, projectId, runId);
  if (afterDry !== beforeDry) return `a dry run changed data: ${beforeDry} → ${afterDry}`;
  const announced = (dry.body as { summary?: { created_test_cases?: number } }).summary
    ?.created_test_cases;

  const first = await upload(api, url, content, name);
  if (first.status !== 201)
    return `first import: expected 201, got ${first.status} ${JSON.stringify(first.body).slice(0, 300)}`;
  const casesAfterFirst = await countCases(db, projectId);
  const created = (first.body as { summary?: { created_test_cases?: number } }).summary
    ?.created_test_cases;
  if (created !== casesAfterFirst)
    return `first import reported ${created} created cases, the project has ${casesAfterFirst}`;
  if (announced !== created)
    return `the dry run announced ${announced} created cases, the import created ${created}`;
  const second = await upload(api, url, content, name);
  if (second.status !== 201) {
    return `second import: expected 201, got ${second.status} ${JSON.stringify(second.body).slice(0, 300)}`;
  }
  const casesAfterSecond = await countCases(db, projectId);
  if (casesAfterSecond !== casesAfterFirst) {
    return `second import created ${casesAfterSecond - casesAfterFirst} test cases (expected none)`;
  }
  const createdAgain = (second.body as { summary?: { created_test_cases?: number } }).summary
    ?.created_test_cases;
  if (createdAgain !== 0) return `second import reported ${createdAgain} created cases`;
  const projectLevel = await upload(api, projectUrl, content, name);
  if (projectLevel.status !== 201) {
    return `project-level import: expected 201, got ${projectLevel.status} ${JSON.stringify(projectLevel.body).slice(0, 300)}`;
  }
  const casesAfterProjectLevel = await countCases(db, projectId);
  if (casesAfterProjectLevel !== casesAfterFirst) {
    return `project-level import created ${casesAfterProjectLevel - casesAfterFirst} test cases (expected none)`;
  }
  return null;
}

/** Files of `dir` (recursively) that the manifest does not name, README and MANIFEST excepted. */
function unlistedFiles(dir: string, listed: ReadonlySet<string>): ManifestRow[] {
  const found: ManifestRow[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(join(dir, folder), { withFileTypes: true })) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && !listed.has(path) && !['MANIFEST.tsv', 'README.md'].includes(path))
        found.push({ file: path, expect: 'unlisted' });
    }
  };
  walk('');
  return found.sort((a, b) => a.file.localeCompare(b.file));
}

async function main(): Promise<number> {
  const arg = process.argv[2];
  if (arg === undefined || arg === '' || arg === '--help') {
    process.stderr.write('usage: npm run test:corpus -- <corpus dir containing MANIFEST.tsv>\n');
    return 2;
  }
  const dir = resolve(arg);
  if (!existsSync(join(dir, 'MANIFEST.tsv'))) {
    process.stderr.write(`no MANIFEST.tsv in ${dir}\n`);
    return 2;
  }
  const listed = readManifest(dir);
  const manifest = [...listed, ...unlistedFiles(dir, new Set(listed.map((r) => r.file)))];
  const dataDir = mkdtempSync(join(tmpdir(), 'tms-corpus-'));
  const pg = await startEmbeddedPostgres({
    dataDir,
    port: await freePort(),
    database: 'corpus',
    postgresFlags: [
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
  });
  let app: INestApplication | null = null;
  let db: DataSource | null = null;
  try {
    const adminPassword = randomBytes(12).toString('hex');
    const config = loadConfig(
      {
        DATABASE_URL: pg.url,
        AUTH_SECRET: randomBytes(32).toString('hex'),
        ADMIN_USERNAME: 'corpus-admin',
        ADMIN_PASSWORD: adminPassword,
        LOG_LEVEL: 'silent',
      },
      { persistSecret: false },
    );
    await prepareDatabase(config, pg.url);
    app = await createApp(config, pg.url);
    await app.init();
    db = new DataSource({ type: 'postgres', url: pg.url, extra: { max: 2 } });
    await db.initialize();
    const login = await request(app.getHttpServer())
      .post('/api/v1/auth/login')
      .send({ username: 'corpus-admin', password: adminPassword });
    if (login.status !== 200)
      throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
    const api: Api = {
      token: String((login.body as { access_token: string }).access_token),
      server: app.getHttpServer(),
    };

    let passed = 0;
    let failed = 0;
    for (const row of manifest) {
      const started = Date.now();
      let problem: string | null;
      try {
        problem = await checkFile(api, db, dir, row);
      } catch (error) {
        problem = `crashed: ${error instanceof Error ? error.message : String(error)}`;
      }
      const ms = Date.now() - started;
      if (problem === null) {
        passed += 1;
        if (process.env.CORPUS_VERBOSE) process.stdout.write(`ok   ${row.file} (${ms} ms)\n`);
      } else {
        failed += 1;
        process.stdout.write(`FAIL ${row.file} [${row.expect}]: ${problem}\n`);
      }
    }
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
    return failed === 0 ? 0 : 1;
  } finally {
    await db?.destroy().catch(() => undefined);
    await app?.close().catch(() => undefined);
    await pg.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `corpus run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
