import { fixture } from '../support/import-fixture';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

/**
 * A HEAD of a report download answers its headers without opening the report. It used to open
 * it like a GET, and its slot (EXPORT_CONCURRENCY) was given back only after the snapshot's COMMIT,
 * after the answer: with one slot, a client's next request right after a HEAD was a false 503
 * (found by an audit).
 */
describe('report downloads: HEAD', () => {
  let t: TestApp;
  let f: RoleFixture;
  let runId: string;

  beforeAll(async () => {
    t = await createTestApp({ EXPORT_CONCURRENCY: '1' });
    f = await t.roleFixture();
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'Heads' });
    runId = run.body.id;
    const imported = await t
      .req(
        'post',
        `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', fixture('basic.xml'), 'basic.xml');
    expect(imported.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  const url = (format: string) => `/api/v1/test-runs/${runId}/export?format=${format}`;

  it("answers the download's headers, with one slot: HEADs and GETs in a row all answer", async () => {
    for (const format of ['pdf', 'csv', 'json', 'xml', 'junit']) {
      const head = await t.req('head', url(format), f.viewer.token);
      expect(head.status).toBe(200);
      const get = await t.req('get', url(format), f.viewer.token);
      expect(get.status).toBe(200);
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      expect(head.headers['content-disposition']).toBe(get.headers['content-disposition']);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      statuses.push((await t.req('head', url('pdf'), f.viewer.token)).status);
    }
    statuses.push((await t.req('get', url('csv'), f.viewer.token)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('a run that does not exist, or a bad format, answers as to a GET', async () => {
    const missing = await t.req(
      'head',
      '/api/v1/test-runs/0190e000-0000-7000-8000-000000000000/export',
      f.viewer.token,
    );
    expect(missing.status).toBe(404);
    expect((await t.req('head', url('docx'), f.viewer.token)).status).toBe(422);
    expect((await t.req('head', url('csv'))).status).toBe(401);
  });
});
