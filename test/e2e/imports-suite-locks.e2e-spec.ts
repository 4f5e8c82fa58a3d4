import { importHelpers } from '../support/import-fixture';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';
import { waitFor, waitUntilBlockedOrDone } from '../support/wait-for';

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

  it('an import and a suite deletion lock suites in one order: both succeed, no deadlock', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const suite = async (name: string, parent?: string): Promise<string> => {
      const res = await t
        .req('post', '/api/v1/suites', f.tester.token)
        .send({ project_id: projectId, name, parent_id: parent });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    // Beta has the smaller id, Alpha the earlier created_at (an import creating Alpha that
    // started before Beta's create and committed after it), and Beta is Alpha's child.
    const beta = await suite('Beta');
    const alpha = await suite('Alpha');
    await t.db.query(
      `UPDATE suites SET created_at = created_at - interval '1 hour' WHERE id = $1`,
      [alpha],
    );
    expect(
      (await t.req('patch', `/api/v1/suites/${beta}`, f.tester.token).send({ parent_id: alpha }))
        .status,
    ).toBe(200);

    // Found by an audit: the delete locked Beta then waited for Alpha; the import (creation
    // order) held Alpha and waited for Beta: a deadlock, answered 409 conflict to one of them.
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT 1 FROM suites WHERE id = $1 FOR KEY SHARE`, [alpha]);
      const deleting = t.req('delete', `/api/v1/suites/${alpha}`, f.lead.token).then((r) => r);
      await waitUntilBlockedOrDone(t.db, qr, deleting);
      const importing = importInto(
        runId,
        Buffer.from(
          `<testsuite name="Gamma"><testcase classname="Gamma" name="new one"/></testsuite>`,
        ),
      ).then((r) => r);
      await waitFor(
        async () =>
          (
            (await t.db.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )) as Array<{ n: number }>
          )[0].n >= 2,
        { what: 'the import to wait for a suite lock' },
      );
      await qr.commitTransaction();
      const [deleted, imported] = await Promise.all([deleting, importing]);
      expect([deleted.status, imported.status]).toEqual([204, 201]);
    } finally {
      await qr.release();
    }
    expect(await orphans(projectId)).toBe(0);
  });

  it('a matched case deleted while the import waits is unmatched; the rest is imported', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    expect((await importInto(runId, report(['login works']))).status).toBe(201);
    const caseId = (
      (await t.db.query(`SELECT id FROM test_cases WHERE project_id = $1`, [projectId])) as Array<{
        id: string;
      }>
    )[0].id;
    const suiteId = await suiteOf(projectId, 'login works');
    const nextRun = await createRun(projectId);

    // The import reads its candidates, then waits for the suite (held here); meanwhile the
    // matched case is deleted (found by an audit: the import then failed whole with 422
    // test_case_project_mismatch, errors.test_case_ids).
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT 1 FROM suites WHERE id = $1 FOR UPDATE`, [suiteId]);
      const pending = importInto(nextRun, report(['login works', 'brand new'])).then((r) => r);
      await waitUntilBlockedOrDone(t.db, qr, pending);
      expect((await t.req('delete', `/api/v1/test-cases/${caseId}`, f.lead.token)).status).toBe(
        204,
      );
      await qr.commitTransaction();
      const res = await pending;
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({ created_test_cases: 1, unmatched: 1 });
      expect(res.body.unmatched_cases).toEqual([
        expect.objectContaining({
          testcase_name: 'login works',
          reason: 'matched test case was deleted or archived while the import ran',
        }),
      ]);
    } finally {
      await qr.release();
    }
    expect(await orphans(projectId)).toBe(0);
  });
});
