import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { prepareDatabase } from '../../src/database/prepare';
import { verifyPassword } from '../../src/common/auth/password';
import { loadConfig } from '../../src/config/config';
import { TEST_AUTH_SECRET } from '../support/constants';
import { readState } from '../support/pg-server';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

describe('conventions, errors and operations (CONTRACT §2, §3, §11)', () => {
  let t: TestApp;
  let f: RoleFixture;
  beforeAll(async () => {
    t = await createTestApp({ MAX_JSON_BYTES: '4096' });
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('X-Request-Id', () => {
    it('reuses a client id on success and on errors', async () => {
      const ok = await t.req('get', '/healthz').set('X-Request-Id', 'abc-123');
      expect(ok.headers['x-request-id']).toBe('abc-123');
      const err = await t.req('get', '/api/v1/auth/me').set('X-Request-Id', 'trace-42');
      expect(err.headers['x-request-id']).toBe('trace-42');
      expect(err.body.request_id).toBe('trace-42');
    });

    it('generates one when absent or unusable (over 128 characters, spaces)', async () => {
      for (const given of [undefined, 'x'.repeat(129), 'has space']) {
        let r = t.req('get', '/healthz');
        if (given) r = r.set('X-Request-Id', given);
        const res = await r;
        expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      }
    });
  });

  describe('problem bodies for framework-level failures', () => {
    it('unknown route → 404 route_not_found', async () => {
      const p = expectProblem(await t.req('get', '/api/v1/no-such-thing?x=1'), 404, 'route_not_found');
      expect(p.instance).toBe('/api/v1/no-such-thing');
      expect(p.type).toBe('https://tms.local/errors/route_not_found');
    });

    it('wrong method on a known path → 405 method_not_allowed with Allow', async () => {
      const res = await t.req('put', `/api/v1/projects/${f.projectId}`, f.lead.token).send({});
      expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toContain('PATCH');
      expect(res.headers.allow).toContain('GET');
    });

    it('oversized JSON → 413 payload_too_large, nothing stored', async () => {
      const res = await t.req('post', '/api/v1/projects', f.lead.token).send({ name: 'big', description: 'x'.repeat(10_000) });
      expectProblem(res, 413, 'payload_too_large');
      const rows = await t.db.query(`SELECT count(*)::int AS n FROM projects WHERE name = 'big'`);
      expect(rows[0].n).toBe(0);
    });

    it('non-JSON body → 415 unsupported_media_type', async () => {
      const res = await t.req('post', '/api/v1/projects', f.lead.token).set('Content-Type', 'text/plain').send('name=x');
      expectProblem(res, 415, 'unsupported_media_type');
    });

    it('malformed JSON → 422 validation_error on `body`', async () => {
      const res = await t.req('post', '/api/v1/projects', f.lead.token).set('Content-Type', 'application/json').send('{"name": ');
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty('body');
    });

    it('a path whose percent-encoding is malformed → 404 route_not_found, with or without a credential', async () => {
      for (const token of [undefined, f.lead.token]) {
        const p = expectProblem(await t.req('get', '/api/v1/projects/%FF', token), 404, 'route_not_found');
        expect(p.instance).toBe('/api/v1/projects/%FF');
      }
      expectProblem(await t.req('delete', '/api/v1/test-runs/%E0%A4%A', f.lead.token), 404, 'route_not_found');
    });

    it('a JSON array body → 422 on `body`', async () => {
      const res = await t.req('post', '/api/v1/projects', f.lead.token).send([{ name: 'x' }]);
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty('body');
    });
  });

  describe('check order: 401 → 422 → 404 → 403', () => {
    it('authentication before validation', async () => {
      expectProblem(await t.req('post', '/api/v1/projects').send({ bogus: 1 }), 401, 'unauthorized');
    });
    it('validation before existence', async () => {
      const res = await t.req('patch', '/api/v1/projects/0190f3b2-7c1d-7abc-8def-0123456789ab', f.lead.token).send({ bogus: 1 });
      expectProblem(res, 422, 'validation_error');
    });
    it('existence (and membership) before role', async () => {
      expectProblem(await t.req('patch', `/api/v1/projects/${f.projectId}`, f.outsider.token).send({ name: 'x' }), 404, 'project_not_found');
      expectProblem(await t.req('patch', `/api/v1/projects/${f.projectId}`, f.viewer.token).send({ name: 'x' }), 403, 'insufficient_project_role');
    });
    it('403 names the role needed', async () => {
      const p = expectProblem(await t.req('delete', `/api/v1/projects/${f.projectId}`, f.tester.token), 403, 'insufficient_project_role');
      expect(p.detail).toContain('lead');
    });
  });

  describe('paging envelope and bounds', () => {
    it.each([
      ['page=0', 'query.page'],
      ['page=abc', 'query.page'],
      ['page_size=0', 'query.page_size'],
      ['page_size=201', 'query.page_size'],
      ['page_size=1.5', 'query.page_size'],
    ])('%s → 422 %s', async (qs, key) => {
      const res = await t.req('get', `/api/v1/projects?${qs}`, t.adminToken);
      expect(Object.keys(expectProblem(res, 422, 'validation_error').errors as object)).toContain(key);
    });

    it('pages are stable and a page past the end is empty with the real total', async () => {
      const u = await t.createUser();
      for (let i = 0; i < 5; i++) await t.createProject(u.token, 'Same name');
      const p1 = await t.req('get', '/api/v1/projects?page_size=2&page=1', u.token);
      const p2 = await t.req('get', '/api/v1/projects?page_size=2&page=2', u.token);
      const p3 = await t.req('get', '/api/v1/projects?page_size=2&page=3', u.token);
      const p9 = await t.req('get', '/api/v1/projects?page_size=2&page=9', u.token);
      expect(p1.body).toMatchObject({ page: 1, page_size: 2, has_next: true, total: 5 });
      expect(p3.body).toMatchObject({ has_next: false, total: 5 });
      expect(p9.body).toEqual({ items: [], page: 9, page_size: 2, has_next: false, total: 5 });
      const ids = [...p1.body.items, ...p2.body.items, ...p3.body.items].map((p: { id: string }) => p.id);
      expect(new Set(ids).size).toBe(5);
      // Default order: newest first, ties broken by id in the same direction.
      expect(ids).toEqual([...ids].sort().reverse());
    });

    it('search treats % and _ literally', async () => {
      const u = await t.createUser();
      await t.createProject(u.token, '100% done');
      await t.createProject(u.token, '100 percent');
      const res = await t.req('get', '/api/v1/projects?search=' + encodeURIComponent('0%'), u.token);
      expect(res.body.items.map((p: { name: string }) => p.name)).toEqual(['100% done']);
      const under = await t.req('get', '/api/v1/projects?search=_', u.token);
      expect(under.body.total).toBe(0);
    });
  });

  describe('datetime inputs (CONTRACT §2)', () => {
    const api = (path: string) => `/api/v1${path}`;
    /** ISO 8601 forms a JavaScript Date cannot read (week and ordinal dates, basic format), a date where a datetime is wanted, impossible values. */
    const NOT_DATETIMES = ['2026-W01-1', '2026-W18-5T10:00:00Z', '2026-032T10:00:00Z', '20260501T100000Z', '2026-05-01', '2026-05', '2026-02-30T10:00:00Z', '2026-05-01T24:00:00Z'];

    async function runWithRow(): Promise<{ runId: string; itemId: string; rowId: string }> {
      const run = await t.req('post', api('/test-runs'), f.tester.token).send({ project_id: f.projectId, name: t.unique('dates ') });
      const tc = await t.req('post', api('/test-cases'), f.tester.token).send({ project_id: f.projectId, title: t.unique('case ') });
      const item = await t.req('post', api('/run-cases'), f.tester.token).send({ test_run_id: run.body.id, test_case_id: tc.body.id });
      const rows = await t.req('get', api(`/run-cases/${item.body.id}/rows`), f.viewer.token);
      expect(rows.status).toBe(200);
      return { runId: run.body.id, itemId: item.body.id, rowId: rows.body.items[0].id };
    }

    it('every datetime field refuses the rest with a 422 naming it, and changes nothing', async () => {
      const { runId, itemId, rowId } = await runWithRow();
      const milestone = await t.req('post', api('/milestones'), f.tester.token).send({ project_id: f.projectId, name: t.unique('m ') });
      expect(milestone.status).toBe(201);
      const key = (expires_at: string) => t.req('post', api('/users/me/api-keys'), f.tester.token).send({ name: 'k', expires_at });
      for (const value of NOT_DATETIMES) {
        const attempts: Array<[Promise<{ status: number; body: Record<string, unknown> }>, string]> = [
          [t.req('patch', api(`/test-runs/${runId}`), f.tester.token).send({ status: 'in_progress', started_at: value }), 'started_at'],
          [t.req('patch', api(`/test-runs/${runId}`), f.lead.token).send({ status: 'archived', archived_at: value }), 'archived_at'],
          [t.req('patch', api(`/run-cases/rows/${rowId}`), f.tester.token).send({ status: 'in_progress', started_at: value }), 'started_at'],
          [t.req('patch', api(`/run-cases/rows/${rowId}`), f.tester.token).send({ status: 'passed', finished_at: value }), 'finished_at'],
          [t.req('post', api('/milestones'), f.tester.token).send({ project_id: f.projectId, name: t.unique('m '), completed_at: value }), 'completed_at'],
          [t.req('patch', api(`/milestones/${milestone.body.id}`), f.tester.token).send({ completed_at: value }), 'completed_at'],
          [key(value), 'expires_at'],
        ];
        for (const [attempt, field] of attempts) {
          const res = await attempt;
          const errors = expectProblem(res as never, 422, 'validation_error').errors as Record<string, string[]>;
          expect([value, Object.keys(errors)]).toEqual([value, [field]]);
          expect(errors[field][0]).toMatch(/ISO 8601 datetime/);
        }
      }
      const run = await t.req('get', api(`/test-runs/${runId}`), f.viewer.token);
      expect(run.body).toMatchObject({ status: 'not_started', started_at: null, archived_at: null });
      const rows = await t.req('get', api(`/run-cases/${itemId}/rows`), f.viewer.token);
      expect(rows.body.items).toEqual([expect.objectContaining({ id: rowId, status: 'untested', started_at: null, finished_at: null })]);
      const keys = await t.req('get', api('/users/me/api-keys'), f.tester.token);
      expect(keys.body.items).toEqual([]);
    });

    it('any offset is read as the instant it names; a datetime without one is UTC', async () => {
      const { runId, rowId } = await runWithRow();
      const started = await t.req('patch', api(`/test-runs/${runId}`), f.tester.token).send({ status: 'in_progress', started_at: '2026-01-01T12:00:00+0200' });
      expect(started.status).toBe(200);
      expect(started.body.started_at).toBe('2026-01-01T10:00:00.000Z');
      const row = await t.req('patch', api(`/run-cases/rows/${rowId}`), f.tester.token).send({ status: 'passed', started_at: '2026-01-01T10:00:00', finished_at: '2026-01-01T05:00:30,5-05' });
      expect(row.status).toBe(200);
      expect(row.body).toMatchObject({ started_at: '2026-01-01T10:00:00.000Z', finished_at: '2026-01-01T10:00:30.500Z' });
      const key = await t.req('post', api('/users/me/api-keys'), f.tester.token).send({ name: 'k', expires_at: '2030-05-01T12:00:00+02' });
      expect(key.status).toBe(201);
      expect(key.body.key.expires_at).toBe('2030-05-01T10:00:00.000Z');
      // A date is accepted where api.md says so: the run list's created_from / created_to.
      const list = await t.req('get', api(`/test-runs?project_id=${f.projectId}&created_from=2026-01-01&created_to=2999-12-31T23:59:59%2B01:00`), f.viewer.token);
      expect(list.status).toBe(200);
      const bad = await t.req('get', api(`/test-runs?project_id=${f.projectId}&created_from=2026-W01-1`), f.viewer.token);
      expect(Object.keys(expectProblem(bad, 422, 'validation_error').errors as object)).toEqual(['query.created_from']);
    });
  });

  describe('operations endpoints', () => {
    it('/healthz and /readyz', async () => {
      expect((await t.req('get', '/healthz')).body).toEqual({ status: 'ok' });
      expect((await t.req('get', '/readyz')).body).toEqual({ status: 'ready' });
    });

    it('/readyz answers 503 while a migration is pending', async () => {
      const [last] = await t.db.query(`SELECT id, timestamp, name FROM schema_migrations ORDER BY timestamp DESC LIMIT 1`);
      await t.db.query(`DELETE FROM schema_migrations WHERE id = $1`, [last.id]);
      try {
        const p = expectProblem(await t.req('get', '/readyz'), 503, 'service_unavailable');
        expect(p.detail).toBe('Migrations are pending');
        expect((await t.req('get', '/healthz')).status).toBe(200);
      } finally {
        await t.db.query(`INSERT INTO schema_migrations (id, timestamp, name) VALUES ($1, $2, $3)`, [last.id, last.timestamp, last.name]);
      }
      expect((await t.req('get', '/readyz')).body).toEqual({ status: 'ready' });
    });

    it('a wrong method outside /api/v1 is 405 with Allow', async () => {
      const res = await t.req('post', '/healthz');
      expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toContain('GET');
    });

    it('/metrics is not served on the API port (METRICS_PORT has its own server)', async () => {
      expectProblem(await t.req('get', '/metrics'), 404, 'route_not_found');
    });

    it('/openapi.json documents every route, problems and bearer auth', async () => {
      const res = await t.req('get', '/openapi.json');
      expect(res.status).toBe(200);
      const doc = res.body;
      expect(doc.openapi).toMatch(/^3\./);
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(doc.components.schemas.ProblemDto).toBeDefined();
      const op = doc.paths['/api/v1/projects/{id}'].patch;
      expect(op.operationId).toBe('projectsUpdate');
      expect(op.responses['403'].content['application/problem+json']).toBeDefined();
      expect(op.description).toContain('lead');
      const ids = Object.values(doc.paths).flatMap((p) => Object.values(p as Record<string, { operationId: string }>).map((o) => o.operationId));
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('/docs (Swagger UI) and /redoc work offline: assets are served locally', async () => {
      const docs = await t.req('get', '/docs').redirects(2);
      expect(docs.status).toBe(200);
      expect(docs.text).toContain('swagger-ui');
      expect(docs.text).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);
      const bundle = await t.req('get', '/docs/swagger-ui-bundle.js');
      expect(bundle.status).toBe(200);
      // No online validator badge (Swagger UI's default loads one from validator.swagger.io).
      const init = await t.req('get', '/docs/swagger-ui-init.js');
      expect(init.status).toBe(200);
      expect(init.text).toMatch(/"validatorUrl":\s*null/);
      const redoc = await t.req('get', '/redoc');
      expect(redoc.status).toBe(200);
      expect(redoc.text).toContain('/redoc/redoc.standalone.js');
      expect(redoc.text).not.toMatch(/https?:\/\/(cdn|unpkg)/);
      const rjs = await t.req('get', '/redoc/redoc.standalone.js');
      expect(rjs.status).toBe(200);
      expect(rjs.text.length).toBeGreaterThan(100_000);
    });
  });

  describe('database outage', () => {
    it('answers 503 database_unavailable while the database refuses connections, then recovers', async () => {
      const state = readState();
      const dbName = new URL(t.databaseUrl).pathname.slice(1);
      const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
        const res = await t.req('get', `/api/v1/projects/${f.projectId}`, f.lead.token);
        expectProblem(res, 503, 'database_unavailable');
        expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
        expectProblem(await t.req('get', '/readyz'), 503, 'database_unavailable');
      } finally {
        await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
        await admin.end();
      }
      // The pool reconnects by itself.
      let status = 0;
      for (let i = 0; i < 10 && status !== 200; i++) status = (await t.req('get', '/readyz')).status;
      expect(status).toBe(200);
      await t.db.destroy();
      await t.db.initialize();
    });
  });
});

describe('several instances starting together (CONTRACT §1)', () => {
  it('migrate once and create exactly one bootstrap administrator', async () => {
    const state = readState();
    const name = `${state.template}_f${randomBytes(5).toString('hex')}`;
    const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    try {
      const url = `${state.serverUrl}/${name}`;
      const config = loadConfig({ AUTH_SECRET: TEST_AUTH_SECRET, DATABASE_URL: url, ADMIN_PASSWORD: 'first-admin-password' }, { persistSecret: false });
      const printed: string[] = [];
      await Promise.all([1, 2, 3].map(() => prepareDatabase(config, url, (m) => printed.push(m))));
      const c = new Client({ connectionString: url });
      await c.connect();
      const users = await c.query('SELECT username, is_admin FROM users');
      const migrations = await c.query('SELECT name FROM schema_migrations');
      const names = migrations.rows.map((r: { name: string }) => r.name);
      await c.end();
      expect(users.rows).toEqual([{ username: 'admin', is_admin: true }]);
      expect(new Set(names).size).toBe(names.length);
      expect(printed.filter((m) => m.includes('Created administrator'))).toHaveLength(1);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('a generated bootstrap password is printed once and works', async () => {
    const state = readState();
    const name = `${state.template}_f${randomBytes(5).toString('hex')}`;
    const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    try {
      const url = `${state.serverUrl}/${name}`;
      const config = loadConfig({ AUTH_SECRET: TEST_AUTH_SECRET, DATABASE_URL: url, ADMIN_USERNAME: 'root-admin' }, { persistSecret: false });
      const printed: string[] = [];
      await prepareDatabase(config, url, (m) => printed.push(m));
      await prepareDatabase(config, url, (m) => printed.push(m));
      expect(printed).toHaveLength(1);
      const password = /generated password: (\S+)/.exec(printed[0])?.[1];
      expect(password).toBeDefined();
      const c = new Client({ connectionString: url });
      await c.connect();
      const rows = await c.query('SELECT password_hash FROM users WHERE username = $1', ['root-admin']);
      await c.end();
      await expect(verifyPassword(password as string, rows.rows[0].password_hash)).resolves.toBe(true);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
