import { importHelpers } from '../support/import-fixture';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';
import { waitUntilBlockedOrDone } from '../support/wait-for';

/**
 * A project-level import (reference §4.12) imports into the newest open run of its name, else
 * creates one. A run closed or deleted by a request that commits while the import looks for it is
 * no candidate: the import waits for that request and then creates a run (found by an audit: it
 * chose the run before the lock and answered 409 run_import_not_allowed, or 404
 * test_run_not_found, for a request that names no run).
 */
describe('project import: a run closed or deleted while it is chosen', () => {
  let t: TestApp;
  let f: RoleFixture;
  const { newProject } = importHelpers(() => ({ t, f }));

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  const report = Buffer.from(
    `<testsuites name="Nightly race"><testsuite name="s"><testcase classname="s" name="t"/></testsuite></testsuites>`,
  );
  const importIntoProject = (projectId: string) =>
    t
      .req(
        'post',
        `/api/v1/projects/${projectId}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', report, 'nightly.xml')
      .then((r) => r);

  it.each([
    ['completed', `UPDATE test_runs SET status = 'completed', completed_at = now() WHERE id = $1`],
    ['deleted', `DELETE FROM test_runs WHERE id = $1`],
  ])('a run %s meanwhile: a new run is created', async (_what, sql) => {
    const projectId = await newProject();
    const first = await importIntoProject(projectId);
    expect(first.status).toBe(201);
    const firstRun = first.body.target_run.id as string;

    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(sql, [firstRun]);
      const second = importIntoProject(projectId);
      await waitUntilBlockedOrDone(t.db, qr, second);
      await qr.commitTransaction();
      const res = await second;
      expect(res.status).toBe(201);
      expect(res.body.target_run).toMatchObject({ name: 'Nightly race', match_mode: 'created' });
      expect(res.body.target_run.id).not.toBe(firstRun);
    } finally {
      await qr.release();
    }
  });
});
