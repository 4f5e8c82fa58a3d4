import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PASSWORD } from '../support/constants';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

const USER_KEYS = [
  'created_at',
  'display_name',
  'email',
  'id',
  'is_active',
  'is_admin',
  'last_login_at',
  'updated_at',
  'username',
];
const API = '/api/v1';

/** CONTRACT §4 users, API keys, projects and members: exact shapes, who may do what, edge cases. */
describe('foundation: identity and access', () => {
  let t: TestApp;
  let f: RoleFixture;
  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('users', () => {
    it('create answers 201 with exactly the user fields; login answers the token shape', async () => {
      const username = t.unique('shape');
      const res = await t.req('post', `${API}/users`, t.adminToken).send({
        username,
        password: DEFAULT_PASSWORD,
        display_name: 'Shape Tester',
        email: 'shape@example.com',
        is_admin: false,
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(USER_KEYS);
      expect(res.body).toMatchObject({
        username,
        display_name: 'Shape Tester',
        email: 'shape@example.com',
        is_admin: false,
        is_active: true,
        last_login_at: null,
      });
      expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const login = await t
        .req('post', `${API}/auth/login`)
        .send({ username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(200);
      expect(Object.keys(login.body).sort()).toEqual([
        'access_token',
        'expires_at',
        'token_type',
        'user',
      ]);
      expect(login.body.token_type).toBe('Bearer');
      expect(login.body.access_token.split('.')).toHaveLength(3);
      expect(Object.keys(login.body.user).sort()).toEqual(USER_KEYS);
      expect(login.body.user.last_login_at).not.toBeNull();
      const me = await t.req('get', `${API}/auth/me`, login.body.access_token);
      expect(Object.keys(me.body).sort()).toEqual([...USER_KEYS, 'memberships'].sort());
      expect(me.body.memberships).toEqual([]);
    });

    it('usernames: 3..64 characters, any printable text, unique case-insensitively', async () => {
      const create = (username: unknown, password: unknown = DEFAULT_PASSWORD) =>
        t.req('post', `${API}/users`, t.adminToken).send({ username, password });
      const unicode = `Jürgen Müller ${randomUUID().slice(0, 6)}`;
      expect((await create(unicode)).status).toBe(201);
      expect((await t.login(unicode.toUpperCase(), DEFAULT_PASSWORD)).length).toBeGreaterThan(0);
      expectProblem(await create(unicode.toUpperCase()), 409, 'user_already_exists');
      expect((await create('a'.repeat(61) + randomUUID().slice(0, 3))).status).toBe(201);
      expect((await create(`abc${randomUUID().slice(0, 0)}`)).status).toBe(201);
      for (const bad of ['ab', '  ab  ', 'x'.repeat(65), 'tab\tname', 'line\nbreak', '', null, 5]) {
        const res = await create(bad);
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty('username');
      }
      expectProblem(await create('ABC'), 409, 'user_already_exists');
      const short = await create(t.unique('pw'), 'nine char');
      expect(expectProblem(short, 422, 'validation_error').errors).toHaveProperty('password');
      expect((await create(t.unique('pw'), 'ten chars!')).status).toBe(201);
      const unknown = await t
        .req('post', `${API}/users`, t.adminToken)
        .send({ username: t.unique('u'), password: DEFAULT_PASSWORD, is_active: false });
      expect(expectProblem(unknown, 422, 'validation_error').errors).toHaveProperty('is_active');
    });

    it('usernames are stored in Unicode form C: both spellings of an accented name are one user', async () => {
      const suffix = randomUUID().slice(0, 6);
      const decomposed = `zoe\u0308 ${suffix}`; // e + combining diaeresis
      const composed = `zo\u00eb ${suffix}`;
      const created = await t
        .req('post', `${API}/users`, t.adminToken)
        .send({ username: decomposed, password: DEFAULT_PASSWORD });
      expect(created.status).toBe(201);
      expect(created.body.username).toBe(composed);
      for (const spelling of [composed, decomposed, composed.toUpperCase()]) {
        expect((await t.login(spelling, DEFAULT_PASSWORD)).length).toBeGreaterThan(0);
      }
      const again = await t
        .req('post', `${API}/users`, t.adminToken)
        .send({ username: composed, password: DEFAULT_PASSWORD });
      expectProblem(again, 409, 'user_already_exists');
    });

    it('emails: stored trimmed and lower-cased, unique without letter case (409 naming the email)', async () => {
      const address = `${t.unique('Mail')}@Example.COM`;
      const create = (email: unknown) =>
        t
          .req('post', `${API}/users`, t.adminToken)
          .send({ username: t.unique('mail'), password: DEFAULT_PASSWORD, email });
      const first = await create(`  ${address} `);
      expect(first.status).toBe(201);
      expect(first.body.email).toBe(address.toLowerCase());
      const taken = expectProblem(await create(address.toUpperCase()), 409, 'user_already_exists');
      expect(taken.detail).toContain('email');
      const other = await create(null);
      expect(other.status).toBe(201);
      expect((await create(null)).status).toBe(201); // no address is no conflict
      const patched = await t
        .req('patch', `${API}/users/${String(other.body.id)}`, t.adminToken)
        .send({ email: address });
      expect(expectProblem(patched, 409, 'user_already_exists').detail).toContain('email');
    });

    it('GET and PATCH /users/{id}: admin, or the user for itself; others 403 admin_required', async () => {
      const a = await t.createUser();
      const b = await t.createUser();
      expect((await t.req('get', `${API}/users/${a.id}`, a.token)).body.id).toBe(a.id);
      expectProblem(await t.req('get', `${API}/users/${b.id}`, a.token), 403, 'admin_required');
      expectProblem(
        await t.req('patch', `${API}/users/${b.id}`, a.token).send({ display_name: 'x' }),
        403,
        'admin_required',
      );
      expectProblem(
        await t.req('get', `${API}/users/${randomUUID()}`, a.token),
        404,
        'user_not_found',
      );
      expectProblem(await t.req('get', `${API}/users/${b.id}`), 401, 'unauthorized');
      // Request shape before existence and access.
      const shape = await t.req('patch', `${API}/users/${b.id}`, a.token).send({ bogus: 1 });
      expect(expectProblem(shape, 422, 'validation_error').errors).toHaveProperty('bogus');
      const admin = await t.req('get', `${API}/users/${b.id}`, t.adminToken);
      expect(admin.status).toBe(200);
      expect(Object.keys(admin.body).sort()).toEqual(USER_KEYS);
    });

    it('`me` addresses the caller on GET, PATCH and PUT …/password', async () => {
      const u = await t.createUser();
      expect((await t.req('get', `${API}/users/me`, u.token)).body.id).toBe(u.id);
      const upper = await t.req('get', `${API}/users/${u.id.toUpperCase()}`, u.token);
      expect(upper.body.id).toBe(u.id);
      const patched = await t
        .req('patch', `${API}/users/me`, u.token)
        .send({ display_name: 'Me Myself' });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id: u.id, display_name: 'Me Myself' });
      const pw = await t
        .req('put', `${API}/users/me/password`, u.token)
        .send({ current_password: DEFAULT_PASSWORD, new_password: 'a brand new password' });
      expect(pw.status).toBe(204);
      expect((await t.login(u.username, 'a brand new password')).length).toBeGreaterThan(0);
    });

    it('PATCH: self-service fields, admin-only fields, nulls, unknown fields, empty text clears', async () => {
      const u = await t.createUser();
      const url = `${API}/users/${u.id}`;
      const before = (await t.req('get', url, u.token)).body;
      const ok = await t
        .req('patch', url, u.token)
        .send({ display_name: '   ', email: 'me@example.com' });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ display_name: null, email: 'me@example.com' });
      expect(Date.parse(ok.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
      expect((await t.req('patch', url, u.token).send({ email: null })).body.email).toBeNull();
      for (const field of ['is_admin', 'is_active', 'username']) {
        const value = field === 'username' ? t.unique('n') : field === 'is_admin';
        const res = await t.req('patch', url, u.token).send({ [field]: value });
        expectProblem(res, 403, 'admin_required');
      }
      for (const body of [{ username: null }, { is_admin: null }, { is_active: null }]) {
        const res = await t.req('patch', url, t.adminToken).send(body);
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(
          Object.keys(body)[0],
        );
      }
      for (const body of [{ password: 'x'.repeat(12) }, { id: randomUUID() }, { email: 'nope' }]) {
        const res = await t.req('patch', url, u.token).send(body);
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(
          Object.keys(body)[0],
        );
      }
      const other = await t.createUser();
      const taken = await t.req('patch', url, t.adminToken).send({ username: other.username });
      expectProblem(taken, 409, 'user_already_exists');
      const promoted = await t.req('patch', url, t.adminToken).send({ is_admin: true });
      expect(promoted.body.is_admin).toBe(true);
      // The new administrator now acts as lead in a project without membership.
      expect((await t.req('get', `${API}/projects/${f.projectId}`, u.token)).status).toBe(200);
      expectProblem(await t.req('patch', url, u.token).send({ is_admin: false }), 403, 'forbidden');
    });

    it('PATCH is_active=false deactivates (tokens and API keys revoked); true reactivates', async () => {
      const u = await t.createUser();
      const key = (await t.req('post', `${API}/users/me/api-keys`, u.token).send({ name: 'k' }))
        .body.api_key as string;
      const off = await t
        .req('patch', `${API}/users/${u.id}`, t.adminToken)
        .send({ is_active: false });
      expect(off.body.is_active).toBe(false);
      expectProblem(await t.req('get', `${API}/auth/me`, u.token), 401, 'user_disabled');
      expectProblem(await t.req('get', `${API}/auth/me`, key), 401, 'invalid_api_key');
      const on = await t
        .req('patch', `${API}/users/${u.id}`, t.adminToken)
        .send({ is_active: true });
      expect(on.body.is_active).toBe(true);
      // Earlier tokens stay revoked; a fresh login works.
      expectProblem(await t.req('get', `${API}/auth/me`, u.token), 401, 'token_revoked');
      const fresh = await t.login(u.username, DEFAULT_PASSWORD);
      expect((await t.req('get', `${API}/auth/me`, fresh)).status).toBe(200);
    });

    it('PUT /users/{id}/password: another user → 403, wrong current → 422, API keys survive', async () => {
      const u = await t.createUser();
      const other = await t.createUser();
      const key = (await t.req('post', `${API}/users/me/api-keys`, u.token).send({ name: 'k' }))
        .body.api_key as string;
      const pw = { current_password: DEFAULT_PASSWORD, new_password: 'changed password 1' };
      expectProblem(
        await t.req('put', `${API}/users/${other.id}/password`, u.token).send(pw),
        403,
        'admin_required',
      );
      const wrong = await t
        .req('put', `${API}/users/${u.id}/password`, u.token)
        .send({ ...pw, current_password: 'not my password' });
      expect(expectProblem(wrong, 422, 'invalid_current_password').errors).toHaveProperty(
        'current_password',
      );
      const short = await t
        .req('put', `${API}/users/${u.id}/password`, u.token)
        .send({ ...pw, new_password: 'too short' });
      expect(expectProblem(short, 422, 'validation_error').errors).toHaveProperty('new_password');
      expect((await t.req('put', `${API}/users/${u.id}/password`, u.token).send(pw)).status).toBe(
        204,
      );
      expectProblem(await t.req('get', `${API}/auth/me`, u.token), 401, 'token_revoked');
      expect((await t.req('get', `${API}/auth/me`, key)).status).toBe(200);
      expectProblem(
        await t.req('put', `${API}/users/${randomUUID()}/password`, t.adminToken).send(pw),
        404,
        'user_not_found',
      );
    });

    it('DELETE /users/{id}: admin only, deactivates, keeps the row, repeatable; unknown → 404', async () => {
      const u = await t.createUser();
      const projectId = await t.createProject(u.token);
      expectProblem(await t.req('delete', `${API}/users/${u.id}`, u.token), 403, 'admin_required');
      expect((await t.req('delete', `${API}/users/${u.id}`, t.adminToken)).status).toBe(204);
      expect((await t.req('delete', `${API}/users/${u.id}`, t.adminToken)).status).toBe(204);
      const row = await t.req('get', `${API}/users/${u.id}`, t.adminToken);
      expect(row.body).toMatchObject({ id: u.id, username: u.username, is_active: false });
      // History keeps the name: the membership and the user row stay.
      const members = await t.req('get', `${API}/projects/${projectId}/members`, t.adminToken);
      expect(members.body.items).toEqual([
        expect.objectContaining({ user_id: u.id, username: u.username }),
      ]);
      expectProblem(
        await t.req('delete', `${API}/users/${randomUUID()}`, t.adminToken),
        404,
        'user_not_found',
      );
      expectProblem(
        await t.req('delete', `${API}/users/${t.adminId}`, t.adminToken),
        403,
        'forbidden',
      );
    });

    it('GET /users: paging envelope, search, sorting with stable ties', async () => {
      const tag = t.unique('zq');
      const made = [];
      for (const name of ['Bravo', 'alpha', 'Charlie']) {
        made.push(
          await t.createUser({ username: `${tag}-${name}`, displayName: `${name} ${tag}` }),
        );
      }
      const search = await t.req('get', `${API}/users?search=${tag}`, t.adminToken);
      expect(search.body).toMatchObject({ page: 1, page_size: 50, total: 3, has_next: false });
      // Default: newest first.
      expect(search.body.items.map((u: { id: string }) => u.id)).toEqual(
        made.map((u) => u.id).reverse(),
      );
      const byName = await t.req(
        'get',
        `${API}/users?search=${tag}&sort_by=username&sort_order=asc&page_size=2`,
        t.adminToken,
      );
      expect(byName.body.items.map((u: { username: string }) => u.username)).toEqual([
        `${tag}-alpha`,
        `${tag}-Bravo`,
      ]);
      expect(byName.body).toMatchObject({ has_next: true, total: 3 });
      const bad = await t.req('get', `${API}/users?sort_by=password_hash`, t.adminToken);
      expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty(['query.sort_by']);
      const literal = await t.req('get', `${API}/users?search=%25`, t.adminToken);
      expect(literal.body.total).toBe(0);
    });
  });

  describe('text lengths count characters as PostgreSQL does', () => {
    const heart = '\u2764\uFE0F'; // two code points
    it.each([
      ['post', `${API}/users`, 'username', 64],
      ['patch', `${API}/users/me`, 'display_name', 200],
      ['post', `${API}/projects`, 'name', 200],
      ['post', `${API}/users/me/api-keys`, 'name', 120],
    ] as const)(
      '%s %s: %s over its limit is a 422, never a 500',
      async (method, url, field, max) => {
        const body: Record<string, unknown> = { [field]: heart.repeat(max / 2 + 1) };
        if (url.endsWith('/users')) body.password = DEFAULT_PASSWORD;
        const res = await t.req(method, url, t.adminToken).send(body);
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(field);
        const fits = await t
          .req(method, url, t.adminToken)
          .send({ ...body, [field]: heart.repeat(max / 2) });
        expect(fits.status).toBeLessThan(300);
      },
    );
  });

  describe('API keys', () => {
    it('create answers exactly {api_key, key}; list {items}; validation; revoke twice → 404', async () => {
      const u = await t.createUser();
      const created = await t
        .req('post', `${API}/users/me/api-keys`, u.token)
        .send({ name: 'ci', expires_at: null });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(['api_key', 'key']);
      expect(Object.keys(created.body.key).sort()).toEqual([
        'created_at',
        'expires_at',
        'id',
        'last_used_at',
        'name',
        'prefix',
      ]);
      expect(created.body.api_key.startsWith(created.body.key.prefix)).toBe(true);
      const list = await t.req('get', `${API}/users/me/api-keys`, u.token);
      expect(Object.keys(list.body)).toEqual(['items']);
      expect(list.body.items).toEqual([created.body.key]);
      for (const body of [{}, { name: '   ' }, { name: null }, { name: 'x', scope: 'all' }]) {
        const res = await t.req('post', `${API}/users/me/api-keys`, u.token).send(body);
        expectProblem(res, 422, 'validation_error');
      }
      const bad = await t
        .req('post', `${API}/users/me/api-keys`, u.token)
        .send({ name: 'x', expires_at: 'tomorrow' });
      expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty('expires_at');
      const url = `${API}/users/me/api-keys/${created.body.key.id}`;
      expect((await t.req('delete', url, u.token)).status).toBe(204);
      expectProblem(await t.req('delete', url, u.token), 404, 'api_key_not_found');
      expectProblem(
        await t.req('delete', `${API}/users/me/api-keys/not-an-id`, u.token),
        404,
        'api_key_not_found',
      );
      expectProblem(await t.req('get', `${API}/users/me/api-keys`), 401, 'unauthorized');
    });

    it('a key acts with its owner rights, also through X-API-Key; an administrator key is admin', async () => {
      const key = (
        await t.req('post', `${API}/users/me/api-keys`, t.adminToken).send({ name: 'a' })
      ).body.api_key as string;
      const users = await t.req('get', `${API}/users`).set('X-API-Key', key);
      expect(users.status).toBe(200);
      const viewerKey = (
        await t.req('post', `${API}/users/me/api-keys`, f.viewer.token).send({ name: 'v' })
      ).body.api_key as string;
      const hidden = await t
        .req('get', `${API}/projects/${f.projectId}`)
        .set('X-API-Key', viewerKey);
      expect(hidden.status).toBe(200);
      expectProblem(
        await t.req('get', `${API}/users`).set('X-API-Key', viewerKey),
        403,
        'admin_required',
      );
      expectProblem(
        await t.req('get', `${API}/auth/me`).set('X-API-Key', 'tms_not-a-key'),
        401,
        'invalid_api_key',
      );
    });

    it('X-API-Key wins over Authorization, and whatever it holds is taken as an API key', async () => {
      const viewerKey = (
        await t.req('post', `${API}/users/me/api-keys`, f.viewer.token).send({ name: 'v2' })
      ).body.api_key as string;
      // The key's owner, not the bearer token's, is the caller.
      const me = await t.req('get', `${API}/auth/me`, t.adminToken).set('X-API-Key', viewerKey);
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(f.viewer.id);
      // A bad key fails the request even beside a valid bearer token (reference §3.4).
      for (const bad of ['garbage', 'tms_not-a-key', f.viewer.token]) {
        expectProblem(
          await t.req('get', `${API}/auth/me`, t.adminToken).set('X-API-Key', bad),
          401,
          'invalid_api_key',
        );
      }
    });
  });

  describe('projects and members', () => {
    it('exact shapes of a project and a member', async () => {
      const created = await t
        .req('post', `${API}/projects`, f.lead.token)
        .send({ name: 'Shapes', description: null });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual([
        'created_at',
        'description',
        'id',
        'name',
        'updated_at',
      ]);
      expect(created.body.description).toBeNull();
      const add = await t
        .req('post', `${API}/projects/${created.body.id}/members`, f.lead.token)
        .send({ user_id: f.viewer.id, role: 'viewer' });
      expect(add.status).toBe(201);
      expect(add.body).toEqual({
        user_id: f.viewer.id,
        username: f.viewer.username,
        display_name: `User ${f.viewer.username}`,
        role: 'viewer',
        created_at: expect.stringMatching(/Z$/),
      });
      const list = await t.req('get', `${API}/projects/${created.body.id}/members`, f.viewer.token);
      expect(Object.keys(list.body)).toEqual(['items']);
      expect(list.body.items).toHaveLength(2);
      const patched = await t
        .req('patch', `${API}/projects/${created.body.id}/members/${f.viewer.id}`, f.lead.token)
        .send({ role: 'tester' });
      expect(patched.body).toEqual({ ...add.body, role: 'tester' });
    });

    it('GET /projects: newest first by default, sort_by name, search in name and description', async () => {
      const u = await t.createUser();
      const ids = [];
      for (const [name, description] of [
        ['beta', 'needle here'],
        ['Alpha', null],
        ['gamma', 'other'],
      ]) {
        const res = await t.req('post', `${API}/projects`, u.token).send({ name, description });
        ids.push(res.body.id as string);
      }
      const list = await t.req('get', `${API}/projects`, u.token);
      expect(list.body.items.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());
      const byName = await t.req('get', `${API}/projects?sort_by=name&sort_order=asc`, u.token);
      expect(byName.body.items.map((p: { name: string }) => p.name)).toEqual([
        'Alpha',
        'beta',
        'gamma',
      ]);
      const search = await t.req('get', `${API}/projects?search=NEEDLE`, u.token);
      expect(search.body.items.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
      const bad = await t.req('get', `${API}/projects?sort_order=up`, u.token);
      expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty([
        'query.sort_order',
      ]);
      // A non-member never sees the project in the list.
      const other = await t.req('get', `${API}/projects`, f.outsider.token);
      expect(other.body.items.map((p: { id: string }) => p.id)).not.toContain(f.projectId);
    });

    it('POST members: unknown or malformed user → 404 user_not_found, deactivated → 422 invalid_user', async () => {
      const url = `${API}/projects/${f.projectId}/members`;
      for (const userId of [randomUUID(), 'not-a-uuid']) {
        const res = await t
          .req('post', url, f.lead.token)
          .send({ user_id: userId, role: 'viewer' });
        expectProblem(res, 404, 'user_not_found');
      }
      const gone = await t.createUser();
      await t.req('delete', `${API}/users/${gone.id}`, t.adminToken);
      const res = await t.req('post', url, f.lead.token).send({ user_id: gone.id, role: 'viewer' });
      expectProblem(res, 422, 'invalid_user');
      for (const body of [
        { user_id: gone.id },
        { role: 'viewer' },
        { user_id: null, role: 'viewer' },
      ]) {
        expectProblem(await t.req('post', url, f.lead.token).send(body), 422, 'validation_error');
      }
      // 422 (shape) comes before 404 (project) and 403 (role).
      const shape = await t
        .req('post', `${API}/projects/${randomUUID()}/members`, f.viewer.token)
        .send({});
      expectProblem(shape, 422, 'validation_error');
    });

    it('administrators manage members of projects they are not in; removed members lose access', async () => {
      const g = await t.roleFixture();
      const base = `${API}/projects/${g.projectId}/members`;
      const add = await t
        .req('post', base, t.adminToken)
        .send({ user_id: g.outsider.id, role: 'tester' });
      expect(add.status).toBe(201);
      expect((await t.req('get', `${API}/projects/${g.projectId}`, g.outsider.token)).status).toBe(
        200,
      );
      const patch = await t
        .req('patch', `${base}/${g.outsider.id}`, t.adminToken)
        .send({ role: 'viewer' });
      expect(patch.body.role).toBe('viewer');
      expect((await t.req('delete', `${base}/${g.outsider.id}`, t.adminToken)).status).toBe(204);
      expectProblem(
        await t.req('get', `${API}/projects/${g.projectId}`, g.outsider.token),
        404,
        'project_not_found',
      );
      expectProblem(
        await t.req('delete', `${base}/not-an-id`, t.adminToken),
        404,
        'project_member_not_found',
      );
      const nul = await t.req('patch', `${base}/${g.viewer.id}`, g.lead.token).send({ role: null });
      expect(expectProblem(nul, 422, 'validation_error').errors).toHaveProperty('role');
      // The last lead cannot demote themselves, not even via an administrator.
      expectProblem(
        await t.req('patch', `${base}/${g.lead.id}`, t.adminToken).send({ role: 'viewer' }),
        409,
        'last_lead',
      );
      expectProblem(await t.req('delete', `${base}/${g.lead.id}`, t.adminToken), 409, 'last_lead');
    });

    it('DELETE /projects/{id} removes everything in the project', async () => {
      const g = await t.roleFixture();
      const p = g.projectId;
      const tok = g.tester.token;
      const ok = async (method: 'post' | 'put', url: string, body: object) => {
        const res = await t.req(method, `${API}${url}`, tok).send(body);
        if (res.status >= 300) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body as Record<string, string>;
      };
      const env = await ok('post', '/environments', { project_id: p, name: 'Env' });
      const ms = await ok('post', '/milestones', { project_id: p, name: 'M1' });
      const suite = await ok('post', '/suites', { project_id: p, name: 'S' });
      const comp = await ok('post', '/components', { project_id: p, name: 'C' });
      const comp2 = await ok('post', '/components', { project_id: p, name: 'C2' });
      await ok('put', `/components/${comp.id}/dependencies`, {
        dependencies: [{ target_component_id: comp2.id, dependency_type: 'depends_on' }],
      });
      const prod = await ok('post', '/products', { project_id: p, name: 'P' });
      await ok('put', `/products/${prod.id}/components`, {
        links: [{ component_id: comp.id, is_core: true, sort_order: 0 }],
      });
      const ds = await ok('post', '/datasets', {
        project_id: p,
        name: 'D',
        columns: [{ column_key: 'a' }],
        rows: [{ row_key: 'r1', values: { a: '1' } }],
      });
      const tc = await ok('post', '/test-cases', {
        project_id: p,
        title: 'Case',
        suite_id: suite.id,
        primary_product_id: prod.id,
        component_coverages: [{ component_id: comp.id, coverage_type: 'direct' }],
      });
      await ok('post', `/test-cases/${tc.id}/dataset-bindings`, {
        dataset_id: ds.id,
        dataset_alias: 'data',
        mode: 'follow_latest',
        row_selection_type: 'all',
      });
      await ok('post', '/test-plans', {
        project_id: p,
        name: 'Plan',
        milestone_id: ms.id,
        suite_ids: [suite.id],
        case_ids: [tc.id],
      });
      const run = await ok('post', '/test-runs', {
        project_id: p,
        name: 'Run',
        environment_id: env.id,
        milestone_id: ms.id,
      });
      await ok('post', '/run-cases', { test_run_id: run.id, test_case_id: tc.id });
      const junit = readFileSync(join(__dirname, '..', 'fixtures', 'junit', 'basic.xml'));
      const imp = await t
        .req('post', `${API}/test-runs/${run.id}/imports/junit?create_missing_cases=true`, tok)
        .attach('file', junit, 'basic.xml');
      expect(imp.status).toBe(201);

      const tables: Array<{ table_name: string }> = await t.db.query(
        `SELECT table_name FROM information_schema.columns
          WHERE table_schema = 'public' AND column_name = 'project_id'`,
      );
      const count = async () => {
        let n = 0;
        for (const { table_name } of tables) {
          const rows = await t.db.query(
            `SELECT count(*)::int AS n FROM "${table_name}" WHERE project_id = $1`,
            [p],
          );
          n += rows[0].n as number;
        }
        return n;
      };
      expect(await count()).toBeGreaterThan(10);
      expect((await t.req('delete', `${API}/projects/${p}`, g.lead.token)).status).toBe(204);
      expect(await count()).toBe(0);
      const proj = await t.db.query('SELECT count(*)::int AS n FROM projects WHERE id = $1', [p]);
      expect(proj[0].n).toBe(0);
      expectProblem(
        await t.req('get', `${API}/test-runs/${run.id}`, g.lead.token),
        404,
        'test_run_not_found',
      );
      // Users outlive their projects.
      expect((await t.req('get', `${API}/auth/me`, g.lead.token)).body.memberships).toEqual([]);
    });
  });
});

describe('foundation: token lifetime', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ ACCESS_TOKEN_TTL_SECONDS: '1' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('an access token expires after ACCESS_TOKEN_TTL_SECONDS (401 token_expired); API keys do not', async () => {
    const login = () =>
      t
        .req('post', `${API}/auth/login`)
        .send({ username: 'admin', password: 'admin-password-for-tests' });
    // A 1 s token may lapse before a slow call completes on a busy machine: retry with a fresh one.
    let key: string | undefined;
    for (let i = 0; i < 5 && !key; i++) {
      const token = (await login()).body.access_token as string;
      const res = await t.req('post', `${API}/users/me/api-keys`, token).send({ name: 'k' });
      if (res.status === 201) key = res.body.api_key as string;
    }
    expect(key).toBeDefined();
    const fresh = await login();
    const ttl = Date.parse(fresh.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2000);
    // Deliberate delay: the token's expiry is what is tested; it lapses after its whole lifetime.
    await new Promise((r) => setTimeout(r, ttl + 50));
    const res = await t.req('get', `${API}/auth/me`, fresh.body.access_token);
    expectProblem(res, 401, 'token_expired');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect((await t.req('get', `${API}/auth/me`, key)).status).toBe(200);
  });
});

describe('foundation: races', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('concurrent creation of one username yields one user and one 409', async () => {
    const token = t.adminToken;
    const username = t.unique('race');
    const results = await Promise.all(
      [username, username.toUpperCase(), username].map((u) =>
        t.req('post', `${API}/users`, token).send({ username: u, password: DEFAULT_PASSWORD }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) {
      expectProblem(r, 409, 'user_already_exists');
    }
  });

  it('concurrent additions of one member yield one membership and one 409', async () => {
    const token = t.adminToken;
    const projectId = await t.createProject(token);
    const u = await t.req('post', `${API}/users`, token).send({
      username: t.unique('m'),
      password: DEFAULT_PASSWORD,
    });
    const results = await Promise.all(
      ['viewer', 'tester'].map((role) =>
        t
          .req('post', `${API}/projects/${projectId}/members`, token)
          .send({ user_id: u.body.id, role }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expectProblem(
      results.find((r) => r.status === 409) as (typeof results)[0],
      409,
      'project_member_already_exists',
    );
  });

  it('deleting a project while it is being changed answers no 500', async () => {
    const users = await Promise.all([t.createUser(), t.createUser(), t.createUser()]);
    for (let round = 0; round < 3; round++) {
      const projectId = await t.createProject();
      const results = await Promise.all([
        ...users.map((u) =>
          t
            .req('post', `${API}/projects/${projectId}/members`, t.adminToken)
            .send({ user_id: u.id, role: 'tester' }),
        ),
        t.req('patch', `${API}/projects/${projectId}`, t.adminToken).send({ description: 'x' }),
        t.req('delete', `${API}/projects/${projectId}`, t.adminToken),
        t.req('get', `${API}/projects/${projectId}/members`, t.adminToken),
      ]);
      for (const r of results) expect([200, 201, 204, 404, 409]).toContain(r.status);
      const left = await t.db.query(
        'SELECT count(*)::int AS n FROM project_members WHERE project_id = $1',
        [projectId],
      );
      expect(left[0].n).toBe(0);
    }
  });
});
