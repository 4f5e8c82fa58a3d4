import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { TEST_ADMIN } from '../support/constants';
import { MainProcess, startMain, waitForMain } from '../support/main-process';
import { freePort, readState } from '../support/pg-server';

/**
 * Issue #24 §3, one log format: every line the service process writes, from the first line of its
 * boot to the last of its shutdown, is one pino JSON object with `level` (pino's number), `time`
 * and `msg`; lines of a request carry its `req_id`; no credential is ever written; Nest's route
 * mapping is `debug`; the boot goes database → migrations → "Listening" last. LOG_FORMAT=pretty
 * writes for a human instead.
 */
describe('operations: one log format (every line of a boot and of requests)', () => {
  type Line = Record<string, unknown> & { level: number; time: number; msg: string };
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Every line of the output, parsed; a line that is not JSON fails with its text. */
  function parseAll(output: string): Line[] {
    return output
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        try {
          return JSON.parse(l) as Line;
        } catch {
          throw new Error(`not a JSON log line: ${l}`);
        }
      });
  }

  /** The one schema: level (a pino number), time (epoch ms), msg (a non-empty string). */
  function expectSchema(lines: Line[]): void {
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect([line, [10, 20, 30, 40, 50, 60].includes(line.level)]).toEqual([line, true]);
      expect([line, typeof line.time === 'number' && line.time > 1.7e12]).toEqual([line, true]);
      expect([line, typeof line.msg === 'string' && line.msg.length > 0]).toEqual([line, true]);
    }
    // A completion line is a request's own line: it always names its request.
    for (const line of lines.filter((l) => l.req !== undefined)) {
      expect([line, typeof line.req_id === 'string' && line.req_id.length > 0]).toEqual([line, true]);
    }
  }

  /** The lines of one request (by its X-Request-Id): all carry it, and it completed exactly once. */
  function linesOf(lines: Line[], id: string, status: number): Line[] {
    const mine = lines.filter((l) => JSON.stringify(l).includes(id));
    for (const line of mine) expect([line, line.req_id]).toEqual([line, id]);
    const completions = mine.filter((l) => l.req !== undefined);
    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({
      req_id: id,
      res: { statusCode: status },
      level: status >= 500 ? 50 : 30,
      msg: status >= 500 ? 'request errored' : 'request completed',
    });
    expect(typeof completions[0].responseTime).toBe('number');
    return mine;
  }

  /**
   * Boot order: the database line, then the migrations line, then "Listening" after everything
   * else of the boot (nothing of the boot follows it).
   */
  function expectBootOrder(lines: Line[], databaseLine: RegExp): void {
    const index = (re: RegExp) => lines.findIndex((l) => re.test(l.msg));
    const database = index(databaseLine);
    const migrations = index(/^Database migrations: /);
    const nestStarting = index(/^Starting Nest application/);
    const nestStarted = index(/^Nest application successfully started/);
    const listening = index(/^Listening on http:/);
    expect([database, migrations, nestStarting, nestStarted, listening].every((i) => i >= 0)).toBe(true);
    expect(database).toBeLessThan(migrations);
    expect(migrations).toBeLessThan(nestStarting);
    expect(nestStarting).toBeLessThan(nestStarted);
    expect(nestStarted).toBeLessThan(listening);
    const bootLine = (l: Line) =>
      l.context !== undefined ||
      /^(Starting embedded PostgreSQL|Embedded PostgreSQL started|Connecting to the database|Database migrations|Created administrator)/.test(
        l.msg,
      );
    expect(lines.slice(listening + 1).filter(bootLine)).toEqual([]);
  }

  async function call(
    port: number,
    method: string,
    path: string,
    id: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        'x-request-id': id,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.headers.get('x-request-id')).toBe(id);
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  /** Waits until the completion line of each request id has been written. */
  async function completed(s: MainProcess, ids: string[]): Promise<void> {
    await waitForMain(
      s,
      () => ids.every((id) => new RegExp(`"req_id":"${id}"[^\\n]*"msg":"request (completed|errored)"`).test(s.output())),
      10_000,
      `the completion lines of ${ids.join(', ')}`,
    );
  }

  async function stop(s: MainProcess): Promise<void> {
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }

  it('embedded database, LOG_LEVEL=debug: the boot, requests and shutdown are all one schema', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tms-logformat-'));
    dirs.push(dataDir);
    const [port, pgPort] = [await freePort(), await freePort()];
    const adminPassword = `boot-admin-${randomBytes(6).toString('hex')}`;
    const authSecret = randomBytes(36).toString('base64');
    const s = startMain({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
      LOG_LEVEL: 'debug',
      ADMIN_PASSWORD: adminPassword,
      AUTH_SECRET: authSecret,
    });
    let token = '';
    let apiKey = '';
    try {
      await waitForMain(s, () => s.output().includes('Listening on'), 150_000, 'the service');
      const booted = s.output().length;

      const login = await call(port, 'POST', '/api/v1/auth/login', 'logs-login', {}, {
        username: 'admin',
        password: adminPassword,
      });
      expect(login.status).toBe(200);
      token = login.json.access_token as string;
      const key = await call(port, 'POST', '/api/v1/users/me/api-keys', 'logs-key', { authorization: `Bearer ${token}` }, { name: 'logs' });
      expect(key.status).toBe(201);
      apiKey = key.json.api_key as string;
      expect((await call(port, 'GET', '/api/v1/auth/me', 'logs-me', { 'x-api-key': apiKey })).status).toBe(200);
      const wrong = await call(port, 'POST', '/api/v1/auth/login', 'logs-401', {}, { username: 'admin', password: 'wrong-password-123' });
      expect(wrong.status).toBe(401);
      expect((await call(port, 'GET', '/api/v1/projects', 'logs-list', { authorization: `Bearer ${token}` })).status).toBe(200);
      expect((await call(port, 'GET', '/api/v1/nowhere', 'logs-404', { cookie: 'session=cookie-secret-value' })).status).toBe(404);
      await completed(s, ['logs-login', 'logs-key', 'logs-me', 'logs-401', 'logs-list', 'logs-404']);

      const boot = parseAll(s.output().slice(0, booted));
      expectSchema(boot);
      expectBootOrder(boot, /^Starting embedded PostgreSQL on /);
      // Nest's route mapping is there at debug, and only at debug.
      const mapped = boot.filter((l) => /^Mapped \{/.test(l.msg));
      expect(mapped.length).toBeGreaterThan(10);
      expect(new Set(mapped.map((l) => l.level))).toEqual(new Set([20]));
      expect(boot.filter((l) => l.context === 'RoutesResolver' && l.level !== 20)).toEqual([]);
      // The embedded PostgreSQL's own output became debug lines.
      expect(boot.some((l) => l.source === 'postgres' && l.level === 20 && /database system is ready/.test(l.msg))).toBe(true);
    } finally {
      if (s.child.exitCode === null) await stop(s);
    }

    const all = parseAll(s.output());
    expectSchema(all);
    linesOf(all, 'logs-login', 200);
    linesOf(all, 'logs-key', 201);
    linesOf(all, 'logs-me', 200);
    linesOf(all, 'logs-401', 401);
    linesOf(all, 'logs-list', 200);
    linesOf(all, 'logs-404', 404);
    expect(all[all.length - 1].msg).toBe('Stopped');
    const text = s.output();
    for (const secret of [adminPassword, authSecret, token, apiKey, 'wrong-password-123', 'cookie-secret-value']) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
    }
  }, 200_000);

  describe('external database (DATABASE_URL)', () => {
    let database = '';
    let url = '';
    let admin: Client;
    beforeAll(async () => {
      const state = readState();
      database = `${state.template}_l${randomBytes(5).toString('hex')}`;
      admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${database}" TEMPLATE "${state.template}"`);
      url = `${state.serverUrl}/${database}`;
    });
    afterAll(async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    });

    it('LOG_LEVEL=info: no route mapping, connect → migrations → listening, a 5xx logged with its request id', async () => {
      const port = await freePort();
      const authSecret = randomBytes(36).toString('base64');
      const s = startMain({ DATABASE_URL: url, AUTH_SECRET: authSecret, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
      try {
        await waitForMain(s, () => s.output().includes('Listening on'), 60_000, 'the service');
        const booted = s.output().length;
        const login = await call(port, 'POST', '/api/v1/auth/login', 'ext-login', {}, TEST_ADMIN);
        expect(login.status).toBe(200);
        const auth = { authorization: `Bearer ${login.json.access_token as string}` };
        const project = await call(port, 'POST', '/api/v1/projects', 'ext-create', auth, { name: 'Logs' });
        expect(project.status).toBe(201);
        const bad = await call(port, 'POST', '/api/v1/projects', 'ext-422', auth, { name: 7 });
        expect(bad.status).toBe(422);
        // An unexpected failure: the column the read needs is gone.
        const db = new Client({ connectionString: url });
        await db.connect();
        try {
          await db.query('ALTER TABLE projects RENAME COLUMN description TO description_gone');
        } finally {
          await db.end();
        }
        const failed = await call(port, 'GET', `/api/v1/projects/${project.json.id as string}`, 'ext-500', auth);
        expect(failed.status).toBe(500);
        await completed(s, ['ext-login', 'ext-create', 'ext-422', 'ext-500']);

        const boot = parseAll(s.output().slice(0, booted));
        expectSchema(boot);
        expectBootOrder(boot, /^Connecting to the database at /);
        expect(boot.find((l) => /^Database migrations: /.test(l.msg))?.msg).toBe(
          'Database migrations: the schema is up to date',
        );
        expect(boot.filter((l) => /^Mapped \{|dependencies initialized$/.test(l.msg))).toEqual([]);
        expect(boot.filter((l) => l.level < 30)).toEqual([]);
      } finally {
        if (s.child.exitCode === null) await stop(s);
      }
      const all = parseAll(s.output());
      expectSchema(all);
      linesOf(all, 'ext-login', 200);
      linesOf(all, 'ext-create', 201);
      linesOf(all, 'ext-422', 422);
      // The 500's own lines: the failure (with its error) and the completion, both with its id.
      const failure = linesOf(all, 'ext-500', 500);
      expect(failure.some((l) => l.level === 50 && l.msg === 'unexpected failure' && l.err !== undefined)).toBe(true);
      const text = s.output();
      // The database URL's credentials, the secret and the administrator's password never appear.
      const { username, password } = new URL(url);
      expect(text).not.toContain(`${username}:${password}@`);
      expect(text).not.toContain(authSecret);
      expect(text).not.toContain(TEST_ADMIN.password);
    }, 120_000);

    it('LOG_FORMAT=pretty writes lines for a human, not JSON', async () => {
      const port = await freePort();
      const s = startMain({
        DATABASE_URL: url,
        AUTH_SECRET: randomBytes(36).toString('base64'),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_FORMAT: 'pretty',
      });
      try {
        await waitForMain(s, () => s.output().includes('Listening on'), 60_000, 'the service');
      } finally {
        if (s.child.exitCode === null) await stop(s);
      }
      const lines = s.output().split('\n').filter((l) => l.trim().length > 0);
      const listening = lines.find((l) => l.includes('Listening on'));
      expect(listening).toMatch(/INFO/);
      expect(listening?.trimStart().startsWith('{')).toBe(false);
      expect(lines.some((l) => /^\s*\{"level"/.test(l))).toBe(false);
    }, 120_000);
  });

  it('a refused configuration is a JSON line too (fatal), naming the variable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tms-logformat-'));
    dirs.push(dir);
    const s = startMain({ PORT: 'eighty', DATA_DIR: dir });
    expect(await s.exited).toBe(1);
    const lines = parseAll(s.output());
    expectSchema(lines);
    expect(lines).toEqual([
      expect.objectContaining({ level: 60, msg: expect.stringMatching(/^Configuration error: PORT must be a whole number/) }),
    ]);
    const wrongFormat = startMain({ LOG_FORMAT: 'xml', DATA_DIR: dir });
    expect(await wrongFormat.exited).toBe(1);
    expect(parseAll(wrongFormat.output())).toEqual([
      expect.objectContaining({ level: 60, msg: 'Configuration error: LOG_FORMAT must be one of json, pretty, got "xml"' }),
    ]);
  }, 60_000);
});
