import { STREAM_RAW_JSON_FROM } from '../../src/common/http/raw-json';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const API = '/api/v1';

/**
 * A run's environment snapshot is answered from the stored JSON text; large ones are written in
 * parts (src/common/http/raw-json.ts). The body must be the same JSON, with a correct length, for
 * GET, HEAD and the list.
 */
describe('run bodies with a large environment snapshot', () => {
  let t: TestApp;
  let f: RoleFixture;
  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers the same snapshot as the environment revision, with its exact length', async () => {
    const nodes = Array.from({ length: 300 }, (_, i) => ({
      name: `node-${i}`,
      host_type: 'vm',
      role: 'app',
      tags: [`zone-${i % 3}`, 'Grüße ☕'],
    }));
    const env = await t
      .req('post', `${API}/environments`, f.tester.token)
      .send({
        project_id: f.projectId,
        name: 'Large topology',
        topology: { system_under_test: [{ name: 'svc', nodes }] },
      })
      .expect(201);
    const revision = await t
      .req('get', `${API}/environments/${String(env.body.id)}/revisions/1`, f.viewer.token)
      .expect(200);
    expect(JSON.stringify(revision.body.full_snapshot).length).toBeGreaterThan(STREAM_RAW_JSON_FROM);
    const run = await t
      .req('post', `${API}/test-runs`, f.tester.token)
      .send({ project_id: f.projectId, name: 'With a large snapshot', environment_id: env.body.id })
      .expect(201);

    const got = await t.req('get', `${API}/test-runs/${String(run.body.id)}`, f.viewer.token).expect(200);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
    expect(got.body.environment_snapshot).toEqual(revision.body.full_snapshot);
    expect(got.body).toMatchObject({ id: run.body.id, name: 'With a large snapshot' });

    const head = await t.req('head', `${API}/test-runs/${String(run.body.id)}`, f.viewer.token).expect(200);
    expect(head.text ?? '').toBe('');
    expect(head.headers['content-length']).toBe(got.headers['content-length']);

    const list = await t
      .req('get', `${API}/test-runs?project_id=${f.projectId}`, f.viewer.token)
      .expect(200);
    expect(Number(list.headers['content-length'])).toBe(Buffer.byteLength(list.text));
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].environment_snapshot).toEqual(revision.body.full_snapshot);
  });
});
