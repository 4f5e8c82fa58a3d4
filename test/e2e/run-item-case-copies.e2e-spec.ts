import { RunItemCaseCopiesOnDemand1763700019850 } from '../../src/database/migrations/1763700019850-RunItemCaseCopiesOnDemand';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

type Json = Record<string, unknown>;

/**
 * A run item's copies of its case's key, title, priority and tags (migration
 * RunItemCaseCopiesOnDemand): NULL while the case is unchanged, written by triggers when the case
 * changes or is deleted, so that a deleted case's items still show the values the case had when
 * they were added (reference §3.3), exactly as when every item stored them.
 */
describe('run items: the case copies are stored only when the case changes or goes', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  const api = (path: string) => `/api/v1${path}`;

  async function ok(res: { status: number; body: unknown }, status: number): Promise<Json> {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  const createRun = async (): Promise<Json> =>
    ok(
      await t
        .req('post', api('/test-runs'), f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Run ') }),
      201,
    );

  const createCase = async (body: Json = {}): Promise<Json> =>
    ok(
      await t
        .req('post', api('/test-cases'), f.tester.token)
        .send({ project_id: f.projectId, title: t.unique('Case '), ...body }),
      201,
    );

  const addCase = async (runId: unknown, caseId: unknown): Promise<Json> =>
    ok(
      await t
        .req('post', api('/run-cases'), f.tester.token)
        .send({ test_run_id: runId, test_case_id: caseId }),
      201,
    );

  const patchCase = async (caseId: unknown, body: Json): Promise<Json> =>
    ok(await t.req('patch', api(`/test-cases/${String(caseId)}`), f.tester.token).send(body), 200);

  const deleteCase = async (caseId: unknown): Promise<void> => {
    await ok(await t.req('delete', api(`/test-cases/${String(caseId)}`), f.lead.token), 204);
  };

  /** What the API shows of an item's case. */
  async function shown(itemId: unknown): Promise<Json> {
    const got = await ok(
      await t.req('get', api(`/run-cases/${String(itemId)}`), f.viewer.token),
      200,
    );
    return {
      test_case_id: got.test_case_id,
      key: got.test_case_key,
      title: got.test_case_title,
      priority: got.test_case_priority,
      tags: got.test_case_tags,
    };
  }

  /** What the item stores of its case. */
  async function stored(itemId: unknown): Promise<Json> {
    const [row] = await t.db.query<Json[]>(
      `SELECT test_case_key AS key, test_case_title AS title, test_case_priority AS priority,
              test_case_tags AS tags
         FROM run_items WHERE id = $1`,
      [itemId],
    );
    return row;
  }

  const NONE = { key: null, title: null, priority: null, tags: null };

  it('an item of an unchanged case stores no copy and shows the live values', async () => {
    const c = await createCase({ priority: 'high', tags: ['smoke', 'login'] });
    const item = await addCase((await createRun()).id, c.id);
    expect(await stored(item.id)).toEqual(NONE);
    expect(item).toMatchObject({
      test_case_key: c.key,
      test_case_title: c.title,
      test_case_priority: 'high',
      test_case_tags: ['smoke', 'login'],
    });
    // A change of anything else (description, status) writes no copy either.
    await patchCase(c.id, { description: 'more words' });
    expect(await stored(item.id)).toEqual(NONE);
  });

  it("a deleted case's items keep its key, title, priority and tags", async () => {
    const c = await createCase({ priority: 'low', tags: ['nightly'] });
    const [a, b] = [await createRun(), await createRun()];
    const items = [await addCase(a.id, c.id), await addCase(b.id, c.id)];
    await deleteCase(c.id);
    for (const item of items) {
      expect(await shown(item.id)).toEqual({
        test_case_id: null,
        key: c.key,
        title: c.title,
        priority: 'low',
        tags: ['nightly'],
      });
    }
    // The run's list searches and shows the kept title.
    const list = await ok(
      await t.req(
        'get',
        api(`/run-cases?test_run_id=${String(a.id)}&search=${encodeURIComponent(String(c.title))}`),
        f.viewer.token,
      ),
      200,
    );
    expect((list.items as Json[]).map((i) => [i.id, i.test_case_title])).toEqual([
      [items[0].id, c.title],
    ]);
  });

  it('a renamed then deleted case: each item shows the values it was added with', async () => {
    const c = await createCase({ title: t.unique('First '), priority: 'low', tags: ['one'] });
    const first = await addCase((await createRun()).id, c.id);
    const second = await patchCase(c.id, {
      title: t.unique('Second '),
      priority: 'high',
      tags: ['two'],
    });
    // The change wrote the values from before it into the item added before it.
    expect(await stored(first.id)).toEqual({
      key: c.key,
      title: c.title,
      priority: 'low',
      tags: ['one'],
    });
    const middle = await addCase((await createRun()).id, c.id);
    expect(await stored(middle.id)).toEqual(NONE);
    const third = await patchCase(c.id, { title: t.unique('Third ') });
    const last = await addCase((await createRun()).id, c.id);
    // While the case exists every item shows its live values.
    for (const item of [first, middle, last]) {
      expect(await shown(item.id)).toMatchObject({ title: third.title, priority: 'high' });
    }
    await deleteCase(c.id);
    expect(await shown(first.id)).toEqual({
      test_case_id: null,
      key: c.key,
      title: c.title,
      priority: 'low',
      tags: ['one'],
    });
    expect(await shown(middle.id)).toEqual({
      test_case_id: null,
      key: c.key,
      title: second.title,
      priority: 'high',
      tags: ['two'],
    });
    expect(await shown(last.id)).toEqual({
      test_case_id: null,
      key: c.key,
      title: third.title,
      priority: 'high',
      tags: ['two'],
    });
  });

  it('many cases changed and deleted in one statement each keep their own values', async () => {
    const runs = [await createRun(), await createRun()];
    const cases: Json[] = [];
    for (let i = 0; i < 12; i++) {
      cases.push(
        await createCase({
          priority: i % 2 === 0 ? 'medium' : null,
          tags: [`t${i}`],
        }),
      );
    }
    const items = new Map<unknown, Json[]>();
    for (const c of cases) {
      items.set(c.id, [await addCase(runs[0].id, c.id), await addCase(runs[1].id, c.id)]);
    }
    const ids = cases.map((c) => c.id);
    // Half are renamed in one statement, then all are deleted in one statement.
    const renamed = ids.slice(0, 6);
    await t.db.query(
      `UPDATE test_cases SET title = title || ' (renamed)', tags = '{}' WHERE id = ANY($1::uuid[])`,
      [renamed],
    );
    await t.db.query(`DELETE FROM test_cases WHERE id = ANY($1::uuid[])`, [ids]);
    expect(
      await t.db.query(`SELECT count(*)::int AS n FROM test_cases WHERE id = ANY($1::uuid[])`, [
        ids,
      ]),
    ).toEqual([{ n: 0 }]);
    for (const [i, c] of cases.entries()) {
      for (const item of items.get(c.id) ?? []) {
        expect(await shown(item.id)).toEqual({
          test_case_id: null,
          key: c.key,
          title: c.title,
          priority: i % 2 === 0 ? 'medium' : null,
          tags: [`t${i}`],
        });
      }
    }
  });

  it('the migration is reversible and loses nothing: down writes every copy back, up keeps the changed ones', async () => {
    const kept = await createCase({ priority: 'critical', tags: ['x'] });
    const changed = await createCase({ priority: 'low', tags: ['y'] });
    const gone = await createCase({ tags: ['z'] });
    const run = await createRun();
    const [keptItem, changedItem, goneItem] = [
      await addCase(run.id, kept.id),
      await addCase(run.id, changed.id),
      await addCase(run.id, gone.id),
    ];
    const renamed = await patchCase(changed.id, { title: t.unique('Renamed ') });
    await deleteCase(gone.id);
    const before = await Promise.all(
      [keptItem, changedItem, goneItem].map(async (i) => [await stored(i.id), await shown(i.id)]),
    );
    const migration = new RunItemCaseCopiesOnDemand1763700019850();
    const qr = t.db.createQueryRunner();
    try {
      await qr.startTransaction();
      await migration.down(qr);
      // Down: every item holds copies again, the live case's values where it had none.
      expect(
        await qr.query(`SELECT count(*)::int AS n FROM run_items WHERE test_case_title IS NULL`),
      ).toEqual([{ n: 0 }]);
      const [downKept] = await qr.query(
        `SELECT test_case_key AS key, test_case_title AS title, test_case_priority AS priority,
                test_case_tags AS tags FROM run_items WHERE id = $1`,
        [keptItem.id],
      );
      expect(downKept).toEqual({
        key: kept.key,
        title: kept.title,
        priority: 'critical',
        tags: ['x'],
      });
      await migration.up(qr);
      await qr.commitTransaction();
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
    // Up: copies equal to the live case are gone again; the changed and the deleted case's stay.
    expect(await stored(keptItem.id)).toEqual(NONE);
    expect(await stored(changedItem.id)).toEqual({
      key: changed.key,
      title: changed.title,
      priority: 'low',
      tags: ['y'],
    });
    const after = await Promise.all(
      [keptItem, changedItem, goneItem].map(async (i) => [await stored(i.id), await shown(i.id)]),
    );
    expect(after).toEqual(before);
    expect((await shown(changedItem.id)).title).toBe(renamed.title);
    // The triggers are back: deleting the renamed case shows the title the item was added with.
    await deleteCase(changed.id);
    expect(await shown(changedItem.id)).toMatchObject({ test_case_id: null, title: changed.title });
  });
});
