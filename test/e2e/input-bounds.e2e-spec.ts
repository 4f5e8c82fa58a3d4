import { randomUUID } from 'node:crypto';
import { FREE_FORM_KEYS_MAX } from '../../src/common/validation/free-form';
import { TOPOLOGY_LIMITS } from '../../src/modules/environments/topology';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

/**
 * Issue #22, defects 4 and 6: inputs that crashed a validator (500) or slipped past it, and lists,
 * texts and keys without a bound. Every refusal is a 422 problem naming the field, and changes
 * nothing.
 */
type Json = Record<string, unknown>;

const api = (path: string) => `/api/v1${path}`;

describe('input bounds and malformed input (issue #22)', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function ok(res: { status: number; body: unknown }, status: number): Promise<Json> {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  /** Sends a raw JSON text, so that escapes such as `\ud800` reach the server as written. */
  function sendRaw(method: 'post' | 'patch', path: string, json: string, token = t.adminToken) {
    return t.req(method, api(path), token).set('Content-Type', 'application/json').send(json);
  }

  function errorsOf(body: Json): Record<string, string[]> {
    return body.errors as Record<string, string[]>;
  }

  async function count(sql: string, params: unknown[]): Promise<number> {
    const rows = (await t.db.query(sql, params)) as Array<{ n: number }>;
    return Number(rows[0].n);
  }

  describe('lone UTF-16 surrogates', () => {
    it('POST /users with an email holding one is a 422 on email, and creates nobody', async () => {
      const username = t.unique('surrogate');
      const res = await sendRaw(
        'post',
        '/users',
        `{"username":"${username}","password":"Long enough 1","email":"a\\ud800@x.io"}`,
      );
      const p = expectProblem(res, 422, 'validation_error');
      expect(errorsOf(p).email).toContain('email must not contain unpaired UTF-16 surrogates');
      expect(await count('SELECT count(*) AS n FROM users WHERE username = $1', [username])).toBe(
        0,
      );
    });

    it('PATCH /users/{id} with one is a 422 on email, and leaves the user unchanged', async () => {
      const user = await t.createUser();
      const p = expectProblem(
        await sendRaw(
          'patch',
          `/users/${user.id}`,
          '{"email":"a\\ud800@x.io","display_name":"New"}',
        ),
        422,
        'validation_error',
      );
      expect(Object.keys(errorsOf(p))).toEqual(['email']);
      const me = await ok(await t.req('get', api(`/users/${user.id}`), t.adminToken), 200);
      expect(me).toMatchObject({ email: null, display_name: `User ${user.username}` });
    });

    it('anywhere else too: a list item, a free-form key', async () => {
      const lists = expectProblem(
        await sendRaw(
          'post',
          '/test-cases',
          `{"project_id":"${f.projectId}","title":"T","tags":["ok","\\udc00"]}`,
          f.tester.token,
        ),
        422,
        'validation_error',
      );
      expect(errorsOf(lists)).toEqual({
        'tags.1': ['tags[1] must not contain unpaired UTF-16 surrogates'],
      });
      const keys = expectProblem(
        await sendRaw(
          'post',
          '/environments',
          `{"project_id":"${f.projectId}","name":"E","meta":{"k\\ud800":1}}`,
          f.tester.token,
        ),
        422,
        'validation_error',
      );
      expect(Object.keys(errorsOf(keys))).toEqual(['meta']);
      expect(errorsOf(keys).meta).toContain(
        'meta keys must not contain unpaired UTF-16 surrogates',
      );
      expect(
        await count('SELECT count(*) AS n FROM environments WHERE project_id = $1', [f.projectId]),
      ).toBe(0);
    });
  });

  describe('POST /run-cases/bulk', () => {
    async function runAndCase(): Promise<{ run: Json; testCase: Json }> {
      const run = await ok(
        await t
          .req('post', api('/test-runs'), f.tester.token)
          .send({ project_id: f.projectId, name: t.unique('Run ') }),
        201,
      );
      const testCase = await ok(
        await t
          .req('post', api('/test-cases'), f.tester.token)
          .send({ project_id: f.projectId, title: t.unique('Case ') }),
        201,
      );
      return { run, testCase };
    }
    const itemsOf = (runId: unknown) =>
      count('SELECT count(*) AS n FROM run_items WHERE test_run_id = $1', [runId]);

    it.each<[string, Json, string]>([
      ['test_case_ids null (was a 500)', { test_case_ids: null }, 'test_case_ids'],
      ['suite_id not a uuid (was a 201 with nothing)', { suite_id: 'not-a-uuid' }, 'suite_id'],
      ['suite_id null', { suite_id: null }, 'suite_id'],
      ['an over-long id in test_case_ids', { test_case_ids: ['x'.repeat(101)] }, 'test_case_ids'],
    ])('%s → 422, nothing added', async (_name, body, field) => {
      const { run } = await runAndCase();
      const p = expectProblem(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, ...body }),
        422,
        'validation_error',
      );
      expect(Object.keys(errorsOf(p))).toEqual([field]);
      expect(await itemsOf(run.id)).toBe(0);
    });

    it('still adds by ids, and takes an empty suite_id as absent', async () => {
      const { run, testCase } = await runAndCase();
      const res = await ok(
        await t
          .req('post', api('/run-cases/bulk'), f.tester.token)
          .send({ test_run_id: run.id, test_case_ids: [testCase.id], suite_id: '' }),
        201,
      );
      expect(res.created_count).toBe(1);
      expect(await itemsOf(run.id)).toBe(1);
    });
  });

  describe('bounded lists, texts and keys', () => {
    const envCount = () =>
      count('SELECT count(*) AS n FROM environments WHERE project_id = $1', [f.projectId]);
    const createEnv = (body: Json) =>
      t
        .req('post', api('/environments'), f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Env '), ...body });
    const many = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

    it.each<[string, Json, string]>([
      ['10,000 tags', { tags: many(10_000) }, 'tags'],
      ['10,000 use cases', { use_cases: many(10_000) }, 'use_cases'],
      ['101 tags', { tags: many(101) }, 'tags'],
      ['a tag of 101 characters', { tags: ['x'.repeat(101)] }, 'tags'],
      ['a name of 256 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a $ne key in the topology', { topology: { $ne: null } }, 'topology'],
      [
        'a $ne key deep in the topology',
        {
          topology: {
            system_under_test: [{ name: 'a', nodes: [{ host_type: 'vm', metadata: { $ne: 1 } }] }],
          },
        },
        'topology.system_under_test.0.nodes.0.metadata',
      ],
      ['a $where key in meta', { meta: { $where: 'sleep(1)' } }, 'meta'],
      [
        `an extra object with ${FREE_FORM_KEYS_MAX + 1} keys`,
        { extra: Object.fromEntries(many(FREE_FORM_KEYS_MAX + 1).map((k) => [k, 1])) },
        'extra',
      ],
      [
        'a topology with 10,000 node tags',
        {
          topology: {
            system_under_test: [{ name: 'a', nodes: [{ host_type: 'vm', tags: many(10_000) }] }],
          },
        },
        'topology.system_under_test.0.nodes.0.tags',
      ],
      [
        'a component name of 256 characters',
        { topology: { system_under_test: [{ name: 'c'.repeat(TOPOLOGY_LIMITS.textLength + 1) }] } },
        'topology.system_under_test.0.name',
      ],
    ])(
      'POST /environments with %s → 422 naming it, nothing created',
      async (_name, body, field) => {
        const before = await envCount();
        const p = expectProblem(await createEnv(body), 422, 'validation_error');
        expect(Object.keys(errorsOf(p))).toEqual([field]);
        expect(await envCount()).toBe(before);
      },
    );

    it('accepts the limits themselves and the documented keys', async () => {
      const env = await ok(
        await createEnv({
          tags: many(100),
          use_cases: ['u'.repeat(255)],
          meta: { 'app.kubernetes.io/name': 'api', ключ: 'значение', 'os version': '12' },
          topology: {
            entities: [{ entity_key: 'ext:payments', entity_type: 'external' }],
            system_under_test: [
              {
                name: 'c'.repeat(255),
                entity_key: 'svc',
                nodes: [{ host_type: 'vm', resources: { cpu: '4' } }],
              },
            ],
          },
        }),
        201,
      );
      expect((env.tags as string[]).length).toBe(100);
    });

    it('PATCH /environments/{id} with a $ne topology key → 422, no new revision', async () => {
      const env = await ok(await createEnv({}), 201);
      const p = expectProblem(
        await t
          .req('patch', api(`/environments/${String(env.id)}`), f.tester.token)
          .send({ topology: { metadata: { $ne: null } } }),
        422,
        'validation_error',
      );
      expect(Object.keys(errorsOf(p))).toEqual(['topology.metadata']);
      expect(
        await count('SELECT count(*) AS n FROM environment_revisions WHERE environment_id = $1', [
          env.id,
        ]),
      ).toBe(1);
    });

    it.each<[string, string, Json, string]>([
      ['POST /test-cases', '/test-cases', { title: 't'.repeat(501) }, 'title'],
      ['POST /test-cases', '/test-cases', { title: 'T', tags: many(10_000) }, 'tags'],
      ['POST /test-runs', '/test-runs', { name: 'r'.repeat(256) }, 'name'],
      ['POST /test-plans', '/test-plans', { name: 'P', tags: many(101) }, 'tags'],
    ])('%s %s %j → 422', async (_name, path, body, field) => {
      const p = expectProblem(
        await t.req('post', api(path), f.lead.token).send({ project_id: f.projectId, ...body }),
        422,
        'validation_error',
      );
      expect(Object.keys(errorsOf(p))).toEqual([field]);
    });

    // Found by an audit: parameters without @NoNul sent the NUL to PostgreSQL (422 on `body`), and
    // a 404 came first.
    it.each([
      ['/test-cases?project_id=:project&search=a%00b', 'query.search'],
      ['/test-cases?project_id=:project&tag=ok&tag=a%00b', 'query.tag'],
      ['/suites?project_id=:project&search=%00', 'query.search'],
      ['/test-plans?project_id=:project&tag=%00', 'query.tag'],
      ['/projects?search=a%00', 'query.search'],
      [`/test-cases/${randomUUID()}/history?build=a%00b`, 'query.build'],
    ])('a NUL in %s is a 422 on %s, before any 404', async (url, field) => {
      const p = expectProblem(
        await t.req('get', api(url.replace(':project', f.projectId)), f.lead.token),
        422,
        'validation_error',
      );
      expect(errorsOf(p)).toEqual({
        [field]: [`${field.slice('query.'.length)} must not contain NUL characters`],
      });
    });

    it('a repeated query parameter with more than 100 values → 422', async () => {
      const qs = many(101)
        .map((v) => `tag=${v}`)
        .join('&');
      const p = expectProblem(
        await t.req('get', api(`/test-cases?project_id=${f.projectId}&${qs}`), f.viewer.token),
        422,
        'validation_error',
      );
      expect(Object.keys(errorsOf(p))).toEqual(['query.tag']);
    });
  });

  // Found by the fuzz suite: validation copied and walked huge arrays element by element before
  // refusing them (seconds of event loop, on the public login too), and answered an error per element.
  describe('huge arrays and error lists', () => {
    it('an array longer than any field allows is refused before validation, even unauthenticated', async () => {
      const res = await t
        .req('post', api('/auth/login'))
        .send({ username: new Array(1_000_000).fill(0), password: 'x' });
      const p = expectProblem(res, 422, 'validation_error');
      expect(errorsOf(p)).toEqual({
        username: ['username must not hold more than 10000 items (it holds 1000000)'],
      });
    });

    // Found by an audit: class-transformer's copy of an object grows with the square of its keys
    // (200,000 unknown keys on the public login held the event loop for 54 s before the 422).
    it('an object wider than any the API takes is refused before validation, even unauthenticated', async () => {
      const extra = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 1]));
      const res = await t
        .req('post', api('/auth/login'))
        .send({ username: 'u', password: 'p', ...extra });
      const p = expectProblem(res, 422, 'validation_error');
      expect(errorsOf(p)).toEqual({
        body: ['body must not have more than 1000 keys (it has 200002)'],
      });
      // The process still answers (the refusal did not hold its one thread for long).
      expect((await t.req('get', '/healthz')).status).toBe(200);
    });

    it('a body with more than a million values in arrays under the limit is refused', async () => {
      const name = t.unique('huge');
      const res = await t
        .req('post', api('/test-cases'), f.lead.token)
        .send({
          project_id: f.projectId,
          title: name,
          tags: Array.from({ length: 120 }, () => new Array(10_000).fill(0)),
        });
      const p = expectProblem(res, 422, 'validation_error');
      expect(errorsOf(p).body[0]).toMatch(/must not hold more than 1000000 values/);
      expect(await count('SELECT count(*) AS n FROM test_cases WHERE title = $1', [name])).toBe(0);
    });

    // Found by an audit: JSON.parse reads 1e999 as Infinity, which a free-form object (dataset cell
    // values) then stored as null.
    it('a number that overflowed while parsing is refused, not stored as null', async () => {
      const name = t.unique('overflow');
      const res = await t
        .req('post', api('/datasets'), f.lead.token)
        .set('Content-Type', 'application/json')
        .send(
          `{"project_id":"${f.projectId}","name":"${name}","columns":[{"column_key":"x"}],` +
            '"rows":[{"row_key":"a","values":{"x":1e999}}]}',
        );
      const p = expectProblem(res, 422, 'validation_error');
      expect(errorsOf(p)).toEqual({
        'rows.0.values.x': ['rows.0.values.x is a number out of range (beyond ±1.8e308)'],
      });
      expect(await count('SELECT count(*) AS n FROM datasets WHERE name = $1', [name])).toBe(0);
    });

    it('a 422 lists at most 100 fields and says how many there were', async () => {
      const title = t.unique('steps');
      const res = await t
        .req('post', api('/test-cases'), f.lead.token)
        .send({ project_id: f.projectId, title, steps: new Array(5_000).fill(0) });
      const p = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(errorsOf(p)).length).toBe(100);
      expect(p.detail).toMatch(/the first 100 of \d+ are listed/);
      expect(await count('SELECT count(*) AS n FROM test_cases WHERE title = $1', [title])).toBe(0);
    });
  });
});
