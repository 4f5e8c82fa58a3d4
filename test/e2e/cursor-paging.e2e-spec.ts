import { Client } from 'pg';
import { CURSOR_MAX_LENGTH } from '../../src/common/pagination/cursor';
import { fixture } from '../support/import-fixture';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';
import { RUN_SORT_KEYS } from '../../src/modules/test-runs/dto/test-run.dto';
import { RUN_CASE_SORT_KEYS } from '../../src/modules/run-items/dto/run-item.dto';
import { TEST_CASE_SORT_FIELDS } from '../../src/modules/test-cases/dto/test-case.dto';
import { ENVIRONMENT_SORT_KEYS } from '../../src/modules/environments/dto/environment.dto';

type Json = Record<string, unknown>;

const api = (path: string) => `/api/v1${path}`;

/** The `Link` header a page with a next cursor carries (RFC 8288). */
const LINK = /^<([^>]+)>; rel="next"$/;

describe('cursor paging (issue #19 §3)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let runId: string;
  let importRunId: string;
  const caseIds: string[] = [];

  async function post(path: string, body: Json, token = f.lead.token): Promise<Json> {
    const res = await t.req('post', api(path), token).send(body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function get(url: string, token = f.viewer.token) {
    return t.req('get', api(url), token);
  }

  /** Every id of a list in page-paged order (one page of 200). */
  async function pagedIds(url: string): Promise<string[]> {
    const res = await get(`${url}&page_size=200`);
    expect(res.status).toBe(200);
    expect(res.body.has_next).toBe(false);
    return (res.body.items as Json[]).map((i) => i.id as string);
  }

  /**
   * Walks a list by cursor from `cursor=` to the last page, checking each page's envelope and Link
   * header; `between` runs after each page (inserting rows while walking). The ids, in order.
   */
  async function walk(
    url: string,
    pageSize: number,
    between: () => Promise<void> = async () => undefined,
  ): Promise<string[]> {
    const ids: string[] = [];
    let next = `${url}&page_size=${pageSize}&cursor=`;
    for (let pages = 0; pages < 100; pages += 1) {
      const res = await get(next);
      expect(res.status).toBe(200);
      const body = res.body as Json;
      expect(Object.keys(body)).toEqual(['items', 'page_size', 'has_next', 'next_cursor']);
      expect(body.page_size).toBe(pageSize);
      const items = body.items as Json[];
      ids.push(...items.map((i) => i.id as string));
      if (body.next_cursor === null) {
        expect(body.has_next).toBe(false);
        expect(res.headers.link).toBeUndefined();
        return ids;
      }
      expect(body.has_next).toBe(true);
      expect(items).toHaveLength(pageSize);
      const cursor = body.next_cursor as string;
      const link = LINK.exec(String(res.headers.link));
      expect(link).not.toBeNull();
      // The same path and query, with the new cursor in place of the old one.
      const expected = api(`${url}&page_size=${pageSize}&cursor=${encodeURIComponent(cursor)}`);
      expect(link?.[1]).toBe(expected);
      next = link![1].slice(api('').length);
      await between();
    }
    throw new Error('the walk did not end');
  }

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    const p = f.projectId;
    const envIds: string[] = [];
    for (const name of ['env b', 'Env A', 'env c', 'ENV A2']) {
      envIds.push((await post('/environments', { project_id: p, name })).id as string);
    }
    // Ties on created_at and updated_at: broken by id.
    await t.db.query(
      `UPDATE environments SET created_at = '2026-01-01T00:00:00Z', updated_at = '2026-01-02T00:00:00Z'
        WHERE id = ANY($1::uuid[])`,
      [envIds.slice(0, 3)],
    );

    const runIds: string[] = [];
    const runs: Array<[string, string | null, number | null, string]> = [
      ['Same', 'b1', 0, 'not_started'],
      ['same', 'B1', 1, 'in_progress'],
      ['SAME', null, null, 'completed'],
      ['alpha', 'z', 2, 'in_progress'],
      ['beta', null, 0, 'not_started'],
      ['gamma', 'b1', null, 'completed'],
      ['delta', 'a', 3, 'not_started'],
    ];
    for (const [name, build, env, status] of runs) {
      const run = await post('/test-runs', {
        project_id: p,
        name,
        build,
        environment_id: env === null ? null : envIds[env],
      });
      const steps = {
        not_started: [],
        in_progress: ['in_progress'],
        completed: ['in_progress', 'completed'],
      }[status];
      for (const step of steps ?? []) {
        const res = await t
          .req('patch', api(`/test-runs/${String(run.id)}`), f.lead.token)
          .send({ status: step });
        expect(res.status).toBe(200);
      }
      runIds.push(run.id as string);
    }
    await t.db.query(
      `UPDATE test_runs SET created_at = '2026-02-01T00:00:00.123456Z' WHERE id = ANY($1::uuid[])`,
      [runIds.slice(0, 4)],
    );
    runId = runIds[1];
    importRunId = runIds[3];

    const suiteA = (await post('/suites', { project_id: p, name: 'Suite A' })).id;
    const suiteB = (await post('/suites', { project_id: p, name: 'suite a' })).id;
    const cases: Array<[string, string | null, string, unknown, string]> = [
      ['Login', 'high', 'active', suiteA, 'lead'],
      ['login', null, 'active', suiteB, 'tester'],
      ['Logout', 'low', 'draft', null, 'lead'],
      ['Search', 'critical', 'active', suiteA, 'tester'],
      ['search', 'medium', 'active', null, 'lead'],
      ['Checkout', null, 'active', suiteB, 'tester'],
      ['Cart', 'high', 'draft', suiteA, 'lead'],
    ];
    for (const [title, priority, status, suite, owner] of cases) {
      const c = await post('/test-cases', {
        project_id: p,
        title,
        priority,
        status,
        suite_id: suite,
        owner_id: f[owner as 'lead' | 'tester'].id,
      });
      caseIds.push(c.id as string);
    }
    await t.db.query(
      `UPDATE test_cases SET created_at = '2026-03-01T00:00:00Z', updated_at = '2026-03-01T00:00:00Z'
        WHERE id = ANY($1::uuid[])`,
      [caseIds.slice(2, 6)],
    );
    // Drafts cannot be added to a run: the active ones are.
    const active = caseIds.filter((_id, i) => cases[i][2] === 'active');
    await post('/run-cases/bulk', { test_run_id: runId, test_case_ids: active }, f.tester.token);
    // Results: two never executed (NULL), two at the same instant, one alone; statuses and assignees.
    const items = await t.db.query<Array<{ id: string }>>(
      `SELECT id FROM run_items WHERE test_run_id = $1 ORDER BY id`,
      [runId],
    );
    const setups: Array<[string | null, string, string | null]> = [
      [null, 'untested', null],
      ['2026-04-01T10:00:00.000001Z', 'passed', f.tester.id],
      ['2026-04-01T10:00:00.000001Z', 'failure', f.lead.id],
      [null, 'untested', f.tester.id],
      ['2026-04-02T10:00:00Z', 'passed', null],
    ];
    for (const [i, item] of items.entries()) {
      const [at, status, assignee] = setups[i % setups.length];
      await t.db.query(
        `UPDATE run_items SET last_executed_at = $2, status = $3, assignee_id = $4 WHERE id = $1`,
        [item.id, at, status, assignee],
      );
    }
    // The same case in a second run: the across-runs list.
    await post('/run-cases', { test_run_id: runIds[0], test_case_id: active[0] }, f.tester.token);

    for (let i = 0; i < 4; i += 1) await importInto(importRunId);
  });

  afterAll(async () => {
    await t?.close();
  });

  async function importInto(id: string): Promise<void> {
    const res = await t
      .req('post', api(`/test-runs/${id}/imports/junit`), f.tester.token)
      .attach('file', fixture('basic.xml'), 'basic.xml');
    expect([200, 201, 202]).toContain(res.status);
  }

  const sortsOf = (keys: readonly string[]) =>
    keys.flatMap((k) => ['asc', 'desc'].map((o) => `&sort_by=${k}&sort_order=${o}`));

  describe('every allowed sort: the cursor walk sees the page-paged order', () => {
    it.each(sortsOf(RUN_SORT_KEYS))('GET /test-runs%s', async (sort) => {
      const url = `/test-runs?project_id=${f.projectId}${sort}`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(7);
      expect(await walk(url, 2)).toEqual(paged);
      expect(await walk(url, 3)).toEqual(paged);
    });

    it.each(sortsOf(RUN_CASE_SORT_KEYS))('GET /run-cases%s', async (sort) => {
      const url = `/run-cases?test_run_id=${runId}${sort}`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(5);
      expect(await walk(url, 2)).toEqual(paged);
    });

    it.each<[string, Array<string | null>]>([
      [
        '',
        [
          '2026-04-02T10:00:00.000Z',
          '2026-04-01T10:00:00.000Z',
          '2026-04-01T10:00:00.000Z',
          null,
          null,
        ],
      ],
      [
        '&sort_order=asc',
        [
          null,
          null,
          '2026-04-01T10:00:00.000Z',
          '2026-04-01T10:00:00.000Z',
          '2026-04-02T10:00:00.000Z',
        ],
      ],
    ])(
      'GET /run-cases%s by last execution: never executed is the oldest',
      async (sort, expected) => {
        const res = await get(`/run-cases?test_run_id=${runId}${sort}`);
        expect(res.status).toBe(200);
        expect((res.body.items as Json[]).map((i) => i.last_executed_at)).toEqual(expected);
      },
    );

    it('GET /run-cases across runs (project_id and test_case_id)', async () => {
      const url = `/run-cases?project_id=${f.projectId}&test_case_id=${caseIds[0]}`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(2);
      expect(await walk(url, 1)).toEqual(paged);
    });

    it.each(sortsOf(TEST_CASE_SORT_FIELDS))('GET /test-cases%s', async (sort) => {
      const url = `/test-cases?project_id=${f.projectId}${sort}`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(7);
      expect(await walk(url, 2)).toEqual(paged);
    });

    it.each(sortsOf(ENVIRONMENT_SORT_KEYS))('GET /environments%s', async (sort) => {
      const url = `/environments?project_id=${f.projectId}${sort}`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(4);
      expect(await walk(url, 1)).toEqual(paged);
    });

    it('GET /test-runs/{id}/imports (newest first)', async () => {
      const url = `/test-runs/${importRunId}/imports?x=1`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(4);
      expect(await walk(url, 1)).toEqual(paged);
    });

    it('filters apply to the walk as to the pages', async () => {
      const url = `/test-runs?project_id=${f.projectId}&status=in_progress&status=completed&sort_by=name`;
      const paged = await pagedIds(url);
      expect(paged.length).toBe(4);
      expect(await walk(url, 1)).toEqual(paged);
    });
  });

  describe('stable while rows are inserted: every pre-existing row exactly once', () => {
    async function walkWhileInserting(url: string, insert: () => Promise<void>) {
      const before = await pagedIds(url);
      const seen = await walk(url, 2, insert);
      // No row twice, and every row that existed when the walk started exactly once.
      expect(new Set(seen).size).toBe(seen.length);
      expect(before.filter((id) => !seen.includes(id))).toEqual([]);
      const after = await pagedIds(url);
      expect(after.length).toBeGreaterThan(before.length);
      // What the walk saw is in the list's order.
      expect(seen).toEqual(after.filter((id) => seen.includes(id)));
    }

    it.each(['asc', 'desc'])('GET /test-runs by name %s', async (order) => {
      let n = 0;
      await walkWhileInserting(
        `/test-runs?project_id=${f.projectId}&sort_by=name&sort_order=${order}`,
        async () => {
          n += 1;
          // Names spread over the whole order: before, between and after the walked rows.
          await post('/test-runs', {
            project_id: f.projectId,
            name: `${'amz'[n % 3]}-new-${order}${n}`,
          });
        },
      );
    });

    it.each(['asc', 'desc'])('GET /test-runs by created_at %s', async (order) => {
      await walkWhileInserting(
        `/test-runs?project_id=${f.projectId}&sort_order=${order}`,
        async () => {
          await post('/test-runs', { project_id: f.projectId, name: t.unique('inserted ') });
        },
      );
    });

    it('GET /test-cases by title', async () => {
      let n = 0;
      await walkWhileInserting(
        `/test-cases?project_id=${f.projectId}&sort_by=title&sort_order=asc`,
        async () => {
          n += 1;
          await post('/test-cases', {
            project_id: f.projectId,
            title: `${'aLz'[n % 3]} inserted ${n}`,
          });
        },
      );
    });

    it('GET /run-cases of a run (default order)', async () => {
      const run = (await post('/test-runs', { project_id: f.projectId, name: 'walk items' }))
        .id as string;
      const cases: string[] = [];
      for (let i = 0; i < 12; i += 1) {
        cases.push(
          (await post('/test-cases', { project_id: f.projectId, title: `item ${i}` })).id as string,
        );
      }
      await post(
        '/run-cases/bulk',
        { test_run_id: run, test_case_ids: cases.slice(0, 6) },
        f.tester.token,
      );
      let next = 6;
      await walkWhileInserting(`/run-cases?test_run_id=${run}`, async () => {
        await post('/run-cases', { test_run_id: run, test_case_id: cases[next] }, f.tester.token);
        next += 1;
      });
    });

    it('GET /environments by name', async () => {
      let n = 0;
      await walkWhileInserting(
        `/environments?project_id=${f.projectId}&sort_by=name&sort_order=asc`,
        async () => {
          n += 1;
          await post('/environments', {
            project_id: f.projectId,
            name: `${'aez'[n % 3]} new env ${n}`,
          });
        },
      );
    });

    it('GET /test-runs/{id}/imports', async () => {
      const run = (await post('/test-runs', { project_id: f.projectId, name: 'walk imports' }))
        .id as string;
      for (let i = 0; i < 5; i += 1) await importInto(run);
      await walkWhileInserting(`/test-runs/${run}/imports?x=1`, () => importInto(run));
    });
  });

  describe('refused cursors: 422 invalid_cursor', () => {
    async function firstCursor(url: string): Promise<string> {
      const res = await get(`${url}&page_size=1&cursor=`);
      expect(res.status).toBe(200);
      expect(typeof res.body.next_cursor).toBe('string');
      return res.body.next_cursor as string;
    }

    it('a forged, altered or truncated cursor', async () => {
      const url = `/test-runs?project_id=${f.projectId}`;
      const cursor = await firstCursor(url);
      const [payload, tag] = cursor.split('.');
      const flip = (s: string, i: number) =>
        s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const forgedPayload = Buffer.from(
        JSON.stringify(['2099-01-01 00:00:00+00', '00000000-0000-7000-8000-000000000000']),
      ).toString('base64url');
      for (const bad of [
        'abc',
        'not a cursor',
        payload,
        `${payload}.`,
        `.${tag}`,
        `${flip(payload, 3)}.${tag}`,
        `${payload}.${flip(tag, 0)}`,
        `${forgedPayload}.${tag}`,
        `${cursor}.${tag}`,
        cursor.slice(0, -1),
      ]) {
        const res = await get(`${url}&cursor=${encodeURIComponent(bad)}`);
        expectProblem(res, 422, 'invalid_cursor');
        expect(res.body.errors).toEqual({
          'query.cursor': ['is not a valid cursor for this list'],
        });
      }
      // The genuine cursor still opens the list.
      expect((await get(`${url}&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    });

    it('a cursor of another list, another filter set, another sort or another project', async () => {
      const runsUrl = `/test-runs?project_id=${f.projectId}`;
      const cursor = encodeURIComponent(await firstCursor(runsUrl));
      const other = await t.createProject(f.lead.token);
      await t.addMember(other, f.viewer.id, 'viewer', f.lead.token);
      for (const url of [
        `/test-cases?project_id=${f.projectId}`,
        `/environments?project_id=${f.projectId}`,
        `/run-cases?test_run_id=${runId}`,
        `/test-runs/${importRunId}/imports?x=1`,
        `${runsUrl}&status=in_progress`,
        `${runsUrl}&search=a`,
        `${runsUrl}&sort_order=asc`,
        `${runsUrl}&sort_by=name`,
        `/test-runs?project_id=${other}`,
      ]) {
        const res = await get(`${url}&cursor=${cursor}`);
        expectProblem(res, 422, 'invalid_cursor');
      }
      // The defaults spelled out, another page size, the same values in another order: same list.
      for (const url of [
        `${runsUrl}&sort_by=created_at&sort_order=desc`,
        `${runsUrl}&page_size=3`,
        `${runsUrl}&fields=id,name`,
      ]) {
        expect((await get(`${url}&cursor=${cursor}`)).status).toBe(200);
      }
      const filtered = `${runsUrl}&status=in_progress&status=completed`;
      const c2 = encodeURIComponent(await firstCursor(filtered));
      const res = await get(
        `/test-runs?project_id=${f.projectId}&status=completed&status=in_progress&cursor=${c2}`,
      );
      expect(res.status).toBe(200);
    });

    it('a cursor of another run (imports) or another run (run cases)', async () => {
      const c = encodeURIComponent(await firstCursor(`/test-runs/${importRunId}/imports?x=1`));
      expectProblem(await get(`/test-runs/${runId}/imports?cursor=${c}`), 422, 'invalid_cursor');
      const c2 = encodeURIComponent(await firstCursor(`/run-cases?test_run_id=${runId}`));
      expectProblem(
        await get(`/run-cases?test_run_id=${importRunId}&cursor=${c2}`),
        422,
        'invalid_cursor',
      );
    });
  });

  describe('cursor and page', () => {
    it.each([
      ['/test-runs?project_id=P'],
      ['/test-cases?project_id=P'],
      ['/environments?project_id=P'],
      ['/run-cases?test_run_id=R'],
      ['/test-runs/R/imports?x=1'],
    ])('%s: cursor with page is 422 validation_error on query.cursor', async (path) => {
      const url = path.replace('P', f.projectId).replace('R', runId);
      for (const q of ['&page=1&cursor=', '&cursor=&page=2', '&page=3&cursor=abc']) {
        const res = await get(`${url}${q}`);
        const body = expectProblem(res, 422, 'validation_error');
        expect(body.errors).toEqual({
          'query.cursor': ['cursor and page cannot be given together: page by one or the other'],
        });
      }
    });

    it('validation comes before the access checks: an outsider gets 422 too', async () => {
      const res = await get(
        `/test-runs?project_id=${f.projectId}&page=1&cursor=`,
        f.outsider.token,
      );
      expectProblem(res, 422, 'validation_error');
    });

    it('a cursor longer than the bound is 422 validation_error', async () => {
      const res = await get(
        `/test-runs?project_id=${f.projectId}&cursor=${'a'.repeat(CURSOR_MAX_LENGTH + 1)}`,
      );
      const body = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(body.errors as Json)).toEqual(['query.cursor']);
    });

    it('page paging answers as before: the page envelope, no next_cursor, no Link', async () => {
      for (const url of [
        `/test-runs?project_id=${f.projectId}&page_size=2`,
        `/test-cases?project_id=${f.projectId}&page_size=2&page=2`,
        `/environments?project_id=${f.projectId}&page_size=2`,
        `/run-cases?test_run_id=${runId}&page_size=2`,
        `/test-runs/${importRunId}/imports?page_size=2`,
      ]) {
        const res = await get(url);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body)).toEqual(['items', 'page', 'page_size', 'has_next', 'total']);
        expect(res.headers.link).toBeUndefined();
      }
    });

    it('the Link keeps every other parameter as sent, the cursor in its place', async () => {
      const url = `/test-runs?project_id=${f.projectId}&search=%61&cursor=&sort_by=name&page_size=1`;
      const res = await get(url);
      expect(res.status).toBe(200);
      const link = LINK.exec(String(res.headers.link));
      expect(link?.[1]).toBe(
        api(
          `/test-runs?project_id=${f.projectId}&search=%61&cursor=${encodeURIComponent(
            res.body.next_cursor as string,
          )}&sort_by=name&page_size=1`,
        ),
      );
    });

    it('a repeated cursor is 422 validation_error', async () => {
      const res = await get(`/test-runs?project_id=${f.projectId}&cursor=&cursor=`);
      const body = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(body.errors as Json)).toEqual(['query.cursor']);
    });
  });

  it('the OpenAPI document describes cursor, the cursor page, invalid_cursor and the Link header', async () => {
    const doc = await t.req('get', '/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/api/v1/test-runs',
      '/api/v1/run-cases',
      '/api/v1/test-cases',
      '/api/v1/environments',
      '/api/v1/test-runs/{id}/imports',
    ]) {
      const op = doc.body.paths[path].get as {
        parameters: Array<{ name: string; in: string; description?: string }>;
        responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
        description: string;
      };
      const cursor = op.parameters.find((p) => p.name === 'cursor' && p.in === 'query');
      expect(cursor?.description).toContain('invalid_cursor');
      expect(op.responses['200'].headers).toHaveProperty('Link');
      expect(JSON.stringify(op.responses['200'].content)).toContain('next_cursor');
      expect(JSON.stringify(op.responses['422'] ?? op.responses)).toContain('invalid_cursor');
    }
    // A list without cursor paging documents no Link.
    expect(doc.body.paths['/api/v1/datasets'].get.responses['200'].headers).not.toHaveProperty(
      'Link',
    );
  });

  describe('a keyset page is an index range walk, as cheap deep in a large list as at its start', () => {
    let g: RoleFixture;
    let bigRun: string;
    const ROWS = 10000;

    beforeAll(async () => {
      g = await t.roleFixture();
      await t.db.query(
        `INSERT INTO test_runs (id, project_id, name, created_by, environment_snapshot, build,
                                environment_name, status, created_at)
         SELECT uuidv7(), $1, 'run ' || i, $2, '{}', 'b' || (i % 97), 'env ' || (i % 13),
                (ARRAY['not_started', 'in_progress', 'completed'])[1 + i % 3],
                now() - i * interval '1 second'
           FROM generate_series(1, ${ROWS}) AS i`,
        [g.projectId, g.tester.id],
      );
      await t.db.query(
        `INSERT INTO test_cases (id, project_id, key, key_number, title, priority, status, created_by,
                                 created_at, updated_at)
         SELECT uuidv7(), $1, 'TC-' || i, i, 'case ' || (i % 1000),
                (ARRAY['low', 'medium', 'high', 'critical', NULL])[1 + i % 5],
                (ARRAY['active', 'draft'])[1 + i % 2], $2,
                now() - i * interval '1 second', now() - (i % 500) * interval '1 minute'
           FROM generate_series(1, ${ROWS}) AS i`,
        [g.projectId, g.tester.id],
      );
      bigRun = (
        await t
          .req('post', api('/test-runs'), g.tester.token)
          .send({ project_id: g.projectId, name: 'big' })
      ).body.id as string;
      await t.db.query(
        `INSERT INTO run_items (id, project_id, test_run_id, test_case_title, test_case_key, status,
                                last_executed_at)
         SELECT uuidv7(), $1, $2, 'case ' || i, 'TC-' || i,
                (ARRAY['untested', 'passed', 'failure'])[1 + i % 3],
                CASE WHEN i % 4 = 0 THEN NULL ELSE now() - (i % 5000) * interval '1 minute' END
           FROM generate_series(1, ${ROWS}) AS i`,
        [g.projectId, bigRun],
      );
      await t.db.query('ANALYZE test_runs, test_cases, run_items');
    });

    /**
     * The keyset statement of a page about three quarters into `url` (walked there by cursor),
     * run under EXPLAIN ANALYZE with its parameters: its plan.
     */
    async function deepPagePlan(url: string): Promise<string> {
      let cursor = '';
      for (let depth = 0; depth < ROWS * 0.75; depth += 200) {
        const res = await t.req(
          'get',
          api(`${url}&page_size=200&cursor=${encodeURIComponent(cursor)}`),
          g.viewer.token,
        );
        expect(res.status).toBe(200);
        if (res.body.next_cursor === null) break;
        cursor = res.body.next_cursor as string;
      }
      const spy = jest.spyOn(Client.prototype, 'query');
      let call: unknown[] | undefined;
      try {
        const res = await t.req(
          'get',
          api(`${url}&page_size=5&cursor=${encodeURIComponent(cursor)}`),
          g.viewer.token,
        );
        expect(res.status).toBe(200);
        expect(res.body.items).toHaveLength(5);
        call = spy.mock.calls
          .map(([q, v]) =>
            typeof q === 'string'
              ? [q, v]
              : [(q as { text?: string }).text, (q as { values?: unknown }).values],
          )
          .find(([q]) => typeof q === 'string' && q.includes('_k0'));
      } finally {
        spy.mockRestore();
      }
      expect(call).toBeDefined();
      const [text, values] = call as [string, unknown[]];
      const rows = await t.db.query<Array<{ 'QUERY PLAN': unknown }>>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        values,
      );
      return JSON.stringify(rows[0]['QUERY PLAN']);
    }

    /** Every node of the plan read at most `max` rows: nothing walked the rows before the cursor. */
    function expectBounded(plan: string, max: number): void {
      const actual = [...plan.matchAll(/"Actual Rows":\s*(\d+)/g)].map((m) => Number(m[1]));
      const removed = [...plan.matchAll(/"Rows Removed by Filter":\s*(\d+)/g)].map((m) =>
        Number(m[1]),
      );
      expect(Math.max(...actual)).toBeLessThanOrEqual(max);
      expect(Math.max(0, ...removed)).toBeLessThanOrEqual(max);
    }

    it.each<[string, string]>([
      ['', 'ix_test_runs_project_created'],
      ['&sort_order=asc', 'ix_test_runs_project_created'],
      ['&sort_by=name&sort_order=asc', 'ix_test_runs_project_name'],
      ['&sort_by=status', 'ix_test_runs_project_status_id'],
      ['&sort_by=build&sort_order=asc', 'ix_test_runs_project_build'],
      ['&sort_by=environment', 'ix_test_runs_project_environment_name'],
    ])('GET /test-runs%s: %s', async (sort, index) => {
      // Sparse fields: the walk there is quicker; the page's statement is the same.
      const plan = await deepPagePlan(`/test-runs?project_id=${g.projectId}&fields=id${sort}`);
      expect(plan).toContain(index);
      expect(plan).toMatch(/"Index Cond":\s*"[^"]*ROW\(/);
      expectBounded(plan, 10);
    });

    it.each<[string, string]>([
      ['', 'ix_test_cases_project_created'],
      ['&sort_by=updated_at&sort_order=asc', 'ix_test_cases_project_updated'],
      ['&sort_by=key', 'uq_test_cases_project_key_number'],
      ['&sort_by=title&sort_order=asc', 'ix_test_cases_project_title'],
      ['&sort_by=status&status=active&status=draft', 'ix_test_cases_project_status_id'],
      ['&sort_by=priority', 'ix_test_cases_project_priority_label'],
    ])('GET /test-cases%s: %s', async (sort, index) => {
      const plan = await deepPagePlan(`/test-cases?project_id=${g.projectId}${sort}`);
      expect(plan).toContain(index);
      expectBounded(plan, 10);
    });

    it.each<[string, string]>([
      ['', 'ix_run_items_run_last_executed_keyset'],
      ['&sort_order=asc', 'ix_run_items_run_last_executed_keyset'],
      ['&sort_by=status', 'ix_run_items_run_status_id'],
    ])('GET /run-cases%s: %s', async (sort, index) => {
      const plan = await deepPagePlan(`/run-cases?test_run_id=${bigRun}${sort}`);
      expect(plan).toContain(index);
      expectBounded(plan, 10);
    });
  });

  // Last in the file: it adds rows to the project the lists above walk.
  describe('long non-ASCII sort keys: every cursor handed out is accepted back', () => {
    it('runs and environments by a 255-character name, cases and run cases by a 500-character title', async () => {
      const p = f.projectId;
      const han = '漢'.repeat(254); // 762 bytes of UTF-8
      const acute = 'é'.repeat(499); // 998 bytes
      const run = (await post('/test-runs', { project_id: p, name: 'Long titles' })).id as string;
      for (let i = 0; i < 3; i += 1) {
        await post('/test-runs', { project_id: p, name: `${han}${i}` });
        await post('/environments', { project_id: p, name: `${han}${i}` });
        const c = await post('/test-cases', { project_id: p, title: `${acute}${i}` });
        await post('/run-cases', { test_run_id: run, test_case_id: c.id }, f.tester.token);
      }
      const search = encodeURIComponent('漢漢');
      for (const order of ['asc', 'desc']) {
        for (const url of [
          `/test-runs?project_id=${p}&search=${search}&sort_by=name&sort_order=${order}`,
          `/environments?project_id=${p}&search=${search}&sort_by=name&sort_order=${order}`,
          `/test-cases?project_id=${p}&search=${encodeURIComponent('éé')}&sort_by=title&sort_order=${order}`,
          `/run-cases?test_run_id=${run}&sort_by=test_case_title&sort_order=${order}`,
        ]) {
          const paged = await pagedIds(url);
          expect(paged).toHaveLength(3);
          // Page by page (size 1), each next page through its Link: 1,098 and 1,413 characters
          // of cursor, above the 1,024 once accepted.
          expect(await walk(url, 1)).toEqual(paged);
        }
      }
    });
  });
});
