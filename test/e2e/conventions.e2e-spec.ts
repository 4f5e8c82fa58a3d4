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

  describe('operations endpoints', () => {
    it('/healthz and /readyz', async () => {
      expect((await t.req('get', '/healthz')).body).toEqual({ status: 'ok' });
      expect((await t.req('get', '/readyz')).body).toEqual({ status: 'ready' });
    });

    it('/metrics exposes request counts and latency by route and status', async () => {
      await t.req('get', `/api/v1/projects/${f.projectId}`, f.lead.token);
      const res = await t.req('get', '/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/projects\/:id",status="200"\} \d+/);
      expect(res.text).toContain('http_request_duration_seconds_bucket');
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
    it('answers 503 service_unavailable while the database refuses connections, then recovers', async () => {
      const state = readState();
      const dbName = new URL(t.databaseUrl).pathname.slice(1);
      const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
        const res = await t.req('get', `/api/v1/projects/${f.projectId}`, f.lead.token);
        expectProblem(res, 503, 'service_unavailable');
        expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
        expectProblem(await t.req('get', '/readyz'), 503, 'service_unavailable');
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
