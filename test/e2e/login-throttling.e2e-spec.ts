import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { AppConfig } from '../../src/config/config';
import { RESERVE_SQL, RETRY_AFTER_SQL } from '../../src/modules/users/login-attempts.repository';
import { DEFAULT_PASSWORD } from '../support/constants';
import { createTestApp, expectProblem, TestApp, TestUser } from '../support/test-app';
import { waitUntilBlockedOrDone } from '../support/wait-for';

const LOGIN = '/api/v1/auth/login';

/** Small limits, so that a test reaches them in a few requests. */
const MAX_PER_USER = 3;
const MAX_PER_ADDRESS = 5;
const WINDOW_SECONDS = 600;
const LOCKOUT_SECONDS = 30;
const MAX_LOCKOUT_SECONDS = 200;

interface AttemptRow {
  scope: string;
  key: string;
  failures: number;
  blocked: boolean;
}

describe('login throttling (issue #24 §2)', () => {
  let t: TestApp;
  /** A second instance of the service on the same database. */
  let other: INestApplication;
  /** An instance that trusts no proxy (the default). */
  let direct: INestApplication;
  let seq = 0;

  beforeAll(async () => {
    t = await createTestApp({
      LOGIN_MAX_FAILURES: String(MAX_PER_USER),
      LOGIN_MAX_FAILURES_PER_ADDRESS: String(MAX_PER_ADDRESS),
      LOGIN_WINDOW_SECONDS: String(WINDOW_SECONDS),
      LOGIN_LOCKOUT_SECONDS: String(LOCKOUT_SECONDS),
      LOGIN_MAX_LOCKOUT_SECONDS: String(MAX_LOCKOUT_SECONDS),
      // Each test speaks from its own address, through X-Forwarded-For.
      TRUST_PROXY: 'true',
    });
    other = await startInstance(t.config);
    direct = await startInstance({ ...t.config, trustProxy: false });
  });
  afterAll(async () => {
    await other?.close();
    await direct?.close();
    await t.close();
  });

  async function startInstance(config: AppConfig): Promise<INestApplication> {
    const app = await createApp(config, t.databaseUrl);
    await app.listen(0, '127.0.0.1');
    return app;
  }

  /** A fresh client address. */
  function address(): string {
    seq += 1;
    return `10.24.${Math.floor(seq / 250)}.${(seq % 250) + 1}`;
  }

  function login(username: string, password: string, from: string, app?: INestApplication) {
    return request(app ? app.getHttpServer() : t.server)
      .post(LOGIN)
      .set('X-Forwarded-For', from)
      .send({ username, password });
  }

  async function rows(...keys: string[]): Promise<AttemptRow[]> {
    return t.db.query<AttemptRow[]>(
      `SELECT scope, key, failures, coalesce(blocked_until > now(), false) AS blocked
         FROM login_attempts WHERE key = ANY($1) ORDER BY scope`,
      [keys],
    );
  }

  /** Fails `n` times with a wrong password; each answer must be 401 invalid_credentials. */
  async function fail(username: string, from: string, n: number, app?: INestApplication) {
    for (let i = 0; i < n; i++) {
      expectProblem(await login(username, 'wrong password', from, app), 401, 'invalid_credentials');
    }
  }

  function expectRefused(res: request.Response, maxSeconds: number): number {
    const body = expectProblem(res, 429, 'too_many_attempts');
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
    expect(body.detail).toContain(`${retryAfter} s`);
    return retryAfter;
  }

  it('answers 401 up to the limit, then 429 with Retry-After, even for the right password or another spelling', async () => {
    const u = await t.createUser();
    const from = address();
    await fail(u.username, from, MAX_PER_USER);
    expect(await rows(u.username.toLowerCase())).toEqual([
      { scope: 'user', key: u.username.toLowerCase(), failures: MAX_PER_USER, blocked: true },
    ]);
    const retryAfter = expectRefused(
      await login(u.username, 'wrong password', from),
      LOCKOUT_SECONDS,
    );
    expect(retryAfter).toBeGreaterThan(LOCKOUT_SECONDS - 5);
    // The right password is refused too (no oracle), from another address and in another case.
    expectRefused(await login(u.username, DEFAULT_PASSWORD, address()), LOCKOUT_SECONDS);
    expectRefused(
      await login(` ${u.username.toUpperCase()} `, DEFAULT_PASSWORD, from),
      LOCKOUT_SECONDS,
    );
    // Refused attempts are not counted.
    expect((await rows(u.username.toLowerCase()))[0].failures).toBe(MAX_PER_USER);
  });

  it('counts every spelling that logs in as one user on one key, İ and final Σ included', async () => {
    // PostgreSQL's lower() (the login's lookup) maps İ to i and Σ to σ; JavaScript's
    // toLowerCase() maps İ to i̇ and a final Σ to ς, which made another key and escaped the lockout.
    for (const [base, respelt] of [
      ['kirill', (u: string) => u.replace('kirill', 'kİrill')],
      ['odos', (u: string) => u.replace('odoσ', 'odoΣ')],
    ] as const) {
      const u = await t.createUser({ username: t.unique(base).replace('odos', 'odoσ') });
      const other = respelt(u.username);
      expect(other).not.toBe(u.username);
      const from = address();
      await fail(u.username, from, MAX_PER_USER);
      // The other spelling names the same user: refused while the username is locked.
      expectRefused(await login(other, 'wrong password', address()), LOCKOUT_SECONDS);
      expectRefused(await login(other, DEFAULT_PASSWORD, address()), LOCKOUT_SECONDS);
      const keys = await t.db.query<Array<{ key: string }>>(
        `SELECT key FROM login_attempts WHERE scope = 'user' AND key = lower($1)`,
        [other],
      );
      expect(keys).toHaveLength(1);
    }
  });

  it('answers an unknown username exactly like an existing one', async () => {
    const u = await t.createUser();
    const ghost = t.unique('ghost');
    const from = address();
    await fail(u.username, from, MAX_PER_USER);
    await fail(ghost, address(), MAX_PER_USER);
    const real = await login(u.username, 'wrong password', from);
    const unknown = await login(ghost, 'wrong password', from);
    expectRefused(real, LOCKOUT_SECONDS);
    expectRefused(unknown, LOCKOUT_SECONDS);
    const shape = (r: request.Response) => ({
      status: r.status,
      type: r.body.type,
      title: r.body.title,
      code: r.body.code,
      keys: Object.keys(r.body).sort(),
    });
    expect(shape(unknown)).toEqual(shape(real));
  });

  it('keeps counting after a lockout ends and doubles the next lockout, up to the longest', async () => {
    const u = await t.createUser();
    const key = u.username.toLowerCase();
    const from = address();
    await fail(u.username, from, MAX_PER_USER);
    expectRefused(await login(u.username, 'wrong password', from), LOCKOUT_SECONDS);
    // The lockout ends (moved into the past rather than waited for).
    await t.db.query(
      `UPDATE login_attempts SET blocked_until = now() - interval '1 second' WHERE scope = 'user' AND key = $1`,
      [key],
    );
    // One more failure: counted (the window is still open) and locked for twice as long.
    await fail(u.username, from, 1);
    expect(await rows(key)).toEqual([
      { scope: 'user', key, failures: MAX_PER_USER + 1, blocked: true },
    ]);
    const retryAfter = expectRefused(
      await login(u.username, DEFAULT_PASSWORD, from),
      2 * LOCKOUT_SECONDS,
    );
    expect(retryAfter).toBeGreaterThan(LOCKOUT_SECONDS);
    // Then 4x (120 s), then capped at LOGIN_MAX_LOCKOUT_SECONDS (200 s, not 240).
    for (const expected of [4 * LOCKOUT_SECONDS, MAX_LOCKOUT_SECONDS, MAX_LOCKOUT_SECONDS]) {
      await t.db.query(
        `UPDATE login_attempts SET blocked_until = now() - interval '1 second' WHERE scope = 'user' AND key = $1`,
        [key],
      );
      // (From fresh addresses: this address's own count would lock it first.)
      await fail(u.username, address(), 1);
      const seconds = expectRefused(await login(u.username, 'wrong password', address()), expected);
      expect(seconds).toBeGreaterThan(expected - 5);
    }
  });

  it('forgets the count when the window has passed', async () => {
    const u = await t.createUser();
    const key = u.username.toLowerCase();
    const from = address();
    await fail(u.username, from, MAX_PER_USER);
    expectRefused(await login(u.username, DEFAULT_PASSWORD, from), LOCKOUT_SECONDS);
    await t.db.query(
      `UPDATE login_attempts
          SET blocked_until = now() - interval '2 seconds', expires_at = now() - interval '1 second'
        WHERE key = ANY($1)`,
      [[key, from]],
    );
    // A new window: the next failure is the first of it.
    await fail(u.username, from, 1);
    expect(await rows(key)).toEqual([{ scope: 'user', key, failures: 1, blocked: false }]);
    expect((await login(u.username, DEFAULT_PASSWORD, from)).status).toBe(200);
  });

  it("a successful login forgets the username's failures, not the address's", async () => {
    const u = await t.createUser();
    const key = u.username.toLowerCase();
    const from = address();
    await fail(u.username, from, MAX_PER_USER - 1);
    expect((await login(u.username, DEFAULT_PASSWORD, from)).status).toBe(200);
    expect(await rows(key, from)).toEqual([
      { scope: 'ip', key: from, failures: MAX_PER_USER - 1, blocked: false },
    ]);
    // The username has its whole allowance again.
    await fail(u.username, address(), MAX_PER_USER - 1);
    expect((await login(u.username, DEFAULT_PASSWORD, address())).status).toBe(200);
  });

  it('limits one address across usernames, and only that address', async () => {
    const from = address();
    const victim = await t.createUser();
    for (let i = 0; i < MAX_PER_ADDRESS; i++) await fail(t.unique('spray'), from, 1);
    expect(await rows(from)).toEqual([
      { scope: 'ip', key: from, failures: MAX_PER_ADDRESS, blocked: true },
    ]);
    // Any username from that address is refused, even with its right password...
    expectRefused(await login(victim.username, DEFAULT_PASSWORD, from), LOCKOUT_SECONDS);
    expectRefused(await login(t.unique('spray'), 'wrong password', from), LOCKOUT_SECONDS);
    // ...while the user logs in from elsewhere.
    expect((await login(victim.username, DEFAULT_PASSWORD, address())).status).toBe(200);
  });

  it('never throttles requests with access tokens or API keys', async () => {
    const u: TestUser = await t.createUser();
    const key = await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'ci' });
    expect(key.status).toBe(201);
    const from = address();
    await fail(u.username, from, MAX_PER_USER);
    expectRefused(await login(u.username, DEFAULT_PASSWORD, from), LOCKOUT_SECONDS);
    for (let i = 0; i < 3; i++) {
      const byToken = await t.req('get', '/api/v1/auth/me', u.token).set('X-Forwarded-For', from);
      expect(byToken.status).toBe(200);
      const byKey = await request(t.server)
        .get('/api/v1/auth/me')
        .set('X-API-Key', key.body.api_key as string)
        .set('X-Forwarded-For', from);
      expect(byKey.status).toBe(200);
      expect(byKey.body.username).toBe(u.username);
    }
  });

  it('shares the counts between instances on one database', async () => {
    const u = await t.createUser();
    const from = address();
    await fail(u.username, from, 1);
    await fail(u.username, from, 1, other);
    await fail(u.username, from, MAX_PER_USER - 2);
    // Locked on both instances, whichever counted the last failure.
    expectRefused(await login(u.username, DEFAULT_PASSWORD, from, other), LOCKOUT_SECONDS);
    expectRefused(await login(u.username, DEFAULT_PASSWORD, from), LOCKOUT_SECONDS);
    // Concurrent failures on both instances are each counted (the upsert is atomic).
    const v = await t.createUser();
    const attempts = await Promise.all(
      Array.from({ length: MAX_PER_USER }, (_, i) =>
        login(v.username, 'wrong password', address(), i % 2 === 0 ? other : undefined),
      ),
    );
    for (const res of attempts) expectProblem(res, 401, 'invalid_credentials');
    expect(await rows(v.username.toLowerCase())).toEqual([
      { scope: 'user', key: v.username.toLowerCase(), failures: MAX_PER_USER, blocked: true },
    ]);
    expectRefused(await login(v.username, DEFAULT_PASSWORD, address(), other), LOCKOUT_SECONDS);
  });

  it('lets exactly the maximum of concurrent failed logins for one username reach the password check', async () => {
    // All at once, on both instances, each from its own address: every attempt passes the lockout
    // check before any password is checked, so only counting before the check limits them.
    const u = await t.createUser();
    const key = u.username.toLowerCase();
    const attempts = await Promise.all(
      Array.from({ length: 3 * MAX_PER_USER }, (_, i) =>
        login(u.username, 'wrong password', address(), i % 2 === 0 ? other : undefined),
      ),
    );
    const statuses = attempts.map((res) => res.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_PER_USER);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * MAX_PER_USER);
    for (const res of attempts) {
      if (res.status === 401) expectProblem(res, 401, 'invalid_credentials');
      else expectRefused(res, LOCKOUT_SECONDS);
    }
    expect(await rows(key)).toEqual([
      { scope: 'user', key, failures: MAX_PER_USER, blocked: true },
    ]);
    expectRefused(await login(u.username, DEFAULT_PASSWORD, address()), LOCKOUT_SECONDS);
  });

  it('lets exactly the maximum of concurrent failed logins from one address reach the password check', async () => {
    const from = address();
    const attempts = await Promise.all(
      Array.from({ length: 3 * MAX_PER_ADDRESS }, (_, i) =>
        login(t.unique('burst'), 'wrong password', from, i % 2 === 0 ? other : undefined),
      ),
    );
    const statuses = attempts.map((res) => res.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_PER_ADDRESS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * MAX_PER_ADDRESS);
    for (const res of attempts) if (res.status === 429) expectRefused(res, LOCKOUT_SECONDS);
    expect(await rows(from)).toEqual([
      { scope: 'ip', key: from, failures: MAX_PER_ADDRESS, blocked: true },
    ]);
  });

  it('takes back the count of an attempt that does not fail, and the lockout it started', async () => {
    // A success that brings the address to its maximum: counted when it starts, taken back.
    const u = await t.createUser();
    const from = address();
    for (let i = 0; i < MAX_PER_ADDRESS - 1; i++) await fail(t.unique('near'), from, 1);
    for (let i = 0; i < 2; i++) {
      expect((await login(u.username, DEFAULT_PASSWORD, from)).status).toBe(200);
      expect(await rows(from)).toEqual([
        { scope: 'ip', key: from, failures: MAX_PER_ADDRESS - 1, blocked: false },
      ]);
    }
    // A disabled user's answer (only the right password gets it) is never counted.
    const d = await t.createUser();
    expect((await t.req('delete', `/api/v1/users/${d.id}`, t.adminToken)).status).toBe(204);
    const elsewhere = address();
    for (let i = 0; i <= MAX_PER_USER; i++) {
      expectProblem(await login(d.username, DEFAULT_PASSWORD, elsewhere), 401, 'user_disabled');
    }
    expect(await rows(d.username.toLowerCase(), elsewhere)).toEqual([]);
  });

  it('refuses, and counts nothing, when another instance locks one key while the attempt is being counted', async () => {
    const u = await t.createUser();
    const key = u.username.toLowerCase();
    const from = address();
    await fail(t.unique('other'), from, 1);
    // Holds the address's row, so that the attempt's statement counts the username, then waits on
    // the address; meanwhile "another instance" locks the address.
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT 1 FROM login_attempts WHERE scope = 'ip' AND key = $1 FOR UPDATE`, [
        from,
      ]);
      const pending = login(u.username, DEFAULT_PASSWORD, from).then((res) => res);
      await waitUntilBlockedOrDone(t.db, qr, pending);
      await qr.query(
        `UPDATE login_attempts SET blocked_until = now() + interval '20 seconds' WHERE scope = 'ip' AND key = $1`,
        [from],
      );
      await qr.commitTransaction();
      expectRefused(await pending, 20);
    } finally {
      await qr.release();
    }
    // The username's count was taken back; the address's was not counted.
    expect(await rows(key, from)).toEqual([{ scope: 'ip', key: from, failures: 1, blocked: true }]);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY is set', async () => {
    const spoofed = address();
    const res = await login(t.unique('nobody'), 'wrong password', spoofed, direct);
    expectProblem(res, 401, 'invalid_credentials');
    expect(await rows(spoofed)).toEqual([]);
    const socket = await t.db.query<Array<{ key: string }>>(
      `SELECT key FROM login_attempts WHERE scope = 'ip' AND key IN ('127.0.0.1', '::ffff:127.0.0.1')`,
    );
    expect(socket).toHaveLength(1);
  });

  it('purges expired rows while counting', async () => {
    await t.db.query(
      `INSERT INTO login_attempts (scope, key, window_start, failures, blocked_until, expires_at)
       SELECT 'user', 'expired-' || g, now() - interval '2 hours', 1, NULL, now() - interval '1 hour'
         FROM generate_series(1, 5) g`,
    );
    await fail(t.unique('purger'), address(), 1);
    const [{ n }] = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM login_attempts WHERE key LIKE 'expired-%'`,
    );
    expect(n).toBe(0);
  });

  it('never answers a Retry-After longer than the lockout, whichever transaction started first', async () => {
    // A statement of a transaction that started before another one set the lockout (from its own,
    // later start) and committed: measured from the older start, the lockout would read longer
    // than it is (31 s of a 30 s lockout). Both statements measure from the database's clock.
    const key = `clock-${address()}`;
    const older = t.db.createQueryRunner();
    await older.connect();
    try {
      await older.startTransaction();
      await older.query('SELECT now()');
      await t.db.query(
        `INSERT INTO login_attempts (scope, key, window_start, failures, blocked_until, expires_at)
         VALUES ('ip', $1, now(), $2, now() + make_interval(secs => $3),
                 now() + make_interval(secs => $3 + $4))`,
        [key, MAX_PER_ADDRESS, LOCKOUT_SECONDS, WINDOW_SECONDS],
      );
      const [checked] = (await older.query(RETRY_AFTER_SQL, [['ip'], [key]])) as Array<{
        retry_after: number;
      }>;
      const [reserved] = (await older.query(RESERVE_SQL, [
        ['ip'],
        [key],
        MAX_PER_USER,
        MAX_PER_ADDRESS,
        [LOCKOUT_SECONDS, MAX_LOCKOUT_SECONDS],
        WINDOW_SECONDS,
      ])) as Array<{ retry_after: number; failures: number | null }>;
      for (const seconds of [checked.retry_after, reserved.retry_after]) {
        expect(seconds).toBeGreaterThanOrEqual(LOCKOUT_SECONDS - 5);
        expect(seconds).toBeLessThanOrEqual(LOCKOUT_SECONDS);
      }
      expect(reserved.failures).toBeNull();
    } finally {
      await older.rollbackTransaction().catch(() => undefined);
      await older.release();
    }
    expect(await rows(key)).toEqual([
      { scope: 'ip', key, failures: MAX_PER_ADDRESS, blocked: true },
    ]);
  });
});
