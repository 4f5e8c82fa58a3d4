import { RESULTS_BATCH, RunResultsWriter } from '../../src/modules/run-items/run-results.writer';
import type { ApplyResultsInput } from '../../src/modules/run-items/run-results.writer';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

/**
 * A large import lets go of its results while it writes them (bench/README.md, fix 36): the
 * run-items writer consumes the results it is given batch by batch, and the import keeps no other
 * reference to them, so a 100,000-testcase import's parsed results can be collected as it goes.
 */
describe('JUnit import: results are released as they are written', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  it('consumes every batch of byCase and still stores every result', async () => {
    const n = RESULTS_BATCH * 2 + 7;
    const cases = Array.from(
      { length: n },
      (_, i) =>
        `<testcase classname="pkg.Released" name="t${i}">` +
        (i % 3 === 0 ? '<failure message="no">trace</failure>' : '') +
        '</testcase>',
    ).join('');
    const xml = `<?xml version="1.0"?><testsuite name="S">${cases}</testsuite>`;
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'released' });

    const writer = t.app.get(RunResultsWriter);
    const seen: Array<{ before: number; after: number; createdKnown: boolean }> = [];
    const original = writer.applyResults.bind(writer);
    jest
      .spyOn(writer, 'applyResults')
      .mockImplementation(async (...args: Parameters<RunResultsWriter['applyResults']>) => {
        const input: ApplyResultsInput = args[1];
        const byCase = input.results?.byCase;
        const before = byCase?.size ?? 0;
        const [firstCase] = byCase?.keys() ?? [];
        const out = await original(...args);
        seen.push({
          before,
          after: byCase?.size ?? -1,
          createdKnown: firstCase !== undefined && input.results?.created?.has(firstCase) === true,
        });
        return out;
      });

    const res = await t
      .req(
        'post',
        `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', Buffer.from(xml), 'junit.xml');
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    jest.restoreAllMocks();

    // Every case's entry was taken out once written; the writer still knew the new cases.
    expect(seen).toEqual([{ before: n, after: 0, createdKnown: true }]);
    expect(res.body.summary).toMatchObject({ created_test_cases: n, updated: n });
    const [stored] = await t.db.query(
      `SELECT count(*)::int AS rows,
              count(*) FILTER (WHERE r.status = 'failure')::int AS failures
         FROM run_item_rows r JOIN run_items i ON i.id = r.run_item_id
        WHERE i.test_run_id = $1`,
      [run.body.id],
    );
    expect(stored).toEqual({ rows: n, failures: Math.ceil(n / 3) });
    // The record stores the answer it gave.
    const record = await t.req('get', `/api/v1/imports/${res.body.id}`, f.tester.token);
    expect(record.status).toBe(200);
    expect(record.body.result).toMatchObject({
      summary: res.body.summary,
      created_cases: res.body.created_cases,
    });
  });
});
