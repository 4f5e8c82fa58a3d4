import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { JobQueue } from '../../src/common/jobs/job-queue.service';
import { WEBHOOK_DELIVERY_QUEUE } from '../../src/modules/webhooks/webhook-events.service';
import { readState } from '../support/pg-server';
import { createTestApp, TestApp } from '../support/test-app';
import { settledFlag, waitFor } from '../support/wait-for';

const API = '/api/v1';

/**
 * Graceful shutdown (main.ts calls `app.close()` on SIGTERM): the job queue's workers stop first,
 * then the HTTP server drains its in-flight requests, then the pool closes. A request still running
 * when the workers stopped may queue work (a webhook event's deliveries) and must commit it.
 */
describe('shutdown: requests in flight keep queueing work', () => {
  let t: TestApp;
  let locker: Client | null = null;
  let closing: Promise<void> | null = null;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  });

  afterAll(async () => {
    if (locker !== null) await locker.end().catch(() => undefined);
    await (closing ?? t.app.close()).catch(() => undefined);
    await t.db.destroy();
    const admin = new Client({ connectionString: `${readState().serverUrl}/postgres` });
    await admin.connect();
    try {
      const name = new URL(t.databaseUrl).pathname.slice(1);
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  it('a PATCH blocked on a row lock when the app starts closing answers 200 with its event and jobs stored', async () => {
    const projectId = await t.createProject();
    const wh = await t
      .req('post', `${API}/projects/${projectId}/webhooks`, t.adminToken)
      .send({ url: 'http://127.0.0.1:9/hook', events: ['test_run.status_changed'] });
    expect(wh.status).toBe(201);
    const run = await t
      .req('post', `${API}/test-runs`, t.adminToken)
      .send({ project_id: projectId, name: 'r' });
    expect(run.status).toBe(201);
    const runId = run.body.id as string;

    // Another session holds the run's row: the PATCH waits on it, in flight.
    locker = new Client({ connectionString: t.databaseUrl });
    await locker.connect();
    await locker.query('BEGIN');
    const [{ pid }] = (await locker.query('SELECT pg_backend_pid() AS pid')).rows as Array<{
      pid: number;
    }>;
    await locker.query('SELECT 1 FROM test_runs WHERE id = $1 FOR UPDATE', [runId]);
    const patch = t
      .req('patch', `${API}/test-runs/${runId}`, t.adminToken)
      .send({ status: 'in_progress' })
      .then((r) => r);
    await waitFor(
      async () =>
        (
          (await t.db.query(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
            [pid],
          )) as Array<{ n: number }>
        )[0].n > 0,
      { what: 'the PATCH to wait on the row lock' },
    );

    // SIGTERM: main.ts calls app.close(). The HTTP server stops listening only once the job
    // queue's workers have stopped (Nest runs beforeApplicationShutdown first), and then waits for
    // the PATCH.
    const server = t.app.getHttpServer() as Server;
    closing = t.app.close();
    const closed = settledFlag(closing);
    await waitFor(() => !server.listening, { what: 'the HTTP server to stop listening' });
    expect(closed()).toBe(false);

    // The queue still takes jobs outside a transaction too (a handler's or a draining request's
    // own), until the pool closes.
    const direct = await t.app
      .get(JobQueue)
      .send(WEBHOOK_DELIVERY_QUEUE, { delivery_id: randomUUID() })
      .then(
        (id) => ({ id }),
        (err: Error) => ({ error: err.message }),
      );

    await locker.query('COMMIT');
    await locker.end();
    locker = null;
    const res = await patch;
    expect([res.status, res.body.status]).toEqual([200, 'in_progress']);
    await closing;

    const events = (await t.db.query(
      `SELECT id FROM webhook_events WHERE project_id = $1 AND type = 'test_run.status_changed'`,
      [projectId],
    )) as Array<{ id: string }>;
    expect(events).toHaveLength(1);
    const jobs = (await t.db.query(
      `SELECT d.id FROM webhook_deliveries d
         JOIN pgboss.job j ON j.name = $2 AND j.id = d.id
        WHERE d.event_id = $1`,
      [events[0].id, WEBHOOK_DELIVERY_QUEUE],
    )) as Array<{ id: string }>;
    expect(jobs).toHaveLength(1);
    expect(direct).toEqual({ id: expect.any(String) });
    const directJob = (await t.db.query('SELECT 1 FROM pgboss.job WHERE name = $1 AND id = $2', [
      WEBHOOK_DELIVERY_QUEUE,
      'id' in direct ? direct.id : null,
    ])) as unknown[];
    expect(directJob).toHaveLength(1);
  });
});
