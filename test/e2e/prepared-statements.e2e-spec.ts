import { statementsDuring } from '../support/query-count';
import { createTestApp, expectProblem, TestApp } from '../support/test-app';

const API = '/api/v1';

/**
 * The hot-path statements (authentication, access checks, GET of one run, creating a run) are
 * named prepared statements by default, also inside a request's transaction;
 * DB_PREPARED_STATEMENTS=false (poolers that cannot keep them) sends them as plain statements.
 * Both answer alike.
 */
describe.each([
  ['on (default)', {}, true],
  ['off', { DB_PREPARED_STATEMENTS: 'false' }, false],
])('prepared statements %s', (_label, env: Record<string, string>, named: boolean) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(env);
  });
  afterAll(async () => {
    await t.close();
  });

  it('authenticates, checks access and answers a run, the same either way', async () => {
    const f = await t.roleFixture();
    const run = await t
      .req('post', `${API}/test-runs`, f.tester.token)
      .send({ project_id: f.projectId, name: 'Prepared' })
      .expect(201);
    const id = String(run.body.id);
    // Twice: the second request reuses statements already prepared on the pooled connections.
    for (let i = 0; i < 2; i++) {
      const { result, statements } = await statementsDuring(() =>
        t.req('get', `${API}/test-runs/${id}`, f.viewer.token).expect(200),
      );
      expect(result.body).toMatchObject({ id, name: 'Prepared', project_id: f.projectId });
      expect(statements).toHaveLength(2);
    }
    expectProblem(
      await t.req('get', `${API}/test-runs/${id}`, f.outsider.token),
      404,
      'test_run_not_found',
    );
    const list = await t
      .req('get', `${API}/test-runs?project_id=${f.projectId}`, f.viewer.token)
      .expect(200);
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual([id]);
  });

  it(`creates a run with its insert sent ${named ? 'by name' : 'unnamed'} in its transaction`, async () => {
    const f = await t.roleFixture();
    const { Client } = await import('pg');
    const spy = jest.spyOn(Client.prototype, 'query');
    try {
      // Twice: the second create reuses the statement already prepared on its connection.
      for (const name of ['First', 'Second']) {
        const res = await t
          .req('post', `${API}/test-runs`, f.tester.token)
          .send({ project_id: f.projectId, name })
          .expect(201);
        const got = await t.req('get', `${API}/test-runs/${String(res.body.id)}`, f.viewer.token);
        expect(got.body).toMatchObject({ name, status: 'not_started', created_by: f.tester.id });
        expect(res.text).toBe(got.text);
      }
      const inserts = spy.mock.calls
        .map(([q]) => q)
        .filter(
          (q) =>
            typeof q === 'object' &&
            /INSERT INTO test_runs/.test(String((q as { text?: string }).text)),
        )
        .map((q) => (q as { name?: string }).name);
      expect(inserts).toEqual(named ? ['test_runs.insert', 'test_runs.insert'] : []);
    } finally {
      spy.mockRestore();
    }
  });

  it(`sends the authentication statement ${named ? 'by name' : 'unnamed'}`, async () => {
    const { Client } = await import('pg');
    const spy = jest.spyOn(Client.prototype, 'query');
    try {
      await t.req('get', `${API}/auth/me`, t.adminToken).expect(200);
      const configs = spy.mock.calls.map(([q]) => q).filter((q) => typeof q === 'object');
      const names = configs.map((q) => (q as { name?: string }).name).filter(Boolean);
      expect(names.includes('auth.user')).toBe(named);
    } finally {
      spy.mockRestore();
    }
  });
});
