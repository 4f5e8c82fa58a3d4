import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

/**
 * A report sent as a form field named `file` without a filename (superagent's `.attach('file',
 * buffer)` does this) is accepted like a file part, with the same checks.
 */
describe('JUnit import: the report as a plain `file` form field', () => {
  let t: TestApp;
  let f: RoleFixture;
  let runId: string;
  const xml =
    '<?xml version="1.0"?><testsuite name="S"><testcase classname="pkg.A" name="one"/>' +
    '<testcase classname="pkg.A" name="two"><failure message="boom">trace</failure></testcase></testsuite>';

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'R' });
    runId = run.body.id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('imports it (201) and creates the cases', async () => {
    const res = await t
      .req(
        'post',
        `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', Buffer.from(xml));
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    const cases = await t.db.query(
      `SELECT automation_id FROM test_cases WHERE project_id = $1 ORDER BY automation_id`,
      [f.projectId],
    );
    expect(cases.map((c: { automation_id: string }) => c.automation_id)).toEqual([
      'pkg.A.one',
      'pkg.A.two',
    ]);
  });

  it('applies the same refusals: malformed XML and empty content', async () => {
    const bad = await t
      .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
      .field('file', '<testsuite>');
    expect(Object.keys(expectProblem(bad, 422, 'invalid_junit_xml').errors as object)).toEqual([
      'file',
    ]);
    const empty = await t
      .req('post', `/api/v1/test-runs/${runId}/imports/junit`, f.tester.token)
      .field('file', '  ');
    expectProblem(empty, 422, 'empty_upload');
  });
});
