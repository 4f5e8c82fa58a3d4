import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { Client } from 'pg';
import { EXAMPLE_AUTH_SECRETS } from '../../src/config/config';
import { MetricsServer } from '../../src/modules/health/metrics.server';
import { TEST_ADMIN } from '../support/constants';
import { startMain, waitForMain } from '../support/main-process';
import { freePort, readState } from '../support/pg-server';
import { createTestApp, expectProblem } from '../support/test-app';

/**
 * Issue #24 item 1: no publicly known secret signs tokens, secrets can come from files (Docker
 * secrets), and Prometheus metrics have their own port, never the API's.
 */
describe('operations: secrets and the metrics exposure', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each([
    ['a secret shorter than 32 bytes', 'short-secret-31-bytes-long-xxxx', /AUTH_SECRET must be at least 32 bytes long, got 31/],
    ['15 two-byte characters (30 bytes: counted in bytes)', 'é'.repeat(15), /AUTH_SECRET must be at least 32 bytes long, got 30/],
    ['the example value of the old docker-compose.yml', EXAMPLE_AUTH_SECRETS[0], /AUTH_SECRET is an example value/],
  ])('the service refuses to start with %s', async (_label, secret, message) => {
    const s = startMain({ DATABASE_URL: 'postgres://u@127.0.0.1:1/x', AUTH_SECRET: secret });
    expect(await s.exited).toBe(1);
    expect(s.output()).toMatch(message);
    // One JSON log line (issue #24 §3), at fatal.
    expect(s.output()).toMatch(/^\{"level":60,.*"msg":"Configuration error: /m);
    // The refused value itself is never printed.
    expect(s.output()).not.toContain(secret);
  });

  it('refuses an unreadable *_FILE naming the variable, and both a variable and its *_FILE', async () => {
    const a = startMain({ DATABASE_URL: 'postgres://u@127.0.0.1:1/x', AUTH_SECRET_FILE: '/nonexistent/secret' });
    expect(await a.exited).toBe(1);
    expect(a.output()).toMatch(/Configuration error: AUTH_SECRET_FILE: cannot read the file \/nonexistent\/secret \(ENOENT\)/);
    const dir = mkdtempSync(join(tmpdir(), 'tms-secret-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'secret'), 'y'.repeat(40));
    const b = startMain({ DATABASE_URL: 'postgres://u@127.0.0.1:1/x', AUTH_SECRET: 'x'.repeat(40), AUTH_SECRET_FILE: join(dir, 'secret') });
    expect(await b.exited).toBe(1);
    expect(b.output()).toMatch(/Configuration error: Set either AUTH_SECRET or AUTH_SECRET_FILE, not both/);
    expect(b.output()).not.toContain('y'.repeat(40));
  });

  it('boots with AUTH_SECRET_FILE and DATABASE_URL_FILE, signs with the file secret, metrics only on METRICS_PORT', async () => {
    const state = readState();
    const database = `${state.template}_s${randomBytes(5).toString('hex')}`;
    const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}" TEMPLATE "${state.template}"`);
    const dir = mkdtempSync(join(tmpdir(), 'tms-secret-'));
    dirs.push(dir);
    const secret = randomBytes(48).toString('base64');
    // Docker secrets and `echo > file` end with a newline: one is removed.
    writeFileSync(join(dir, 'auth_secret'), `${secret}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'database_url'), `${state.serverUrl}/${database}\n`, { mode: 0o600 });
    const [port, metricsPort] = [await freePort(), await freePort()];
    const s = startMain({
      AUTH_SECRET_FILE: join(dir, 'auth_secret'),
      DATABASE_URL_FILE: join(dir, 'database_url'),
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    try {
      await waitForMain(s, () => s.output().includes('Listening on'), 60_000, 'the service');
      const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(TEST_ADMIN),
      });
      expect(login.status).toBe(200);
      const { access_token } = (await login.json()) as { access_token: string };
      expect(() => jwt.verify(access_token, secret, { algorithms: ['HS256'] })).not.toThrow();

      const onApi = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(onApi.status).toBe(404);
      expect(((await onApi.json()) as { code: string }).code).toBe('route_not_found');
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/http_requests_total\{method="POST",route="\/api\/v1\/auth\/login",status="200"\} 1/);
      expect(s.output()).not.toContain(secret);

      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
      // The metrics server closed with the application.
      await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
    } finally {
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('metrics: off by default, bound to 127.0.0.1 when METRICS_PORT is set, closed with the app', async () => {
    const off = await createTestApp();
    try {
      expect(off.app.get(MetricsServer).address()).toBeNull();
      expectProblem(await off.req('get', '/metrics'), 404, 'route_not_found');
    } finally {
      await off.close();
    }
    const t = await createTestApp({ METRICS_PORT: '0' });
    const address = t.app.get(MetricsServer).address();
    try {
      expect(address).toMatchObject({ address: '127.0.0.1' });
      await t.req('get', '/healthz');
      const res = await fetch(`http://127.0.0.1:${address!.port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toContain('http_request_duration_seconds_bucket');
      expect((await fetch(`http://127.0.0.1:${address!.port}/api/v1/auth/me`)).status).toBe(404);
      expectProblem(await t.req('get', '/metrics'), 404, 'route_not_found');
    } finally {
      await t.close();
    }
    await expect(fetch(`http://127.0.0.1:${address!.port}/metrics`)).rejects.toThrow();
  });
});
