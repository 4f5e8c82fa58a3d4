import { createTestApp, expectProblem, TestApp } from '../support/test-app';

/**
 * Administrators cannot demote or deactivate themselves, and the last active administrator
 * cannot be demoted or deactivated by another one either (409 last_admin). Found by an audit: two
 * administrators demoting each other at once both answered 200, leaving no administrator and no
 * way back in but SQL. A database of its own: the test changes who administers it.
 */
describe('the last active administrator', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const activeAdmins = async (): Promise<number> =>
    (
      (await t.db.query(
        `SELECT count(*)::int AS n FROM users WHERE is_admin AND is_active`,
      )) as Array<{
        n: number;
      }>
    )[0].n;

  it.each([
    ['demote each other', 'patch', { is_admin: false }],
    ['deactivate each other', 'delete', undefined],
  ] as const)(
    'two administrators who %s at once: one succeeds, an administrator remains',
    async (_n, method, body) => {
      // Only two active administrators: the startup one (whose token this test app holds) and x.
      await t.db.query(`UPDATE users SET is_admin = false WHERE is_admin AND username <> 'admin'`);
      const x = await t.createUser({ isAdmin: true });
      const me = (await t.req('get', '/api/v1/users/me', t.adminToken)).body as { id: string };
      expect(await activeAdmins()).toBe(2);
      const change = (token: string, id: string) => {
        const r = t.req(method, `/api/v1/users/${id}`, token);
        return (body === undefined ? r : r.send(body)).then((res) => res);
      };
      const [a, b] = await Promise.all([change(t.adminToken, x.id), change(x.token, me.id)]);
      const ok = method === 'patch' ? 200 : 204;
      expect([a, b].filter((r) => r.status === ok)).toHaveLength(1);
      // The other is refused: 409 last_admin once it sees the first change, or, when the first
      // committed before it was authenticated, as the non-administrator (403) or the deactivated
      // user (401) its caller has become.
      const refused = a.status === ok ? b : a;
      if (refused.status === 409) expectProblem(refused, 409, 'last_admin');
      else expect([401, 403]).toContain(refused.status);
      expect(await activeAdmins()).toBe(1);
      // Put the startup administrator back for the next case.
      await t.db.query(`UPDATE users SET is_admin = true, is_active = true WHERE id = $1`, [me.id]);
      await t.db.query(`UPDATE users SET is_admin = false WHERE id = $1`, [x.id]);
    },
  );
});
