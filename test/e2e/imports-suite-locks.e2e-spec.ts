import { importHelpers } from '../support/import-fixture';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';
import { waitUntilBlockedOrDone } from '../support/wait-for';

/**
 * `test_cases.suite_id` has no foreign key (migration `LeanImportWritesThree`): an import that
 * creates cases holds the project's suites (`FOR KEY SHARE`) from planning to commit, and deleting
 * a suite locks it `FOR UPDATE`, moves its cases, then deletes it. So no case ever points to a
 * suite that does not exist, whichever of the two comes first.
 */
describe('JUnit import: the suites new cases go into stay until the import commits', () => {
  let t: TestApp;
  let f: RoleFixture;
  const { newProject, createRun } = importHelpers(() => ({ t, f }));

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  const report = (names: string[]): Buffer =>
    Buffer.from(
      `<?xml version="1.0"?><testsuite name="Alpha">${names
        .map((n) => `<testcase classname="Alpha" name="${n}"/>`)
        .join('')}</testsuite>`,
    );

  function importInto(runId: string, file: Buffer) {
    return t
      .req(
        'post',
        `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', file, 'report.xml');
  }

  async function orphans(projectId: string): Promise<number> {
    const rows = (await t.db.query(
      `SELECT count(*)::int AS n FROM test_cases tc
        WHERE tc.project_id = $1 AND tc.suite_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM suites s WHERE s.id = tc.suite_id)`,
      [projectId],
    )) as Array<{ n: number }>;
    return rows[0].n;
  }

  async function suiteOf(projectId: string, title: string): Promise<string | null> {
    const rows = (await t.db.query(
      `SELECT suite_id FROM test_cases WHERE project_id = $1 AND title = $2`,
      [projectId, title],
    )) as Array<{ suite_id: string | null }>;
    expect(rows).toHaveLength(1);
    return rows[0].suite_id;
  }

  it('an import racing a suite deletion waits for it, then creates the suite again: no orphaned case', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const first = await importInto(runId, report(['first']));
    expect(first.status).toBe(201);
    const suiteId = await suiteOf(projectId, 'first');
    expect(suiteId).not.toBeNull();

    // A suite deletion half-way (as SuitesService.remove does it): the suite locked, its cases
    // moved; the DELETE itself comes once the import has started.
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT parent_id FROM suites WHERE id = $1 FOR UPDATE`, [suiteId]);
      await qr.query(`UPDATE test_cases SET suite_id = NULL WHERE suite_id = $1`, [suiteId]);
      const pending = importInto(runId, report(['second'])).then((res) => res);
      await waitUntilBlockedOrDone(t.db, qr, pending);
      await qr.query(`DELETE FROM suites WHERE id = $1`, [suiteId]);
      await qr.commitTransaction();
      const second = await pending;
      expect(second.status).toBe(201);
      expect(second.body.summary.created_test_cases).toBe(1);
    } finally {
      await qr.release();
    }

    expect(await orphans(projectId)).toBe(0);
    const again = await suiteOf(projectId, 'second');
    expect(again).not.toBeNull();
    expect(again).not.toBe(suiteId);
    const suites = (await t.db.query(`SELECT id, name FROM suites WHERE project_id = $1`, [
      projectId,
    ])) as Array<{ id: string; name: string }>;
    expect(suites).toEqual([{ id: again, name: 'Alpha' }]);
  });

  it('a suite deletion racing an import waits for it, then moves the cases the import put there', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    expect((await importInto(runId, report(['one']))).status).toBe(201);
    const suiteId = await suiteOf(projectId, 'one');

    // The import holds the suites it read: a transaction standing for an import that has read
    // them (as ImportRepository.loadSuites does) and written a case into one.
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT id FROM suites WHERE project_id = $1 FOR KEY SHARE`, [projectId]);
      await qr.query(
        `INSERT INTO test_cases (id, project_id, key, key_number, title, status, suite_id, owner_id, created_by)
         VALUES (gen_random_uuid(), $1, 'TC-99', 99, 'late', 'active', $2, $3, $3)`,
        [projectId, suiteId, f.tester.id],
      );
      const deleting = t
        .req('delete', `/api/v1/suites/${suiteId}`, f.lead.token)
        .then((res) => res);
      await waitUntilBlockedOrDone(t.db, qr, deleting);
      await qr.commitTransaction();
      expect((await deleting).status).toBe(204);
    } finally {
      await qr.release();
    }
    expect(await orphans(projectId)).toBe(0);
    expect(await suiteOf(projectId, 'late')).toBeNull();
    expect(await suiteOf(projectId, 'one')).toBeNull();
  });
});
