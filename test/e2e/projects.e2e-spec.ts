import { createTestApp, expectProblem, expectRoleMatrix, RoleFixture, TestApp } from '../support/test-app';

describe('projects, members and roles (CONTRACT §4)', () => {
  let t: TestApp;
  let f: RoleFixture;
  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /projects makes the creator lead; GET /projects lists only memberships (admins see all)', async () => {
    const u = await t.createUser();
    const res = await t.req('post', '/api/v1/projects', u.token).send({ name: '  Zeta  ', description: 'd' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Zeta', description: 'd' });
    for (const k of ['id', 'created_at', 'updated_at']) expect(res.body).toHaveProperty(k);
    const members = await t.req('get', `/api/v1/projects/${res.body.id}/members`, u.token);
    expect(members.body.items).toEqual([expect.objectContaining({ user_id: u.id, role: 'lead', username: u.username })]);
    const mine = await t.req('get', '/api/v1/projects', u.token);
    expect(mine.body.items.map((p: { id: string }) => p.id)).toEqual([res.body.id]);
    expect(mine.body.total).toBe(1);
    const all = await t.req('get', '/api/v1/projects?page_size=200', t.adminToken);
    expect(all.body.items.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([res.body.id, f.projectId]));
    expectProblem(await t.req('post', '/api/v1/projects', u.token).send({ name: '   ' }), 422, 'validation_error');
    expectProblem(await t.req('post', '/api/v1/projects', u.token).send({ name: 'x', id: 'abc' }), 422, 'validation_error');
    expectProblem(await t.req('post', '/api/v1/projects'), 401, 'unauthorized');
  });

  it('GET /projects/{id}: role matrix', async () => {
    await expectRoleMatrix(t, f, { method: 'get', url: `/api/v1/projects/${f.projectId}`, minRole: 'viewer', okStatus: 200, notFoundCode: 'project_not_found' });
  });

  it('PATCH /projects/{id}: role matrix and explicit null on name', async () => {
    const ok = await expectRoleMatrix(t, f, {
      method: 'patch',
      url: `/api/v1/projects/${f.projectId}`,
      body: () => ({ description: 'changed' }),
      minRole: 'lead',
      okStatus: 200,
      notFoundCode: 'project_not_found',
    });
    expect(ok.body.description).toBe('changed');
    const nul = await t.req('patch', `/api/v1/projects/${f.projectId}`, f.lead.token).send({ name: null });
    expect(expectProblem(nul, 422, 'validation_error').errors).toHaveProperty('name');
  });

  it('GET members: role matrix', async () => {
    const res = await expectRoleMatrix(t, f, { method: 'get', url: `/api/v1/projects/${f.projectId}/members`, minRole: 'viewer', okStatus: 200, notFoundCode: 'project_not_found' });
    expect(res.body.items.map((m: { role: string }) => m.role).sort()).toEqual(['lead', 'tester', 'viewer']);
  });

  it('POST members: role matrix, duplicates 409, unknown user 404', async () => {
    const newbies = await Promise.all([t.createUser(), t.createUser()]);
    let i = 0;
    await expectRoleMatrix(t, f, {
      method: 'post',
      url: `/api/v1/projects/${f.projectId}/members`,
      body: () => ({ user_id: newbies[Math.min(i++, 1)].id, role: 'viewer' }),
      minRole: 'lead',
      okStatus: 201,
      notFoundCode: 'project_not_found',
    });
    const dup = await t.req('post', `/api/v1/projects/${f.projectId}/members`, f.lead.token).send({ user_id: newbies[0].id, role: 'tester' });
    expect([201, 409]).toContain(dup.status);
    const again = await t.req('post', `/api/v1/projects/${f.projectId}/members`, f.lead.token).send({ user_id: f.viewer.id, role: 'tester' });
    expectProblem(again, 409, 'project_member_already_exists');
    const unknown = await t.req('post', `/api/v1/projects/${f.projectId}/members`, f.lead.token).send({ user_id: '0190f3b2-7c1d-7abc-8def-0123456789ab', role: 'tester' });
    expectProblem(unknown, 404, 'user_not_found');
    const badRole = await t.req('post', `/api/v1/projects/${f.projectId}/members`, f.lead.token).send({ user_id: newbies[1].id, role: 'owner' });
    expect(expectProblem(badRole, 422, 'validation_error').errors).toHaveProperty('role');
  });

  it('PATCH/DELETE members: role matrix; the last lead cannot be demoted or removed', async () => {
    const g = await t.roleFixture();
    await expectRoleMatrix(t, g, {
      method: 'patch',
      url: `/api/v1/projects/${g.projectId}/members/${g.viewer.id}`,
      body: () => ({ role: 'viewer' }),
      minRole: 'lead',
      okStatus: 200,
      notFoundCode: 'project_not_found',
    });
    expectProblem(await t.req('patch', `/api/v1/projects/${g.projectId}/members/${g.lead.id}`, g.lead.token).send({ role: 'tester' }), 409, 'last_lead');
    expectProblem(await t.req('delete', `/api/v1/projects/${g.projectId}/members/${g.lead.id}`, g.lead.token), 409, 'last_lead');
    expectProblem(await t.req('delete', `/api/v1/projects/${g.projectId}/members/${g.outsider.id}`, g.lead.token), 404, 'project_member_not_found');
    // With a second lead the first may step down.
    expect((await t.req('patch', `/api/v1/projects/${g.projectId}/members/${g.tester.id}`, g.lead.token).send({ role: 'lead' })).status).toBe(200);
    expect((await t.req('patch', `/api/v1/projects/${g.projectId}/members/${g.lead.id}`, g.lead.token).send({ role: 'viewer' })).status).toBe(200);
    await expectRoleMatrix(t, { ...g, lead: g.tester, tester: g.viewer, viewer: g.lead }, {
      method: 'delete',
      url: `/api/v1/projects/${g.projectId}/members/${g.lead.id}`,
      minRole: 'lead',
      okStatus: 204,
      notFoundCode: 'project_not_found',
    });
  });

  // Found by an audit: a deactivated lead counted, so the only active lead could step down and
  // leave the project to nobody who can act.
  it('an active lead stays unless another active lead does; a deactivated lead may go', async () => {
    const g = await t.roleFixture();
    const member = (id: string) => `/api/v1/projects/${g.projectId}/members/${id}`;
    expect(
      (await t.req('patch', member(g.tester.id), g.lead.token).send({ role: 'lead' })).status,
    ).toBe(200);
    expect((await t.req('delete', `/api/v1/users/${g.tester.id}`, t.adminToken)).status).toBe(204);
    expectProblem(
      await t.req('patch', member(g.lead.id), g.lead.token).send({ role: 'viewer' }),
      409,
      'last_lead',
    );
    expectProblem(await t.req('delete', member(g.lead.id), g.lead.token), 409, 'last_lead');
    // The deactivated lead itself may be demoted or removed: an active lead stays.
    expect(
      (await t.req('patch', member(g.tester.id), g.lead.token).send({ role: 'viewer' })).status,
    ).toBe(200);
    expect(
      (await t.req('patch', member(g.tester.id), g.lead.token).send({ role: 'lead' })).status,
    ).toBe(200);
    expect((await t.req('delete', member(g.tester.id), g.lead.token)).status).toBe(204);
    const leads = await t.db.query(
      `SELECT user_id FROM project_members WHERE project_id = $1 AND role = 'lead'`,
      [g.projectId],
    );
    expect(leads).toEqual([{ user_id: g.lead.id }]);
  });

  it('concurrent demotions of the two last leads leave one lead', async () => {
    const g = await t.roleFixture();
    await t.req('patch', `/api/v1/projects/${g.projectId}/members/${g.tester.id}`, g.lead.token).send({ role: 'lead' });
    const [a, b] = await Promise.all([
      t.req('patch', `/api/v1/projects/${g.projectId}/members/${g.lead.id}`, t.adminToken).send({ role: 'viewer' }),
      t.req('patch', `/api/v1/projects/${g.projectId}/members/${g.tester.id}`, t.adminToken).send({ role: 'viewer' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const leads = await t.db.query(`SELECT count(*)::int AS n FROM project_members WHERE project_id = $1 AND role = 'lead'`, [g.projectId]);
    expect(leads[0].n).toBe(1);
  });

  it('administrators act as lead without membership', async () => {
    const admin2 = await t.createUser({ isAdmin: true });
    expect((await t.req('patch', `/api/v1/projects/${f.projectId}`, admin2.token).send({ description: 'by admin' })).status).toBe(200);
  });

  it('malformed or unknown project ids are 404', async () => {
    expectProblem(await t.req('get', '/api/v1/projects/nope', f.lead.token), 404, 'project_not_found');
    expectProblem(await t.req('get', '/api/v1/projects/0190f3b2-7c1d-7abc-8def-0123456789ab', t.adminToken), 404, 'project_not_found');
  });

  it('DELETE /projects/{id}: role matrix, removes everything in it', async () => {
    const g = await t.roleFixture();
    await expectRoleMatrix(t, g, { method: 'delete', url: `/api/v1/projects/${g.projectId}`, minRole: 'lead', okStatus: 204, notFoundCode: 'project_not_found' });
    const left = await t.db.query('SELECT count(*)::int AS n FROM project_members WHERE project_id = $1', [g.projectId]);
    expect(left[0].n).toBe(0);
    expectProblem(await t.req('get', `/api/v1/projects/${g.projectId}`, g.lead.token), 404, 'project_not_found');
  });
});
