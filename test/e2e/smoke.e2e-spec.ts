import { createTestApp, expectProblem, TestApp } from '../support/test-app';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('boots, logs in the bootstrap admin and answers problems', async () => {
    const me = await t.req('get', '/api/v1/auth/me', t.adminToken);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: 'admin', is_admin: true, memberships: [] });
    expectProblem(await t.req('get', '/api/v1/auth/me'), 401, 'unauthorized');
    const f = await t.roleFixture();
    const p = await t.req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token);
    expect(p.status).toBe(200);
  });
});
