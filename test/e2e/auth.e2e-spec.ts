import jwt from 'jsonwebtoken';
import { DEFAULT_PASSWORD, TEST_ADMIN, TEST_AUTH_SECRET } from '../support/constants';
import { statementsDuring } from '../support/query-count';
import { createTestApp, expectProblem, TestApp } from '../support/test-app';
import { waitUntilBlockedOrDone } from '../support/wait-for';

describe('identity: login, tokens, users, API keys (CONTRACT §4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /auth/login', () => {
    it('returns a bearer token, its expiry and the user; sets last_login_at', async () => {
      const res = await t.req('post', '/api/v1/auth/login').send({ username: TEST_ADMIN.username, password: TEST_ADMIN.password });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ token_type: 'Bearer', user: { username: 'admin', is_admin: true } });
      expect(typeof res.body.access_token).toBe('string');
      const exp = Date.parse(res.body.expires_at);
      expect(exp - Date.now()).toBeGreaterThan(28800 * 1000 - 60_000);
      expect(res.body.user.last_login_at).not.toBeNull();
      expect(res.body.user).not.toHaveProperty('password_hash');
      expect(JSON.stringify(res.body)).not.toContain(TEST_ADMIN.password);
    });

    it('answers an unknown user and a wrong password identically', async () => {
      const a = await t.req('post', '/api/v1/auth/login').send({ username: 'nobody-here', password: 'whatever-123' });
      const b = await t.req('post', '/api/v1/auth/login').send({ username: TEST_ADMIN.username, password: 'wrong-password' });
      expectProblem(a, 401, 'invalid_credentials');
      expectProblem(b, 401, 'invalid_credentials');
      expect(a.body.detail).toBe(b.body.detail);
      expect(a.headers['www-authenticate']).toBe('Bearer');
    });

    it('matches usernames case-insensitively', async () => {
      const res = await t.req('post', '/api/v1/auth/login').send({ username: 'ADMIN', password: TEST_ADMIN.password });
      expect(res.status).toBe(200);
    });

    it('rejects malformed bodies with 422 and field paths', async () => {
      const res = await t.req('post', '/api/v1/auth/login').send({ username: 'admin', extra: 1 });
      const p = expectProblem(res, 422, 'validation_error');
      expect(p.errors).toMatchObject({ password: expect.any(Array), extra: ['Unknown field'] });
    });
  });

  describe('Bearer authentication', () => {
    it.each([
      ['no credential', undefined, 'unauthorized'],
      ['garbage token', 'Bearer not-a-token', 'invalid_token'],
      ['wrong scheme', 'Basic YWRtaW46YWRtaW4=', 'invalid_token'],
      ['unknown API key', 'Bearer tms_0123456789ab_' + 'A'.repeat(43), 'invalid_api_key'],
    ])('%s → 401', async (_label, header, code) => {
      let r = t.req('get', '/api/v1/auth/me');
      if (header) r = r.set('Authorization', header);
      const res = await r;
      expectProblem(res, 401, code);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('rejects an expired token with token_expired', async () => {
      const token = jwt.sign({ sub: t.adminId, ver: 0, exp: Math.floor(Date.now() / 1000) - 5 }, TEST_AUTH_SECRET, { algorithm: 'HS256' });
      expectProblem(await t.req('get', '/api/v1/auth/me', token), 401, 'token_expired');
    });

    it('rejects a token signed with another secret', async () => {
      const token = jwt.sign({ sub: t.adminId, ver: 0, exp: Math.floor(Date.now() / 1000) + 60 }, 'x'.repeat(48), { algorithm: 'HS256' });
      expectProblem(await t.req('get', '/api/v1/auth/me', token), 401, 'invalid_token');
    });

    // Issue #22: a correctly signed token whose subject is no uuid reached the database as a uuid
    // parameter (500), and tokens issued in the future were accepted.
    it.each([
      ['a subject that is no uuid', { sub: 'admin', ver: 0 }],
      ['a subject that is a number', { sub: 42, ver: 0 }],
      ['iat a year ahead', { ver: 0, iat: Math.floor(Date.now() / 1000) + 365 * 86400 }],
      ['nbf an hour ahead', { ver: 0, nbf: Math.floor(Date.now() / 1000) + 3600 }],
    ])('rejects a token with %s as invalid_token', async (_label, claims) => {
      const token = jwt.sign(
        { sub: t.adminId, exp: Math.floor(Date.now() / 1000) + 2 * 365 * 86400, ...claims },
        TEST_AUTH_SECRET,
        { algorithm: 'HS256' },
      );
      expectProblem(await t.req('get', '/api/v1/auth/me', token), 401, 'invalid_token');
    });

    it('accepts the service\'s own tokens with their iat', async () => {
      const res = await t.req('get', '/api/v1/auth/me', t.adminToken);
      expect(res.status).toBe(200);
      const payload = jwt.decode(t.adminToken) as { iat: number; exp: number };
      expect(payload.iat).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
      expect(payload.exp).toBeGreaterThan(payload.iat);
    });
  });

  describe('GET /auth/me', () => {
    it('returns the user with memberships', async () => {
      const u = await t.createUser();
      const projectId = await t.createProject(u.token, 'Mine');
      const res = await t.req('get', '/api/v1/auth/me', u.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: u.id,
        username: u.username,
        is_admin: false,
        is_active: true,
        memberships: [{ project_id: projectId, project_name: 'Mine', role: 'lead' }],
      });
      for (const k of ['display_name', 'email', 'last_login_at', 'created_at', 'updated_at']) expect(res.body).toHaveProperty(k);
    });
  });

  // Found by an audit: the dashboard's sign-out only forgot the token in the browser.
  describe('POST /auth/logout', () => {
    it('needs a credential; revokes every access token of the user, not their API keys', async () => {
      expectProblem(await t.req('post', '/api/v1/auth/logout'), 401, 'unauthorized');
      const u = await t.createUser();
      const other = await t.login(u.username, DEFAULT_PASSWORD);
      const key = (await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'ci' })).body
        .api_key as string;
      const res = await t.req('post', '/api/v1/auth/logout', u.token);
      expect(res.status).toBe(204);
      for (const token of [u.token, other]) {
        expectProblem(await t.req('get', '/api/v1/auth/me', token), 401, 'token_revoked');
      }
      expect((await t.req('get', '/api/v1/auth/me').set('X-API-Key', key)).status).toBe(200);
      // Signing in again gives a working token.
      const fresh = await t.login(u.username, DEFAULT_PASSWORD);
      expect((await t.req('get', '/api/v1/auth/me', fresh)).status).toBe(200);
    });
  });

  describe('user administration', () => {
    it('only administrators list and create users', async () => {
      const u = await t.createUser();
      expectProblem(await t.req('get', '/api/v1/users', u.token), 403, 'admin_required');
      expectProblem(await t.req('post', '/api/v1/users', u.token).send({ username: 'zzz-user', password: DEFAULT_PASSWORD }), 403, 'admin_required');
      expectProblem(await t.req('get', '/api/v1/users'), 401, 'unauthorized');
      const list = await t.req('get', '/api/v1/users?search=' + u.username, t.adminToken);
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ page: 1, page_size: 50, total: 1, has_next: false });
      expect(list.body.items[0].username).toBe(u.username);
    });

    // Found by an audit: the stored fingerprint of the body (a SHA-256 over it, password included)
    // could be reversed at SHA-256 speed, defeating the password's scrypt hash.
    it('ignores Idempotency-Key on POST /users: no fingerprint of a password is stored', async () => {
      const key = t.unique('user-');
      const username = t.unique('idem-user-').toLowerCase();
      const create = () =>
        t
          .req('post', '/api/v1/users', t.adminToken)
          .set('Idempotency-Key', key)
          .send({ username, password: DEFAULT_PASSWORD });
      expect((await create()).status).toBe(201);
      // Run again, not replayed: the user exists now.
      const again = await create();
      expectProblem(again, 409, 'user_already_exists');
      const stored = (await t.db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`, [
        key,
      ])) as Array<{ n: number }>;
      expect(stored[0].n).toBe(0);
    });

    it('validates new users: username length, password length, duplicates (case-insensitive)', async () => {
      const bad = await t.req('post', '/api/v1/users', t.adminToken).send({ username: 'ab', password: 'short' });
      const p = expectProblem(bad, 422, 'validation_error');
      expect(Object.keys(p.errors as object).sort()).toEqual(['password', 'username']);
      const name = t.unique('dup');
      expect((await t.req('post', '/api/v1/users', t.adminToken).send({ username: name, password: DEFAULT_PASSWORD })).status).toBe(201);
      const dup = await t.req('post', '/api/v1/users', t.adminToken).send({ username: name.toUpperCase(), password: DEFAULT_PASSWORD });
      expectProblem(dup, 409, 'user_already_exists');
      const nul = await t.req('post', '/api/v1/users', t.adminToken).send({ username: t.unique('n'), password: DEFAULT_PASSWORD, is_admin: null });
      expect(expectProblem(nul, 422, 'validation_error').errors).toHaveProperty('is_admin');
    });

    it('stores passwords as memory-hard hashes only', async () => {
      const u = await t.createUser();
      const rows = await t.db.query('SELECT password_hash FROM users WHERE id = $1', [u.id]);
      expect(rows[0].password_hash).toMatch(/^scrypt\$/);
      expect(rows[0].password_hash).not.toContain(DEFAULT_PASSWORD);
    });

    it('lets users read and edit themselves but not others, and not their admin flags', async () => {
      const a = await t.createUser();
      const b = await t.createUser();
      expect((await t.req('get', `/api/v1/users/${a.id}`, a.token)).status).toBe(200);
      expectProblem(await t.req('get', `/api/v1/users/${b.id}`, a.token), 403, 'admin_required');
      const upd = await t.req('patch', `/api/v1/users/${a.id}`, a.token).send({ display_name: '  Alice  ', email: 'a@example.com' });
      expect(upd.status).toBe(200);
      expect(upd.body).toMatchObject({ display_name: 'Alice', email: 'a@example.com' });
      expectProblem(await t.req('patch', `/api/v1/users/${a.id}`, a.token).send({ is_admin: true }), 403, 'admin_required');
      expectProblem(await t.req('patch', `/api/v1/users/${a.id}`, a.token).send({ username: 'newname' }), 403, 'admin_required');
      const admin = await t.req('patch', `/api/v1/users/${a.id}`, t.adminToken).send({ username: t.unique('renamed') });
      expect(admin.status).toBe(200);
      expectProblem(await t.req('get', '/api/v1/users/not-a-uuid', t.adminToken), 404, 'user_not_found');
    });

    it('password change needs the current password and revokes earlier tokens', async () => {
      const u = await t.createUser();
      const url = `/api/v1/users/${u.id}/password`;
      expectProblem(await t.req('put', url, u.token).send({ new_password: 'another long password' }), 422, 'validation_error');
      expectProblem(
        await t.req('put', url, u.token).send({ current_password: 'wrong password!', new_password: 'another long password' }),
        422,
        'invalid_current_password',
      );
      const ok = await t.req('put', url, u.token).send({ current_password: DEFAULT_PASSWORD, new_password: 'another long password' });
      expect(ok.status).toBe(204);
      expectProblem(await t.req('get', '/api/v1/auth/me', u.token), 401, 'token_revoked');
      const fresh = await t.login(u.username, 'another long password');
      expect((await t.req('get', '/api/v1/auth/me', fresh)).status).toBe(200);
      // An administrator may set it without the current password, revoking again.
      expect((await t.req('put', url, t.adminToken).send({ new_password: 'third long password' })).status).toBe(204);
      expectProblem(await t.req('get', '/api/v1/auth/me', fresh), 401, 'token_revoked');
    });

    it('deactivation keeps the row, refuses login and revokes tokens and API keys', async () => {
      const u = await t.createUser();
      const key = await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'ci' });
      expect(key.status).toBe(201);
      expectProblem(await t.req('delete', `/api/v1/users/${u.id}`, u.token), 403, 'admin_required');
      expect((await t.req('delete', `/api/v1/users/${u.id}`, t.adminToken)).status).toBe(204);
      expectProblem(await t.req('get', '/api/v1/auth/me', u.token), 401, 'user_disabled');
      expectProblem(await t.req('get', '/api/v1/auth/me', key.body.api_key), 401, 'invalid_api_key');
      const login = await t.req('post', '/api/v1/auth/login').send({ username: u.username, password: DEFAULT_PASSWORD });
      expectProblem(login, 401, 'user_disabled');
      const row = await t.req('get', `/api/v1/users/${u.id}`, t.adminToken);
      expect(row.body.is_active).toBe(false);
    });
  });

  describe('a project route with a bearer token: the user and the membership in one statement', () => {
    const joined = (q: string) => /\bFROM users u\b[\s\S]*\bproject_members m\b/.test(q);

    it('reads the caller and its project role together, for a project in the query and for a resource', async () => {
      const f = await t.roleFixture();
      const list = await statementsDuring(() => t.req('get', `/api/v1/test-cases?project_id=${f.projectId}`, f.viewer.token));
      expect(list.result.status).toBe(200);
      expect(list.statements.filter(joined)).toHaveLength(1);
      expect(list.statements.filter((q) => /^SELECT id, username, display_name/.test(q.trim()))).toHaveLength(0);
      const one = await statementsDuring(() => t.req('get', `/api/v1/projects/${f.projectId}`, f.viewer.token));
      expect(one.result.status).toBe(200);
      expect(one.statements.filter(joined)).toHaveLength(1);
    });

    it('keeps the order 401 → 404 → 403 when both are read at once', async () => {
      const f = await t.roleFixture();
      const missing = '0195f5d2-0000-7000-8000-000000000000';
      // A disabled user is 401 even for a project that does not exist or that it cannot see.
      const u = await t.createUser();
      expect((await t.req('delete', `/api/v1/users/${u.id}`, t.adminToken)).status).toBe(204);
      expectProblem(await t.req('get', `/api/v1/test-cases?project_id=${missing}`, u.token), 401, 'user_disabled');
      expectProblem(await t.req('get', `/api/v1/projects/${f.projectId}`, u.token), 401, 'user_disabled');
      // A revoked token likewise.
      const r = await t.createUser();
      const reset = await t.req('put', `/api/v1/users/${r.id}/password`, t.adminToken).send({ new_password: 'another long password' });
      expect(reset.status).toBe(204);
      expectProblem(await t.req('get', `/api/v1/test-cases?project_id=${f.projectId}`, r.token), 401, 'token_revoked');
      // Then 404 for a missing project or a non-member, 403 below the role, 2xx at it.
      expectProblem(await t.req('get', `/api/v1/test-cases?project_id=${missing}`, f.viewer.token), 404, 'project_not_found');
      expectProblem(await t.req('get', `/api/v1/test-cases?project_id=${f.projectId}`, f.outsider.token), 404, 'project_not_found');
      const byViewer = await t.req('post', '/api/v1/test-cases', f.viewer.token).send({ project_id: f.projectId, title: 'Viewer may not write' });
      expectProblem(byViewer, 403, 'insufficient_project_role');
      const byTester = await t.req('post', '/api/v1/test-cases', f.tester.token).send({ project_id: f.projectId, title: 'Tester writes' });
      expect(byTester.status).toBe(201);
      // An administrator who is no member acts as lead.
      expect((await t.req('get', `/api/v1/projects/${f.projectId}`, t.adminToken)).status).toBe(200);
    });
  });

  describe('personal API keys', () => {
    // Found by an audit: a key created while its owner was being deactivated survived the
    // revocation and worked again after a reactivation.
    it('a key asked for while its owner is being deactivated is refused (401 user_disabled)', async () => {
      const u = await t.createUser();
      const qr = t.db.createQueryRunner();
      await qr.connect();
      try {
        await qr.startTransaction();
        // A deactivation half-way, as UsersService.deactivate does it.
        await qr.query(`SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, [u.id]);
        await qr.query(`UPDATE users SET is_active = false, token_version = token_version + 1 WHERE id = $1`, [u.id]);
        await qr.query(`DELETE FROM api_keys WHERE user_id = $1`, [u.id]);
        const created = t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'late' }).then((r) => r);
        await waitUntilBlockedOrDone(t.db, qr, created);
        await qr.commitTransaction();
        expectProblem(await created, 401, 'user_disabled');
      } finally {
        await qr.release();
      }
      const keys = (await t.db.query(`SELECT count(*)::int AS n FROM api_keys WHERE user_id = $1`, [u.id])) as Array<{ n: number }>;
      expect(keys[0].n).toBe(0);
    });

    it('creates a key shown once, stored as a hash, usable as Bearer or X-API-Key, revocable', async () => {
      const u = await t.createUser();
      const created = await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: '  CI pipeline ' });
      expect(created.status).toBe(201);
      const key: string = created.body.api_key;
      expect(key).toMatch(/^tms_[0-9a-f]{12}_/);
      expect(created.body.key).toMatchObject({ name: 'CI pipeline', prefix: key.slice(0, 16), expires_at: null, last_used_at: null });

      const stored = await t.db.query('SELECT key_hash FROM api_keys WHERE id = $1', [created.body.key.id]);
      expect(stored[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(stored)).not.toContain(key.slice(17));

      const me = await t.req('get', '/api/v1/auth/me', key);
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(u.id);
      const viaHeader = await t.req('get', '/api/v1/auth/me').set('X-API-Key', key);
      expect(viaHeader.status).toBe(200);

      const list = await t.req('get', '/api/v1/users/me/api-keys', u.token);
      expect(list.body.items).toHaveLength(1);
      expect(JSON.stringify(list.body)).not.toContain(key.slice(17));
      expect(list.body.items[0].last_used_at).not.toBeNull();

      const other = await t.createUser();
      expectProblem(await t.req('delete', `/api/v1/users/me/api-keys/${created.body.key.id}`, other.token), 404, 'api_key_not_found');
      expect((await t.req('delete', `/api/v1/users/me/api-keys/${created.body.key.id}`, u.token)).status).toBe(204);
      expectProblem(await t.req('get', '/api/v1/auth/me', key), 401, 'invalid_api_key');
    });

    it('refuses an expiry in the past and honours expiry', async () => {
      const u = await t.createUser();
      const past = await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'old', expires_at: '2000-01-01T00:00:00Z' });
      expect(expectProblem(past, 422, 'validation_error').errors).toHaveProperty('expires_at');
      const created = await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'soon', expires_at: new Date(Date.now() + 60_000).toISOString() });
      expect(created.status).toBe(201);
      await t.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.body.key.id]);
      expectProblem(await t.req('get', '/api/v1/auth/me', created.body.api_key), 401, 'invalid_api_key');
    });

    it('an API key acts with its owner rights', async () => {
      const f = await t.roleFixture();
      const key = (await t.req('post', '/api/v1/users/me/api-keys', f.viewer.token).send({ name: 'k' })).body.api_key;
      expect((await t.req('get', `/api/v1/projects/${f.projectId}`, key)).status).toBe(200);
      expectProblem(await t.req('patch', `/api/v1/projects/${f.projectId}`, key).send({ name: 'x' }), 403, 'insufficient_project_role');
    });
  });
});
