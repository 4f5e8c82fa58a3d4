import { DataSource } from 'typeorm';
import { StallProxy } from '../support/stall-proxy';
import { readState } from '../support/pg-server';
import { createTestApp, expectProblem, TestApp } from '../support/test-app';

/**
 * Fault test (issue #22): the application reaches PostgreSQL through a proxy that can stop forwarding
 * while keeping every connection open (a frozen server, as with SIGSTOP). Every query has a deadline,
 * so requests and /readyz answer 503 `database_unavailable` within seconds instead of hanging, and
 * the instance recovers by itself once the database answers again.
 */

// Small deadlines for this app (the defaults are 30 s / 32 s / 5 s / 5 s / 2 s). Reads outside a
// transaction have the read deadline, well below the query deadline of transactions.
const STATEMENT_MS = 4000;
const QUERY_MS = 5000;
const READ_MS = 1000;
const CONNECT_MS = 1500;
const READINESS_MS = 1000;
/** Slack for a busy test machine on top of a deadline. */
const SLACK_MS = 2000;

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  const value = await work;
  return { value, ms: Date.now() - start };
}

describe('a stalled database (issue #22)', () => {
  let proxy: StallProxy;
  let t: TestApp;

  beforeAll(async () => {
    const server = new URL(readState().serverUrl);
    proxy = await StallProxy.start({ host: server.hostname, port: Number(server.port) });
    t = await createTestApp(
      {
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS),
        DB_QUERY_TIMEOUT_MS: String(QUERY_MS),
        DB_READ_TIMEOUT_MS: String(READ_MS),
        DB_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
        READINESS_TIMEOUT_MS: String(READINESS_MS),
        DB_POOL_SIZE: '3',
      },
      undefined,
      { connectVia: (url) => proxy.urlFor(url) },
    );
  });

  afterAll(async () => {
    proxy.resume();
    await t.close();
    await proxy.close();
  });

  /** The application's sessions as PostgreSQL sees them (through the test's direct connection). */
  async function appSessions(): Promise<Array<{ state: string }>> {
    return t.db.query(
      `SELECT state FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tms-service'`,
    );
  }

  it('answers 503 database_unavailable within the deadlines while stalled, then recovers without a restart', async () => {
    expect((await t.req('get', '/readyz')).body).toEqual({ status: 'ready' });
    // Warm the pool: three reads at once leave three open connections, so that reads during the
    // stall find idle connections (and meet the read deadline) rather than only new ones (which meet
    // the connect deadline).
    const warm = await Promise.all(Array.from({ length: 3 }, () => t.req('get', '/api/v1/projects', t.adminToken)));
    expect(warm.map((r) => r.status)).toEqual([200, 200, 200]);

    // A transaction the stall catches halfway: its first statement ran, the next one never answers.
    const stalledName = t.unique('Stalled ');
    let stalled!: () => void;
    const stallBegun = new Promise<void>((resolve) => (stalled = resolve));
    const transaction = t.app
      .get(DataSource)
      .transaction(async (m) => {
        await m.query(`INSERT INTO projects (id, name) VALUES (gen_random_uuid(), $1)`, [stalledName]);
        proxy.stall();
        stalled();
        await m.query('SELECT 1');
      })
      .then(
        () => 'committed',
        (err: Error) => err.message,
      );
    await stallBegun;

    try {
      // The load balancer's probe: 503 within the readiness deadline, the process itself is up.
      const ready = await timed(t.req('get', '/readyz'));
      expectProblem(ready.value, 503, 'database_unavailable');
      expect(ready.value.headers['retry-after']).toBe('5');
      expect(ready.ms).toBeLessThan(READINESS_MS + SLACK_MS);
      expect((await t.req('get', '/healthz')).status).toBe(200);

      // Authenticated reads, more at once than the pool has connections: those that get a
      // connection hit the read deadline, the others the deadline for a free connection.
      const reads = await Promise.all(
        Array.from({ length: 5 }, () => timed(t.req('get', '/api/v1/projects', t.adminToken))),
      );
      for (const read of reads) {
        const p = expectProblem(read.value, 503, 'database_unavailable');
        expect(p.detail).toMatch(/did not answer in time/);
        expect(read.value.headers['retry-after']).toBe('5');
        expect(read.ms).toBeLessThan(READ_MS + CONNECT_MS + SLACK_MS);
      }
      // A write too (its authentication, a read before the transaction opens, needs the database).
      const write = await timed(t.req('post', '/api/v1/projects', t.adminToken).send({ name: t.unique('During ') }));
      expectProblem(write.value, 503, 'database_unavailable');
      expect(write.ms).toBeLessThan(READ_MS + CONNECT_MS + SLACK_MS);

      // The stalled transaction failed at its query deadline, and its connection was closed rather
      // than handed back to the pool with the transaction still open on the server.
      expect(await transaction).toBe('Query read timeout');
      expect(proxy.counts.closedByAppWhileStalled).toBeGreaterThan(0);
    } finally {
      proxy.resume();
    }

    // Recovery without a restart: poll until ready (bounded), no sleeping.
    const until = Date.now() + 15_000;
    let status = 0;
    while (status !== 200 && Date.now() < until) status = (await t.req('get', '/readyz')).status;
    expect(status).toBe(200);
    expect((await t.req('get', '/api/v1/projects', t.adminToken)).status).toBe(200);
    const created = await t.req('post', '/api/v1/projects', t.adminToken).send({ name: t.unique('After ') });
    expect(created.status).toBe(201);

    // No session of the application was left inside the stalled transaction, and its first
    // statement was rolled back: nothing a later request committed carried it along.
    expect((await appSessions()).filter((s) => s.state === 'idle in transaction')).toEqual([]);
    expect(await t.db.query(`SELECT 1 FROM projects WHERE name = $1`, [stalledName])).toEqual([]);
  });

  it('answers 503 database_unavailable when a statement outlives DB_STATEMENT_TIMEOUT_MS (server side)', async () => {
    const ds = t.app.get(DataSource);
    const outcome = await timed(
      ds.query(`SELECT pg_sleep($1)`, [(STATEMENT_MS + 1000) / 1000]).then(
        () => 'finished',
        (err: { driverError?: { code?: string } }) => err.driverError?.code,
      ),
    );
    expect(outcome.value).toBe('57014');
    expect(outcome.ms).toBeLessThan(QUERY_MS);
    // The connection stays usable: the server cancelled the statement, the session goes on.
    expect((await t.req('get', '/readyz')).status).toBe(200);
  });
});
