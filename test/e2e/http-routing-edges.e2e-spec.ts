import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * CONTRACT §3 at the edges of routing: `instance` is the request path without the query, a wrong
 * method on a known path is 405 with `Allow`, OPTIONS on a known path 204 with `Allow` — for targets
 * in absolute form (as proxies send them), paths in another letter case (Express routes those), and
 * fixed paths that a parameterised template matches too (`/environments/use-cases`).
 */
describe('HTTP routing edges: absolute-form targets, letter case, Allow of fixed paths', () => {
  let t: TestApp;
  let f: RoleFixture;
  let port: number;
  const unknownId = '00000000-0000-4000-8000-000000000000';

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    port = (t.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  /** One request whose target is sent exactly as given (supertest only sends origin form). */
  function send(method: string, target: string, token = f.lead.token): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method,
          path: target,
          headers: { Authorization: `Bearer ${token}` },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const json = /json/.test(res.headers['content-type'] ?? '') && text !== '';
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: json ? (JSON.parse(text) as Record<string, unknown>) : {},
            });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** Asserts a problem answer and returns its body. */
  function problem(res: RawAnswer, status: number, code: string): Record<string, unknown> {
    expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
    return res.body;
  }

  describe('a target in absolute form (RFC 9112 §3.2.2)', () => {
    const origin = () => `http://127.0.0.1:${port}`;

    it('is routed by its path, and its problems name the path without scheme, host or query', async () => {
      const list = await send('GET', `${origin()}/api/v1/projects?page=1`);
      expect(list.status).toBe(200);
      const missing = await send('GET', `${origin()}/api/v1/projects/${unknownId}?x=1`);
      expect(problem(missing, 404, 'project_not_found').instance).toBe(
        `/api/v1/projects/${unknownId}`,
      );
      const unknown = await send('GET', `${origin()}/api/v1/nothing-here?x=1`);
      expect(problem(unknown, 404, 'route_not_found').instance).toBe('/api/v1/nothing-here');
    });

    it('a wrong method on a known path is 405 with Allow, as in origin form', async () => {
      const res = await send('PUT', `${origin()}/api/v1/projects?x=1`);
      expect(problem(res, 405, 'method_not_allowed').instance).toBe('/api/v1/projects');
      expect(res.headers.allow).toBe('GET, POST, HEAD');
      const originForm = await send('PUT', '/api/v1/projects?x=1');
      expect(originForm.headers.allow).toBe(res.headers.allow);
    });

    it('OPTIONS answers 204 with Allow', async () => {
      const res = await send('OPTIONS', `${origin()}/api/v1/projects`);
      expect(res.status).toBe(204);
      expect(res.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
    });
  });

  describe('a path in another letter case (Express routes paths case-insensitively)', () => {
    it('routes as the lower-case path', async () => {
      expect((await send('GET', '/api/v1/Projects')).status).toBe(200);
      expect((await send('GET', '/API/V1/PROJECTS/')).status).toBe(200);
    });

    it('OPTIONS answers 204 with the Allow of the lower-case path', async () => {
      for (const path of [
        '/api/v1/Projects',
        '/API/V1/PROJECTS',
        `/api/v1/Projects/${unknownId}`,
      ]) {
        const lower = await send('OPTIONS', path.toLowerCase());
        const res = await send('OPTIONS', path);
        expect({ path, status: res.status, allow: res.headers.allow }).toEqual({
          path,
          status: 204,
          allow: lower.headers.allow,
        });
      }
    });

    it('an upload to the import path in another letter case is taken as multipart, not 415', async () => {
      const run = await t
        .req('post', '/api/v1/test-runs', f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Case ') });
      expect(run.status).toBe(201);
      const res = await t
        .req('post', `/api/v1/test-runs/${String(run.body.id)}/Imports/JUnit`, f.tester.token)
        .attach(
          'file',
          Buffer.from('<testsuite name="s"><testcase name="t"/></testsuite>'),
          'r.xml',
        );
      expect(res.status).toBe(201);
    });

    it('a wrong method is 405 with Allow, not 404', async () => {
      for (const path of ['/api/v1/Projects', '/API/V1/PROJECTS']) {
        const res = await send('PUT', `${path}?x=1`);
        expect(problem(res, 405, 'method_not_allowed').instance).toBe(path);
        expect(res.headers.allow).toBe('GET, POST, HEAD');
      }
      const one = await send('POST', `/api/v1/PROJECTS/${unknownId}`);
      problem(one, 405, 'method_not_allowed');
      expect(one.headers.allow).toBe(
        (await send('POST', `/api/v1/projects/${unknownId}`)).headers.allow,
      );
    });

    it('an unknown path stays 404 route_not_found, and so do the pages matched exactly', async () => {
      problem(await send('PUT', '/api/v1/Nothing-Here'), 404, 'route_not_found');
      problem(await send('OPTIONS', '/api/v1/Nothing-Here'), 404, 'route_not_found');
      // ReDoc is answered by its exact path only (setup-app): another case is no page, and a problem.
      expect((await send('GET', '/redoc')).status).toBe(200);
      problem(await send('GET', '/REDOC'), 404, 'route_not_found');
    });
  });

  describe('a fixed path that a parameterised template matches too', () => {
    /** Fixed (parameter-free) paths of the API and the parameterised templates that match them. */
    let overlaps: Array<{ path: string; fixed: string[] }>;

    beforeAll(async () => {
      const doc = (await t.req('get', '/openapi.json')).body as { paths: Record<string, object> };
      const methodsOf = (ops: object) =>
        Object.keys(ops)
          .map((m) => m.toUpperCase())
          .filter((m) => (METHODS as readonly string[]).includes(m));
      const templates = Object.keys(doc.paths).filter((p) => p.includes('{'));
      overlaps = [];
      for (const path of Object.keys(doc.paths).filter((p) => !p.includes('{'))) {
        for (const param of templates) {
          if (!new RegExp(`^${param.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path)) continue;
          const fixed = methodsOf(doc.paths[path]);
          if (fixed.includes('GET')) fixed.push('HEAD');
          overlaps.push({ path, fixed });
        }
      }
    });

    it('finds the overlapping paths of the audit', () => {
      expect(overlaps.map((o) => o.path).sort()).toEqual(
        expect.arrayContaining([
          '/api/v1/components/graph',
          '/api/v1/datasets/bulk',
          '/api/v1/environments/use-cases',
          '/api/v1/run-cases/bulk',
          '/api/v1/test-cases/flaky',
          '/api/v1/test-cases/tags',
          '/api/v1/test-plans/generate-preview',
          '/api/v1/test-plans/tags',
        ]),
      );
    });

    it("OPTIONS lists the fixed path's own methods only", async () => {
      const res = await send('OPTIONS', '/api/v1/environments/use-cases');
      expect(res.status).toBe(204);
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
      for (const { path, fixed } of overlaps) {
        const options = await send('OPTIONS', path);
        expect({ path, allow: options.headers.allow }).toEqual({
          path,
          allow: [...fixed, 'OPTIONS'].join(', '),
        });
      }
    });

    it('a method in Allow is never 405; a method answered 405 is never in Allow', async () => {
      for (const { path } of overlaps) {
        const allow = ((await send('OPTIONS', path)).headers.allow as string).split(', ');
        for (const method of METHODS) {
          const res = await send(method, `${path}?project_id=${f.projectId}`);
          if (allow.includes(method)) {
            expect({ path, method, status: res.status }).not.toMatchObject({ status: 405 });
          } else if (res.status === 405) {
            expect({ path, method, allow: res.headers.allow }).toEqual({
              path,
              method,
              allow: allow.filter((m) => m !== 'OPTIONS').join(', '),
            });
          }
        }
      }
    });

    it('a method only the parameterised template has is still routed there, as before', async () => {
      const del = await t.req('delete', '/api/v1/environments/use-cases', f.lead.token);
      expectProblem(del, 404, 'environment_not_found');
      const get = await t.req('get', '/api/v1/run-cases/bulk', f.lead.token);
      expectProblem(get, 404, 'run_case_not_found');
      // A method neither template has: 405, with the fixed path's Allow.
      const put = await t.req('put', '/api/v1/environments/use-cases', f.lead.token);
      expectProblem(put, 405, 'method_not_allowed');
      expect(put.headers.allow).toBe('GET, HEAD');
    });
  });
});
