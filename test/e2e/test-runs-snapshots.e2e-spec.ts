import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { RunSnapshotsOnce1763700002400 } from '../../src/database/migrations/1763700002400-RunSnapshotsOnce';
import { statementsDuring } from '../support/query-count';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const API = '/api/v1';

type Json = Record<string, unknown>;

/**
 * A run's environment snapshot is stored once, on its revision, and served from a per-process
 * cache of its JSON bytes (issue #23 item 1): what a run answers does not change, byte for byte.
 */
describe('test runs: snapshots stored once per revision', () => {
  let t: TestApp;
  let f: RoleFixture;
  /** Runs by role in these tests: with an environment, without, and re-captured by a PATCH. */
  const run: Record<'withEnv' | 'noEnv' | 'patched', Json> = {} as never;
  let env: Json;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    const nodes = Array.from({ length: 120 }, (_, i) => ({
      name: `node-${i}`,
      host_type: 'vm',
      role: 'app',
      tags: [`zone-${i % 3}`, 'Grüße ☕ \u2028'],
    }));
    env = await created(
      t.req('post', `${API}/environments`, f.tester.token).send({
        project_id: f.projectId,
        name: 'Snapshots',
        meta: { ratio: 1.5, big: 12345678901234567890, nested: { z: 1, a: [true, null] } },
        topology: { system_under_test: [{ name: 'svc', nodes }] },
      }),
    );
    run.withEnv = await createRun('With env', env.id as string);
    run.noEnv = await createRun('Without env', undefined);
    run.patched = await createRun('Patched', env.id as string);
    await t
      .req('patch', `${API}/environments/${String(env.id)}`, f.tester.token)
      .send({ tags: ['second'] })
      .expect(200);
    run.patched = (
      await t
        .req('patch', `${API}/test-runs/${String(run.patched.id)}`, f.tester.token)
        .send({ environment_id: env.id })
        .expect(200)
    ).body as Json;
  });
  afterAll(async () => {
    await t.close();
  });

  async function created(req: PromiseLike<{ status: number; body: unknown }>): Promise<Json> {
    const res = await req;
    if (res.status !== 201) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  /**
   * The 201 answer of `req` as text, checking that no `JSON.parse` while the service answered saw a
   * text as long as the snapshot (the client's own parse of the answer comes after the spy is
   * restored).
   */
  async function answerNeverParsingSnapshot(
    req: request.Test,
    snapshotChars: number,
  ): Promise<request.Response> {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const res = await req
        .buffer(true)
        .parse((r, done) => {
          let body = '';
          r.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          r.on('end', () => done(null, body));
        })
        .expect(201)
        .expect('content-type', 'application/json; charset=utf-8');
      const longest = Math.max(
        0,
        ...parse.mock.calls.map(([arg]) => (typeof arg === 'string' ? arg.length : 0)),
      );
      expect(longest).toBeLessThan(snapshotChars);
      return res;
    } finally {
      parse.mockRestore();
    }
  }

  function createRun(name: string, environmentId: string | undefined): Promise<Json> {
    return created(
      t
        .req('post', `${API}/test-runs`, f.tester.token)
        .send({ project_id: f.projectId, name, environment_id: environmentId }),
    );
  }

  /** The exact texts every run and the list answer. */
  async function answers(server: unknown = t.server): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const get = (path: string) =>
      request(server as never)
        .get(`${API}${path}`)
        .set('Authorization', `Bearer ${f.viewer.token}`)
        .expect(200)
        .expect('content-type', 'application/json; charset=utf-8');
    for (const [key, r] of Object.entries(run))
      out[key] = (await get(`/test-runs/${String(r.id)}`)).text;
    out.list = (await get(`/test-runs?project_id=${f.projectId}&sort_by=name&sort_order=asc`)).text;
    return out;
  }

  async function stored(): Promise<Record<string, string | null>> {
    const rows = await t.db.query<Array<{ id: string; s: string | null }>>(
      `SELECT id, environment_snapshot::text AS s FROM test_runs WHERE project_id = $1`,
      [f.projectId],
    );
    const byId = new Map(rows.map((r) => [r.id, r.s]));
    return Object.fromEntries(
      Object.entries(run).map(([k, r]) => [k, byId.get(r.id as string) ?? null]),
    );
  }

  /** What runs stored of a revision's snapshot until now: JSON.stringify of the parsed jsonb. */
  async function revisionText(revisionId: unknown): Promise<string> {
    const rows = await t.db.query<Array<{ full_snapshot: unknown }>>(
      `SELECT full_snapshot FROM environment_revisions WHERE id = $1`,
      [revisionId],
    );
    return JSON.stringify(rows[0].full_snapshot);
  }

  it('stores no copy on runs with a revision, `{}` on runs without; answers are what res.json wrote', async () => {
    expect(await stored()).toEqual({ withEnv: null, noEnv: '{}', patched: null });
    const a = await answers();
    // The create / PATCH answers (written by res.json from the parsed objects) spell the same bytes.
    const { updated_at: _u, ...patchedBody } = run.patched;
    expect(a.withEnv).toBe(JSON.stringify(run.withEnv));
    expect(a.noEnv).toBe(JSON.stringify(run.noEnv));
    expect(JSON.parse(a.patched)).toMatchObject(patchedBody);
    // The snapshot is the revision's, byte for byte as runs stored it before.
    const revisions = [run.withEnv, run.patched].map((r) => r.environment_revision_id);
    expect(revisions[0]).not.toBe(revisions[1]);
    expect(a.withEnv).toContain(`,"environment_snapshot":${await revisionText(revisions[0])},`);
    expect(a.patched).toContain(`,"environment_snapshot":${await revisionText(revisions[1])},`);
    expect(a.noEnv).toContain(',"environment_snapshot":{},"milestone_id":');
    const list = JSON.parse(a.list) as { items: Json[] };
    expect(list.items.map((i) => i.name)).toEqual(['Patched', 'With env', 'Without env']);
    expect(Object.keys(list)).toEqual(['items', 'page', 'page_size', 'has_next', 'total']);
    expect(a.list).toBe(JSON.stringify(list));
  });

  it("create and PATCH answer the bytes of the run's GET, the snapshot never parsed", async () => {
    const text = async (path: string) =>
      (await t.req('get', `${API}${path}`, f.viewer.token).expect(200)).text;
    const snapshotChars = (await revisionText(run.withEnv.environment_revision_id)).length;
    const post = await answerNeverParsingSnapshot(
      t
        .req('post', `${API}/test-runs`, f.tester.token)
        .set('Accept-Encoding', 'identity')
        .send({ project_id: f.projectId, name: 'Bytes', environment_id: env.id }),
      snapshotChars,
    );
    const postText = post.body as string;
    const id = (JSON.parse(postText) as Json).id as string;
    expect(post.headers['content-length']).toBe(String(Buffer.byteLength(postText)));
    expect(postText).toBe(await text(`/test-runs/${id}`));
    const patch = await t
      .req('patch', `${API}/test-runs/${id}`, f.tester.token)
      .send({ status: 'in_progress' })
      .expect(200)
      .expect('content-type', 'application/json; charset=utf-8');
    expect(patch.text).toBe(await text(`/test-runs/${id}`));
    // Replayed under the same Idempotency-Key: the stored bytes are the first answer's.
    const key = `bytes-${id}`;
    const first = await t
      .req('post', `${API}/test-runs`, f.tester.token)
      .set('Idempotency-Key', key)
      .send({ project_id: f.projectId, name: 'Bytes again', environment_id: env.id })
      .expect(201);
    const again = await t
      .req('post', `${API}/test-runs`, f.tester.token)
      .set('Idempotency-Key', key)
      .send({ project_id: f.projectId, name: 'Bytes again', environment_id: env.id })
      .expect(201)
      .expect('idempotent-replayed', 'true');
    expect(again.text).toBe(first.text);
    expect(first.text).toBe(await text(`/test-runs/${String((first.body as Json).id)}`));
  });

  it('a run made from a test plan answers the bytes of its GET, the snapshot never parsed', async () => {
    const text = async (path: string) =>
      (await t.req('get', `${API}${path}`, f.viewer.token).expect(200)).text;
    const snapshotChars = (await revisionText(run.withEnv.environment_revision_id)).length;
    const testCase = await created(
      t
        .req('post', `${API}/test-cases`, f.tester.token)
        .send({ project_id: f.projectId, title: 'Planned case' }),
    );
    const plan = await created(
      t
        .req('post', `${API}/test-plans`, f.tester.token)
        .send({ project_id: f.projectId, name: 'Bytes plan', case_ids: [testCase.id] }),
    );
    for (const start of [false, true]) {
      const res = await answerNeverParsingSnapshot(
        t
          .req('post', `${API}/test-plans/${String(plan.id)}/create-run`, f.tester.token)
          .send({ name: `From plan ${start}`, environment_id: env.id, start_immediately: start }),
        snapshotChars,
      );
      const body = res.body as string;
      const answered = JSON.parse(body) as Json;
      expect(answered.status).toBe(start ? 'in_progress' : 'not_started');
      expect(answered.summary).toMatchObject({ total: 1 });
      expect(body).toContain(
        `,"environment_snapshot":${await revisionText(answered.environment_revision_id)},`,
      );
      expect(body).toBe(await text(`/test-runs/${String(answered.id)}`));
    }
  });

  it('a warm list page and GET read no snapshot from the database', async () => {
    const page = await statementsDuring(() =>
      t.req('get', `${API}/test-runs?project_id=${f.projectId}`, f.viewer.token).expect(200),
    );
    const one = await statementsDuring(() =>
      t.req('get', `${API}/test-runs/${String(run.withEnv.id)}`, f.viewer.token).expect(200),
    );
    for (const sql of [...page.statements, ...one.statements]) {
      expect(sql).not.toMatch(/environment_revisions|full_snapshot/);
    }
  });

  it('the migration moves copies to the revision and back without changing any answer', async () => {
    const before = await answers();
    const migration = new RunSnapshotsOnce1763700002400();
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      // down: every run has its own copy again, the text it answers.
      await qr.startTransaction();
      await migration.down(qr);
      await qr.commitTransaction();
      const withEnvText = await revisionText(run.withEnv.environment_revision_id);
      expect(await stored()).toEqual({
        withEnv: withEnvText,
        noEnv: '{}',
        patched: await revisionText(run.patched.environment_revision_id),
      });
      expect(await answers()).toEqual(before);

      // A copy that is not the revision's text (PostgreSQL's rendering of the jsonb, as
      // RunSnapshotJson1763700000800 left older runs) is kept by up, and still answered.
      await t.db.query(
        `UPDATE test_runs r SET environment_snapshot = v.full_snapshot::json
           FROM environment_revisions v WHERE v.id = r.environment_revision_id AND r.id = $1`,
        [run.withEnv.id],
      );
      const rendered = (await stored()).withEnv;
      expect(rendered).not.toBe(withEnvText);
      expect(JSON.parse(rendered!)).toEqual(JSON.parse(withEnvText));
      const legacy = await answers();
      expect(legacy.withEnv).toContain(`,"environment_snapshot":${rendered},`);

      await qr.startTransaction();
      await migration.up(qr);
      await qr.commitTransaction();
      expect(await stored()).toEqual({ withEnv: rendered, noEnv: '{}', patched: null });
      expect(await answers()).toEqual(legacy);
    } finally {
      await qr.release();
    }
  });

  it('a run keeps the revision it relies on; a run without a copy must have one', async () => {
    await expect(
      t.db.query(`DELETE FROM environment_revisions WHERE id = $1`, [
        run.patched.environment_revision_id,
      ]),
    ).rejects.toThrow(/fk_test_runs_environment_revision/);
    await expect(
      t.db.query(`UPDATE test_runs SET environment_snapshot = NULL WHERE id = $1`, [run.noEnv.id]),
    ).rejects.toThrow(/ck_test_runs_environment_snapshot/);
  });

  it('two instances on one database, and one without a cache, answer the same bytes', async () => {
    const expected = await answers();
    const others: INestApplication[] = [
      await createApp(t.config, t.databaseUrl),
      await createApp({ ...t.config, snapshotCacheBytes: 0 }, t.databaseUrl),
    ];
    try {
      for (const other of others) await other.listen(0, '127.0.0.1');
      for (const other of others) {
        // Cold, then warm.
        expect(await answers(other.getHttpServer())).toEqual(expected);
        expect(await answers(other.getHttpServer())).toEqual(expected);
      }
      // A run created on the second instance is answered the same by the first.
      const res = await request(others[0].getHttpServer())
        .post(`${API}/test-runs`)
        .set('Authorization', `Bearer ${f.tester.token}`)
        .send({ project_id: f.projectId, name: 'Elsewhere', environment_id: env.id })
        .expect(201);
      const first = await t
        .req('get', `${API}/test-runs/${String(res.body.id)}`, f.viewer.token)
        .expect(200);
      expect(first.text).toBe(JSON.stringify(res.body));
      await t.req('delete', `${API}/test-runs/${String(res.body.id)}`, f.lead.token).expect(204);
    } finally {
      for (const other of others) await other.close();
    }
  });

  it('HEAD answers the headers of GET without a body; a missing run is still a problem', async () => {
    // Uncompressed: a compressed GET is chunked (HEAD is never compressed).
    const got = await t
      .req('get', `${API}/test-runs/${String(run.withEnv.id)}`, f.viewer.token)
      .set('Accept-Encoding', 'identity');
    const head = await t.req('head', `${API}/test-runs/${String(run.withEnv.id)}`, f.viewer.token);
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBe(got.headers.etag);
    expect(head.headers['content-length']).toBe(got.headers['content-length']);
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
    expect(got.headers['x-request-id']).toBeDefined();
    const missing = await t.req(
      'get',
      `${API}/test-runs/0190a000-0000-7000-8000-000000000000`,
      f.viewer.token,
    );
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.body.code).toBe('test_run_not_found');
    expect(missing.headers['x-request-id']).toBeDefined();
  });
});
