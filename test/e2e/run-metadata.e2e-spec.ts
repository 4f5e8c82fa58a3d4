import type { Response as AgentResponse } from 'superagent';
import type { Response } from 'supertest';
import { parseStringPromise } from 'xml2js';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';
import { pdfText } from '../support/pdf-text';
import { waitFor } from '../support/wait-for';

/**
 * Run metadata from CI (issue #24 item 5): `attributes` and `ci` on create, PATCH and every run
 * representation; the `GET /test-runs` filters `build`, `branch`, `commit_sha`, `attribute`; the
 * import form fields; the exports.
 */
type Json = Record<string, unknown>;

const SHA_A = '9fceb02d0ae598e95dc970b74767f19372d61af8';
/** Shares its first 8 digits with SHA_A. */
const SHA_C = '9fceb02d11111111111111111111111111111111';
const SHA_B = '1234567890abcdef1234567890abcdef12345678';
const JOB_URL = 'https://github.com/acme/shop/actions/runs/9876543210';

const REPORT = Buffer.from(
  '<testsuite name="meta"><testcase classname="m.Meta" name="test_one"/></testsuite>',
);

/** supertest parser that keeps the raw body as a Buffer (any content type). */
function binary(res: AgentResponse, done: (err: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
  stream.on('error', (e: Error) => done(e, Buffer.alloc(0)));
}

describe('Run metadata from CI (issue #24 item 5)', () => {
  let t: TestApp;
  let f: RoleFixture;

  const api = (path: string) => `/api/v1${path}`;

  async function ok(res: Response, status: number): Promise<Json> {
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  const createRun = async (body: Json, token = f.tester.token): Promise<Json> =>
    ok(
      await t.req('post', api('/test-runs'), token).send({ project_id: f.projectId, ...body }),
      201,
    );
  const getRun = async (id: unknown): Promise<Json> =>
    ok(await t.req('get', api(`/test-runs/${String(id)}`), f.viewer.token), 200);
  const runCount = async (): Promise<number> => {
    const rows = await t.db.query<Array<{ n: number }>>(
      'SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1',
      [f.projectId],
    );
    return rows[0].n;
  };

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('create, PATCH, GET and the list', () => {
    it('round-trips attributes and ci (commit SHA stored lowercase) everywhere a run is answered', async () => {
      const created = await createRun({
        name: 'Round trip',
        build: 'main #871',
        ci: {
          provider: 'github-actions',
          branch: 'main',
          commit_sha: SHA_A.toUpperCase(),
          job_url: JOB_URL,
          pipeline_id: '9876543210',
        },
        attributes: { team: 'payments', 'python.version': '3.13', 'k8s/cluster': 'eu-1' },
      });
      const ci = {
        provider: 'github-actions',
        branch: 'main',
        commit_sha: SHA_A,
        job_url: JOB_URL,
        pipeline_id: '9876543210',
      };
      const attributes = { team: 'payments', 'python.version': '3.13', 'k8s/cluster': 'eu-1' };
      expect(created).toMatchObject({ build: 'main #871', ci, attributes });
      expect(await getRun(created.id)).toMatchObject({ ci, attributes });
      const list = await ok(
        await t.req('get', api(`/test-runs?project_id=${f.projectId}`), f.viewer.token),
        200,
      );
      const listed = (list.items as Json[]).find((r) => r.id === created.id);
      expect(listed).toMatchObject({ ci, attributes });

      // PATCH: `attributes` replaces the map, `ci` the whole object (fields left out → null).
      const patched = await ok(
        await t
          .req('patch', api(`/test-runs/${String(created.id)}`), f.tester.token)
          .send({ attributes: { os: 'linux' }, ci: { branch: 'release/2.4' } }),
        200,
      );
      expect(patched.attributes).toEqual({ os: 'linux' });
      expect(patched.ci).toEqual({
        provider: null,
        branch: 'release/2.4',
        commit_sha: null,
        job_url: null,
        pipeline_id: null,
      });
      // Other fields keep their values when neither key is sent.
      const renamed = await ok(
        await t
          .req('patch', api(`/test-runs/${String(created.id)}`), f.tester.token)
          .send({ name: 'Renamed' }),
        200,
      );
      expect(renamed).toMatchObject({ attributes: { os: 'linux' }, ci: patched.ci });
      // null clears ci, {} clears the attributes.
      const cleared = await ok(
        await t
          .req('patch', api(`/test-runs/${String(created.id)}`), f.tester.token)
          .send({ ci: null, attributes: {} }),
        200,
      );
      expect(cleared).toMatchObject({ ci: null, attributes: {} });
      expect(await getRun(created.id)).toMatchObject({ ci: null, attributes: {} });
    });

    it('a run without metadata answers ci: null and attributes: {}; blank ci fields are none', async () => {
      const plain = await createRun({ name: 'Plain' });
      expect(plain).toMatchObject({ ci: null, attributes: {} });
      const blank = await createRun({ name: 'Blank', ci: { branch: '  ', commit_sha: '' } });
      expect(blank.ci).toBeNull();
      // A run inserted without the new columns (as before the migration) reads the same.
      const [{ id }] = await t.db.query<Array<{ id: string }>>(
        `INSERT INTO test_runs (id, project_id, name, created_by, environment_snapshot)
         VALUES (uuidv7(), $1, 'Legacy', $2, '{}') RETURNING id`,
        [f.projectId, f.tester.id],
      );
      expect(await getRun(id)).toMatchObject({ name: 'Legacy', ci: null, attributes: {} });
    });

    it('test plans create-run takes them and answers them', async () => {
      const testCase = await ok(
        await t
          .req('post', api('/test-cases'), f.tester.token)
          .send({ project_id: f.projectId, title: 'Planned case' }),
        201,
      );
      const plan = await ok(
        await t
          .req('post', api('/test-plans'), f.tester.token)
          .send({ project_id: f.projectId, name: 'Plan for metadata', case_ids: [testCase.id] }),
        201,
      );
      const run = await ok(
        await t
          .req('post', api(`/test-plans/${String(plan.id)}/create-run`), f.tester.token)
          .send({ name: 'From plan', attributes: { team: 'qa' }, ci: { branch: 'main' } }),
        201,
      );
      expect(run).toMatchObject({ attributes: { team: 'qa' }, ci: { branch: 'main' } });
      expect(await getRun(run.id)).toMatchObject({ attributes: { team: 'qa' } });
    });

    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    it.each<[string, Json, string]>([
      ['51 attributes', { attributes: tooMany }, 'attributes'],
      ['a key with a space', { attributes: { 'a b': 'x' } }, 'attributes'],
      ['a key with a colon', { attributes: { 'a:b': 'x' } }, 'attributes'],
      ['an empty key', { attributes: { '': 'x' } }, 'attributes'],
      ['a key of 65 characters', { attributes: { ['k'.repeat(65)]: 'x' } }, 'attributes'],
      ['a number value', { attributes: { n: 1 } }, 'attributes'],
      ['a value of 257 characters', { attributes: { v: 'x'.repeat(257) } }, 'attributes'],
      ['a value with a control character', { attributes: { v: 'a\u0001b' } }, 'attributes'],
      ['attributes null', { attributes: null }, 'attributes'],
      ['attributes as an array', { attributes: ['a'] }, 'attributes'],
      ['a commit SHA that is not hex', { ci: { commit_sha: 'xyz1234' } }, 'ci.commit_sha'],
      ['a commit SHA of 6 digits', { ci: { commit_sha: 'abcdef' } }, 'ci.commit_sha'],
      ['a commit SHA of 65 digits', { ci: { commit_sha: 'a'.repeat(65) } }, 'ci.commit_sha'],
      ['an ftp job URL', { ci: { job_url: 'ftp://ci.example.com/1' } }, 'ci.job_url'],
      ['a job URL that is no URL', { ci: { job_url: 'not a url' } }, 'ci.job_url'],
      ['a javascript: job URL', { ci: { job_url: 'javascript:alert(1)' } }, 'ci.job_url'],
      ['a branch of 256 characters', { ci: { branch: 'b'.repeat(256) } }, 'ci.branch'],
      ['a provider of 65 characters', { ci: { provider: 'p'.repeat(65) } }, 'ci.provider'],
      ['an unknown ci field', { ci: { runner: 'x' } }, 'ci.runner'],
      ['ci as a string', { ci: 'github' }, 'ci'],
    ])(
      '422 validation_error for %s, on create and PATCH, changing nothing',
      async (_n, body, path) => {
        const before = await runCount();
        const res = await t
          .req('post', api('/test-runs'), f.tester.token)
          .send({ project_id: f.projectId, name: 'Refused', ...body });
        expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([path]);
        expect(await runCount()).toBe(before);

        const run = await createRun({
          name: 'Kept',
          attributes: { keep: 'me' },
          ci: { branch: 'main' },
        });
        const patch = await t
          .req('patch', api(`/test-runs/${String(run.id)}`), f.tester.token)
          .send(body);
        expect(expectProblem(patch, 422, 'validation_error').errors).toHaveProperty([path]);
        expect(await getRun(run.id)).toMatchObject({
          attributes: { keep: 'me' },
          ci: { branch: 'main' },
          updated_at: run.updated_at,
        });
      },
    );

    it('ci sent as an array of 2,000 objects is one error on `ci`, its items never checked (create and PATCH)', async () => {
      const ci = Array.from({ length: 2000 }, () => ({ runner: 'x', commit_sha: 'no' }));
      const created = await t
        .req('post', api('/test-runs'), f.tester.token)
        .send({ project_id: f.projectId, name: 'Refused', ci });
      const run = await createRun({ name: 'Kept' });
      const patched = await t
        .req('patch', api(`/test-runs/${String(run.id)}`), f.tester.token)
        .send({ ci });
      for (const res of [created, patched]) {
        expect(expectProblem(res, 422, 'validation_error').errors).toEqual({
          ci: ['ci must be an object'],
        });
      }
    });

    it('accepts exactly 50 attributes, keys of 64 characters, values of 256 characters, 7-digit and 64-digit SHAs', async () => {
      const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']));
      expect((await createRun({ name: 'Fifty', attributes: fifty })).attributes).toEqual(fifty);
      const edge = await createRun({
        name: 'Edges',
        attributes: { ['k'.repeat(64)]: 'é'.repeat(256) },
        ci: { commit_sha: 'abcdef0', job_url: 'http://localhost:8080/job/1' },
      });
      expect(edge.ci).toMatchObject({
        commit_sha: 'abcdef0',
        job_url: 'http://localhost:8080/job/1',
      });
      const long = await createRun({ name: 'Long SHA', ci: { commit_sha: 'A'.repeat(64) } });
      expect((long.ci as Json).commit_sha).toBe('a'.repeat(64));
    });
  });

  describe('GET /test-runs filters', () => {
    let g: RoleFixture;
    const ids: Record<string, string> = {};

    const list = async (qs: string): Promise<string[]> => {
      const page = await ok(
        await t.req(
          'get',
          api(`/test-runs?project_id=${g.projectId}&page_size=200${qs}`),
          g.viewer.token,
        ),
        200,
      );
      const names = (page.items as Json[]).map((r) => String(r.name)).sort();
      expect(page.total).toBe(names.length);
      return names;
    };

    beforeAll(async () => {
      g = await t.roleFixture();
      const specs: Array<[string, Json]> = [
        [
          'A',
          {
            build: 'B-1',
            ci: { branch: 'main', commit_sha: SHA_A },
            attributes: { team: 'payments', os: 'linux' },
          },
        ],
        [
          'B',
          {
            build: 'b-2',
            ci: { branch: 'main', commit_sha: SHA_B },
            attributes: { team: 'search', os: 'linux' },
          },
        ],
        [
          'C',
          {
            build: 'B-1',
            ci: { branch: 'feature/x', commit_sha: SHA_C },
            attributes: { team: 'payments', os: 'mac', url: 'a:b:c' },
          },
        ],
        ['D', {}],
      ];
      for (const [name, body] of specs) {
        const res = await t
          .req('post', api('/test-runs'), g.tester.token)
          .send({ project_id: g.projectId, name, ...body });
        ids[name] = (await ok(res, 201)).id as string;
      }
    });

    it.each<[string, string, string[]]>([
      ['no filter', '', ['A', 'B', 'C', 'D']],
      ['build, whole value, case-insensitive', '&build=b-1', ['A', 'C']],
      ['build repeated: any of them', '&build=B-1&build=B-2', ['A', 'B', 'C']],
      ['build: a part is no match', '&build=B', []],
      ['branch, exact', '&branch=main', ['A', 'B']],
      ['branch with a slash', '&branch=feature%2Fx', ['C']],
      ['branch is case-sensitive', '&branch=Main', []],
      ['branch repeated', '&branch=main&branch=feature%2Fx', ['A', 'B', 'C']],
      ['commit_sha: a 7-digit prefix', `&commit_sha=${SHA_A.slice(0, 7)}`, ['A', 'C']],
      ['commit_sha: a longer prefix', `&commit_sha=${SHA_A.slice(0, 9)}`, ['A']],
      ['commit_sha: the whole SHA', `&commit_sha=${SHA_C}`, ['C']],
      ['commit_sha: case-insensitive', `&commit_sha=${SHA_B.toUpperCase()}`, ['B']],
      ['commit_sha: no run', '&commit_sha=0000000', []],
      ['attribute', '&attribute=team:payments', ['A', 'C']],
      ['attribute repeated: all must match', '&attribute=team:payments&attribute=os:linux', ['A']],
      ['attribute: the value may hold colons', '&attribute=url:a:b:c', ['C']],
      [
        'attribute: the same key twice matches nothing',
        '&attribute=team:payments&attribute=team:search',
        [],
      ],
      ['attribute: an empty value is a value', '&attribute=team:', []],
      ['combined', '&branch=main&attribute=os:linux&build=b-2', ['B']],
      ['combined, nothing left', `&branch=feature%2Fx&commit_sha=${SHA_A.slice(0, 9)}`, []],
      ['combined with search', '&attribute=os:linux&search=a', ['A']],
    ])('%s', async (_name, qs, expected) => {
      expect(await list(qs)).toEqual(expected);
    });

    it.each<[string, string, string]>([
      ['commit_sha of 6 digits', '&commit_sha=abcdef', 'query.commit_sha'],
      ['commit_sha not hex', '&commit_sha=zzzzzzz', 'query.commit_sha'],
      ['commit_sha of 65 digits', `&commit_sha=${'a'.repeat(65)}`, 'query.commit_sha'],
      ['attribute without a colon', '&attribute=team', 'query.attribute'],
      ['attribute with a bad key', '&attribute=a%20b:x', 'query.attribute'],
      ['attribute with a value too long', `&attribute=k:${'x'.repeat(257)}`, 'query.attribute'],
      ['attribute 51 times', '&attribute=k:v'.repeat(51), 'query.attribute'],
      ['branch too long', `&branch=${'b'.repeat(256)}`, 'query.branch'],
      ['build too long', `&build=${'b'.repeat(256)}`, 'query.build'],
    ])('422 validation_error for %s', async (_name, qs, path) => {
      const res = await t.req(
        'get',
        api(`/test-runs?project_id=${g.projectId}${qs}`),
        g.viewer.token,
      );
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([path]);
    });

    it('an index serves each filter (the plans over 5,000 runs name it)', async () => {
      // A project of 5,000 runs with varied metadata, analysed: the planner then picks by cost.
      const bulk = await t.roleFixture();
      await t.db.query(
        `INSERT INTO test_runs (id, project_id, name, created_by, environment_snapshot, build,
                                ci_branch, ci_commit_sha, attributes)
         SELECT uuidv7(), $1, 'bulk ' || i, $2, '{}', 'build-' || i, 'branch-' || (i % 500),
                md5(i::text), jsonb_build_object('shard', (i % 1000)::text, 'os', 'linux')
           FROM generate_series(1, 5000) AS i`,
        [bulk.projectId, bulk.tester.id],
      );
      await t.db.query('ANALYZE test_runs');
      const qr = t.db.createQueryRunner();
      await qr.connect();
      try {
        const plan = async (where: string, params: unknown[]): Promise<string> => {
          const rows = (await qr.query(
            `EXPLAIN (FORMAT JSON) SELECT r.id FROM test_runs r WHERE r.project_id = $1 AND ${where}`,
            [bulk.projectId, ...params],
          )) as Array<{ 'QUERY PLAN': unknown }>;
          return JSON.stringify(rows[0]['QUERY PLAN']);
        };
        // The statements' shapes are those of TestRunsRepository.findPage.
        expect(await plan('r.ci_branch = ANY($2::varchar[])', [['branch-7']])).toContain(
          'ix_test_runs_project_ci_branch',
        );
        expect(await plan('r.ci_commit_sha LIKE $2', ['c4ca423%'])).toContain(
          'ix_test_runs_project_ci_commit_sha',
        );
        expect(await plan('r.attributes @> $2::jsonb', ['{"shard":"7"}'])).toContain(
          'ix_test_runs_attributes',
        );
        expect(
          await plan(`lower(coalesce(r.build, '')) = ANY($2::text[])`, [['build-7']]),
        ).toContain('ix_test_runs_project_build');
      } finally {
        await qr.release();
      }
    });
  });

  describe('JUnit import form fields', () => {
    const importInto = (path: string, fields: Array<[string, string]>, token = f.tester.token) => {
      let req = t.req('post', api(path), token);
      for (const [name, value] of fields) req = req.field(name, value);
      return req.attach('file', REPORT, 'meta.xml');
    };

    it('the project endpoint creates the run with them; a run it finds keeps its own', async () => {
      const g = await t.roleFixture();
      const fields: Array<[string, string]> = [
        ['build', 'main #12'],
        ['ci_provider', 'gitlab-ci'],
        ['branch', 'main'],
        ['commit_sha', SHA_A.toUpperCase()],
        ['job_url', 'https://gitlab.example.com/acme/shop/-/jobs/77'],
        ['pipeline_id', '4242'],
        ['attribute', 'team:payments'],
        ['attribute', 'url:https://x.example/a'],
      ];
      const first = await ok(
        await importInto(`/projects/${g.projectId}/imports/junit`, fields, g.tester.token),
        201,
      );
      expect(first.target_run).toMatchObject({ match_mode: 'created' });
      const runId = (first.target_run as Json).id;
      expect(
        await ok(await t.req('get', api(`/test-runs/${String(runId)}`), g.viewer.token), 200),
      ).toMatchObject({
        build: 'main #12',
        ci: {
          provider: 'gitlab-ci',
          branch: 'main',
          commit_sha: SHA_A,
          job_url: 'https://gitlab.example.com/acme/shop/-/jobs/77',
          pipeline_id: '4242',
        },
        attributes: { team: 'payments', url: 'https://x.example/a' },
      });

      const again = await ok(
        await importInto(
          `/projects/${g.projectId}/imports/junit`,
          [
            ['branch', 'other'],
            ['attribute', 'team:search'],
          ],
          g.tester.token,
        ),
        201,
      );
      expect(again.target_run).toMatchObject({ id: runId, match_mode: 'existing' });
      expect(
        await ok(await t.req('get', api(`/test-runs/${String(runId)}`), g.viewer.token), 200),
      ).toMatchObject({ ci: { branch: 'main' }, attributes: { team: 'payments' } });
    });

    it('the run endpoint merges them into the run: given ci fields replace, attributes are set by key', async () => {
      const run = await createRun({
        name: 'Into run',
        build: 'old',
        ci: { provider: 'jenkins', branch: 'main', pipeline_id: 'p-1' },
        attributes: { team: 'payments', os: 'linux' },
      });
      await ok(
        await importInto(`/test-runs/${String(run.id)}/imports/junit?create_missing_cases=true`, [
          ['branch', 'hotfix/1'],
          ['commit_sha', SHA_B],
          ['attribute', 'os:mac'],
          ['attribute', 'shard:2'],
          ['build', 'new'],
        ]),
        201,
      );
      expect(await getRun(run.id)).toMatchObject({
        build: 'new',
        ci: {
          provider: 'jenkins',
          branch: 'hotfix/1',
          commit_sha: SHA_B,
          job_url: null,
          pipeline_id: 'p-1',
        },
        attributes: { team: 'payments', os: 'mac', shard: '2' },
      });
    });

    it('a background import (Prefer: respond-async) applies them when its job runs', async () => {
      const g = await t.roleFixture();
      const finished = async (id: string): Promise<Json> => {
        let body: Json = {};
        await waitFor(
          async () => {
            body = (await t.req('get', api(`/imports/${id}`), g.viewer.token)).body as Json;
            return body.status === 'succeeded' || body.status === 'failed';
          },
          { timeoutMs: 20_000, intervalMs: 100, what: `import ${id} to end` },
        );
        return body;
      };
      let req = t
        .req('post', api(`/projects/${g.projectId}/imports/junit`), g.tester.token)
        .set('Prefer', 'respond-async');
      for (const [name, value] of [
        ['branch', 'main'],
        ['commit_sha', SHA_B],
        ['attribute', 'team:payments'],
      ])
        req = req.field(name, value);
      const queued = await req.attach('file', REPORT, 'background.xml');
      expect(queued.status).toBe(202);
      expect(await finished(queued.body.id as string)).toMatchObject({ status: 'succeeded' });
      const page = await ok(
        await t.req('get', api(`/test-runs?project_id=${g.projectId}&branch=main`), g.viewer.token),
        200,
      );
      expect(page.items).toHaveLength(1);
      expect((page.items as Json[])[0]).toMatchObject({
        ci: { branch: 'main', commit_sha: SHA_B },
        attributes: { team: 'payments' },
      });

      // Into a run: merged when the job runs; a bad field is refused at once (nothing queued).
      const runId = String((page.items as Json[])[0].id);
      const bad = await t
        .req('post', api(`/test-runs/${runId}/imports/junit`), g.tester.token)
        .set('Prefer', 'respond-async')
        .field('commit_sha', 'nope')
        .attach('file', REPORT, 'background.xml');
      expect(expectProblem(bad, 422, 'validation_error').errors).toHaveProperty(['commit_sha']);
      const into = await t
        .req('post', api(`/test-runs/${runId}/imports/junit`), g.tester.token)
        .set('Prefer', 'respond-async')
        .field('attribute', 'shard:2')
        .attach('file', REPORT, 'background.xml');
      expect(into.status).toBe(202);
      expect(await finished(into.body.id as string)).toMatchObject({ status: 'succeeded' });
      expect(
        await ok(await t.req('get', api(`/test-runs/${runId}`), g.viewer.token), 200),
      ).toMatchObject({ attributes: { team: 'payments', shard: '2' } });
    });

    it('a dry run with them changes nothing; blank fields are not given', async () => {
      const run = await createRun({ name: 'Dry', ci: { branch: 'main' } });
      await ok(
        await importInto(`/test-runs/${String(run.id)}/imports/junit?dry_run=true`, [
          ['branch', 'dev'],
          ['attribute', 'a:b'],
        ]),
        201,
      );
      expect(await getRun(run.id)).toMatchObject({ ci: { branch: 'main' }, attributes: {} });
      await ok(
        await importInto(`/test-runs/${String(run.id)}/imports/junit`, [
          ['branch', '  '],
          ['commit_sha', ''],
        ]),
        201,
      );
      expect((await getRun(run.id)).ci).toMatchObject({ branch: 'main', commit_sha: null });
    });

    const fifty: Array<[string, string]> = Array.from({ length: 51 }, (_, i) => [
      'attribute',
      `k${i}:v`,
    ]);
    it.each<[string, Array<[string, string]>, string]>([
      ['a commit SHA that is not hex', [['commit_sha', 'not-a-sha']], 'commit_sha'],
      ['an ftp job URL', [['job_url', 'ftp://ci/1']], 'job_url'],
      ['a provider of 65 characters', [['ci_provider', 'p'.repeat(65)]], 'ci_provider'],
      [
        'branch given twice',
        [
          ['branch', 'a'],
          ['branch', 'b'],
        ],
        'branch',
      ],
      ['an attribute without a colon', [['attribute', 'team']], 'attribute'],
      ['an attribute key with a space', [['attribute', 'a b:c']], 'attribute'],
      [
        'an attribute key given twice',
        [
          ['attribute', 'a:1'],
          ['attribute', 'a:2'],
        ],
        'attribute',
      ],
      ['51 attributes', fifty, 'attribute'],
      ['a build of 256 characters', [['build', 'b'.repeat(256)]], 'build'],
    ])(
      '422 validation_error for %s, on both endpoints, changing nothing',
      async (_n, fields, path) => {
        const run = await createRun({ name: 'Refuses', ci: { branch: 'main' } });
        const into = await importInto(`/test-runs/${String(run.id)}/imports/junit`, fields);
        expect(expectProblem(into, 422, 'validation_error').errors).toHaveProperty([path]);
        expect(await getRun(run.id)).toMatchObject({
          ci: { branch: 'main', commit_sha: null },
          attributes: {},
          updated_at: run.updated_at,
        });
        const before = await runCount();
        const project = await importInto(`/projects/${f.projectId}/imports/junit`, fields);
        expect(expectProblem(project, 422, 'validation_error').errors).toHaveProperty([path]);
        expect(await runCount()).toBe(before);
      },
    );

    it('an import that would leave the run with more than 50 attributes is refused whole', async () => {
      const fiftyAttributes = Object.fromEntries(
        Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']),
      );
      const run = await createRun({ name: 'Full', attributes: fiftyAttributes });
      const res = await importInto(
        `/test-runs/${String(run.id)}/imports/junit?create_missing_cases=true`,
        [['attribute', 'extra:1']],
      );
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(['attribute']);
      const after = await getRun(run.id);
      expect(after.attributes).toEqual(fiftyAttributes);
      expect(after).toMatchObject({ status: 'not_started', summary: { total: 0 } });
      // Setting one of its keys again is fine.
      await ok(
        await importInto(`/test-runs/${String(run.id)}/imports/junit?create_missing_cases=true`, [
          ['attribute', 'k0:changed'],
        ]),
        201,
      );
      expect((await getRun(run.id)).attributes).toMatchObject({ k0: 'changed', k49: 'v' });
    });
  });

  describe('exports', () => {
    let runId: string;
    const exportRun = (format: string): Promise<Response> =>
      t
        .req('get', api(`/test-runs/${runId}/export?format=${format}`), f.viewer.token)
        .buffer(true)
        .parse(binary);

    beforeAll(async () => {
      const run = await createRun({
        name: 'Exported',
        build: '2.4.0-rc1',
        ci: {
          provider: 'github-actions',
          branch: 'release/2.4',
          commit_sha: SHA_A,
          job_url: JOB_URL,
          pipeline_id: '9876543210',
        },
        attributes: { team: 'payments', os: 'linux' },
      });
      runId = run.id as string;
      await ok(
        await t
          .req(
            'post',
            api(`/test-runs/${runId}/imports/junit?create_missing_cases=true`),
            f.tester.token,
          )
          .attach('file', REPORT, 'meta.xml'),
        201,
      );
    });

    const ci = {
      provider: 'github-actions',
      branch: 'release/2.4',
      commit_sha: SHA_A,
      job_url: JOB_URL,
      pipeline_id: '9876543210',
    };

    it('json: test_run.ci and test_run.attributes (keys sorted)', async () => {
      const report = JSON.parse((await exportRun('json')).body.toString('utf8')) as Json;
      const run = report.test_run as Json;
      expect(run.ci).toEqual(ci);
      expect(run.attributes).toEqual({ os: 'linux', team: 'payments' });
      expect(Object.keys(run.attributes as Json)).toEqual(['os', 'team']);
    });

    it('xml: <ci> and <attributes> inside <test_run>', async () => {
      const doc = (await parseStringPromise((await exportRun('xml')).body.toString('utf8'))) as {
        test_run_report: { test_run: Array<{ ci: Json[]; attributes: Json[] }> };
      };
      const run = doc.test_run_report.test_run[0];
      expect(run.ci[0]).toMatchObject({
        branch: ['release/2.4'],
        commit_sha: [SHA_A],
        job_url: [JOB_URL],
      });
      expect(run.attributes[0]).toMatchObject({ team: ['payments'], os: ['linux'] });
    });

    it('csv: run_build, run_ci_* and run_attributes columns on every line', async () => {
      const lines = (await exportRun('csv')).body.toString('utf8').trim().split('\r\n');
      const header = lines[0].split(',');
      const row = lines[1].split(',');
      const col = (name: string) => row[header.indexOf(name)];
      expect(header.slice(-7)).toEqual([
        'run_build',
        'run_ci_provider',
        'run_ci_branch',
        'run_ci_commit_sha',
        'run_ci_job_url',
        'run_ci_pipeline_id',
        'run_attributes',
      ]);
      expect(col('run_build')).toBe('2.4.0-rc1');
      expect(col('run_ci_branch')).toBe('release/2.4');
      expect(col('run_ci_commit_sha')).toBe(SHA_A);
      expect(col('run_ci_job_url')).toBe(JOB_URL);
      expect(col('run_attributes')).toBe('os=linux;team=payments');
    });

    it('junit: ci_* and attribute.<key> properties on <testsuites>', async () => {
      const doc = (await parseStringPromise((await exportRun('junit')).body.toString('utf8'))) as {
        testsuites: {
          properties: Array<{ property: Array<{ $: { name: string; value: string } }> }>;
        };
      };
      const props = Object.fromEntries(
        doc.testsuites.properties[0].property.map((p) => [p.$.name, p.$.value]),
      );
      expect(props).toMatchObject({
        build: '2.4.0-rc1',
        ci_provider: 'github-actions',
        ci_branch: 'release/2.4',
        ci_commit_sha: SHA_A,
        ci_job_url: JOB_URL,
        ci_pipeline_id: '9876543210',
        'attribute.os': 'linux',
        'attribute.team': 'payments',
      });
    });

    it('pdf: branch, commit, CI and attributes in the overview', async () => {
      const res = await exportRun('pdf');
      expect(res.status).toBe(200);
      const text = pdfText(res.body as Buffer);
      expect(text).toContain('release/2.4');
      expect(text).toContain('github-actions');
      expect(text).toContain('9876543210');
      expect(text).toContain('Attributes: os=linux, team=payments');
    });
  });
});
