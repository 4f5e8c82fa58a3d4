import { gzipSync } from 'node:zlib';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { IdempotencyService } from '../../src/common/idempotency/idempotency.service';
import { fixture, importHelpers } from '../support/import-fixture';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

const API = '/api/v1';
/** MAX_UPLOAD_BYTES of the second instance. */
const SMALL_UPLOAD_LIMIT = 4096;

interface Operation {
  parameters?: Array<{ in: string; name: string }>;
  responses: Record<string, { description: string; headers?: Record<string, unknown> }>;
}

/** `Idempotency-Key` on creating and importing POSTs (issue #18 §1). */
describe('Idempotency-Key', () => {
  let t: TestApp;
  let f: RoleFixture;
  /** A second instance of the service on the same database. */
  let other: INestApplication;
  const { createRun } = importHelpers(() => ({ t, f }));

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    // Same database, a small upload limit (for the 413 test; the rest sends small bodies).
    other = await createApp({ ...t.config, maxUploadBytes: SMALL_UPLOAD_LIMIT }, t.databaseUrl);
    await other.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  function createDataset(name: string, key?: string, token = f.tester.token, server = t.server) {
    const r = request(server)
      .post(`${API}/datasets`)
      .set('Authorization', `Bearer ${token}`)
      .send({ project_id: f.projectId, name });
    return key === undefined ? r : r.set('Idempotency-Key', key);
  }

  async function datasetsNamed(name: string): Promise<number> {
    const rows = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM datasets WHERE project_id = $1 AND name = $2`,
      [f.projectId, name],
    );
    return rows[0].n;
  }

  async function storedKeys(key: string): Promise<number> {
    const rows = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`,
      [key],
    );
    return rows[0].n;
  }

  it('replays the first response byte for byte, with Idempotent-Replayed, and creates nothing more', async () => {
    const key = t.unique('key-');
    const name = t.unique('Dataset ');
    const first = await createDataset(name, key);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await createDataset(name, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.text).toBe(first.text);
    expect(await datasetsNamed(name)).toBe(1);
  });

  it('refuses the same key with another body: 422 idempotency_key_reused, nothing created', async () => {
    const key = t.unique('key-');
    const name = t.unique('Dataset ');
    expect((await createDataset(name, key)).status).toBe(201);
    const other = t.unique('Dataset ');
    expectProblem(await createDataset(other, key), 422, 'idempotency_key_reused');
    expect(await datasetsNamed(other)).toBe(0);
    // Another query string is another request too.
    const res = await request(t.server)
      .post(`${API}/datasets?x=1`)
      .set('Authorization', `Bearer ${f.tester.token}`)
      .set('Idempotency-Key', key)
      .send({ project_id: f.projectId, name });
    expectProblem(res, 422, 'idempotency_key_reused');
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
    ['with a control character', 'a\tb'],
  ])(
    'refuses a key that is %s: 422 validation_error on the header, nothing created',
    async (_what, key) => {
      const name = t.unique('Dataset ');
      const res = await createDataset(name, key);
      const body = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(body.errors as object)).toEqual(['header.idempotency-key']);
      expect(await datasetsNamed(name)).toBe(0);
    },
  );

  it('checks the key with the request shape: 422 before 404 and 403, listed with the body errors (CONTRACT §3)', async () => {
    const bad = 'k'.repeat(256);
    const fields = (res: request.Response) =>
      Object.keys(expectProblem(res, 422, 'validation_error').errors as object).sort();
    expect(fields(await createDataset(t.unique('Dataset '), '', f.viewer.token))).toEqual([
      'header.idempotency-key',
    ]);
    expect(fields(await createDataset(t.unique('Dataset '), bad, f.outsider.token))).toEqual([
      'header.idempotency-key',
    ]);
    const both = await request(t.server)
      .post(`${API}/datasets`)
      .set('Authorization', `Bearer ${f.lead.token}`)
      .set('Idempotency-Key', bad)
      .send({ project_id: f.projectId, name: 5 });
    expect(fields(both)).toEqual(['header.idempotency-key', 'name']);
  });

  it('accepts a key of 255 printable characters', async () => {
    const key = `${t.unique('k')} ~!`.padEnd(255, 'x');
    expect((await createDataset(t.unique('Dataset '), key)).status).toBe(201);
  });

  it('answers 409 idempotency_request_in_progress while a request with the key runs (its lock is held)', async () => {
    const key = t.unique('key-');
    const name = t.unique('Dataset ');
    // Hold the key's lock from another session, as a running request (on any instance) holds it.
    const runner = t.db.createQueryRunner();
    await runner.connect();
    const lock = `idempotency:${f.tester.id}:POST:${API}/datasets:${key}`;
    await runner.query(`SELECT pg_advisory_lock(hashtextextended($1, 0))`, [lock]);
    try {
      const busy = await createDataset(name, key);
      expectProblem(busy, 409, 'idempotency_request_in_progress');
      expect(busy.headers['retry-after']).toBe('1');
      expect(await datasetsNamed(name)).toBe(0);
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [lock]);
      await runner.release();
    }
    // Once it is released (the first request ended without storing anything), the retry runs.
    const res = await createDataset(name, key);
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await datasetsNamed(name)).toBe(1);
  });

  it('never applies the same key twice, for concurrent requests on one or two instances', async () => {
    for (let round = 0; round < 6; round += 1) {
      const key = t.unique('race-');
      const name = t.unique('Dataset ');
      const servers = round % 2 === 0 ? [t.server, t.server] : [t.server, other.getHttpServer()];
      const responses = await Promise.all(
        servers.map((s) => createDataset(name, key, f.tester.token, s)),
      );
      const fresh = responses.filter(
        (r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined,
      );
      expect(fresh).toHaveLength(1);
      for (const r of responses) {
        if (r === fresh[0]) continue;
        if (r.status === 409) expectProblem(r, 409, 'idempotency_request_in_progress');
        else {
          expect(r.status).toBe(201);
          expect(r.headers['idempotent-replayed']).toBe('true');
          expect(r.text).toBe(fresh[0].text);
        }
      }
      expect(await datasetsNamed(name)).toBe(1);
    }
  });

  it('does not store a 5xx: the retry runs again', async () => {
    const key = t.unique('key-');
    const name = t.unique('Dataset ');
    await t.db.query(`
      CREATE FUNCTION fail_dataset_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated failure'; END $$`);
    await t.db.query(
      `CREATE TRIGGER fail_dataset_insert BEFORE INSERT ON datasets FOR EACH ROW EXECUTE FUNCTION fail_dataset_insert()`,
    );
    try {
      expectProblem(await createDataset(name, key), 500, 'internal_error');
    } finally {
      await t.db.query(`DROP TRIGGER fail_dataset_insert ON datasets`);
      await t.db.query(`DROP FUNCTION fail_dataset_insert()`);
    }
    expect(await storedKeys(key)).toBe(0);
    const retry = await createDataset(name, key);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await datasetsNamed(name)).toBe(1);
  });

  it('stores a 4xx of the handler (its work undone) and replays it, even once the request would succeed', async () => {
    const name = t.unique('Dataset ');
    const existing = await createDataset(name);
    expect(existing.status).toBe(201);
    const key = t.unique('key-');
    const refused = await createDataset(name, key);
    expectProblem(refused, 409, 'dataset_already_exists');
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    expect(await storedKeys(key)).toBe(1);

    const del = await t.req('delete', `${API}/datasets/${String(existing.body.id)}`, f.lead.token);
    expect(del.status).toBe(204);
    const replay = await createDataset(name, key);
    expect(replay.status).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['content-type']).toBe(refused.headers['content-type']);
    expect(replay.text).toBe(refused.text);
    expect(await datasetsNamed(name)).toBe(0);
  });

  it("does not store the guard's refusals (nothing ran): the corrected request runs", async () => {
    const key = t.unique('key-');
    const invalid = await request(t.server)
      .post(`${API}/datasets`)
      .set('Authorization', `Bearer ${f.tester.token}`)
      .set('Idempotency-Key', key)
      .send({ project_id: f.projectId });
    expectProblem(invalid, 422, 'validation_error');
    const forbidden = await createDataset(t.unique('Dataset '), key, f.viewer.token);
    expectProblem(forbidden, 403, 'insufficient_project_role');
    expect(await storedKeys(key)).toBe(0);
    expect((await createDataset(t.unique('Dataset '), key)).status).toBe(201);
  });

  it('does not store the access refusals of routes whose service checks access (POST /run-cases): a retry once allowed runs', async () => {
    const g = await t.roleFixture();
    const post = (path: string, token: string, body: Record<string, unknown>, key?: string) => {
      const r = request(t.server)
        .post(`${API}${path}`)
        .set('Authorization', `Bearer ${token}`)
        .send(body);
      return key === undefined ? r : r.set('Idempotency-Key', key);
    };
    const run = await post('/test-runs', g.lead.token, { project_id: g.projectId, name: 'R' });
    const cases = await Promise.all(
      ['A', 'B'].map((title) =>
        post('/test-cases', g.lead.token, { project_id: g.projectId, title }),
      ),
    );
    const [one, bulk] = [t.unique('add-'), t.unique('bulk-')];
    const addOne = () =>
      post(
        '/run-cases',
        g.viewer.token,
        { test_run_id: run.body.id, test_case_id: cases[0].body.id },
        one,
      );
    const addBulk = () =>
      post(
        '/run-cases/bulk',
        g.outsider.token,
        { test_run_id: run.body.id, test_case_ids: [cases[1].body.id] },
        bulk,
      );

    expectProblem(await addOne(), 403, 'insufficient_project_role');
    expectProblem(await addBulk(), 404, 'test_run_not_found');
    expect([await storedKeys(one), await storedKeys(bulk)]).toEqual([0, 0]);

    await request(t.server)
      .patch(`${API}/projects/${g.projectId}/members/${g.viewer.id}`)
      .set('Authorization', `Bearer ${g.lead.token}`)
      .send({ role: 'tester' })
      .expect(200);
    await t.addMember(g.projectId, g.outsider.id, 'tester', g.lead.token);
    for (const res of [await addOne(), await addBulk()]) {
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    // Now stored: the same requests replay.
    expect((await addOne()).headers['idempotent-replayed']).toBe('true');
  });

  it('scopes a key to the user and to the path', async () => {
    const key = t.unique('shared-');
    const name = t.unique('Dataset ');
    const a = await createDataset(name, key, f.tester.token);
    const b = await createDataset(`${name} lead`, key, f.lead.token);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const env = await t
      .req('post', `${API}/environments`, f.tester.token)
      .set('Idempotency-Key', key)
      .send({ project_id: f.projectId, name: t.unique('Env ') });
    expect(env.status).toBe(201);
    expect(env.headers['idempotent-replayed']).toBeUndefined();
    expect(await datasetsNamed(name)).toBe(1);
    expect(await datasetsNamed(`${name} lead`)).toBe(1);
    expect(await storedKeys(key)).toBe(3);
  });

  // Found by an audit: the scope was the path as spelled, so the same request through another
  // spelling of the same resource's URL ran twice.
  it('scopes a key to the resource, whatever the spelling of its URL (trailing slash, id case)', async () => {
    const key = t.unique('spelling-');
    const body = { project_id: f.projectId, name: t.unique('Run ') };
    const post = (path: string) =>
      t.req('post', `${API}${path}`, f.tester.token).set('Idempotency-Key', key).send(body);
    const first = await post('/test-runs/');
    expect(first.status).toBe(201);
    const again = await post('/test-runs');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await storedKeys(key)).toBe(1);
  });

  it('forgets a key once it expired: the request runs again', async () => {
    const key = t.unique('key-');
    const name = t.unique('Dataset ');
    expect((await createDataset(name, key)).status).toBe(201);
    const stored = await t.db.query<Array<{ hours: number }>>(
      `SELECT round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours
         FROM idempotency_keys WHERE key = $1`,
      [key],
    );
    expect(stored).toEqual([{ hours: t.config.idempotencyTtlHours }]);
    await t.db.query(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`,
      [key],
    );
    const again = await createDataset(name, key);
    expectProblem(again, 409, 'dataset_already_exists');
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it('purges expired keys in batches, and only those', async () => {
    const expired = t.unique('old-');
    const live = t.unique('live-');
    await t.db.query(
      `INSERT INTO idempotency_keys (principal_id, method, path, key, fingerprint, status, body, expires_at)
       SELECT $1, 'POST', '/api/v1/x/' || i, $2, repeat('0', 64), 201, '\\x'::bytea, now() - interval '1 hour'
         FROM generate_series(1, 2500) AS i`,
      [f.tester.id, expired],
    );
    await t.db.query(
      `INSERT INTO idempotency_keys (principal_id, method, path, key, fingerprint, status, body, expires_at)
       VALUES ($1, 'POST', '/api/v1/x', $2, repeat('0', 64), 201, '\\x'::bytea, now() + interval '1 hour')`,
      [f.tester.id, live],
    );
    // Two instances purge at once: each row is deleted once, nothing waits or fails.
    const deleted = await Promise.all([
      t.app.get(IdempotencyService).purgeExpired(),
      other.get(IdempotencyService).purgeExpired(),
    ]);
    expect(deleted[0] + deleted[1]).toBeGreaterThanOrEqual(2500);
    expect(await storedKeys(expired)).toBe(0);
    expect(await storedKeys(live)).toBe(1);
    const left = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE expires_at <= now()`,
    );
    expect(left[0].n).toBe(0);
  });

  it('ignores the key where the answer carries a secret (a new API key is never stored)', async () => {
    const key = t.unique('key-');
    const create = () =>
      t
        .req('post', `${API}/users/me/api-keys`, f.tester.token)
        .set('Idempotency-Key', key)
        .send({ name: t.unique('ci ') });
    const [a, b] = [await create(), await create()];
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.body.api_key).not.toBe(b.body.api_key);
    expect(await storedKeys(key)).toBe(0);
  });

  it('is documented on every authenticated POST of the OpenAPI document, not on login', async () => {
    const doc = (await request(t.server).get('/openapi.json')).body as {
      paths: Record<string, Record<string, Operation>>;
    };
    const posts = Object.entries(doc.paths).filter(([, item]) => item.post !== undefined);
    expect(posts.length).toBeGreaterThan(10);
    for (const [path, item] of posts) {
      const op = item.post;
      const documented = (op.parameters ?? []).some(
        (p) => p.in === 'header' && p.name === 'Idempotency-Key',
      );
      const without = [
        `${API}/auth/login`,
        `${API}/users`,
        `${API}/users/me/api-keys`,
        `${API}/projects/{id}/webhooks`,
        `${API}/webhooks/{id}/rotate-secret`,
      ];
      expect([path, documented]).toEqual([path, !without.includes(path)]);
      if (!documented) continue;
      expect(op.responses['422'].description).toContain('idempotency_key_reused');
      expect(op.responses['409'].description).toContain('idempotency_request_in_progress');
      const ok = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
      expect(ok?.[1].headers?.['Idempotent-Replayed']).toBeDefined();
    }
  });

  describe('JUnit import (multipart)', () => {
    function importInto(runId: string, key: string, file: Buffer, dryRun = 'false') {
      return t
        .req('post', `${API}/test-runs/${runId}/imports/junit`, f.tester.token)
        .set('Idempotency-Key', key)
        .field('dry_run', dryRun)
        .attach('file', file, 'basic.xml');
    }

    async function importsOf(runId: string): Promise<number> {
      const rows = await t.db.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM junit_imports WHERE test_run_id = $1`,
        [runId],
      );
      return rows[0].n;
    }

    it('replays a retried upload (new multipart boundary): one import', async () => {
      const runId = await createRun(f.projectId);
      const key = t.unique('import-');
      const first = await importInto(runId, key, fixture('basic.xml'));
      expect(first.status).toBe(201);
      const again = await importInto(runId, key, fixture('basic.xml'));
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await importsOf(runId)).toBe(1);
    });

    // Found by an audit: a compressed body was fingerprinted compressed, where its boundary
    // cannot be found, so a retry with a new boundary was 422 idempotency_key_reused.
    it('replays a retried gzip-encoded upload with a new boundary: one import', async () => {
      const runId = await createRun(f.projectId);
      const key = t.unique('import-gz-');
      const upload = (boundary: string, file: Buffer) =>
        t
          .req('post', `${API}/test-runs/${runId}/imports/junit`, f.tester.token)
          .set('Idempotency-Key', key)
          .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
          .set('Content-Encoding', 'gzip')
          .send(
            gzipSync(
              Buffer.concat([
                Buffer.from(
                  `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="basic.xml"\r\n\r\n`,
                ),
                file,
                Buffer.from(`\r\n--${boundary}--\r\n`),
              ]),
            ),
          );
      const first = await upload('AAAAboundary1', fixture('basic.xml'));
      expect(first.status).toBe(201);
      const again = await upload('BBBBboundary2', fixture('basic.xml'));
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      const changed = Buffer.concat([fixture('basic.xml'), Buffer.from('\n')]);
      expectProblem(await upload('CCCCboundary3', changed), 422, 'idempotency_key_reused');
      expect(await importsOf(runId)).toBe(1);
    });

    it('refuses the key with another file or another field: 422 idempotency_key_reused', async () => {
      const runId = await createRun(f.projectId);
      const key = t.unique('import-');
      expect((await importInto(runId, key, fixture('basic.xml'))).status).toBe(201);
      const changed = Buffer.concat([fixture('basic.xml'), Buffer.from('\n')]);
      expectProblem(await importInto(runId, key, changed), 422, 'idempotency_key_reused');
      expectProblem(
        await importInto(runId, key, fixture('basic.xml'), 'true'),
        422,
        'idempotency_key_reused',
      );
      expect(await importsOf(runId)).toBe(1);
    });

    it('does not store a 413 (the body was not read whole): the retry with a smaller file runs', async () => {
      const runId = await createRun(f.projectId);
      const key = t.unique('import-');
      const big = Buffer.from(
        `<testsuite name="big">${'<testcase name="t"/>'.repeat(SMALL_UPLOAD_LIMIT / 10)}</testsuite>`,
      );
      const upload = (file: Buffer) =>
        request(other.getHttpServer())
          .post(`${API}/test-runs/${runId}/imports/junit`)
          .set('Authorization', `Bearer ${f.tester.token}`)
          .set('Idempotency-Key', key)
          .attach('file', file, 'r.xml');
      expectProblem(await upload(big), 413, 'payload_too_large');
      expect(await storedKeys(key)).toBe(0);
      const res = await upload(fixture('basic.xml'));
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await importsOf(runId)).toBe(1);
    });

    it('replays an upload to the run named by its id in upper case: one import', async () => {
      const runId = await createRun(f.projectId);
      const key = t.unique('import-case-');
      const first = await importInto(runId, key, fixture('basic.xml'));
      expect(first.status).toBe(201);
      const again = await importInto(runId.toUpperCase(), key, fixture('basic.xml'));
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await importsOf(runId)).toBe(1);
    });

    // Found by an audit: the form's 422 was stored, and the corrected retry answered
    // idempotency_key_reused (README: request validation refusals are not stored).
    it("does not store a refused form field (as a JSON body's 422): the corrected retry runs", async () => {
      const runId = await createRun(f.projectId);
      for (const [field, value] of [
        ['dry_run', 'maybe'],
        ['colour', 'blue'],
      ]) {
        const key = t.unique('import-form-');
        const refused = await t
          .req('post', `${API}/test-runs/${runId}/imports/junit`, f.tester.token)
          .set('Idempotency-Key', key)
          .field(field, value)
          .attach('file', fixture('basic.xml'), 'basic.xml');
        expect(expectProblem(refused, 422, 'validation_error').errors).toHaveProperty([field]);
        expect(await storedKeys(key)).toBe(0);
        const corrected = await importInto(runId, key, fixture('basic.xml'));
        expect(corrected.status).toBe(201);
        expect(corrected.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(await importsOf(runId)).toBe(2);
    });

    it('stores a refused upload (after reading the rest of it) and replays it', async () => {
      const runId = await createRun(f.projectId);
      const key = t.unique('import-');
      const refused = await importInto(runId, key, fixture('malformed.xml'));
      expect(refused.status).toBe(422);
      const again = await importInto(runId, key, fixture('malformed.xml'));
      expect(again.status).toBe(422);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(refused.text);
      expect(await importsOf(runId)).toBe(0);
    });
  });
});
