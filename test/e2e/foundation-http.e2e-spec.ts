import { Client } from 'pg';
import { ExpressAdapter } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { requestContext, RequestStore } from '../../src/common/persistence/request-context';
import { poolOf } from '../../src/database/data-source-options';
import { DetachedClient } from '../../src/database/detached-client';
import { MetricsServer } from '../../src/modules/health/metrics.server';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';
import { logCapture } from '../support/log-capture';
import { waitFor } from '../support/wait-for';

function metricsUrl(t: TestApp): string {
  const address = t.app.get(MetricsServer).address();
  if (!address) throw new Error('the metrics server is not running');
  return `http://127.0.0.1:${address.port}/metrics`;
}

/**
 * HTTP-level rules of the foundation (CONTRACT §2, §3, §11): the check order for body problems,
 * bodies on GET/DELETE ignored, HEAD and OPTIONS, metrics labels, 500 problems and request ids in logs.
 */
describe('foundation: HTTP behaviour', () => {
  let t: TestApp;
  let f: RoleFixture;
  const { lines, sink } = logCapture();
  type Line = Record<string, unknown>;
  const parsed = (): Line[] => lines.map((l) => JSON.parse(l) as Line);
  /** The log lines once `until` holds for them (a line is written when its response finishes). */
  const logged = async (until: (all: Line[]) => boolean): Promise<Line[]> => {
    await waitFor(() => until(parsed()), { what: 'the log lines' });
    return parsed();
  };
  /** Whether the request's own last line (completed or errored, CONTRACT §11) has been written. */
  const finished = (all: Line[], id: string): boolean =>
    all.some(
      (l) =>
        (l.msg === 'request completed' || l.msg === 'request errored') &&
        JSON.stringify(l).includes(`"req_id":"${id}"`),
    );

  beforeAll(async () => {
    t = await createTestApp(
      { MAX_JSON_BYTES: '2048', LOG_LEVEL: 'info', DB_POOL_SIZE: '7', METRICS_PORT: '0' },
      sink,
    );
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('check order for body problems: 401 first, then 415/413/422', () => {
    const url = '/api/v1/projects';

    it('without a credential every malformed body is a 401', async () => {
      const text = await t.req('post', url).set('Content-Type', 'text/plain').send('name=x');
      expectProblem(text, 401, 'unauthorized');
      const bad = await t
        .req('post', url)
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expectProblem(bad, 401, 'unauthorized');
      const big = await t.req('post', url).send({ name: 'x', description: 'y'.repeat(5000) });
      expectProblem(big, 401, 'unauthorized');
    });

    it('with a credential: 415, 422 on `body`, 413; nothing is stored', async () => {
      const token = f.lead.token;
      const text = await t.req('post', url, token).set('Content-Type', 'text/plain').send('name=x');
      expectProblem(text, 415, 'unsupported_media_type');
      const form = await t
        .req('post', url, token)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('name=x');
      expectProblem(form, 415, 'unsupported_media_type');
      const bad = await t
        .req('post', url, token)
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expect(expectProblem(bad, 422, 'validation_error').errors).toEqual({
        body: ['Malformed JSON'],
      });
      const big = await t
        .req('post', url, token)
        .send({ name: 'big', description: 'y'.repeat(5000) });
      expectProblem(big, 413, 'payload_too_large');
      const rows = await t.db.query(
        `SELECT count(*)::int AS n FROM projects WHERE name IN ('x', 'big')`,
      );
      expect(rows[0].n).toBe(0);
    });

    it('a body nested deeper than 64 levels is a 422 on `body`, never a stack overflow', async () => {
      for (const depth of [65, 1000]) {
        const deep = '['.repeat(depth) + ']'.repeat(depth);
        const res = await t
          .req('post', url, f.lead.token)
          .set('Content-Type', 'application/json')
          .send(`{"name":"deep","extra":${deep}}`);
        expect(expectProblem(res, 422, 'validation_error').errors).toEqual({
          body: ['JSON nesting must not be deeper than 64 levels'],
        });
      }
      const shallow = await t
        .req('post', url, f.lead.token)
        .send({ name: 'deep', extra: JSON.parse('['.repeat(60) + ']'.repeat(60)) as unknown });
      expect(expectProblem(shallow, 422, 'validation_error').errors).toHaveProperty('extra');
    });

    it('a public endpoint reports a malformed body directly', async () => {
      const res = await t
        .req('post', '/api/v1/auth/login')
        .set('Content-Type', 'application/json')
        .send('{');
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty('body');
    });

    it('a JSON content type with a charset parameter is JSON', async () => {
      const res = await t
        .req('post', url, f.lead.token)
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ name: 'charset ok' }));
      expect(res.status).toBe(201);
    });
  });

  describe('bodies on GET and DELETE are ignored', () => {
    it('GET with a malformed or unexpected JSON body answers as without one', async () => {
      const bad = await t
        .req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token)
        .set('Content-Type', 'application/json')
        .send('{not json');
      expect(bad.status).toBe(200);
      expect(bad.body.id).toBe(f.projectId);
      const extra = await t.req('get', '/api/v1/projects', f.viewer.token).send({ bogus: 1 });
      expect(extra.status).toBe(200);
      const text = await t
        .req('get', '/api/v1/auth/me', f.viewer.token)
        .set('Content-Type', 'text/plain')
        .send('hello');
      expect(text.status).toBe(200);
    });

    it('DELETE with a body answers as without one', async () => {
      const key = await t
        .req('post', '/api/v1/users/me/api-keys', f.viewer.token)
        .send({ name: 'k' });
      const res = await t
        .req('delete', `/api/v1/users/me/api-keys/${key.body.key.id}`, f.viewer.token)
        .set('Content-Type', 'application/json')
        .send('{oops');
      expect(res.status).toBe(204);
    });
  });

  describe('HEAD and OPTIONS', () => {
    it('HEAD mirrors GET without a body, including 401 and 404', async () => {
      const ok = await request(t.server)
        .head(`/api/v1/projects/${f.projectId}`)
        .set('Authorization', `Bearer ${f.viewer.token}`);
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toBeDefined();
      expect(ok.text ?? '').toBe('');
      expect((await request(t.server).head(`/api/v1/projects/${f.projectId}`)).status).toBe(401);
      const hidden = await request(t.server)
        .head(`/api/v1/projects/${f.projectId}`)
        .set('Authorization', `Bearer ${f.outsider.token}`);
      expect(hidden.status).toBe(404);
      expect((await request(t.server).head('/healthz')).status).toBe(200);
    });

    it('OPTIONS on a known path answers 204 with Allow; on an unknown path 404', async () => {
      const res = await request(t.server).options(`/api/v1/projects/${f.projectId}`);
      expect(res.status).toBe(204);
      expect(res.headers.allow.split(', ').sort()).toEqual(
        ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH'].sort(),
      );
      expect(res.headers['x-request-id']).toBeDefined();
      const list = await request(t.server).options('/api/v1/users/me/api-keys');
      expect(list.headers.allow.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
      expectProblem(
        await request(t.server).options('/api/v1/nothing-here'),
        404,
        'route_not_found',
      );
    });

    it('a wrong method is 405 with Allow, before authentication', async () => {
      const res = await t.req('put', '/api/v1/projects').send({});
      expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.allow.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
      expect(res.body.instance).toBe('/api/v1/projects');
    });

    it('unknown routes outside /api/v1 are route_not_found problems too', async () => {
      const res = await t.req('get', '/nope?x=1');
      expect(expectProblem(res, 404, 'route_not_found').instance).toBe('/nope');
      expectProblem(await t.req('post', '/api/v1').send({}), 404, 'route_not_found');
    });
  });

  describe('metrics', () => {
    it('label requests by route template and status, also when answered before routing', async () => {
      await t.req('put', `/api/v1/projects/${f.projectId}`, f.lead.token).send({});
      await request(t.server).options(`/api/v1/projects/${f.projectId}`);
      await t.req('get', `/api/v1/does-not-exist/${f.projectId}`);
      await t
        .req('post', '/api/v1/projects', f.lead.token)
        .set('Content-Type', 'text/plain')
        .send('x');
      // /metrics is served by the separate metrics server (METRICS_PORT), not the API port.
      const text = await (await fetch(metricsUrl(t))).text();
      const series = text.split('\n').filter((l) => l.startsWith('http_requests_total{'));
      expect(series).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/method="PUT",route="\/api\/v1\/projects\/:id",status="405"/),
          expect.stringMatching(/method="OPTIONS",route="\/api\/v1\/projects\/:id",status="204"/),
          expect.stringMatching(/method="GET",route="unmatched",status="404"/),
          expect.stringMatching(/method="POST",route="\/api\/v1\/projects",status="415"/),
        ]),
      );
      // No label carries a concrete id.
      expect(series.filter((l) => l.includes(f.projectId))).toEqual([]);
      expect(text).toMatch(
        /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/auth\/me",status="200"\} \d+/,
      );
    });
  });

  describe('HTTP server', () => {
    it("serves through Nest's own Express adapter and HTTP server (no framework internals replaced)", async () => {
      expect(Object.getPrototypeOf(t.app.getHttpAdapter())).toBe(ExpressAdapter.prototype);
      const res = await t.req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(f.projectId);
    });
  });

  describe('database connections', () => {
    /** The store a connection's socket callbacks run with, when it was opened inside a request. */
    async function storeSeenBy(client: Client): Promise<RequestStore | undefined> {
      const store = { req: {}, validated: new Map() } as unknown as RequestStore;
      try {
        return await requestContext.run(store, async () => {
          await client.connect();
          return new Promise<RequestStore | undefined>((resolve, reject) => {
            // A callback is called from the socket's events: it sees the socket's context.
            client.query('SELECT 1', (err: Error | null) =>
              err ? reject(err) : resolve(requestContext.getStore()),
            );
          });
        });
      } finally {
        await client.end();
      }
    }

    it('are opened outside the request that needs them: a pooled connection keeps no request', async () => {
      const plain = await storeSeenBy(new Client({ connectionString: t.databaseUrl }));
      expect(plain).toBeDefined(); // what a plain client opened in a request keeps while it lives
      const detached = await storeSeenBy(new DetachedClient({ connectionString: t.databaseUrl }));
      expect(detached).toBeUndefined();
      // The app's pool opens DetachedClients, and DB_POOL_SIZE (validated config) sizes it.
      expect(poolOf(t.app.get(DataSource)).options).toMatchObject({
        Client: DetachedClient,
        max: 7,
      });
      const res = await t.req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token);
      expect(res.status).toBe(200);
    });
  });

  describe('OpenAPI', () => {
    interface Op {
      description?: string;
      parameters?: Array<{ name: string; in: string }>;
      responses: Record<string, { content?: Record<string, unknown> }>;
    }
    it('every operation declares its path parameters, its role and problem+json error bodies', async () => {
      const doc = (await t.req('get', '/openapi.json')).body as {
        paths: Record<string, Record<string, Op>>;
      };
      const gaps: string[] = [];
      for (const [path, ops] of Object.entries(doc.paths)) {
        const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        for (const [method, op] of Object.entries(ops)) {
          const where = `${method.toUpperCase()} ${path}`;
          for (const n of names) {
            if (!(op.parameters ?? []).some((p) => p.in === 'path' && p.name === n)) {
              gaps.push(`${where}: path parameter ${n} undocumented`);
            }
          }
          if (
            !/role|authenticated user|Administrators only|No authentication/.test(
              op.description ?? '',
            )
          ) {
            gaps.push(`${where}: no role in the description`);
          }
          for (const [status, r] of Object.entries(op.responses)) {
            if (Number(status) >= 400 && !r.content?.['application/problem+json']) {
              gaps.push(`${where}: ${status} is not a problem body`);
            }
          }
          if (!op.responses['401'] && !/No authentication/.test(op.description ?? '')) {
            gaps.push(`${where}: 401 undocumented`);
          }
        }
      }
      expect(gaps).toEqual([]);
    });
  });

  describe('logs', () => {
    it('every log line of a request carries its request id, also for early answers', async () => {
      for (const [id, send] of [
        [
          'rid-key',
          () => t.req('post', '/api/v1/users/me/api-keys', f.tester.token).send({ name: 'k' }),
        ],
        [
          'rid-415',
          () =>
            t
              .req('post', '/api/v1/projects', f.lead.token)
              .set('Content-Type', 'text/xml')
              .send('<a/>'),
        ],
        ['rid-401', () => t.req('get', '/api/v1/auth/me')],
        ['rid-405', () => t.req('put', '/api/v1/projects')],
      ] as const) {
        const before = lines.length;
        await send().set('X-Request-Id', id);
        const mine = (await logged((all) => finished(all.slice(before), id))).slice(before);
        expect(mine.length).toBeGreaterThan(0);
        for (const line of mine) expect(JSON.stringify(line)).toContain(`"req_id":"${id}"`);
      }
    });

    it('every request logs exactly one completion line, also outside Nest routing', async () => {
      const before = lines.length;
      const sent: Array<[string, () => request.Test]> = [
        ['one-readyz', () => request(t.server).get('/readyz')],
        ['one-api', () => t.req('get', '/api/v1/auth/me', f.viewer.token)],
        ['one-unknown', () => request(t.server).get('/nowhere')],
        ['one-docs', () => request(t.server).get('/openapi.json')],
        ['one-options', () => request(t.server).options('/api/v1/projects')],
      ];
      for (const [id, send] of sent) await send().set('X-Request-Id', id);
      const mine = (
        await logged((all) => sent.every(([id]) => finished(all.slice(before), id)))
      ).slice(before);
      for (const [id] of sent) {
        const completions = mine.filter(
          (l) =>
            l.msg === 'request completed' && JSON.stringify(l).includes(`"req_id":"${id}"`),
        );
        expect([id, completions.length]).toEqual([id, 1]);
      }
    });

    it('an unexpected failure is a 500 internal_error without internals, logged with the request id', async () => {
      await t.db.query('ALTER TABLE projects RENAME COLUMN description TO description_gone');
      try {
        const before = lines.length;
        const res = await t
          .req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token)
          .set('X-Request-Id', 'rid-500');
        const p = expectProblem(res, 500, 'internal_error');
        expect(p).not.toHaveProperty('errors');
        expect(JSON.stringify(p)).not.toMatch(/description|column|\.ts:\d+|SELECT/i);
        const mine = (await logged((all) => finished(all.slice(before), 'rid-500'))).slice(before);
        const failure = mine.find((l) => l.msg === 'unexpected failure');
        expect(failure).toBeDefined();
        expect(JSON.stringify(failure)).toContain('rid-500');
        expect(JSON.stringify(failure)).toContain('description');
      } finally {
        await t.db.query('ALTER TABLE projects RENAME COLUMN description_gone TO description');
      }
      expect((await t.req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token)).status).toBe(
        200,
      );
    });
  });
});

describe('foundation: CORS_ORIGINS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173/' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers preflights for listed origins only', async () => {
    const ok = await request(t.server)
      .options('/api/v1/projects')
      .set('Origin', 'http://localhost:5173')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type');
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(ok.headers['access-control-allow-methods']).toContain('POST');
    const evil = await request(t.server)
      .options('/api/v1/projects')
      .set('Origin', 'https://evil.example.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows listed origins on real requests and exposes X-Request-Id', async () => {
    const res = await t
      .req('get', '/api/v1/auth/me', t.adminToken)
      .set('Origin', 'https://app.example.com');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
    // A browser client reads where a created resource is and whether an answer was replayed.
    expect(res.headers['access-control-expose-headers']).toContain('Location');
    expect(res.headers['access-control-expose-headers']).toContain('Idempotent-Replayed');
    // A browser client follows a cursor walk (Link) and sees a background import's preference.
    expect(res.headers['access-control-expose-headers']).toContain('Link');
    expect(res.headers['access-control-expose-headers']).toContain('Preference-Applied');
    const err = await t.req('get', '/api/v1/auth/me').set('Origin', 'https://app.example.com');
    expect(err.status).toBe(401);
    expect(err.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const other = await t
      .req('get', '/api/v1/auth/me', t.adminToken)
      .set('Origin', 'https://x.example.com');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('foundation: no CORS by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('sends no CORS headers', async () => {
    const res = await t
      .req('get', '/api/v1/auth/me', t.adminToken)
      .set('Origin', 'https://app.example.com');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
