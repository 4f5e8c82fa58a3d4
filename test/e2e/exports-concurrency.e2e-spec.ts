import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/**
 * A report download holds a pooled connection (one REPEATABLE READ snapshot) for as long as its
 * client takes to read it. Paused downloads used to take the whole pool: with DB_POOL_SIZE of them
 * open, every other request of the instance answered 503 `database_unavailable` (found by an
 * audit). An instance now reads at most EXPORT_CONCURRENCY downloads at once; one more is 503
 * `service_unavailable` with Retry-After, and the slot is free again once a download ends.
 */
describe('report downloads and the connection pool (EXPORT_CONCURRENCY)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let runId: string;

  /** A run whose JSON report (about 12 MB) is far larger than what the sockets buffer. */
  function junit(n: number): Buffer {
    const message = 'x'.repeat(3000);
    const cases = Array.from(
      { length: n },
      (_, i) =>
        `<testcase classname="big.Suite" name="test_${i}"><failure message="m">${message}</failure></testcase>`,
    );
    return Buffer.from(
      `<testsuites><testsuite name="Big">${cases.join('')}</testsuite></testsuites>`,
    );
  }

  beforeAll(async () => {
    t = await createTestApp({ DB_POOL_SIZE: '3', EXPORT_CONCURRENCY: '2' });
    f = await t.roleFixture();
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'Big' });
    runId = run.body.id;
    const imported = await t
      .req(
        'post',
        `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', junit(4000), 'big.xml');
    expect(imported.status).toBe(201);
  });
  let afterDownloads = () => undefined as void;
  afterAll(async () => {
    afterDownloads();
    await t.close();
  });

  /** A download whose client read the headers and then stopped reading. */
  function pausedDownload(
    format: string,
  ): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
    const port = (t.server.address() as AddressInfo).port;
    return new Promise((resolve, reject) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port,
          path: `/api/v1/test-runs/${runId}/export?format=${format}`,
          headers: { Authorization: `Bearer ${f.viewer.token}` },
        },
        (res) => {
          res.pause();
          resolve({ req, res });
        },
      );
      req.on('error', reject);
    });
  }

  it('paused downloads never take the whole pool: one past the bound is 503 service_unavailable; the slot frees when a download ends', async () => {
    const paused = await Promise.all([pausedDownload('json'), pausedDownload('csv')]);
    // Whatever fails below, no paused download may outlive the test (the app could not close).
    afterDownloads = () => paused.forEach((d) => d.req.destroy());
    expect(paused.map((d) => d.res.statusCode)).toEqual([200, 200]);

    // The pool (3) still has a connection for everything else.
    const run = await t.req('get', `/api/v1/test-runs/${runId}`, f.viewer.token);
    expect(run.status).toBe(200);

    const third = await t.req('get', `/api/v1/test-runs/${runId}/export`, f.viewer.token);
    const problem = expectProblem(third, 503, 'service_unavailable');
    expect(problem.detail).toContain('EXPORT_CONCURRENCY');
    expect(third.headers['retry-after']).toBe('5');
    expect(third.headers['content-disposition']).toBeUndefined();

    // A download read to its end is complete, and its slot is free again afterwards.
    const first = paused[0];
    let bytes = 0;
    const complete = await new Promise<boolean>((resolve) => {
      first.res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      first.res.on('end', () => resolve(first.res.complete));
      first.res.on('aborted', () => resolve(false));
      first.res.resume();
    });
    expect(complete).toBe(true);
    expect(bytes).toBeGreaterThan(10_000_000);

    // An abandoned download frees its slot too (its connection goes back to the pool).
    paused[1].req.destroy();
    let answer = 0;
    await waitFor(
      async () => {
        const res = await t.req(
          'get',
          `/api/v1/test-runs/${runId}/export?format=csv`,
          f.viewer.token,
        );
        answer = res.status;
        return res.status === 200;
      },
      { what: 'a free download slot', timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(answer).toBe(200);
  });
});
