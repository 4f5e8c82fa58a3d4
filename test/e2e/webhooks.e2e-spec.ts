import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { createApp } from '../../src/bootstrap';
import { WebhookDeliveryWorker } from '../../src/modules/webhooks/webhook-delivery.worker';
import { WebhookPurger } from '../../src/modules/webhooks/webhook-purger';
import { WEBHOOK_EVENT_TYPES } from '../../src/modules/webhooks/webhook-policy';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { logCapture } from '../support/log-capture';
import { waitFor } from '../support/wait-for';

const API = '/api/v1';
// Free-form JSON bodies (answers and received events), read field by field in assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** One request the receiver got. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: Json;
}

interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/**
 * A real HTTP receiver on 127.0.0.1: records every request, answers per path (200 `ok` unless a
 * path has its own answer).
 */
class Receiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, (r: Received) => Answer>();
  private server!: Server;
  private port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: Json = {};
        try {
          json = JSON.parse(body) as Json;
        } catch {
          json = {};
        }
        const r: Received = { path: req.url ?? '', headers: req.headers, body, json };
        this.received.push(r);
        const answer = this.answers.get(r.path)?.(r) ?? { status: 200, body: 'ok' };
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A URL on this receiver; each test uses its own path. */
  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  answer(path: string, fn: (r: Received) => Answer): void {
    this.answers.set(path, fn);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }
}

/** Standard Webhooks verification, written independently of the service's code. */
function verifySignature(secret: string, r: Received): boolean {
  const id = String(r.headers['webhook-id']);
  const timestamp = String(r.headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r.body}`).digest('base64');
  const signatures = String(r.headers['webhook-signature'] ?? '').split(' ');
  return signatures.includes(`v1,${expected}`);
}

describe('Webhooks (issue #20)', () => {
  let t: TestApp;
  let f: RoleFixture;
  const receiver = new Receiver();
  const { lines: logLines, sink } = logCapture();
  /** Every secret answered in this file: none may appear in a log line or a later response. */
  const secrets: string[] = [];

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp(
      {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_BASE_SECONDS: '1',
        WEBHOOK_MAX_ATTEMPTS: '3',
        LOG_LEVEL: 'trace',
      },
      sink,
    );
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  async function subscribe(
    projectId: string,
    path: string,
    events: readonly string[],
    extra: Json = {},
  ): Promise<{ id: string; secret: string; body: Json }> {
    const res = await t
      .req('post', `${API}/projects/${projectId}/webhooks`, f.lead.token)
      .send({ url: receiver.url(path), events, ...extra });
    if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
    secrets.push(res.body.secret as string);
    return { id: res.body.id as string, secret: res.body.secret as string, body: res.body as Json };
  }

  async function deliveries(webhookId: string): Promise<Json[]> {
    const res = await t
      .req('get', `${API}/webhooks/${webhookId}/deliveries?page_size=200`, f.lead.token)
      .expect(200);
    return res.body.items as Json[];
  }

  /** Waits until the subscription's log has `n` attempts and none is pending. */
  async function settled(webhookId: string, n: number, timeoutMs = 20_000): Promise<Json[]> {
    let items: Json[] = [];
    await waitFor(
      async () => {
        items = await deliveries(webhookId);
        return items.length >= n && items.every((d) => d.status !== 'pending');
      },
      { timeoutMs, intervalMs: 100, what: `${n} settled deliveries of ${webhookId}` },
    );
    return items;
  }

  async function createRun(projectId: string, name: string, extra: Json = {}): Promise<string> {
    const res = await t
      .req('post', `${API}/test-runs`, f.lead.token)
      .send({ project_id: projectId, name, ...extra });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function setRunStatus(runId: string, status: string): Promise<void> {
    const res = await t.req('patch', `${API}/test-runs/${runId}`, f.lead.token).send({ status });
    expect(res.status).toBe(200);
  }

  it('enforces the role matrix on every endpoint (lead; testers and viewers 403, non-members 404)', async () => {
    const path = '/matrix';
    const created = await expectRoleMatrix(t, f, {
      method: 'post',
      url: `${API}/projects/${f.projectId}/webhooks`,
      body: () => ({ url: receiver.url(path), events: ['test_run.created'] }),
      minRole: 'lead',
      okStatus: 201,
      notFoundCode: 'project_not_found',
    });
    secrets.push(created.body.secret as string);
    const id = created.body.id as string;
    await expectRoleMatrix(t, f, {
      method: 'get',
      url: `${API}/projects/${f.projectId}/webhooks`,
      minRole: 'lead',
      okStatus: 200,
      notFoundCode: 'project_not_found',
    });
    for (const c of [
      { method: 'get' as const, url: `${API}/webhooks/${id}`, okStatus: 200 },
      {
        method: 'patch' as const,
        url: `${API}/webhooks/${id}`,
        body: () => ({ description: 'matrix' }),
        okStatus: 200,
      },
      { method: 'get' as const, url: `${API}/webhooks/${id}/deliveries`, okStatus: 200 },
    ]) {
      await expectRoleMatrix(t, f, { ...c, minRole: 'lead', notFoundCode: 'webhook_not_found' });
    }
    const rotated = await expectRoleMatrix(t, f, {
      method: 'post',
      url: `${API}/webhooks/${id}/rotate-secret`,
      minRole: 'lead',
      okStatus: 200,
      notFoundCode: 'webhook_not_found',
    });
    secrets.push(rotated.body.secret as string);
    const ping = await expectRoleMatrix(t, f, {
      method: 'post',
      url: `${API}/webhooks/${id}/ping`,
      minRole: 'lead',
      okStatus: 202,
      notFoundCode: 'webhook_not_found',
    });
    await expectRoleMatrix(t, f, {
      method: 'post',
      url: `${API}/webhooks/${id}/deliveries/${ping.body.id as string}/redeliver`,
      minRole: 'lead',
      okStatus: 202,
      notFoundCode: 'webhook_not_found',
    });
    await expectRoleMatrix(t, f, {
      method: 'delete',
      url: `${API}/webhooks/${id}`,
      minRole: 'lead',
      okStatus: 204,
      notFoundCode: 'webhook_not_found',
    });
    expectProblem(await t.req('get', `${API}/webhooks/${id}`, f.lead.token), 404, 'webhook_not_found');
    const rows = await t.db.query<Json[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`,
      [id],
    );
    expect(rows[0].n).toBe(0);
  });

  it('answers the secret once; stores it encrypted; validates URL, events and format', async () => {
    const projectId = await t.createProject(f.lead.token);
    await t.addMember(projectId, f.tester.id, 'tester', f.lead.token);
    const { id, secret, body } = await subscribe(projectId, '/shape', ['test_run.created'], {
      description: 'CI',
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(body).toMatchObject({
      id,
      project_id: projectId,
      url: receiver.url('/shape'),
      description: 'CI',
      events: ['test_run.created'],
      format: 'standard',
      active: true,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    const got = await t.req('get', `${API}/webhooks/${id}`, f.lead.token).expect(200);
    expect(got.body).not.toHaveProperty('secret');
    expect(got.body).toEqual({ ...body, secret: undefined, updated_at: got.body.updated_at });
    const listed = await t.req('get', `${API}/projects/${projectId}/webhooks`, f.lead.token).expect(200);
    expect(listed.body).toMatchObject({ total: 1, items: [{ id }] });
    expect(listed.body.items[0]).not.toHaveProperty('secret');
    const stored = await t.db.query<Array<{ secret_ciphertext: Buffer }>>(
      `SELECT secret_ciphertext FROM webhooks WHERE id = $1`,
      [id],
    );
    const bytes = stored[0].secret_ciphertext;
    expect(bytes.toString('latin1')).not.toContain(secret.slice(6));
    expect(bytes.includes(Buffer.from(secret.slice(6), 'base64'))).toBe(false);

    const bad: Array<[Json, string]> = [
      [{ url: 'ftp://example.com/x', events: ['test_run.created'] }, 'url'],
      [{ url: 'not a url', events: ['test_run.created'] }, 'url'],
      [{ url: 'https://user:pw@example.com/', events: ['test_run.created'] }, 'url'],
      // 1,026 characters sent, 6,026 stored once normalised: it could never be delivered.
      [{ url: receiver.url(`/${'é'.repeat(1000)}`), events: ['test_run.created'] }, 'url'],
      [{ url: receiver.url('/x'), events: [] }, 'events'],
      [{ url: receiver.url('/x'), events: ['test_run.deleted'] }, 'events'],
      [{ url: receiver.url('/x'), events: ['webhook.ping'] }, 'events'],
      [{ url: receiver.url('/x'), events: ['test_run.created', 'test_run.created'] }, 'events'],
      [{ url: receiver.url('/x'), events: ['test_run.created'], format: 'teams' }, 'format'],
      [{ url: receiver.url('/x'), events: ['test_run.created'], active: null }, 'active'],
      [{ url: receiver.url('/x'), events: ['test_run.created'], secret: 'whsec_mine' }, 'secret'],
    ];
    for (const [payload, field] of bad) {
      const res = await t.req('post', `${API}/projects/${projectId}/webhooks`, f.lead.token).send(payload);
      const problem = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(problem.errors as Json)).toContain(field);
    }
    const patched = await t
      .req('patch', `${API}/webhooks/${id}`, f.lead.token)
      .send({ url: 'gopher://example.com/' });
    expectProblem(patched, 422, 'validation_error');
    const count = await t.db.query<Json[]>(`SELECT count(*)::int AS n FROM webhooks WHERE project_id = $1`, [
      projectId,
    ]);
    expect(count[0].n).toBe(1);
  });

  it('refuses more than 20 subscriptions in a project (409 webhook_limit_reached)', async () => {
    const projectId = await t.createProject(f.lead.token);
    for (let i = 0; i < 20; i += 1) await subscribe(projectId, `/limit${i}`, ['test_case.created']);
    const res = await t
      .req('post', `${API}/projects/${projectId}/webhooks`, f.lead.token)
      .send({ url: receiver.url('/limit'), events: ['test_case.created'] });
    expectProblem(res, 409, 'webhook_limit_reached');
  });

  it('delivers each event type once, signed per Standard Webhooks', async () => {
    const projectId = await t.createProject(f.lead.token);
    const path = '/all';
    const sub = await subscribe(projectId, path, WEBHOOK_EVENT_TYPES);

    const runId = await createRun(projectId, 'Nightly', { build: '1.2.3' });
    await setRunStatus(runId, 'in_progress');
    await setRunStatus(runId, 'completed');
    const env = await t
      .req('post', `${API}/environments`, f.lead.token)
      .send({ project_id: projectId, name: 'Staging', description: 'first' });
    expect(env.status).toBe(201);
    const envPatch = await t
      .req('patch', `${API}/environments/${env.body.id as string}`, f.lead.token)
      .send({ description: 'second', tags: ['eu'] });
    expect(envPatch.status).toBe(200);
    const testCase = await t
      .req('post', `${API}/test-cases`, f.lead.token)
      .send({ project_id: projectId, title: 'Login works' });
    expect(testCase.status).toBe(201);
    const importRun = await createRun(projectId, 'CI import');
    const xml =
      '<?xml version="1.0"?><testsuite name="s" tests="2">' +
      '<testcase classname="a.B" name="passes"/>' +
      '<testcase classname="a.B" name="fails"><failure message="no"/></testcase></testsuite>';
    const imported = await t
      .req('post', `${API}/test-runs/${importRun}/imports/junit?create_missing_cases=true`, f.lead.token)
      .attach('file', Buffer.from(xml), 'report.xml');
    expect(imported.status).toBe(201);
    const ping = await t.req('post', `${API}/webhooks/${sub.id}/ping`, f.lead.token);
    expect(ping.status).toBe(202);
    expect(ping.body).toMatchObject({ event_type: 'webhook.ping', status: 'pending', attempt: 1, trigger: 'ping' });

    // test_run.created ×2, status_changed ×3 (the import starts its run), completed, revision ×2,
    // test_case.created (the import's own cases are announced by import.completed), import, ping.
    const expected: Record<string, number> = {
      'test_run.created': 2,
      'test_run.status_changed': 3,
      'test_run.completed': 1,
      'environment.revision_created': 2,
      'test_case.created': 1,
      'import.completed': 1,
      'webhook.ping': 1,
    };
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    const log = await settled(sub.id, total);
    expect(log).toHaveLength(total);
    expect(log.every((d) => d.status === 'succeeded' && d.attempt === 1 && d.response_status === 200)).toBe(true);

    const got = receiver.at(path);
    expect(got).toHaveLength(total);
    const byType: Record<string, Received[]> = {};
    for (const r of got) (byType[r.json.type as string] ??= []).push(r);
    expect(Object.fromEntries(Object.entries(byType).map(([k, v]) => [k, v.length]))).toEqual(expected);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(total);
    for (const r of got) {
      expect(verifySignature(sub.secret, r)).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toBe(r.json.id);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(120);
      expect(Object.keys(r.json)).toEqual(['id', 'type', 'created_at', 'project_id', 'data']);
      expect(r.json.project_id).toBe(projectId);
      // A tampered body does not verify.
      expect(verifySignature(sub.secret, { ...r, body: r.body + ' ' })).toBe(false);
    }

    const [created] = byType['test_run.created'].filter((r) => r.json.data.id === runId);
    const runGet = await t.req('get', `${API}/test-runs/${runId}`, f.lead.token).expect(200);
    expect(created.json.data).toMatchObject({ id: runId, name: 'Nightly', build: '1.2.3', status: 'not_started' });
    expect(created.json.data).not.toHaveProperty('environment_snapshot');
    const { environment_snapshot: _s, ...runFields } = runGet.body as Json;
    expect(Object.keys(created.json.data).sort()).toEqual(Object.keys(runFields).sort());
    const changes = byType['test_run.status_changed']
      .filter((r) => r.json.data.id === runId)
      .map((r) => [r.json.data.from, r.json.data.to, r.json.data.status]);
    expect(changes.sort()).toEqual([
      ['in_progress', 'completed', 'completed'],
      ['not_started', 'in_progress', 'in_progress'],
    ]);
    expect(byType['test_run.completed'][0].json.data).toMatchObject({
      id: runId,
      status: 'completed',
      summary: { total: 0 },
    });
    const revision2 = await t
      .req('get', `${API}/environments/${env.body.id as string}/revisions/2`, f.lead.token)
      .expect(200);
    const revisions = byType['environment.revision_created']
      .map((r) => r.json.data)
      .sort((a, b) => a.revision_number - b.revision_number);
    expect(revisions[0]).toMatchObject({
      environment_id: env.body.id,
      environment_name: 'Staging',
      revision_number: 1,
      previous_revision_number: null,
    });
    expect(revisions[0].drift.added).toBeGreaterThan(0);
    expect(revisions[1]).toMatchObject({
      revision_number: 2,
      previous_revision_number: 1,
      snapshot_hash: revision2.body.snapshot_hash,
      drift: { added: 0, removed: 0, changed: 2 },
    });
    expect(byType['test_case.created'][0].json.data).toMatchObject({ id: testCase.body.id, title: 'Login works' });
    expect(byType['import.completed'][0].json.data).toMatchObject({
      id: imported.body.id,
      test_run_id: importRun,
      status: 'completed',
      summary: { total_cases: 2, created_test_cases: 2 },
      statuses: { passed: 1, failure: 1 },
    });
    expect(byType['import.completed'][0].json.data).not.toHaveProperty('created_cases');
    expect(byType['webhook.ping'][0].json.data).toEqual({ webhook_id: sub.id });
  });

  it('retries a failed attempt (500, then 200) with backoff, logs each attempt, and redelivers', async () => {
    const projectId = await t.createProject(f.lead.token);
    const path = '/flaky';
    const seen = new Set<string>();
    receiver.answer(path, (r) => {
      const id = String(r.headers['webhook-id']);
      if (seen.has(id)) return { status: 200, body: 'y'.repeat(3000) };
      seen.add(id);
      return { status: 500, body: 'boom' };
    });
    const sub = await subscribe(projectId, path, ['test_run.created']);
    const runId = await createRun(projectId, 'Retried');
    const log = await settled(sub.id, 2);
    expect(log).toHaveLength(2);
    const [second, first] = log;
    expect(first).toMatchObject({
      event_type: 'test_run.created',
      attempt: 1,
      trigger: 'event',
      status: 'failed',
      response_status: 500,
      response_body: 'boom',
      error: null,
    });
    expect(second).toMatchObject({
      event_id: first.event_id,
      attempt: 2,
      trigger: 'retry',
      status: 'succeeded',
      response_status: 200,
      next_attempt_at: null,
    });
    // The first retry waits WEBHOOK_RETRY_BASE_SECONDS (1 s here).
    const scheduled = Date.parse(first.next_attempt_at as string) - Date.parse(first.created_at as string);
    expect(scheduled).toBeGreaterThanOrEqual(900);
    expect((second.response_body as string).length).toBe(1024);
    expect(typeof first.duration_ms).toBe('number');
    const got = receiver.at(path);
    expect(got).toHaveLength(2);
    expect(got[0].headers['webhook-id']).toBe(got[1].headers['webhook-id']);
    expect(got[1].json.data.id).toBe(runId);
    expect(got.every((r) => verifySignature(sub.secret, r))).toBe(true);

    // Each attempt is sent once: running its job again (as after a worker's expiry) sends nothing.
    await t.app.get(WebhookDeliveryWorker).handle({
      id: first.id as string,
      data: { delivery_id: first.id as string },
      retryCount: 1,
    });
    expect(receiver.at(path)).toHaveLength(2);

    const again = await t.req(
      'post',
      `${API}/webhooks/${sub.id}/deliveries/${first.id as string}/redeliver`,
      f.lead.token,
    );
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({
      event_id: first.event_id,
      attempt: 3,
      trigger: 'redeliver',
      status: 'pending',
    });
    const after = await settled(sub.id, 3);
    expect(after[0]).toMatchObject({ id: again.body.id, status: 'succeeded' });
    expect(receiver.at(path)).toHaveLength(3);
    expect(receiver.at(path)[2].body).toBe(got[0].body);

    const unknown = await t.req(
      'post',
      `${API}/webhooks/${sub.id}/deliveries/00000000-0000-7000-8000-000000000000/redeliver`,
      f.lead.token,
    );
    expectProblem(unknown, 404, 'webhook_delivery_not_found');
  });

  it('stops after WEBHOOK_MAX_ATTEMPTS; disables a subscription after 20 consecutive failures', async () => {
    const projectId = await t.createProject(f.lead.token);
    const path = '/down';
    receiver.answer(path, () => ({ status: 503 }));
    const sub = await subscribe(projectId, path, ['test_run.created', 'test_case.created']);
    await createRun(projectId, 'Nobody listens');
    const log = await settled(sub.id, 3);
    // WEBHOOK_MAX_ATTEMPTS=3: the third failure schedules nothing (it would be in the same transaction).
    expect(log.map((d) => [d.attempt, d.status, d.next_attempt_at === null])).toEqual([
      [3, 'failed', true],
      [2, 'failed', false],
      [1, 'failed', false],
    ]);
    const counted = await t.req('get', `${API}/webhooks/${sub.id}`, f.lead.token).expect(200);
    expect(counted.body).toMatchObject({ active: true, consecutive_failures: 3 });

    await t.db.query(`UPDATE webhooks SET consecutive_failures = 19 WHERE id = $1`, [sub.id]);
    await t.req('post', `${API}/webhooks/${sub.id}/ping`, f.lead.token).expect(202);
    await settled(sub.id, 4);
    const disabled = await t.req('get', `${API}/webhooks/${sub.id}`, f.lead.token).expect(200);
    expect(disabled.body).toMatchObject({
      active: false,
      consecutive_failures: 20,
      disabled_reason: 'disabled after 20 consecutive failed deliveries',
    });
    // A disabled subscription gets no events.
    const caseRes = await t
      .req('post', `${API}/test-cases`, f.lead.token)
      .send({ project_id: projectId, title: 'Unannounced' });
    expect(caseRes.status).toBe(201);
    const events = await t.db.query<Json[]>(
      `SELECT count(*)::int AS n FROM webhook_events WHERE project_id = $1 AND type = 'test_case.created'`,
      [projectId],
    );
    expect(events[0].n).toBe(0);
    const on = await t.req('patch', `${API}/webhooks/${sub.id}`, f.lead.token).send({ active: true });
    expect(on.body).toMatchObject({ active: true, consecutive_failures: 0, disabled_reason: null });
  });

  it('sends nothing for a rolled-back transaction', async () => {
    const projectId = await t.createProject(f.lead.token);
    const path = '/rollback';
    await subscribe(projectId, path, ['test_run.created']);
    // A deferred constraint trigger fails the COMMIT of a run named "rollback me": the event and
    // its job were written in that transaction, after the change, and must go with it.
    await t.db.query(`
      CREATE FUNCTION test_refuse_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.name = 'rollback me' THEN RAISE EXCEPTION 'refused at commit'; END IF;
        RETURN NULL;
      END $$`);
    await t.db.query(`
      CREATE CONSTRAINT TRIGGER test_refuse_run AFTER INSERT ON test_runs
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_run()`);
    const [{ since }] = await t.db.query<Array<{ since: Date }>>(`SELECT now() AS since`);
    try {
      const refused = await t
        .req('post', `${API}/test-runs`, f.lead.token)
        .send({ project_id: projectId, name: 'rollback me' });
      expect(refused.status).toBe(500);
    } finally {
      await t.db.query(`DROP TRIGGER test_refuse_run ON test_runs`);
      await t.db.query(`DROP FUNCTION test_refuse_run()`);
    }
    // A request refused by validation after nothing was written sends nothing either.
    await t.req('post', `${API}/test-runs`, f.lead.token).send({ project_id: projectId }).expect(422);
    const jobs = await t.db.query<Json[]>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery' AND created_on >= $1`,
      [since],
    );
    expect(jobs[0].n).toBe(0);
    await createRun(projectId, 'kept');
    await waitFor(() => receiver.at(path).length >= 1, { what: 'the kept run', timeoutMs: 20_000 });
    expect(receiver.at(path).map((r) => r.json.data.name)).toEqual(['kept']);
    const rows = await t.db.query<Json[]>(
      `SELECT count(*)::int AS n FROM webhook_events WHERE project_id = $1`,
      [projectId],
    );
    expect(rows[0].n).toBe(1);
  });

  it('delivers each event exactly once with two instances on one database', async () => {
    // The second instance runs workers too (and logs nothing: its lines are not captured).
    const other: INestApplication = await createApp({ ...t.config, logLevel: 'silent' }, t.databaseUrl);
    await other.init();
    try {
      const projectId = await t.createProject(f.lead.token);
      const path = '/twice';
      const sub = await subscribe(projectId, path, ['test_run.created']);
      const runs = 12;
      for (let i = 0; i < runs; i += 1) await createRun(projectId, `Run ${i}`);
      const log = await settled(sub.id, runs);
      expect(log).toHaveLength(runs);
      expect(log.every((d) => d.status === 'succeeded' && d.attempt === 1)).toBe(true);
      const ids = receiver.at(path).map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(runs);
      expect(new Set(ids).size).toBe(runs);
    } finally {
      await other.close();
    }
  });

  it('sends a Slack-compatible message with format "slack"', async () => {
    const projectId = await t.createProject(f.lead.token);
    const path = '/slack';
    const sub = await subscribe(projectId, path, ['test_run.completed'], { format: 'slack' });
    const runId = await createRun(projectId, 'Nightly <eu>', { build: 'b42' });
    await setRunStatus(runId, 'in_progress');
    await setRunStatus(runId, 'completed');
    await settled(sub.id, 1);
    const [r] = receiver.at(path);
    expect(verifySignature(sub.secret, r)).toBe(true);
    expect(Object.keys(r.json).sort()).toEqual(['blocks', 'text']);
    expect(r.json.text).toBe(
      'Test run completed\n*Nightly &lt;eu&gt;*\nBuild: b42\nPass rate: 0% (0 passed of 0)\nFailed: 0',
    );
    expect(r.json.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Test run completed' } });
  });

  it('signs with the new secret after rotate-secret', async () => {
    const projectId = await t.createProject(f.lead.token);
    const path = '/rotate';
    const sub = await subscribe(projectId, path, ['test_run.created']);
    const rotated = await t.req('post', `${API}/webhooks/${sub.id}/rotate-secret`, f.lead.token).expect(200);
    const secret = rotated.body.secret as string;
    secrets.push(secret);
    expect(secret).not.toBe(sub.secret);
    await t.req('post', `${API}/webhooks/${sub.id}/ping`, f.lead.token).expect(202);
    await settled(sub.id, 1);
    const [r] = receiver.at(path);
    expect(verifySignature(secret, r)).toBe(true);
    expect(verifySignature(sub.secret, r)).toBe(false);
  });

  // Found by an audit: operations without a body DTO never looked at the body, so a rotation
  // with {"foo": 1} rotated the secret (CONTRACT §2: unknown fields are a 422 on every body).
  it('operations that take no body refuse one with fields, and change nothing', async () => {
    const projectId = await t.createProject(f.lead.token);
    const sub = await subscribe(projectId, '/no-body', ['test_run.created']);
    const rotate = () => t.req('post', `${API}/webhooks/${sub.id}/rotate-secret`, f.lead.token);
    const ping = () => t.req('post', `${API}/webhooks/${sub.id}/ping`, f.lead.token);
    const secretHash = async () =>
      (await t.db.query<Json[]>(`SELECT * FROM webhooks WHERE id = $1`, [sub.id]))[0];
    const before = await secretHash();
    const refused = expectProblem(
      await rotate().send({ foo: 1, secret: 'x' }),
      422,
      'validation_error',
    );
    expect(refused.errors).toEqual({ foo: ['Unknown field'], secret: ['Unknown field'] });
    expect(expectProblem(await ping().send([1]), 422, 'validation_error').errors).toEqual({
      body: ['This operation takes no request body'],
    });
    expect(await secretHash()).toEqual(before);
    expect(await deliveries(sub.id)).toEqual([]);
    // No body, an empty object or an empty array are fine.
    await ping().expect(202);
    await ping().send({}).expect(202);
    const rotated = await rotate().send([]).expect(200);
    secrets.push(rotated.body.secret as string);
  });

  // Found by an audit: with an Idempotency-Key both answers were stored (secret in the clear) and
  // replayed (a rotation's replay answered a secret already replaced).
  it('ignores Idempotency-Key on subscribe and rotate-secret: a secret is never stored or replayed', async () => {
    const projectId = await t.createProject(f.lead.token);
    const key = t.unique('idem-');
    const subscribeWithKey = () =>
      t
        .req('post', `${API}/projects/${projectId}/webhooks`, f.lead.token)
        .set('Idempotency-Key', key)
        .send({ url: receiver.url('/idem'), events: ['test_run.created'] });
    const first = await subscribeWithKey();
    const second = await subscribeWithKey();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
    secrets.push(first.body.secret as string, second.body.secret as string);
    const rotateKey = t.unique('rot-');
    const rotate = () =>
      t
        .req('post', `${API}/webhooks/${first.body.id}/rotate-secret`, f.lead.token)
        .set('Idempotency-Key', rotateKey);
    const [r1, r2] = [await rotate(), await rotate()];
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(r2.headers['idempotent-replayed']).toBeUndefined();
    expect(r2.body.secret).not.toBe(r1.body.secret);
    secrets.push(r1.body.secret as string, r2.body.secret as string);
    const stored = await t.db.query<Json[]>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE key IN ($1, $2)`,
      [key, rotateKey],
    );
    expect(stored[0].n).toBe(0);
  });

  // Found by an audit: recording an attempt locked the subscription FOR UPDATE, which waited for
  // every transaction that had emitted an event for it (they hold its row FOR KEY SHARE through
  // the delivery's foreign key): one slow request held up every delivery of the instance.
  it('records attempts and changes a subscription while a transaction that emitted for it is open', async () => {
    const projectId = await t.createProject(f.lead.token);
    const sub = await subscribe(projectId, '/held', ['test_run.created']);
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      // What a request that recorded an event for the subscription holds until it commits.
      await qr.query(`SELECT 1 FROM webhooks WHERE id = $1 FOR KEY SHARE`, [sub.id]);
      await t.req('post', `${API}/webhooks/${sub.id}/ping`, f.lead.token).expect(202);
      const [ping] = await settled(sub.id, 1, 8_000);
      expect(ping.status).toBe('succeeded');
      const patched = await t
        .req('patch', `${API}/webhooks/${sub.id}`, f.lead.token)
        .send({ description: 'changed while an emitter is open' });
      expect(patched.status).toBe(200);
    } finally {
      await qr.commitTransaction();
      await qr.release();
    }
  });

  it('purges deliveries older than 30 days', async () => {
    const projectId = await t.createProject(f.lead.token);
    const sub = await subscribe(projectId, '/purge', ['test_run.created']);
    await createRun(projectId, 'old');
    await createRun(projectId, 'new');
    const log = await settled(sub.id, 2);
    const old = log[1];
    await t.db.query(
      `UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE id = $1`,
      [old.id],
    );
    await t.db.query(
      `UPDATE webhook_events SET created_at = now() - interval '31 days' WHERE id = $1`,
      [old.event_id],
    );
    expect(await t.app.get(WebhookPurger).purge()).toBe(2);
    const left = await deliveries(sub.id);
    expect(left.map((d) => d.id)).toEqual([log[0].id]);
    const events = await t.db.query<Json[]>(`SELECT id FROM webhook_events WHERE project_id = $1`, [projectId]);
    expect(events.map((e) => e.id)).toEqual([log[0].event_id]);
  });

  it('never shows a secret again: not in any log line, nor in any later response', async () => {
    expect(secrets.length).toBeGreaterThan(20);
    expect(logLines.length).toBeGreaterThan(0);
    const logs = logLines.join('');
    for (const secret of secrets) {
      expect(logs).not.toContain(secret.slice(6));
      expect(logs).not.toContain(encodeURIComponent(secret.slice(6)));
    }
    const projects = await t.db.query<Array<{ project_id: string; id: string }>>(
      `SELECT project_id, id FROM webhooks`,
    );
    const bodies: string[] = [];
    for (const { project_id: projectId, id } of projects) {
      bodies.push(JSON.stringify((await t.req('get', `${API}/projects/${projectId}/webhooks`, f.lead.token)).body));
      bodies.push(JSON.stringify((await t.req('get', `${API}/webhooks/${id}`, f.lead.token)).body));
      bodies.push(JSON.stringify((await t.req('get', `${API}/webhooks/${id}/deliveries`, f.lead.token)).body));
    }
    const all = bodies.join('') + receiver.received.map((r) => r.body + JSON.stringify(r.headers)).join('');
    for (const secret of secrets) expect(all).not.toContain(secret.slice(6));
  });
});

/** SSRF protection: WEBHOOK_ALLOW_PRIVATE off (the default). */
describe('Webhooks: destinations (WEBHOOK_ALLOW_PRIVATE off)', () => {
  let t: TestApp;
  let f: RoleFixture;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it.each([
    ['loopback', 'http://127.0.0.1:9/hook'],
    ['loopback range', 'http://127.1.2.3/hook'],
    ['private 10/8', 'http://10.1.2.3/hook'],
    ['private 192.168/16', 'https://192.168.0.10/hook'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest/meta-data'],
    ['unspecified', 'http://0.0.0.0:80/'],
    ['multicast', 'http://224.0.0.1/'],
    ['IPv6 loopback', 'http://[::1]:8080/hook'],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ['IPv6 link-local', 'http://[fe80::1]/hook'],
    ['IPv6 unique local', 'http://[fd00::1]/hook'],
    ['decimal loopback', 'http://2130706433/hook'],
    ['a name resolving to loopback', 'http://localhost:8080/hook'],
  ])('refuses %s (%s) with 422 webhook_url_not_allowed', async (_what, url) => {
    const res = await t
      .req('post', `${API}/projects/${f.projectId}/webhooks`, f.lead.token)
      .send({ url, events: ['test_run.created'] });
    expectProblem(res, 422, 'webhook_url_not_allowed');
    const rows = await t.db.query<Json[]>(`SELECT count(*)::int AS n FROM webhooks`);
    expect(rows[0].n).toBe(0);
  });

  it('checks the destination again at delivery time and never follows redirects', async () => {
    const created = await t
      .req('post', `${API}/projects/${f.projectId}/webhooks`, f.lead.token)
      .send({ url: 'http://93.184.216.34/hook', events: ['test_run.created'] });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const patched = await t
      .req('patch', `${API}/webhooks/${id}`, f.lead.token)
      .send({ url: receiver.url('/hook') });
    expectProblem(patched, 422, 'webhook_url_not_allowed');
    // The host now points somewhere private (as after a DNS change): the attempt is refused.
    await t.db.query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [id, receiver.url('/rebound')]);
    const ping = await t.req('post', `${API}/webhooks/${id}/ping`, f.lead.token).expect(202);
    let item: Json = {};
    await waitFor(
      async () => {
        const res = await t.req('get', `${API}/webhooks/${id}/deliveries`, f.lead.token);
        item = (res.body.items as Json[]).find((d) => d.id === ping.body.id) ?? {};
        return item.status === 'failed';
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the refused attempt' },
    );
    expect(item).toMatchObject({ response_status: null, status: 'failed' });
    expect(item.error).toMatch(/destination refused.*loopback/);
    expect(receiver.received).toHaveLength(0);
  });
});

/** Redirects: with private destinations allowed, a 3xx is a failed attempt, not followed. */
describe('Webhooks: redirects', () => {
  let t: TestApp;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_MAX_ATTEMPTS: '1' });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('records a 3xx as a failure and does not follow it', async () => {
    receiver.answer('/moved', () => ({
      status: 302,
      body: 'see /target',
      headers: { location: receiver.url('/target') },
    }));
    const projectId = await t.createProject();
    const res = await t
      .req('post', `${API}/projects/${projectId}/webhooks`, t.adminToken)
      .send({ url: receiver.url('/moved'), events: ['test_run.created'] });
    expect(res.status).toBe(201);
    const ping = await t.req('post', `${API}/webhooks/${res.body.id as string}/ping`, t.adminToken).expect(202);
    let item: Json = {};
    await waitFor(
      async () => {
        const list = await t.req('get', `${API}/webhooks/${res.body.id as string}/deliveries`, t.adminToken);
        item = (list.body.items as Json[]).find((d) => d.id === ping.body.id) ?? {};
        return item.status !== 'pending';
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the attempt' },
    );
    expect(item).toMatchObject({ status: 'failed', response_status: 302, response_body: 'see /target' });
    expect(receiver.received.map((r) => r.path)).toEqual(['/moved']);
  });
});
