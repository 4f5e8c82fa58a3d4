import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

/**
 * The sample reports the README's walkthrough imports (examples/junit/) import cleanly, in one
 * request as the walkthrough sends them, into one run, with the figures examples/junit/README.md
 * states.
 */
describe('examples/junit: the README walkthrough reports', () => {
  let t: TestApp;
  let f: RoleFixture;
  const dir = join(__dirname, '..', '..', 'examples', 'junit');
  const files = readdirSync(dir).filter((name) => name.endsWith('.xml')).sort();

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(() => t.close());

  it('has the three dialects', () => {
    expect(files).toEqual([
      'jest-junit.xml',
      'pytest.xml',
      'surefire-TEST-com.example.checkout.CartTest.xml',
    ]);
  });

  it('imports every sample into one run: 10 results, 7 passed, 1 failed, 1 error, 1 skipped', async () => {
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'Walkthrough', build: '1.4.2' });
    expect(run.status).toBe(201);
    const runId = run.body.id as string;
    let upload = t.req(
      'post',
      `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
      f.tester.token,
    );
    for (const name of files) upload = upload.attach('file', readFileSync(join(dir, name)), name);
    const res = await upload;
    expect(res.status).toBe(201);
    expect(res.body.warnings).toEqual([]);
    expect(
      (res.body.summary.files as Array<{ name: string; testcases: number }>).map((x) => [x.name, x.testcases]),
    ).toEqual([
      ['jest-junit.xml', 3],
      ['pytest.xml', 3],
      ['surefire-TEST-com.example.checkout.CartTest.xml', 4],
    ]);
    const got = await t.req('get', `/api/v1/test-runs/${runId}`, f.tester.token);
    expect(got.status).toBe(200);
    expect(got.body.summary).toMatchObject({
      total: 10,
      passed: 7,
      failure: 1,
      error: 1,
      skipped: 1,
    });
    for (const format of ['json', 'xml', 'junit', 'csv', 'pdf']) {
      const res = await t.req('get', `/api/v1/test-runs/${runId}/export?format=${format}`, f.viewer.token);
      expect({ format, status: res.status }).toEqual({ format, status: 200 });
    }
  });
});
