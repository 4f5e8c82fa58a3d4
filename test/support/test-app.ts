import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';
import type { Response } from 'supertest';
import { DataSource, QueryRunner } from 'typeorm';
import { createApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/config/config';
import { ProjectRole } from '../../src/common/access/roles';
import { DEFAULT_PASSWORD, TEST_ADMIN, TEST_AUTH_SECRET } from './constants';
import { readState } from './pg-server';

export type Method = 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete';

export interface TestUser {
  id: string;
  username: string;
  token: string;
}

export interface RoleFixture {
  projectId: string;
  lead: TestUser;
  tester: TestUser;
  viewer: TestUser;
  outsider: TestUser;
}

/**
 * A running application on its own database cloned from the migrated template, with helpers for
 * users, projects and authenticated calls.
 */
export class TestApp {
  private seq = 0;
  adminToken = '';
  adminId = '';

  constructor(
    readonly app: INestApplication,
    readonly config: AppConfig,
    readonly databaseUrl: string,
    /** Direct database access for assertions (row counts, persisted state). */
    readonly db: DataSource,
  ) {}

  get server() {
    return this.app.getHttpServer();
  }

  /** A supertest request, authenticated with `token` when given. */
  req(method: Method, url: string, token?: string) {
    const r = request(this.server)[method](url);
    return token ? r.set('Authorization', `Bearer ${token}`) : r;
  }

  /** Unique suffix for names within this test file. */
  unique(prefix = 'x'): string {
    this.seq += 1;
    return `${prefix}${this.seq}${randomBytes(3).toString('hex')}`;
  }

  async login(username: string, password: string): Promise<string> {
    const res = await this.req('post', '/api/v1/auth/login').send({ username, password });
    if (res.status !== 200) throw new Error(`login ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.access_token as string;
  }

  async createUser(opts: { username?: string; isAdmin?: boolean; displayName?: string } = {}): Promise<TestUser> {
    const username = opts.username ?? this.unique('user');
    const res = await this.req('post', '/api/v1/users', this.adminToken).send({
      username,
      password: DEFAULT_PASSWORD,
      display_name: opts.displayName ?? `User ${username}`,
      is_admin: opts.isAdmin ?? false,
    });
    if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
    const token = await this.login(username, DEFAULT_PASSWORD);
    return { id: res.body.id as string, username, token };
  }

  async createProject(token = this.adminToken, name = this.unique('Project ')): Promise<string> {
    const res = await this.req('post', '/api/v1/projects', token).send({ name });
    if (res.status !== 201) throw new Error(`create project failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  }

  async addMember(projectId: string, userId: string, role: ProjectRole, token = this.adminToken): Promise<void> {
    const res = await this.req('post', `/api/v1/projects/${projectId}/members`, token).send({ user_id: userId, role });
    if (res.status !== 201) throw new Error(`add member failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  /**
   * `work` in a transaction of its own connection, rolled back afterwards whatever happens: for
   * a migration's `down`/`up` or session settings (`SET LOCAL`) that must leave nothing behind.
   */
  async inRolledBackTransaction<T>(work: (qr: QueryRunner) => Promise<T>): Promise<T> {
    const qr = this.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      try {
        return await work(qr);
      } finally {
        await qr.rollbackTransaction();
      }
    } finally {
      await qr.release();
    }
  }

  /** A project whose lead, tester and viewer are distinct users, plus an outsider with no membership. */
  async roleFixture(): Promise<RoleFixture> {
    const [lead, tester, viewer, outsider] = await Promise.all([
      this.createUser(),
      this.createUser(),
      this.createUser(),
      this.createUser(),
    ]);
    const projectId = await this.createProject(lead.token);
    await this.addMember(projectId, tester.id, 'tester', lead.token);
    await this.addMember(projectId, viewer.id, 'viewer', lead.token);
    return { projectId, lead, tester, viewer, outsider };
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.app.close();
    const state = readState();
    const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${new URL(this.databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
  }
}

/** A new database cloned from the migrated template; returns its URL. */
export async function cloneTemplateDatabase(): Promise<string> {
  const state = readState();
  const name = `${state.template}_f${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${state.template}"`);
  await admin.end();
  return `${state.serverUrl}/${name}`;
}

export interface TestAppOptions {
  /**
   * The URL the application connects with, from its database's URL (a proxy in front of the test
   * PostgreSQL, say). The test's own `t.db` and the cleanup still connect directly.
   */
  connectVia?: (databaseUrl: string) => string;
}

/** Boots the real application (same setupApp as production) on a fresh clone of the template. */
export async function createTestApp(
  env: Record<string, string> = {},
  logStream?: Writable,
  opts: TestAppOptions = {},
): Promise<TestApp> {
  const databaseUrl = await cloneTemplateDatabase();
  const config = loadConfig(
    {
      AUTH_SECRET: TEST_AUTH_SECRET,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      ADMIN_USERNAME: TEST_ADMIN.username,
      ADMIN_PASSWORD: TEST_ADMIN.password,
      // Workers poll the job queue at its fastest so background work is seen within a second.
      JOB_POLL_INTERVAL_SECONDS: '0.5',
      ...env,
    },
    { persistSecret: false },
  );
  const app = await createApp(config, opts.connectVia ? opts.connectVia(databaseUrl) : databaseUrl, logStream);
  // Listen once: supertest then reuses this server instead of opening and closing one per request,
  // which raced (ECONNRESET) under concurrent requests.
  await app.listen(0, '127.0.0.1');
  const db = new DataSource({ type: 'postgres', url: databaseUrl, extra: { max: 3 } });
  await db.initialize();
  const t = new TestApp(app, config, databaseUrl, db);
  t.adminToken = await t.login(TEST_ADMIN.username, TEST_ADMIN.password);
  const me = await t.req('get', '/api/v1/auth/me', t.adminToken);
  t.adminId = me.body.id as string;
  return t;
}

/** Asserts a problem body (CONTRACT §3) and returns it. */
export function expectProblem(res: Response, status: number, code: string): Record<string, unknown> {
  if (res.status !== status || res.body?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, type: expect.stringMatching(new RegExp(`/${code}$`)) });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  expect(typeof res.body.instance).toBe('string');
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
  // CONTRACT §3: `errors` only on validation failures (the 422s).
  if (status !== 422) expect(res.body).not.toHaveProperty('errors');
  return res.body as Record<string, unknown>;
}

export interface RoleMatrixCase {
  method: Method;
  /** URL of the endpoint (may depend on data created for the check). */
  url: string;
  /** Body (fresh for each call) for writing endpoints. */
  body?: () => object;
  minRole: ProjectRole;
  /** Success status of the call made with the minimum role. */
  okStatus: number;
  /** Not-found code answered to non-members. */
  notFoundCode: string;
  /** Attach a multipart file instead of a JSON body. */
  attach?: { field: string; content: Buffer; filename: string };
}

/**
 * The role matrix for one endpoint: no credential → 401, non-member → 404, each role below the
 * minimum → 403, the minimum role → `okStatus`. Returns the successful response.
 */
export async function expectRoleMatrix(t: TestApp, f: RoleFixture, c: RoleMatrixCase): Promise<Response> {
  const send = (token?: string) => {
    let r = t.req(c.method, c.url, token);
    if (c.attach) r = r.attach(c.attach.field, c.attach.content, c.attach.filename);
    else if (c.body) r = r.send(c.body());
    return r;
  };
  expectProblem(await send(), 401, 'unauthorized');
  expectProblem(await send(f.outsider.token), 404, c.notFoundCode);
  const below: ProjectRole[] = c.minRole === 'lead' ? ['viewer', 'tester'] : c.minRole === 'tester' ? ['viewer'] : [];
  for (const role of below) {
    const res = await send(f[role].token);
    expectProblem(res, 403, 'insufficient_project_role');
  }
  const ok = await send(f[c.minRole].token);
  if (ok.status !== c.okStatus) {
    throw new Error(`${c.method.toUpperCase()} ${c.url} as ${c.minRole}: expected ${c.okStatus}, got ${ok.status} ${JSON.stringify(ok.body)}`);
  }
  return ok;
}
