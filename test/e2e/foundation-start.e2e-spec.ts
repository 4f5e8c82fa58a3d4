import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMain, waitForMain } from '../support/main-process';
import { freePort } from '../support/pg-server';

function call(
  port: number,
  method: string,
  path: string,
  body?: string,
): { done: Promise<{ status: number; text: string }>; req: http.ClientRequest } {
  let req!: http.ClientRequest;
  const done = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req = http.request(
      {
        port,
        host: '127.0.0.1',
        method,
        path,
        headers: body
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
          : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
  });
  // Without a body the request is complete; a body is written by the caller.
  if (body === undefined) req.end();
  return { done, req };
}

/**
 * `npm start` as the issue describes it: embedded PostgreSQL under DATA_DIR, migrations, the
 * bootstrap administrator printed once, /readyz 200, and a graceful SIGTERM that answers the request
 * in flight, then stops the database and exits 0. Also: a bad setting stops the start naming it.
 */
describe('foundation: the service process (src/main.ts)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('refuses a bad configuration with a message naming the variable', async () => {
    const s = startMain({ PORT: 'eighty', DATA_DIR: mkdtempSync(join(tmpdir(), 'tms-start-')) });
    expect(await s.exited).toBe(1);
    expect(s.output()).toMatch(/Configuration error: PORT must be a whole number/);
    const t = startMain({ DATABASE_URL: 'postgres://u@127.0.0.1:1/x' });
    expect(await t.exited).toBe(1);
    expect(t.output()).toMatch(/AUTH_SECRET is required when DATABASE_URL is set/);
  });

  it('starts with the embedded database, serves, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tms-start-'));
    dirs.push(dataDir);
    const [port, pgPort] = [await freePort(), await freePort()];
    const s = startMain({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
    });
    try {
      await waitForMain(s, () => s.output().includes('Listening on'), 150_000, 'the service');
      const password = /generated password: (\S+)/.exec(s.output())?.[1];
      expect(password).toBeDefined();
      expect((await call(port, 'GET', '/readyz').done).status).toBe(200);

      // A login whose body is still arriving when SIGTERM comes is answered in full.
      const body = JSON.stringify({ username: 'admin', password });
      const inflight = call(port, 'POST', '/api/v1/auth/login', body);
      inflight.req.write(body.slice(0, 5));
      // Deliberate delay: the child process gives no sign that it has read the request head, and
      // SIGTERM must come after that (a connection with no request yet is closed as idle).
      await new Promise((r) => setTimeout(r, 300));
      s.child.kill('SIGTERM');
      await waitForMain(s, () => s.output().includes('SIGTERM received'), 10_000, 'the signal');
      inflight.req.end(body.slice(5));
      const answer = await inflight.done;
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).token_type).toBe('Bearer');
      expect(await s.exited).toBe(0);
      expect(s.output()).toContain('Stopped');
    } finally {
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
    }
    // The embedded database was stopped: a second start on the same DATA_DIR works and keeps the
    // administrator (no new password is printed).
    // PORT=0 picks a free port, and the boot log says which (it said 0: found by an audit).
    const again = startMain({
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
    });
    try {
      await waitForMain(
        again,
        () => again.output().includes('Listening on'),
        150_000,
        'the restart',
      );
      expect(again.output()).not.toContain('generated password');
      const bound = Number(/Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(again.output())?.[1]);
      expect(bound).toBeGreaterThan(0);
      expect((await call(bound, 'GET', '/readyz').done).status).toBe(200);
      again.child.kill('SIGINT');
      expect(await again.exited).toBe(0);
    } finally {
      if (again.child.exitCode === null) again.child.kill('SIGKILL');
    }
  }, 400_000);
});
