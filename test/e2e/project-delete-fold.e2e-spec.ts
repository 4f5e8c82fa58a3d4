import type { QueryRunner } from 'typeorm';
import { createTestApp, TestApp } from '../support/test-app';

const API = '/api/v1';

/**
 * One transaction in sixteen (by transaction id) folds a project's result-change rows into its base
 * row (`project_result_changes_note`). A project deleted by such a transaction used to fail with 409
 * `conflict`: the fold updated the deleted project's base row and the foreign key refused it.
 */
describe('deleting a project in a transaction that folds result changes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  /** Runs `fn` in a transaction whose id is a multiple of 16 (others are rolled back unused). */
  async function inFoldingTransaction(fn: (qr: QueryRunner) => Promise<void>): Promise<bigint> {
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      for (let i = 0; i < 64; i++) {
        await qr.startTransaction();
        const [{ x }] = (await qr.query('SELECT pg_current_xact_id()::text AS x')) as Array<{
          x: string;
        }>;
        if (BigInt(x) % 16n !== 0n) {
          await qr.rollbackTransaction();
          continue;
        }
        await fn(qr);
        await qr.commitTransaction();
        return BigInt(x);
      }
      throw new Error('no transaction id that is a multiple of 16 in 64 tries');
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
  }

  it('deletes the project with its runs, items and change rows', async () => {
    const f = await t.roleFixture();
    const run = await t
      .req('post', `${API}/test-runs`, f.tester.token)
      .send({ project_id: f.projectId, name: 'Folded away' })
      .expect(201);
    await t
      .req('post', `${API}/test-runs/${String(run.body.id)}/imports/junit`, f.tester.token)
      .query({ create_missing_cases: 'true' })
      .attach(
        'file',
        Buffer.from(
          '<testsuite name="s"><testcase classname="c" name="a"/><testcase classname="c" name="b"><failure message="x"/></testcase></testsuite>',
        ),
        'r.xml',
      )
      .expect(201);
    const changes = async () =>
      (
        (await t.db.query(
          `SELECT count(*)::int AS n FROM project_result_changes WHERE project_id = $1`,
          [f.projectId],
        )) as Array<{ n: number }>
      )[0].n;
    expect(await changes()).toBeGreaterThan(1);

    const xid = await inFoldingTransaction(async (qr) => {
      await qr.query('DELETE FROM projects WHERE id = $1', [f.projectId]);
    });
    expect(xid % 16n).toBe(0n);
    expect(await changes()).toBe(0);
    const runs = (await t.db.query(
      `SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1`,
      [f.projectId],
    )) as Array<{ n: number }>;
    expect(runs[0].n).toBe(0);
  });

  it('still folds the change rows of a project that stays', async () => {
    const f = await t.roleFixture();
    for (const name of ['One', 'Two', 'Three']) {
      const run = await t
        .req('post', `${API}/test-runs`, f.tester.token)
        .send({ project_id: f.projectId, name })
        .expect(201);
      // A status change is a result change: each PATCH notes one for the project.
      await t
        .req('patch', `${API}/test-runs/${String(run.body.id)}`, f.tester.token)
        .send({ status: 'in_progress' })
        .expect(200);
    }
    const rows = async () =>
      (await t.db.query(
        `SELECT xact::text AS xact, changes::int AS changes FROM project_result_changes
          WHERE project_id = $1 ORDER BY xact`,
        [f.projectId],
      )) as Array<{ xact: string; changes: number }>;
    const total = (await rows()).reduce((sum, r) => sum + r.changes, 0);
    expect(total).toBeGreaterThanOrEqual(3);
    const xid = await inFoldingTransaction(async (qr) => {
      await qr.query(
        `UPDATE test_runs SET status = 'completed'
                        WHERE project_id = $1`,
        [f.projectId],
      );
    });
    const after = await rows();
    // The folding transaction's own row stays beside the base row, which took the others.
    expect(after.map((r) => r.xact)).toEqual(['0', String(xid)]);
    expect(after.reduce((sum, r) => sum + r.changes, 0)).toBe(total + 1);
  });
});
