import { statementsDuring } from '../support/query-count';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';
import { SnapshotCache } from '../../src/modules/test-runs/snapshot-cache';
import { TEST_RUN_FIELDS } from '../../src/modules/test-runs/dto/test-run.dto';
import { ENVIRONMENT_FIELDS } from '../../src/modules/environments/dto/environment.dto';
import { DATASET_FIELDS } from '../../src/modules/datasets/dto/dataset.dto';

type Json = Record<string, unknown>;

const api = (path: string) => `/api/v1${path}`;

/** The statements that read a run's snapshot: its own column, or its revision's. */
const SNAPSHOT_READ =
  /environment_snapshot::text|r\.environment_snapshot\b|full_snapshot|environment_revisions/;

describe('sparse fields (issue #19 §4)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let env: Json;
  let runId: string;
  let bareRunId: string;

  async function post(path: string, body: Json): Promise<Json> {
    const res = await t.req('post', api(path), f.lead.token).send(body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function get(url: string, token = f.viewer.token) {
    return t.req('get', api(url), token);
  }

  /** A topology of `n` components: a snapshot of some size. */
  const topology = (n: number) => ({
    system_under_test: Array.from({ length: n }, (_, i) => ({
      name: `service-${i}`,
      component_type: 'service',
      endpoints: [`/api/${i}/a`, `/api/${i}/b`],
      nodes: [{ host_type: 'vm', provider: 'aws', region: 'eu-west-1', count: 2 }],
    })),
  });

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    env = await post('/environments', {
      project_id: f.projectId,
      name: 'Large',
      topology: topology(200),
      meta: { owner: 'team' },
    });
    await post('/environments', { project_id: f.projectId, name: 'Small' });
    runId = (
      await post('/test-runs', {
        project_id: f.projectId,
        name: 'With env',
        environment_id: env.id,
      })
    ).id as string;
    for (let i = 0; i < 3; i += 1) {
      await post('/test-runs', {
        project_id: f.projectId,
        name: `run ${i}`,
        environment_id: env.id,
      });
    }
    bareRunId = (await post('/test-runs', { project_id: f.projectId, name: 'No env' }))
      .id as string;
    await post('/datasets', {
      project_id: f.projectId,
      name: 'Users',
      columns: [{ column_key: 'u' }, { column_key: 'label', is_scenario_label: true }],
      rows: [
        { row_key: 'a', scenario_label: 'A', values: { u: 'a' } },
        { row_key: 'b', scenario_label: 'B', values: { u: 'b' } },
      ],
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('GET /test-runs and GET /test-runs/{id}', () => {
    it('the field names are the run object’s, in its order', async () => {
      const full = await get(`/test-runs/${runId}`);
      expect(Object.keys(full.body)).toEqual(TEST_RUN_FIELDS);
    });

    it.each<[string, string[]]>([
      ['id,name,status', ['id', 'name', 'status']],
      ['status,name,id', ['id', 'name', 'status']],
      [' summary , id,summary', ['id', 'summary']],
      ['environment_snapshot', ['environment_snapshot']],
      ['updated_at,environment_snapshot,id', ['id', 'environment_snapshot', 'updated_at']],
      [
        'environment_revision_number,environment_snapshot',
        ['environment_revision_number', 'environment_snapshot'],
      ],
      ['environment_snapshot,milestone_id', ['environment_snapshot', 'milestone_id']],
    ])('fields=%s answers those fields in the schema’s order', async (fields, keys) => {
      const full = (await get(`/test-runs?project_id=${f.projectId}`)).body as Json;
      const res = await get(
        `/test-runs?project_id=${f.projectId}&fields=${encodeURIComponent(fields)}`,
      );
      expect(res.status).toBe(200);
      expect(Number(res.headers['content-length'] ?? Buffer.byteLength(res.text))).toBe(
        Buffer.byteLength(res.text),
      );
      const items = res.body.items as Json[];
      expect(items).toHaveLength((full.items as Json[]).length);
      items.forEach((item, i) => {
        expect(Object.keys(item)).toEqual(keys);
        const whole = (full.items as Json[])[i];
        for (const k of keys) expect(item[k]).toEqual(whole[k]);
      });
      // The envelope is the list's as always.
      expect(Object.keys(res.body)).toEqual(['items', 'page', 'page_size', 'has_next', 'total']);

      const one = await get(`/test-runs/${runId}?fields=${encodeURIComponent(fields)}`);
      expect(one.status).toBe(200);
      expect(Object.keys(one.body)).toEqual(keys);
      const whole = (await get(`/test-runs/${runId}`)).body as Json;
      for (const k of keys) expect(one.body[k]).toEqual(whole[k]);
    });

    it('a run without an environment answers its own snapshot `{}` when asked', async () => {
      const one = await get(`/test-runs/${bareRunId}?fields=id,environment_snapshot`);
      expect(one.body).toEqual({ id: bareRunId, environment_snapshot: {} });
    });

    it('a blank fields answers every field', async () => {
      const one = await get(`/test-runs/${runId}?fields=`);
      expect(Object.keys(one.body)).toEqual(TEST_RUN_FIELDS);
    });

    it('a page of runs without the snapshot is a fraction of the bytes', async () => {
      const full = await get(`/test-runs?project_id=${f.projectId}`);
      const light = await get(`/test-runs?project_id=${f.projectId}&fields=id,name,status,summary`);
      expect(Buffer.byteLength(light.text) * 10).toBeLessThan(Buffer.byteLength(full.text));
    });

    it.each<[string, string]>([
      ['/test-runs?project_id=P&fields=id,nope,name,also_not', 'nope, also_not'],
      ['/test-runs/R?fields=Name', 'Name'],
      ['/test-runs/R?fields=id&fields=environment', 'environment'],
    ])('%s: 422 naming the unknown fields', async (path, named) => {
      const res = await get(path.replace('P', f.projectId).replace('R', runId));
      const body = expectProblem(res, 422, 'validation_error');
      expect(body.errors).toEqual({
        'query.fields': [expect.stringContaining(`fields has unknown names: ${named} (known: id,`)],
      });
    });

    it('unknown fields are a 422 before the access checks (an outsider gets 422, not 404)', async () => {
      expectProblem(
        await get(`/test-runs/${runId}?fields=x`, f.outsider.token),
        422,
        'validation_error',
      );
      expectProblem(
        await get(`/test-runs/${runId}?fields=id`, f.outsider.token),
        404,
        'test_run_not_found',
      );
    });

    it('without environment_snapshot no snapshot is read: not in SQL, not from the cache', async () => {
      const cacheGet = jest.spyOn(SnapshotCache.prototype, 'get');
      const cacheSet = jest.spyOn(SnapshotCache.prototype, 'set');
      try {
        const list = await statementsDuring(() =>
          get(
            `/test-runs?project_id=${f.projectId}&fields=id,name,status,summary,environment_revision`,
          ),
        );
        expect(list.result.status).toBe(200);
        expect(list.statements.filter((s) => SNAPSHOT_READ.test(s))).toEqual([]);
        const cursor = await statementsDuring(() =>
          get(`/test-runs?project_id=${f.projectId}&fields=id,name&cursor=&page_size=2`),
        );
        expect(cursor.result.status).toBe(200);
        expect(cursor.statements.filter((s) => SNAPSHOT_READ.test(s))).toEqual([]);
        const one = await statementsDuring(() => get(`/test-runs/${runId}?fields=id,name`));
        expect(one.result.status).toBe(200);
        expect(one.statements.filter((s) => SNAPSHOT_READ.test(s))).toEqual([]);
        expect(cacheGet).not.toHaveBeenCalled();
        expect(cacheSet).not.toHaveBeenCalled();

        // The same reads with the snapshot do read it (the check above can fail).
        const withSnapshot = await statementsDuring(() =>
          get(`/test-runs?project_id=${f.projectId}&fields=id,environment_snapshot`),
        );
        expect(withSnapshot.statements.filter((s) => SNAPSHOT_READ.test(s)).length).toBeGreaterThan(
          0,
        );
        expect(cacheGet).toHaveBeenCalled();
      } finally {
        cacheGet.mockRestore();
        cacheSet.mockRestore();
      }
    });

    it('goes with cursor paging', async () => {
      const first = await get(
        `/test-runs?project_id=${f.projectId}&fields=name&cursor=&page_size=3`,
      );
      expect(first.body.items).toEqual([{ name: 'No env' }, { name: 'run 2' }, { name: 'run 1' }]);
      const next = await get(
        `/test-runs?project_id=${f.projectId}&fields=name&page_size=3&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      );
      expect(next.body).toEqual({
        items: [{ name: 'run 0' }, { name: 'With env' }],
        page_size: 3,
        has_next: false,
        next_cursor: null,
      });
    });
  });

  describe('GET /environments', () => {
    it('the field names are the environment object’s, in its order', async () => {
      const res = await get(`/environments/${String(env.id)}`);
      expect(Object.keys(res.body)).toEqual(ENVIRONMENT_FIELDS);
    });

    it.each<[string, string[], 'none' | 'environment' | 'full']>([
      ['id,name', ['id', 'name'], 'environment'],
      ['name,id,meta,kind', ['id', 'name', 'kind', 'meta'], 'environment'],
      ['updated_at,topology', ['topology', 'updated_at'], 'full'],
      ['topology_component_count,id', ['id', 'topology_component_count'], 'none'],
    ])(
      'fields=%s: those fields; only the snapshot parts they need are read (%s)',
      async (fields, keys, read) => {
        const full = (await get(`/environments?project_id=${f.projectId}`)).body as Json;
        const { result, statements } = await statementsDuring(() =>
          get(`/environments?project_id=${f.projectId}&fields=${fields}`),
        );
        expect(result.status).toBe(200);
        const items = result.body.items as Json[];
        expect(items).toHaveLength(2);
        items.forEach((item, i) => {
          expect(Object.keys(item)).toEqual(keys);
          for (const k of keys) expect(item[k]).toEqual((full.items as Json[])[i][k]);
        });
        const page = statements.find(
          (s) => s.includes('FROM environments e') && s.includes('ORDER BY'),
        );
        expect(page).toBeDefined();
        // The whole snapshot (`r.full_snapshot` as a column), its environment section, or nothing.
        const whole = /r\.full_snapshot(?!->)/;
        if (read === 'full') expect(page).toMatch(whole);
        else expect(page).not.toMatch(whole);
        if (read === 'environment') expect(page).toContain("jsonb_build_object('environment'");
        if (read === 'none') expect(page).not.toContain('r.full_snapshot');
      },
    );

    it('a page without topology is a fraction of the bytes', async () => {
      const full = await get(`/environments?project_id=${f.projectId}`);
      const light = await get(
        `/environments?project_id=${f.projectId}&fields=id,name,topology_component_count`,
      );
      expect(Buffer.byteLength(light.text) * 10).toBeLessThan(Buffer.byteLength(full.text));
    });

    it('unknown names: 422 naming them', async () => {
      const res = await get(`/environments?project_id=${f.projectId}&fields=id,topologies`);
      const body = expectProblem(res, 422, 'validation_error');
      expect((body.errors as Record<string, string[]>)['query.fields'][0]).toContain(
        'unknown names: topologies',
      );
    });
  });

  describe('GET /datasets', () => {
    it('fields: those fields; without current_revision no revision is read', async () => {
      const full = (await get(`/datasets?project_id=${f.projectId}`)).body as Json;
      expect(Object.keys((full.items as Json[])[0])).toEqual(DATASET_FIELDS);
      const { result, statements } = await statementsDuring(() =>
        get(`/datasets?project_id=${f.projectId}&fields=name,id,test_cases_count`),
      );
      expect(result.body.items).toEqual([
        { id: (full.items as Json[])[0].id, name: 'Users', test_cases_count: 0 },
      ]);
      expect(statements.filter((s) => s.includes('dataset_revisions'))).toEqual([]);
      const withRevision = await statementsDuring(() =>
        get(`/datasets?project_id=${f.projectId}&fields=id,current_revision`),
      );
      expect(withRevision.result.body.items[0].current_revision).toEqual(
        (full.items as Json[])[0].current_revision,
      );
      expect(withRevision.statements.filter((s) => s.includes('dataset_revisions')).length).toBe(1);
    });

    it('unknown names: 422 naming them', async () => {
      const res = await get(`/datasets?project_id=${f.projectId}&fields=rows`);
      const body = expectProblem(res, 422, 'validation_error');
      expect((body.errors as Record<string, string[]>)['query.fields'][0]).toContain(
        'unknown names: rows',
      );
    });
  });
});
