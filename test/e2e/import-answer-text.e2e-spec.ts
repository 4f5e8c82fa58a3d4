import {
  IMPORT_ANSWER_LISTS,
  ImportAnswerText1763700019990,
} from '../../src/database/migrations/1763700019990-ImportAnswerText';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

/**
 * Migration `ImportAnswerText`: an import's whole answer is stored as the text it was sent as
 * (`answer json`), its counters apart (`summary jsonb`, what the list of imports reads), and
 * `GET /imports/{id}` sends the stored text as it is.
 */
describe('JUnit import: the answer stored as sent (migration ImportAnswerText)', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  /** The answer without its per-case lists. */
  function withoutLists(answer: Record<string, unknown>): Record<string, unknown> {
    const rest = { ...answer };
    for (const key of IMPORT_ANSWER_LISTS) delete rest[key];
    return rest;
  }

  /** Imports a report that creates three cases, with a warning and a flaky test; the answer's text. */
  async function importReport(name: string): Promise<{ id: string; runId: string; text: string }> {
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name });
    expect(run.status).toBe(201);
    const xml =
      '<?xml version="1.0"?><testsuite name="Answer">' +
      `<testcase classname="a.B" name="stores ${name}"/>` +
      `<testcase classname="a.B" name="retries ${name}"><failure message="first"/></testcase>` +
      `<testcase classname="a.B" name="retries ${name}"/>` +
      `<testcase classname="nameless ${name}"/></testsuite>`;
    const res = await t
      .req(
        'post',
        `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', Buffer.from(xml), 'junit.xml');
    expect(res.status).toBe(201);
    expect(res.body.created_cases).toHaveLength(3); // the nameless one under a made-up name
    expect(res.body.warnings).toHaveLength(1);
    expect(res.body.flaky_cases).toHaveLength(1);
    return { id: res.body.id as string, runId: run.body.id as string, text: res.text };
  }

  async function record(
    run: (sql: string, params: unknown[]) => Promise<unknown>,
    id: string,
  ): Promise<{ summary: Record<string, unknown>; answer: string | null }> {
    const rows = (await run(
      `SELECT summary,
              CASE WHEN to_jsonb(j) ? 'answer' THEN (to_jsonb(j)->'answer')::text END AS answer
         FROM junit_imports j WHERE id = $1`,
      [id],
    )) as Array<{ summary: Record<string, unknown>; answer: string | null }>;
    const row = rows[0];
    if (row === undefined) throw new Error(`no import record ${id}`);
    return row;
  }

  it('stores the answer as it was sent and its counters apart; GET sends the stored text as it is', async () => {
    const { id, runId, text } = await importReport('as sent');
    const answer = JSON.parse(text) as Record<string, unknown>;
    const [row] = (await t.db.query(
      `SELECT summary, answer::text AS answer FROM junit_imports WHERE id = $1`,
      [id],
    )) as Array<{ summary: Record<string, unknown>; answer: string }>;
    expect(row?.answer).toBe(text);
    expect(row?.summary).toEqual(withoutLists(answer));
    for (const key of IMPORT_ANSWER_LISTS) expect(row?.summary).not.toHaveProperty(key);

    const got = await t.req('get', `/api/v1/imports/${id}`, f.viewer.token);
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(got.text).toContain(`,"result":${text},"problem":null}`);
    expect(got.body).toMatchObject({
      id,
      test_run_id: runId,
      status: 'succeeded',
      progress: { processed: 3, total: 3 }, // three tests, the retried one folded
      summary: answer.summary,
      result: answer,
      problem: null,
    });
    expect(Object.keys(got.body)).toEqual([
      'id',
      'project_id',
      'test_run_id',
      'status',
      'progress',
      'source_filename',
      'size_bytes',
      'sha256',
      'created_by',
      'created_at',
      'started_at',
      'finished_at',
      'summary',
      'result',
      'problem',
    ]);

    const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
    expect(list.status).toBe(200);
    expect(list.body.items[0]).toMatchObject({ id, summary: answer.summary, status: 'completed' });
  });

  it('stores and answers the same bytes for text beyond ASCII and JSON escapes', async () => {
    // The record stores the answer's text and the request answers its UTF-8 bytes: the same bytes.
    const { id, text } = await importReport('bytes é€😀 \\ back\\slash');
    expect(text).toContain('bytes é€😀 \\\\ back\\\\slash');
    const [row] = (await t.db.query(
      `SELECT answer::text AS answer FROM junit_imports WHERE id = $1`,
      [id],
    )) as Array<{ answer: string }>;
    expect(row?.answer).toBe(text);
    const got = await t.req('get', `/api/v1/imports/${id}`, f.viewer.token);
    expect(got.status).toBe(200);
    expect(got.text).toContain(`,"result":${text},"problem":null}`);
  });

  it('keeps an answer exactly on a record that succeeded', async () => {
    const { id } = await importReport('checked');
    await expect(
      t.db.query(`UPDATE junit_imports SET answer = NULL WHERE id = $1`, [id]),
    ).rejects.toThrow(/ck_junit_imports_answer/);
    await expect(
      t.db.query(`UPDATE junit_imports SET status = 'failed' WHERE id = $1`, [id]),
    ).rejects.toThrow(/ck_junit_imports_answer/);
    expect((await record((sql, p) => t.db.query(sql, p), id)).answer).not.toBeNull();
  });

  it('is reversible without loss: down puts the whole answer back in summary, up splits it again (rolled back after)', async () => {
    const { id, text } = await importReport('reversed');
    const answer = JSON.parse(text) as Record<string, unknown>;
    const migration = new ImportAnswerText1763700019990();
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await migration.down(qr);
      const down = await record((sql, p) => qr.query(sql, p), id);
      expect(down.summary).toEqual(answer);
      expect(down.answer).toBeNull();
      await migration.up(qr);
      const up = await record((sql, p) => qr.query(sql, p), id);
      expect(up.summary).toEqual(withoutLists(answer));
      expect(JSON.parse(up.answer ?? 'null')).toEqual(answer);
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
    const [after] = (await t.db.query(
      `SELECT answer::text AS answer FROM junit_imports WHERE id = $1`,
      [id],
    )) as Array<{ answer: string }>;
    expect(after?.answer).toBe(text);
  });
});
