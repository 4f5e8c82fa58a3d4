import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { JOB_QUEUE_SCHEMA } from '../../src/common/jobs/job-queue.constants';
import { ImportJobHooks, ImportJobRunner } from '../../src/modules/imports/import-job';
import { IMPORT_JOB } from '../../src/modules/imports/imports.service';
import { importHelpers } from '../support/import-fixture';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { waitFor, waitUntilBlockedOrDone } from '../support/wait-for';

/**
 * Issue #18 §3, end to end: `Prefer: respond-async` answers 202 with the queued import record; the
 * stored upload is applied by a job on any instance, all or nothing and once, in one transaction
 * that also marks it succeeded; an instance killed mid-import leaves nothing applied and another
 * instance completes the job.
 *
 * The app under test (`t`) runs no workers (JOB_WORKERS=false): it only answers requests and
 * enqueues, so an import stays `queued` until a test starts a worker instance on the same database.
 */
describe('JUnit import: background imports (issue #18 §3)', () => {
  let t: TestApp;
  let f: RoleFixture;
  const { newProject, createRun, snapshot } = importHelpers(() => ({ t, f }));
  const workers: INestApplication[] = [];

  beforeAll(async () => {
    // Webhooks may point at this host (the import.failed event; deliveries themselves are not checked).
    t = await createTestApp({ JOB_WORKERS: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
    f = await t.roleFixture();
  });
  afterAll(async () => {
    for (const w of workers.splice(0)) await w.close();
    await t.close();
  });

  /** Another instance on the same database that runs jobs. */
  /** A worker instance (JOB_WORKERS=true) of `of`'s configuration and database, kept in `list`. */
  async function workerOf(of: TestApp, list: INestApplication[]): Promise<INestApplication> {
    const app = await createApp(
      { ...of.config, jobs: { ...of.config.jobs, workers: true } },
      of.databaseUrl,
    );
    await app.init();
    list.push(app);
    return app;
  }
  function startWorker(): Promise<INestApplication> {
    return workerOf(t, workers);
  }
  async function stopWorker(app: INestApplication): Promise<void> {
    workers.splice(workers.indexOf(app), 1);
    await app.close();
  }

  const xml = (suite: string, n: number, failing = 0): Buffer =>
    Buffer.from(
      `<testsuite name="${suite}">${Array.from({ length: n }, (_, i) =>
        i < failing
          ? `<testcase classname="${suite}" name="t${i}"><failure message="m"/></testcase>`
          : `<testcase classname="${suite}" name="t${i}"/>`,
      ).join('')}</testsuite>`,
    );
  const runUrl = (runId: string, query = '?create_missing_cases=true'): string =>
    `/api/v1/test-runs/${runId}/imports/junit${query}`;
  const enqueue = (url: string, files: Array<[Buffer, string]>, token = f.tester.token) => {
    let r = t.req('post', url, token).set('Prefer', 'respond-async');
    for (const [content, name] of files) r = r.attach('file', content, name);
    return r;
  };
  const getImport = (id: string, token = f.viewer.token) =>
    t.req('get', `/api/v1/imports/${id}`, token);
  /** A response body (supertest's bodies are untyped JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Json = Record<string, any>;
  async function finished(id: string, timeoutMs = 20_000): Promise<Json> {
    let body: Json = {};
    await waitFor(
      async () => {
        body = (await getImport(id)).body;
        return body.status === 'succeeded' || body.status === 'failed';
      },
      { timeoutMs, intervalMs: 100, what: `import ${id} to end` },
    );
    return body;
  }
  async function storedChunks(id: string): Promise<{ chunks: number; bytes: number }> {
    const [row] = await t.db.query(
      `SELECT count(*)::int AS chunks, coalesce(sum(length(data)), 0)::int AS bytes
         FROM import_uploads WHERE import_id = $1`,
      [id],
    );
    return row;
  }
  /** Each row of the run executed exactly once; the run's counters. */
  async function applied(
    runId: string,
  ): Promise<{ items: number; executions: number[]; total: number }> {
    const rows = await t.db.query(
      `SELECT w.execution_count FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
        WHERE ri.test_run_id = $1`,
      [runId],
    );
    const [run] = await t.db.query(
      `SELECT (SELECT count(*) FROM run_items WHERE test_run_id = $1)::int AS items`,
      [runId],
    );
    return {
      items: run.items,
      executions: [
        ...new Set<number>(rows.map((r: { execution_count: number }) => r.execution_count)),
      ],
      total: rows.length,
    };
  }

  describe('queued (no worker running)', () => {
    // Found by an audit: chunk writes still running when the form was refused landed after the
    // Idempotency-Key's savepoint rollback, and the commit failed on their foreign key (409).
    it('refuses a form with an unknown part after a large file with 422, leaving nothing, with Idempotency-Key too', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const big = Buffer.concat([
        Buffer.from('<testsuite name="big">'),
        Buffer.alloc(6 * 1024 * 1024, ' '),
        Buffer.from('</testsuite>'),
      ]);
      const send = () =>
        t
          .req('post', runUrl(runId), f.tester.token)
          .set('Prefer', 'respond-async')
          .set('Idempotency-Key', `extra-${runId}`)
          .attach('file', big, 'a.xml')
          .attach('other', xml('b', 1), 'b.xml');
      const first = await send();
      expect(expectProblem(first, 422, 'validation_error').errors).toHaveProperty('other');
      // A refused form is the body's validation (as a JSON body's 422): not stored under the key,
      // so the same form is checked, and refused, again.
      const again = await send();
      expect(expectProblem(again, 422, 'validation_error').errors).toHaveProperty('other');
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      const [left] = await t.db.query(
        `SELECT (SELECT count(*) FROM import_uploads WHERE project_id = $1)::int AS chunks,
                (SELECT count(*) FROM junit_imports WHERE project_id = $1)::int AS imports`,
        [projectId],
      );
      expect(left).toEqual({ chunks: 0, imports: 0 });
    });

    it('answers 202 with Location, Preference-Applied and the queued record; stores the upload in PostgreSQL', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const a = xml('alpha', 3);
      const res = await enqueue(runUrl(runId), [[a, 'TEST-alpha.xml']]);
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      expect(res.headers.location).toBe(`/api/v1/imports/${id}`);
      expect(res.headers['preference-applied']).toBe('respond-async');
      expect(res.body).toMatchObject({
        id,
        project_id: projectId,
        test_run_id: runId,
        status: 'queued',
        progress: { processed: 0, total: null },
        source_filename: 'TEST-alpha.xml',
        size_bytes: a.length,
        started_at: null,
        finished_at: null,
        summary: null,
        result: null,
        problem: null,
      });
      const again = await getImport(id);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
      expect(await storedChunks(id)).toEqual({ chunks: 1, bytes: a.length });
      // Nothing applied, and the run's list shows only imports that succeeded.
      const now = await snapshot(projectId, runId);
      expect({ ...now, imports: before.imports }).toEqual(before);
      const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
      expect(list.body.total).toBe(0);
    });

    it('checks the role, the run state, the form and the limits before answering 202', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const a = xml('alpha', 1);
      expectProblem(
        await enqueue(runUrl(runId), [[a, 'a.xml']], f.viewer.token),
        403,
        'insufficient_project_role',
      );
      const badField = await t
        .req('post', runUrl(runId), f.tester.token)
        .set('Prefer', 'respond-async')
        .field('mode', 'x')
        .attach('file', a, 'a.xml');
      expectProblem(badField, 422, 'validation_error');
      const dryForm = await t
        .req('post', runUrl(runId), f.tester.token)
        .set('Prefer', 'respond-async')
        .field('dry_run', 'true')
        .attach('file', a, 'a.xml');
      expect(expectProblem(dryForm, 422, 'validation_error').errors).toHaveProperty(['dry_run']);
      // A dry run in the query: the preference is ignored, the preview answered at once.
      const dry = await enqueue(runUrl(runId, '?dry_run=true'), [[a, 'a.xml']]);
      expect(dry.status).toBe(201);
      expect(dry.body.status).toBe('preview');
      expect(dry.headers['preference-applied']).toBeUndefined();
      await t.db.query(`UPDATE test_runs SET status = 'completed' WHERE id = $1`, [runId]);
      expectProblem(await enqueue(runUrl(runId), [[a, 'a.xml']]), 409, 'run_import_not_allowed');
      const [{ n }] = await t.db.query(
        `SELECT count(*)::int AS n FROM junit_imports WHERE project_id = $1`,
        [projectId],
      );
      expect(n).toBe(0);
      const [{ chunks }] = await t.db.query(
        `SELECT count(*)::int AS chunks FROM import_uploads WHERE project_id = $1`,
        [projectId],
      );
      expect(chunks).toBe(0);
    });

    it('a run deleted while the import is being queued is a 404, as for a synchronous import', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      // Found by an audit: the record's insert failed on its foreign key and answered 409 conflict.
      const qr = t.db.createQueryRunner();
      await qr.connect();
      try {
        await qr.startTransaction();
        await qr.query(`DELETE FROM test_runs WHERE id = $1`, [runId]);
        const queued = enqueue(runUrl(runId), [[xml('gone', 1), 'gone.xml']]).then((r) => r);
        await waitUntilBlockedOrDone(t.db, qr, queued);
        await qr.commitTransaction();
        expectProblem(await queued, 404, 'test_run_not_found');
      } finally {
        await qr.release();
      }
    });

    it('GET /imports/{id}: 401 without credential, 404 for a non-member, viewer is enough', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await enqueue(runUrl(runId), [[xml('a', 1), 'a.xml']]);
      await expectRoleMatrix(t, f, {
        method: 'get',
        url: `/api/v1/imports/${res.body.id}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'import_not_found',
      });
      expectProblem(
        await getImport('0190f3b2-7c1d-7abc-8def-0123456789ab'),
        404,
        'import_not_found',
      );
    });

    it('answers a synchronous import by GET /imports/{id} too (succeeded from the start)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const sync = await t
        .req('post', runUrl(runId), f.tester.token)
        .attach('file', xml('s', 2), 's.xml');
      expect(sync.status).toBe(201);
      const res = await getImport(sync.body.id);
      expect(res.body).toMatchObject({
        status: 'succeeded',
        progress: { processed: 2, total: 2 },
        test_run_id: runId,
        started_at: sync.body.created_at,
        finished_at: sync.body.created_at,
        summary: sync.body.summary,
        result: sync.body,
        problem: null,
      });
    });

    it('applies once when two attempts of one import run at the same time', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await enqueue(runUrl(runId), [[xml('twice', 5), 'twice.xml']]);
      const runner = t.app.get(ImportJobRunner);
      const job = { id: 'test', data: { importId: res.body.id as string }, retryCount: 0 };
      await Promise.all([runner.run(job), runner.run(job)]);
      const body = (await getImport(res.body.id)).body;
      expect(body.status).toBe('succeeded');
      expect(await applied(runId)).toEqual({ items: 5, executions: [1], total: 5 });
      // A later delivery of the same job does nothing either.
      await runner.run({ ...job, retryCount: 1 });
      expect(await applied(runId)).toEqual({ items: 5, executions: [1], total: 5 });
      expect((await getImport(res.body.id)).body).toEqual(body);
    });
  });

  describe('a background import surviving a killed worker', () => {
    it('leaves nothing applied when its instance dies mid-import; another instance completes it exactly once', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      // Worker A dies inside the import's transaction, once everything is written and the record is
      // marked succeeded, just before the commit (the documented test seam ImportJobHooks).
      const a = await startWorker();
      let reached = 0;
      let kill: (error: Error) => void = () => undefined;
      const killed = new Promise<never>((_, reject) => {
        kill = reject;
      });
      const seen: { target?: string } = {};
      a.get(ImportJobHooks).beforeCommit = async (importId) => {
        // Imports left queued by earlier tests go through; this test's one dies.
        await waitFor(() => seen.target !== undefined, { what: 'the 202' });
        if (importId !== seen.target) return;
        reached += 1;
        // Once A is dead, any later attempt on A fails at once too.
        if (reached > 1) throw new Error('worker A is dead (test)');
        await killed;
      };
      const res = await enqueue(runUrl(runId), [
        [xml('one', 30, 3), 'TEST-one.xml'],
        [xml('two', 20), 'TEST-two.xml'],
      ]);
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      seen.target = id;
      await waitFor(() => reached > 0, { timeoutMs: 15_000, what: 'worker A inside the import' });
      // Meanwhile the import is running, its progress complete but nothing visible.
      const running = (await getImport(id)).body;
      expect(running).toMatchObject({ status: 'running', progress: { processed: 50, total: 50 } });
      expect(running.started_at).not.toBeNull();
      expect(running.finished_at).toBeNull();
      // A dies there: its transaction is rolled back (as PostgreSQL does when the connection of a
      // killed process drops).
      kill(new Error('worker A killed (test)'));
      // The job queue takes the job back for a retry (from the start); A stops.
      await waitFor(
        async () => {
          const [job] = await t.db.query(
            `SELECT state FROM ${JOB_QUEUE_SCHEMA}.job WHERE name = $1 AND data->>'importId' = $2`,
            [IMPORT_JOB, id],
          );
          return job?.state === 'retry';
        },
        { what: 'the job back in the queue' },
      );
      await stopWorker(a);
      // Nothing half-applied: not a row, not a case, not the record's success.
      const after = await snapshot(projectId, runId);
      expect({ ...after, imports: before.imports }).toEqual(before);
      expect((await getImport(id)).body.status).toBe('running');
      expect((await storedChunks(id)).chunks).toBe(2);

      // Worker B (another instance) takes the job up again from the start and completes it once.
      await startWorker();
      const done = await finished(id);
      expect(done).toMatchObject({
        status: 'succeeded',
        progress: { processed: 50, total: 50 },
        test_run_id: runId,
        summary: {
          total_cases: 50,
          created_test_cases: 50,
          updated: 50,
          files: [
            { name: 'TEST-one.xml', testcases: 30, passed: 27, failed: 3, skipped: 0 },
            { name: 'TEST-two.xml', testcases: 20, passed: 20, failed: 0, skipped: 0 },
          ],
        },
        problem: null,
      });
      expect(done.result).toMatchObject({
        id,
        status: 'completed',
        statuses: { passed: 47, failure: 3 },
      });
      expect(done.finished_at).not.toBeNull();
      expect(await applied(runId)).toEqual({ items: 50, executions: [1], total: 50 });
      const [{ history }] = await t.db.query(
        `SELECT count(*)::int AS history FROM run_item_history h JOIN run_items ri ON ri.id = h.run_item_id
          WHERE ri.test_run_id = $1`,
        [runId],
      );
      expect(history).toBe(0); // imports write no run-case history (reference §4.10)
      // The stored upload is gone once the job ended; the run lists the import once.
      expect(await storedChunks(id)).toEqual({ chunks: 0, bytes: 0 });
      const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
      expect(list.body.total).toBe(1);
    });
  });

  describe('a worker stuck past the expiry (IMPORT_JOB_EXPIRE_SECONDS)', () => {
    /** An app of its own: its queue expires background imports after 2 s. */
    let u: TestApp;
    const stuck: INestApplication[] = [];
    beforeAll(async () => {
      u = await createTestApp({ JOB_WORKERS: 'false', IMPORT_JOB_EXPIRE_SECONDS: '2' });
    });
    afterAll(async () => {
      for (const w of stuck) await w.close();
      await u.close();
    });

    it('is retried by the queue; the retry waits for it and applies nothing twice', async () => {
      const projectId = await u.createProject();
      const run = await u
        .req('post', '/api/v1/test-runs', u.adminToken)
        .send({ project_id: projectId, name: 'expiry' });
      const runId = run.body.id as string;
      const worker = () => workerOf(u, stuck);
      // Worker A stalls inside the import's transaction (just before its commit) far longer than
      // the expiry; the job queue then gives the job up on A and retries it.
      const a = await worker();
      let reached = 0;
      let wake: () => void = () => undefined;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      a.get(ImportJobHooks).beforeCommit = async () => {
        reached += 1;
        await woken;
      };
      const res = await u
        .req('post', runUrl(runId), u.adminToken)
        .set('Prefer', 'respond-async')
        .attach('file', xml('slow', 7), 'slow.xml');
      expect(res.status).toBe(202);
      await waitFor(() => reached === 1, { timeoutMs: 15_000, what: 'worker A inside the import' });
      await worker(); // B
      // The retry (on A or B) waits for the stalled attempt's transaction (the import's record,
      // which that transaction has marked succeeded, and its lock).
      await waitFor(
        async () => {
          const [row] = await u.db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return row.n > 0;
        },
        { timeoutMs: 15_000, intervalMs: 100, what: 'the retry to wait for the stalled attempt' },
      );
      wake(); // A goes on and commits; the retry then finds the import succeeded and does nothing.
      await waitFor(
        async () => {
          const [job] = await u.db.query(
            `SELECT state FROM ${JOB_QUEUE_SCHEMA}.job WHERE name = $1 AND data->>'importId' = $2`,
            [IMPORT_JOB, res.body.id],
          );
          return job?.state === 'completed';
        },
        { timeoutMs: 15_000, intervalMs: 100, what: 'the retry to complete' },
      );
      const done = (await u.req('get', `/api/v1/imports/${res.body.id}`, u.adminToken)).body;
      expect(done).toMatchObject({ status: 'succeeded', progress: { processed: 7, total: 7 } });
      const rows = await u.db.query(
        `SELECT w.execution_count FROM run_item_rows w JOIN run_items ri ON ri.id = w.run_item_id
          WHERE ri.test_run_id = $1`,
        [runId],
      );
      expect(rows).toHaveLength(7);
      expect(rows.every((r: { execution_count: number }) => r.execution_count === 1)).toBe(true);
      expect(reached).toBe(1);
    });
  });

  describe('a last attempt whose worker dies (IMPORT_JOB_RETRIES=0)', () => {
    let u: TestApp;
    const apps: INestApplication[] = [];
    beforeAll(async () => {
      u = await createTestApp({
        JOB_WORKERS: 'false',
        IMPORT_JOB_EXPIRE_SECONDS: '2',
        IMPORT_JOB_RETRIES: '0',
      });
    });
    afterAll(async () => {
      for (const w of apps) await w.close();
      await u.close();
    });

    it('ends failed through the dead-letter queue: nothing applied, the upload deleted', async () => {
      const projectId = await u.createProject();
      const run = await u
        .req('post', '/api/v1/test-runs', u.adminToken)
        .send({ project_id: projectId, name: 'abandoned' });
      const runId = run.body.id as string;
      const worker = () => workerOf(u, apps);
      // Worker A stalls inside the import's only attempt and never finishes it.
      const a = await worker();
      let reached = 0;
      a.get(ImportJobHooks).beforeCommit = async () => {
        reached += 1;
        await new Promise<void>(() => undefined);
      };
      const res = await u
        .req('post', runUrl(runId), u.adminToken)
        .set('Prefer', 'respond-async')
        .attach('file', xml('lost', 5), 'lost.xml');
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      await waitFor(() => reached === 1, { timeoutMs: 15_000, what: 'worker A inside the import' });
      // The queue gives the attempt up at its expiry: no retry is left, so the job has failed.
      await waitFor(
        async () => {
          const [job] = await u.db.query(
            `SELECT state FROM ${JOB_QUEUE_SCHEMA}.job WHERE name = $1 AND data->>'importId' = $2`,
            [IMPORT_JOB, id],
          );
          return job?.state === 'failed';
        },
        { timeoutMs: 15_000, intervalMs: 100, what: 'the job to fail at its expiry' },
      );
      // A dies: its connection goes, and with it the open transaction (nothing committed).
      await u.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'idle in transaction'`,
      );
      await worker(); // B runs the dead-letter job (A may too)
      await waitFor(
        async () =>
          (await u.req('get', `/api/v1/imports/${id}`, u.adminToken)).body.status === 'failed',
        { timeoutMs: 15_000, intervalMs: 100, what: 'the import to be marked failed' },
      );
      const got = (await u.req('get', `/api/v1/imports/${id}`, u.adminToken)).body;
      expect(got.problem).toMatchObject({ status: 500, code: 'internal_error' });
      const [{ n }] = await u.db.query(
        `SELECT count(*)::int AS n FROM run_items WHERE test_run_id = $1`,
        [runId],
      );
      expect(n).toBe(0);
      const [{ chunks }] = await u.db.query(
        `SELECT count(*)::int AS chunks FROM import_uploads WHERE import_id = $1`,
        [id],
      );
      expect(chunks).toBe(0);
    });
  });

  describe('with a worker running', () => {
    let worker: INestApplication;
    beforeAll(async () => {
      worker = workers[0] ?? (await startWorker());
    });

    it('runs a project import in the background with the result the synchronous import gives', async () => {
      const projectId = await newProject();
      const url = `/api/v1/projects/${projectId}/imports/junit?create_missing_cases=true`;
      const res = await enqueue(url, [
        [xml('bg', 4, 1), 'TEST-bg.xml'],
        [Buffer.from(JSON.stringify({ cases: [{ name: 'j', status: 'skipped' }] })), 'r.json'],
      ]);
      expect(res.status).toBe(202);
      expect(res.body.test_run_id).toBeNull();
      const done = await finished(res.body.id);
      expect(done.status).toBe('succeeded');
      expect(done.result.target_run).toMatchObject({ name: 'bg', match_mode: 'created' });
      expect(done.test_run_id).toBe(done.result.target_run.id);
      expect(done.summary).toMatchObject({ total_cases: 5, updated: 5 });
      // The same files synchronously, as a preview, give the same counters.
      const sync = await t
        .req('post', `/api/v1/projects/${projectId}/imports/junit?dry_run=true`, f.tester.token)
        .attach('file', xml('bg', 4, 1), 'TEST-bg.xml')
        .attach(
          'file',
          Buffer.from(JSON.stringify({ cases: [{ name: 'j', status: 'skipped' }] })),
          'r.json',
        );
      expect(sync.body.statuses).toEqual(done.result.statuses);
      expect(sync.body.summary.files).toEqual(done.summary.files);
    });

    // Found by an audit: a name cut inside a surrogate pair failed the job's jsonb writes, pg-boss's
    // own record of the failure too, and the import stayed `running`.
    it('imports a file whose long name of emoji is cut, and ends', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await enqueue(runUrl(runId), [
        [xml('emoji', 2), `${'\u{1F600}'.repeat(128)}.xml`],
      ]);
      expect(res.status).toBe(202);
      const done = await finished(res.body.id);
      expect(done.status).toBe('succeeded');
      expect(done.source_filename).toBe('\u{1F600}'.repeat(127));
    });

    it('fails an import whose file is refused, with the problem naming the file; nothing applied; emits import.failed', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const hook = await t
        .req('post', `/api/v1/projects/${projectId}/webhooks`, f.lead.token)
        .send({ url: 'http://127.0.0.1:9/hook', events: ['import.failed'] });
      expect(hook.status).toBe(201);
      const before = await snapshot(projectId, runId);
      const res = await enqueue(runUrl(runId), [
        [xml('ok', 2), 'ok.xml'],
        [Buffer.from('<testsuite><testcase'), 'broken.xml'],
      ]);
      expect(res.status).toBe(202);
      const done = await finished(res.body.id);
      expect(done).toMatchObject({
        status: 'failed',
        summary: null,
        result: null,
        problem: {
          status: 422,
          code: 'invalid_junit_xml',
          instance: `/api/v1/imports/${res.body.id}`,
        },
      });
      expect(done.problem.detail).toContain('"broken.xml" (2 of 2)');
      expect(done.problem.errors.file[0]).toMatch(/^broken\.xml: /);
      const events = await t.db.query(
        `SELECT type, body FROM webhook_events WHERE project_id = $1 ORDER BY created_at`,
        [projectId],
      );
      expect(events.map((e: { type: string }) => e.type)).toEqual(['import.failed']);
      expect(JSON.parse(events[0].body).data).toEqual(done);
      expect(done.finished_at).not.toBeNull();
      const after = await snapshot(projectId, runId);
      expect({ ...after, imports: before.imports }).toEqual(before);
      expect(await storedChunks(res.body.id)).toEqual({ chunks: 0, bytes: 0 });
    });

    it('fails an import whose run was closed while it was queued (409 problem)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const hooks = worker.get(ImportJobHooks);
      // The worker is held at its first import so that this one stays queued meanwhile.
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let holding = 0;
      hooks.beforeCommit = async () => {
        holding += 1;
        await held;
      };
      try {
        const other = await newProject();
        const otherRun = await createRun(other);
        const first = await enqueue(runUrl(otherRun), [[xml('h', 1), 'h.xml']]);
        await waitFor(() => holding > 0, { timeoutMs: 15_000, what: 'the worker to hold' });
        const res = await enqueue(runUrl(runId), [[xml('late', 1), 'late.xml']]);
        expect(res.status).toBe(202);
        await t.db.query(`UPDATE test_runs SET status = 'completed' WHERE id = $1`, [runId]);
        release();
        expect((await finished(first.body.id)).status).toBe('succeeded');
        const done = await finished(res.body.id);
        expect(done).toMatchObject({
          status: 'failed',
          problem: { status: 409, code: 'run_import_not_allowed' },
        });
      } finally {
        hooks.beforeCommit = null;
        release();
      }
    });

    it('replays the 202 for a repeated Idempotency-Key: one import, one job', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const send = () =>
        enqueue(runUrl(runId), [[xml('idem', 3), 'idem.xml']]).set(
          'Idempotency-Key',
          `bg-${runId}`,
        );
      const first = await send();
      expect(first.status).toBe(202);
      const second = await send();
      expect(second.status).toBe(202);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.headers.location).toBe(first.headers.location);
      expect(second.headers['preference-applied']).toBe('respond-async');
      expect(second.body).toEqual(first.body);
      await finished(first.body.id);
      const [{ n }] = await t.db.query(
        `SELECT count(*)::int AS n FROM junit_imports WHERE project_id = $1`,
        [projectId],
      );
      expect(n).toBe(1);
      expect(await applied(runId)).toEqual({ items: 3, executions: [1], total: 3 });
    });

    it('keeps the synchronous import without the header', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await request(t.server)
        .post(runUrl(runId))
        .set('Authorization', `Bearer ${f.tester.token}`)
        .set('Prefer', 'return=minimal')
        .attach('file', xml('sync', 2), 'sync.xml');
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('completed');
      expect(res.headers['preference-applied']).toBeUndefined();
    });
  });
});
