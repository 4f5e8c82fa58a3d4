import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JOB_QUEUE_SCHEMA } from '../../src/common/jobs/job-queue.constants';
import { WebhookAttemptsUnique1763700019960 } from '../../src/database/migrations/1763700019960-WebhookAttemptsUnique';
import {
  NOT_COMPLETED_ABANDONED,
  NOT_COMPLETED_FAILED,
} from '../../src/modules/webhooks/webhook-delivery.worker';
import { WEBHOOK_DELIVERY_QUEUE } from '../../src/modules/webhooks/webhook-events.service';
import { createTestApp, TestApp } from '../support/test-app';
import { logCapture } from '../support/log-capture';
import { backendPid, settledFlag, waitFor } from '../support/wait-for';

/**
 * The delivery log under concurrency and failures of the service itself: attempt numbers stay
 * unique and increasing when redeliveries and automatic retries interleave, automatic retries
 * count automatic attempts only, and an attempt whose job fails for good (a database error, a
 * worker gone) ends `failed` with its reason instead of staying `pending`.
 *
 * WEBHOOK_RETRY_BASE_SECONDS is an hour: a scheduled retry waits until a test moves its job's
 * start time to now ({@link TestJobs.fastForward}), as the passage of time would; the job queue's
 * own retries of a failed job (5 s, 10 s, 20 s) are moved the same way.
 */

const API = '/api/v1';
const DEAD_QUEUE = `${WEBHOOK_DELIVERY_QUEUE}-dead`;
const MAX_ATTEMPTS = 3;
// Free-form JSON bodies, read field by field in assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A real receiver on 127.0.0.1: counts requests per path, answers 500 on paths listed as down. */
class Receiver {
  readonly hits = new Map<string, number>();
  readonly down = new Set<string>();
  private server!: Server;
  private port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '';
        this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
        res.writeHead(this.down.has(path) ? 500 : 200, { 'content-type': 'text/plain' });
        res.end(this.down.has(path) ? 'down' : 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }
}

describe('Webhook deliveries: attempt numbers and attempts that fail inside the service', () => {
  let t: TestApp;
  let projectId: string;
  const receiver = new Receiver();
  const { lines: logLines, sink } = logCapture();

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp(
      {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        WEBHOOK_RETRY_BASE_SECONDS: '3600',
        LOG_LEVEL: 'warn',
      },
      sink,
    );
    projectId = await t.createProject();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  async function subscribe(path: string, events: string[]): Promise<string> {
    const res = await t
      .req('post', `${API}/projects/${projectId}/webhooks`, t.adminToken)
      .send({ url: receiver.url(path), events });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function createRun(name: string): Promise<void> {
    const res = await t
      .req('post', `${API}/test-runs`, t.adminToken)
      .send({ project_id: projectId, name });
    expect(res.status).toBe(201);
  }

  /** The subscription's log, newest first. */
  async function log(webhookId: string): Promise<Json[]> {
    const res = await t
      .req('get', `${API}/webhooks/${webhookId}/deliveries?page_size=100`, t.adminToken)
      .expect(200);
    return res.body.items as Json[];
  }

  /**
   * Moves the due time of the subscription's waiting jobs to now: the job queue's retries of failed
   * jobs and dead-letter jobs, and (`scheduled`) the service's scheduled retries too.
   */
  async function fastForward(webhookId: string, scheduled: boolean): Promise<void> {
    await t.db.query(
      `UPDATE ${JOB_QUEUE_SCHEMA}.job SET start_after = now()
        WHERE name IN ($2, $3) AND state IN ('created', 'retry') AND start_after > now()
          AND (state = 'retry' OR name = $3 OR $4)
          AND data->>'delivery_id' IN (SELECT id::text FROM webhook_deliveries WHERE webhook_id = $1)`,
      [webhookId, WEBHOOK_DELIVERY_QUEUE, DEAD_QUEUE, scheduled],
    );
  }

  /**
   * Waits until the log has `n` attempts and none is pending, moving every waiting job of the
   * subscription along meanwhile.
   */
  async function settled(webhookId: string, n: number): Promise<Json[]> {
    let items: Json[] = [];
    await waitFor(
      async () => {
        items = await log(webhookId);
        if (items.length >= n && items.every((d) => d.status !== 'pending')) return true;
        await fastForward(webhookId, true);
        return false;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `${n} settled attempts of ${webhookId}` },
    );
    return items;
  }

  /**
   * Waits until attempt `deliveryId` is no longer pending, or until its job has failed for good
   * and no dead-letter job of it is left to run (so that nothing will ever change it again).
   * Moves the job queue's retries along meanwhile (not the service's scheduled retries).
   */
  async function ended(webhookId: string, deliveryId: string): Promise<void> {
    await waitFor(
      async () => {
        const [row] = (await t.db.query(
          `SELECT d.status,
                  (SELECT state::text FROM ${JOB_QUEUE_SCHEMA}.job WHERE name = $2 AND id = d.id) AS job,
                  (SELECT count(*)::int FROM ${JOB_QUEUE_SCHEMA}.job
                    WHERE name = $3 AND data->>'delivery_id' = d.id::text
                      AND state NOT IN ('completed', 'cancelled', 'failed')) AS dead_left
             FROM webhook_deliveries d WHERE d.id = $1`,
          [deliveryId, WEBHOOK_DELIVERY_QUEUE, DEAD_QUEUE],
        )) as Json[];
        if (row.status !== 'pending' || (row.job === 'failed' && row.dead_left === 0)) return true;
        await fastForward(webhookId, false);
        return false;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `attempt ${deliveryId} to end` },
    );
  }

  /** Sessions of this database waiting for a lock. */
  async function lockWaiters(): Promise<number> {
    const [row] = (await t.db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0`,
    )) as Json[];
    return row.n as number;
  }

  /** A trigger refusing the updates of `webhook_deliveries` that match `condition` (a SQL test on NEW). */
  async function refuseRecording(name: string, condition: string): Promise<() => Promise<void>> {
    await t.db.query(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${condition} THEN RAISE EXCEPTION 'recording refused (test)'; END IF;
        RETURN NEW;
      END $$`);
    await t.db.query(
      `CREATE TRIGGER ${name} BEFORE UPDATE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION ${name}()`,
    );
    return async () => {
      await t.db.query(`DROP TRIGGER ${name} ON webhook_deliveries`);
      await t.db.query(`DROP FUNCTION ${name}()`);
    };
  }

  function numbersOf(items: Json[]): Array<[number, string, string]> {
    return items
      .map((d): [number, string, string] => [
        d.attempt as number,
        d.trigger as string,
        d.status as string,
      ])
      .sort((a, b) => a[0] - b[0]);
  }

  it('numbers a redelivery made while an automatic retry is pending apart from that retry; retries count automatic attempts only', async () => {
    const path = '/sequence';
    receiver.down.add(path);
    const webhookId = await subscribe(path, ['test_run.created']);
    await createRun('sequence');
    // The first attempt fails; its retry (attempt 2) waits its hour.
    await waitFor(async () => (await log(webhookId)).length === 2, { what: 'the scheduled retry' });
    const [retry, first] = await log(webhookId);
    expect([first.attempt, first.status, retry.attempt, retry.trigger, retry.status]).toEqual([
      1,
      'failed',
      2,
      'retry',
      'pending',
    ]);
    const again = await t
      .req(
        'post',
        `${API}/webhooks/${webhookId}/deliveries/${first.id as string}/redeliver`,
        t.adminToken,
      )
      .expect(202);
    expect(again.body).toMatchObject({ attempt: 3, trigger: 'redeliver', status: 'pending' });
    // The retry runs, fails, and schedules the last automatic attempt (WEBHOOK_MAX_ATTEMPTS = 3):
    // the redelivery neither took its number nor used it up.
    const items = await settled(webhookId, 4);
    expect(numbersOf(items)).toEqual([
      [1, 'event', 'failed'],
      [2, 'retry', 'failed'],
      [3, 'redeliver', 'failed'],
      [4, 'retry', 'failed'],
    ]);
    expect(items.find((d) => d.attempt === 4)?.next_attempt_at).toBeNull();
    // The automatic attempts are spent; a redelivery is still sent.
    const last = await t
      .req(
        'post',
        `${API}/webhooks/${webhookId}/deliveries/${first.id as string}/redeliver`,
        t.adminToken,
      )
      .expect(202);
    expect(last.body).toMatchObject({ attempt: 5, trigger: 'redeliver' });
    expect(numbersOf(await settled(webhookId, 5))[4]).toEqual([5, 'redeliver', 'failed']);
    expect(receiver.hits.get(path)).toBe(5);
  });

  it('numbers a redelivery and an automatic retry recorded at the same time apart', async () => {
    const path = '/race';
    receiver.down.add(path);
    const webhookId = await subscribe(path, ['test_run.created']);
    await createRun('race');
    await waitFor(async () => (await log(webhookId)).length === 2, { what: 'the scheduled retry' });
    const [, first] = await log(webhookId);
    const qr = t.db.createQueryRunner();
    await qr.connect();
    let redelivered: Promise<{ status: number; body: Json }> | null = null;
    try {
      await qr.startTransaction();
      // What the worker holds while it records an attempt of this subscription.
      await qr.query(`SELECT id FROM webhooks WHERE id = $1 FOR NO KEY UPDATE`, [webhookId]);
      const pid = await backendPid(qr);
      // The retry (attempt 2) is sent now and fails; recording it waits for the open transaction.
      await fastForward(webhookId, true);
      await waitFor(async () => (await lockWaiters()) >= 1, {
        what: 'the worker to wait',
        timeoutMs: 15_000,
      });
      // A redelivery meanwhile: it waits as well (or, without a lock, answers at once).
      const pending = t
        .req(
          'post',
          `${API}/webhooks/${webhookId}/deliveries/${first.id as string}/redeliver`,
          t.adminToken,
        )
        .then((res) => ({ status: res.status, body: res.body as Json }));
      redelivered = pending;
      const done = settledFlag(pending);
      await waitFor(async () => done() || (await lockWaiters()) >= 2, {
        what: `the redelivery to wait for ${pid} or answer`,
      });
    } finally {
      await qr.commitTransaction();
      await qr.release();
    }
    const res = await redelivered;
    expect(res?.status).toBe(202);
    const items = await settled(webhookId, 4);
    const numbers = numbersOf(items);
    expect(numbers.map(([n]) => n)).toEqual([1, 2, 3, 4]);
    expect(numbers.map(([, trigger]) => trigger).sort()).toEqual([
      'event',
      'redeliver',
      'retry',
      'retry',
    ]);
    expect(numbers.every(([, , status]) => status === 'failed')).toBe(true);
  });

  it('ends an attempt whose outcome cannot be recorded failed, with the reason, after the job queue gave up', async () => {
    const path = '/unrecorded';
    const webhookId = await subscribe(path, ['test_run.created']);
    // A database error while recording: the receiver answers 200, recording it fails every time.
    const drop = await refuseRecording(
      'test_refuse_success',
      `NEW.webhook_id = '${webhookId}' AND NEW.status = 'succeeded'`,
    );
    try {
      const ping = await t
        .req('post', `${API}/webhooks/${webhookId}/ping`, t.adminToken)
        .expect(202);
      await ended(webhookId, ping.body.id as string);
      const [attempt] = await log(webhookId);
      expect(attempt).toMatchObject({
        id: ping.body.id,
        trigger: 'ping',
        status: 'failed',
        response_status: null,
        next_attempt_at: null,
      });
      // The log shows why in general terms; the service's log has the database's message.
      expect(attempt.error).toBe(NOT_COMPLETED_FAILED);
      expect(
        logLines.some(
          (l) => l.includes(ping.body.id as string) && l.includes('recording refused (test)'),
        ),
      ).toBe(true);
      // The job was run once and retried three times by the queue: the receiver may have it.
      expect(receiver.hits.get(path)).toBe(4);
      // A failure of the service is not the receiver's: it does not count towards disabling.
      const sub = await t.req('get', `${API}/webhooks/${webhookId}`, t.adminToken).expect(200);
      expect(sub.body).toMatchObject({ active: true, consecutive_failures: 0 });
    } finally {
      await drop();
    }
  });

  it("ends an attempt failed through the dead-letter queue when even the job's last try cannot record it, and retries the event", async () => {
    const path = '/dead-letter';
    const webhookId = await subscribe(path, ['test_run.created']);
    // The database refuses every recording of the event's first attempt while its job runs (the
    // last try's own attempt to record the failure included): only the dead-letter job, which runs
    // once the job has failed for good, gets through.
    const drop = await refuseRecording(
      'test_refuse_while_running',
      `NEW.webhook_id = '${webhookId}' AND NEW.trigger = 'event' AND NEW.status <> 'pending'
         AND EXISTS (SELECT 1 FROM ${JOB_QUEUE_SCHEMA}.job j
                      WHERE j.name = '${WEBHOOK_DELIVERY_QUEUE}' AND j.id = NEW.id AND j.state = 'active')`,
    );
    try {
      await createRun('dead letter');
      await waitFor(async () => (await log(webhookId)).length === 1, { what: 'the first attempt' });
      const [first] = await log(webhookId);
      await ended(webhookId, first.id as string);
      const [retry, failed] = await log(webhookId);
      expect(failed).toMatchObject({
        id: first.id,
        attempt: 1,
        trigger: 'event',
        status: 'failed',
      });
      expect(failed.error).toBe(NOT_COMPLETED_ABANDONED);
      expect(failed.next_attempt_at).not.toBeNull();
      expect(retry).toMatchObject({ attempt: 2, trigger: 'retry', status: 'pending' });
      const sub = await t.req('get', `${API}/webhooks/${webhookId}`, t.adminToken).expect(200);
      expect(sub.body.consecutive_failures).toBe(0);
      // The retry is sent (and recorded) like any other.
      const items = await settled(webhookId, 2);
      expect(numbersOf(items)).toEqual([
        [1, 'event', 'failed'],
        [2, 'retry', 'succeeded'],
      ]);
    } finally {
      await drop();
    }
  });

  it('migration WebhookAttemptsUnique renumbers attempts that shared a number, keeping every row', async () => {
    const webhookId = await subscribe('/migration', ['test_run.created']);
    const ping = await t.req('post', `${API}/webhooks/${webhookId}/ping`, t.adminToken).expect(202);
    await settled(webhookId, 1);
    const migration = new WebhookAttemptsUnique1763700019960();
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await migration.down(qr);
      // What the defect left: a redelivery and a retry both numbered 2, then a 3.
      await qr.query(
        `INSERT INTO webhook_deliveries (id, project_id, webhook_id, event_id, attempt, trigger, status, created_at)
         SELECT gen_random_uuid(), project_id, webhook_id, event_id, a.attempt, a.trigger, 'failed',
                created_at + a.later * interval '1 minute'
           FROM webhook_deliveries, (VALUES (2, 'redeliver', 1), (2, 'retry', 2), (3, 'retry', 3))
                AS a(attempt, trigger, later)
          WHERE id = $1`,
        [ping.body.id],
      );
      await migration.up(qr);
    } finally {
      await qr.release();
    }
    const items = await log(webhookId);
    expect(numbersOf(items)).toEqual([
      [1, 'ping', 'succeeded'],
      [2, 'redeliver', 'failed'],
      [3, 'retry', 'failed'],
      [4, 'retry', 'failed'],
    ]);
    const [index] = (await t.db.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'uq_webhook_deliveries_attempt'`,
    )) as Json[];
    expect(index.indexdef).toContain('UNIQUE');
  });
});
