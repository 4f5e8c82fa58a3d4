import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '../../src/modules/environments/snapshot-hash';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Json = Record<string, unknown>;

function sha(snapshot: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(snapshot), 'utf8').digest('hex');
}

/** A fully defaulted node as stored. */
function node(overrides: Json = {}): Json {
  return {
    name: null,
    host_type: 'vm',
    role: null,
    provider: null,
    region: null,
    endpoint: null,
    count: 1,
    resources: {},
    tags: [],
    metadata: {},
    ...overrides,
  };
}

describe('environments', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function create(body: Json, token = f.tester.token, projectId = f.projectId) {
    const res = await t
      .req('post', `${API}/environments`, token)
      .send({ project_id: projectId, ...body });
    if (res.status !== 201) {
      throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body as Json;
  }

  function patch(id: unknown, body: Json, token = f.tester.token) {
    return t.req('patch', `${API}/environments/${String(id)}`, token).send(body);
  }

  async function revisions(id: unknown): Promise<Json[]> {
    const res = await t.req(
      'get',
      `${API}/environments/${String(id)}/revisions?page_size=200`,
      f.viewer.token,
    );
    expect(res.status).toBe(200);
    return res.body.items as Json[];
  }

  // -------------------------------------------------------------------------------------------
  describe('role matrix', () => {
    let envId: string;
    beforeAll(async () => {
      envId = (await create({ name: t.unique('Matrix '), use_cases: ['matrix'] })).id as string;
    });

    it('GET /environments needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/environments?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(res.body.items.map((e: Json) => e.id)).toContain(envId);
    });

    it('GET /environments/use-cases needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/environments/use-cases?project_id=${f.projectId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'project_not_found',
      });
      expect(res.body.items).toContain('matrix');
    });

    it('POST /environments needs tester', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'post',
        url: `${API}/environments`,
        body: () => ({ project_id: f.projectId, name: 'Matrix create' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'project_not_found',
      });
      expect(res.body).toMatchObject({ name: 'Matrix create', current_revision_number: 1 });
    });

    it('GET /environments/{id} needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/environments/${envId}`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'environment_not_found',
      });
      expect(res.body.id).toBe(envId);
    });

    it('PATCH /environments/{id} needs tester', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'patch',
        url: `${API}/environments/${envId}`,
        body: () => ({ description: 'patched by the matrix' }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'environment_not_found',
      });
      expect(res.body.description).toBe('patched by the matrix');
    });

    it('GET /environments/{id}/revisions needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/environments/${envId}/revisions`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'environment_not_found',
      });
      expect(res.body.total).toBeGreaterThanOrEqual(1);
    });

    it('GET /environments/{id}/revisions/{n} needs viewer', async () => {
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: `${API}/environments/${envId}/revisions/1`,
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'environment_not_found',
      });
      expect(res.body.revision_number).toBe(1);
    });

    it('DELETE /environments/{id} needs lead', async () => {
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: `${API}/environments/${envId}`,
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'environment_not_found',
      });
      const env = await t.req('get', `${API}/environments/${envId}`, f.viewer.token);
      expect(env.body.status).toBe('archived');
    });

    it('administrators act as lead without membership', async () => {
      const id = (await create({ name: 'Admin target' })).id as string;
      const del = await t.req('delete', `${API}/environments/${id}`, t.adminToken);
      expect(del.status).toBe(204);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('OpenAPI', () => {
    it('documents every endpoint, the response shapes and the hash and revision rules', async () => {
      const res = await t.req('get', '/openapi.json');
      expect(res.status).toBe(200);
      const paths = res.body.paths as Record<string, Record<string, Json>>;
      const schemas = res.body.components.schemas as Record<string, Json>;
      expect(Object.keys(paths)).toEqual(
        expect.arrayContaining([
          '/api/v1/environments',
          '/api/v1/environments/use-cases',
          '/api/v1/environments/{id}',
          '/api/v1/environments/{id}/revisions',
          '/api/v1/environments/{id}/revisions/{revision_number}',
        ]),
      );
      // Every referenced schema exists.
      const refs = JSON.stringify(paths).match(/#\/components\/schemas\/\w+/g) ?? [];
      for (const ref of refs) expect(schemas).toHaveProperty(ref.split('/').pop() as string);
      for (const name of [
        'EnvironmentDto',
        'EnvironmentRevisionDto',
        'EnvironmentRevisionListItemDto',
        'UseCasesDto',
        'TopologyDto',
      ]) {
        expect(schemas).toHaveProperty(name);
      }
      const listItem = schemas.EnvironmentRevisionListItemDto.properties as Json;
      expect(listItem).not.toHaveProperty('full_snapshot');
      expect(listItem).toHaveProperty('entities_count');
      const patchDoc = paths['/api/v1/environments/{id}'].patch;
      expect(patchDoc.description).toContain('only when the snapshot changes');
      expect(patchDoc.description).toContain('`sha256:`');
      expect(patchDoc.description).toContain('Changed: <top-level fields>');
      const hashDoc = (schemas.EnvironmentDto.properties as Record<string, Json>).snapshot_hash;
      expect(hashDoc.description).toContain('sha256:');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('create and read', () => {
    it('applies defaults and normalisation, writes revision 1 and answers every field', async () => {
      const env = await create({
        name: '  Staging EU ',
        description: '   ',
        tags: [' K8s', 'k8s', '', ' ', 'Prod'],
        use_cases: ['checkout', ' Checkout ', 'load'],
        topology: {
          system_under_test: [
            {
              name: ' api ',
              component_type: 'service',
              endpoints: ['/a', '/A', ' /a '],
              nodes: [{ host_type: ' vm ', provider: ' ', count: 2, foo: 'bar' }],
            },
          ],
          custom_key: { kept: true },
        },
        meta: { owner: ' team ' },
      });
      expect(env).toEqual({
        id: expect.any(String),
        project_id: f.projectId,
        name: 'Staging EU',
        kind: 'custom',
        status: 'active',
        description: null,
        tags: ['K8s', 'Prod'],
        use_cases: ['checkout', 'load'],
        schema_version: 1,
        topology: {
          load_generators: [],
          system_under_test: [
            {
              name: 'api',
              component_type: 'service',
              nodes: [node({ count: 2, foo: 'bar' })],
              endpoints: ['/a'],
              tags: [],
              metadata: {},
            },
          ],
          supporting_services: [],
          metadata: {},
          custom_key: { kept: true },
        },
        meta: { owner: ' team ' },
        extra: {},
        current_revision_number: 1,
        current_revision_id: expect.any(String),
        snapshot_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        entities_count: 2,
        edges_count: 1,
        topology_component_count: 1,
        topology_node_count: 2,
        topology_endpoint_count: 1,
        infra_host_types: ['vm'],
        infra_providers: [],
        infra_regions: [],
        created_by: f.tester.id,
        updated_by: f.tester.id,
        archived_at: null,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });

      const got = await t.req('get', `${API}/environments/${String(env.id)}`, f.viewer.token);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(env);

      const revs = await revisions(env.id);
      expect(revs).toEqual([
        {
          id: env.current_revision_id,
          environment_id: env.id,
          revision_number: 1,
          schema_version: 1,
          is_current: true,
          revision_note: 'Initial revision',
          snapshot_hash: env.snapshot_hash,
          entities_count: 2,
          edges_count: 1,
          created_by: f.tester.id,
          created_at: expect.any(String),
        },
      ]);
    });

    it('hashes the canonical JSON of the full snapshot with the sha256 prefix', async () => {
      const env = await create({
        name: 'Café ☕',
        kind: 'performance',
        meta: { n: 1.5, b: true, z: { y: [3, { d: 1, c: 2 }] } },
        extra: { ключ: 'значение 🚀' },
      });
      const expectedSnapshot = {
        environment: {
          name: 'Café ☕',
          kind: 'performance',
          status: 'active',
          description: null,
          tags: [],
          use_cases: [],
          schema_version: 1,
          meta: { n: 1.5, b: true, z: { y: [3, { d: 1, c: 2 }] } },
          extra: { ключ: 'значение 🚀' },
        },
        topology: {
          load_generators: [],
          system_under_test: [],
          supporting_services: [],
          metadata: {},
        },
        project_id: f.projectId,
      };
      expect(env.snapshot_hash).toBe(sha(expectedSnapshot));

      const rev = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/1`,
        f.viewer.token,
      );
      expect(rev.status).toBe(200);
      expect(rev.body.full_snapshot).toEqual(expectedSnapshot);
      expect(rev.body.snapshot_hash).toBe(sha(rev.body.full_snapshot));
    });

    it('computes counters and infra lists from the topology (reference vector)', async () => {
      const env = await create({
        name: 'Counters',
        topology: {
          load_generators: [
            {
              name: 'k6',
              nodes: [
                {
                  host_type: 'container',
                  provider: 'kubernetes',
                  region: 'eu-central-1',
                  count: 3,
                },
              ],
            },
          ],
          system_under_test: [
            {
              name: 'shop',
              endpoints: ['/health', '/checkout'],
              nodes: [{ host_type: 'vm', provider: 'aws', region: 'eu-central-1', count: 2 }],
            },
          ],
          supporting_services: [
            {
              name: 'db',
              nodes: [{ host_type: 'VM', provider: 'AWS' }, { host_type: 'baremetal' }],
            },
          ],
        },
      });
      expect(env).toMatchObject({
        topology_component_count: 3,
        topology_node_count: 7,
        topology_endpoint_count: 2,
        infra_host_types: ['baremetal', 'container', 'VM', 'vm'],
        infra_providers: ['AWS', 'aws', 'kubernetes'],
        infra_regions: ['eu-central-1'],
        entities_count: 7,
        edges_count: 4,
      });
      // Stored on the row as well.
      const rows = await t.db.query<Json[]>(
        `SELECT topology_node_count, infra_host_types, entities_count FROM environments WHERE id = $1`,
        [env.id],
      );
      expect(Number(rows[0].topology_node_count)).toBe(7);
      expect(rows[0].infra_host_types).toEqual(['baremetal', 'container', 'VM', 'vm']);
    });

    it('derives entities and edges per revision', async () => {
      const env = await create({
        name: 'Graph',
        topology: {
          entities: [{ entity_key: 'ext:payments', entity_type: 'external', name: 'PSP' }],
          edges: [{ from: 'system_under_test:0', to: 'ext:payments' }, { from: 'only-from' }],
          system_under_test: [
            { name: 'api', component_type: 'service', nodes: [{ host_type: 'vm' }] },
          ],
          supporting_services: [
            { name: 'db', nodes: [{ host_type: 'vm', entity_key: 'db-host' }] },
          ],
        },
      });
      const rev = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/1`,
        f.viewer.token,
      );
      expect(rev.status).toBe(200);
      const entities = rev.body.entities as Json[];
      expect(entities.map((e) => [e.entity_key, e.entity_type, e.name, e.role])).toEqual([
        ['ext:payments', 'external', 'PSP', null],
        ['system_under_test:0', 'service', 'api', 'system_under_test'],
        ['system_under_test:0:node:0', 'host', null, 'system_under_test'],
        ['supporting_services:0', 'component', 'db', 'dependency'],
        ['db-host', 'host', null, 'dependency'],
      ]);
      // Reference read shapes: entity {id, entity_key, entity_type, name, role, spec, extra,
      // created_at}, edge {id, from_entity_key, to_entity_key, relation_type, spec, extra,
      // created_at}; created_at is the revision's.
      const stamp = { id: expect.stringMatching(UUID), created_at: rev.body.created_at };
      expect(entities[1]).toEqual({
        ...stamp,
        entity_key: 'system_under_test:0',
        entity_type: 'service',
        name: 'api',
        role: 'system_under_test',
        spec: {
          name: 'api',
          component_type: 'service',
          nodes: [node()],
          endpoints: [],
          tags: [],
          metadata: {},
        },
        extra: {},
      });
      expect(entities[2]).toEqual({
        ...stamp,
        entity_key: 'system_under_test:0:node:0',
        entity_type: 'host',
        name: null,
        role: 'system_under_test',
        spec: node(),
        extra: {},
      });
      expect(rev.body.edges).toEqual([
        {
          ...stamp,
          from_entity_key: 'system_under_test:0',
          to_entity_key: 'ext:payments',
          relation_type: 'depends_on',
          spec: { from: 'system_under_test:0', to: 'ext:payments' },
          extra: {},
        },
        {
          ...stamp,
          from_entity_key: 'system_under_test:0',
          to_entity_key: 'system_under_test:0:node:0',
          relation_type: 'contains',
          spec: {},
          extra: {},
        },
        {
          ...stamp,
          from_entity_key: 'supporting_services:0',
          to_entity_key: 'db-host',
          relation_type: 'contains',
          spec: {},
          extra: {},
        },
      ]);
      const ids = [...entities, ...(rev.body.edges as Json[])].map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      // Ids are stable: reading again gives the same ones; the next revision has its own.
      const again = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/1`,
        f.viewer.token,
      );
      expect(again.body.entities).toEqual(entities);
      const next = await patch(env.id, { tags: ['graph'] });
      expect(next.status).toBe(200);
      const rev2 = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/2`,
        f.viewer.token,
      );
      expect(rev2.body.entities.map((e: Json) => e.entity_key)).toEqual(
        entities.map((e) => e.entity_key),
      );
      for (const e of rev2.body.entities as Json[]) {
        expect(ids).not.toContain(e.id);
        expect(e.created_at).toBe(rev2.body.created_at);
      }
      expect(rev.body).toMatchObject({ entities_count: 5, edges_count: 3, is_current: true });
      expect(env).toMatchObject({ entities_count: 5, edges_count: 3 });
    });

    it('keeps the runs query of other features working', async () => {
      const env = await create({ name: 'Joined' });
      const rows = await t.db.query<Json[]>(
        `SELECT e.id, e.name, e.status, e.archived_at, r.id AS revision_id, r.revision_number,
                r.snapshot_hash, r.full_snapshot
           FROM environments e JOIN environment_revisions r ON r.id = e.current_revision_id
          WHERE e.id = $1`,
        [env.id],
      );
      expect(rows).toEqual([
        {
          id: env.id,
          name: 'Joined',
          status: 'active',
          archived_at: null,
          revision_id: env.current_revision_id,
          revision_number: 1,
          snapshot_hash: env.snapshot_hash,
          full_snapshot: expect.objectContaining({ project_id: f.projectId }),
        },
      ]);
    });

    it('answers 404 environment_not_found for unknown, malformed and other projects’ ids', async () => {
      const other = await t.roleFixture();
      const foreign = await create({ name: 'Foreign' }, other.tester.token, other.projectId);
      for (const id of [randomUUID(), 'not-a-uuid', foreign.id]) {
        expectProblem(
          await t.req('get', `${API}/environments/${String(id)}`, f.lead.token),
          404,
          'environment_not_found',
        );
        expectProblem(await patch(id, { name: 'x' }, f.lead.token), 404, 'environment_not_found');
        expectProblem(
          await t.req('delete', `${API}/environments/${String(id)}`, f.lead.token),
          404,
          'environment_not_found',
        );
        expectProblem(
          await t.req('get', `${API}/environments/${String(id)}/revisions`, f.lead.token),
          404,
          'environment_not_found',
        );
        expectProblem(
          await t.req('get', `${API}/environments/${String(id)}/revisions/1`, f.lead.token),
          404,
          'environment_not_found',
        );
      }
      // Creating in a project the caller does not belong to.
      expectProblem(
        await t
          .req('post', `${API}/environments`, f.lead.token)
          .send({ project_id: other.projectId, name: 'x' }),
        404,
        'project_not_found',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('revisions', () => {
    it('writes a new revision only when the snapshot hash changes', async () => {
      const env = await create({ name: 'Rev', tags: ['a'], topology: { metadata: { v: 1 } } });

      const same = await patch(env.id, {
        name: ' Rev ',
        tags: ['a', 'A'],
        topology: { metadata: { v: 1 }, load_generators: [] },
      });
      expect(same.status).toBe(200);
      expect(same.body).toEqual(env);

      const empty = await patch(env.id, {});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual(env);

      const tags = await patch(env.id, { tags: ['b'] }, f.lead.token);
      expect(tags.status).toBe(200);
      expect(tags.body).toMatchObject({
        current_revision_number: 2,
        tags: ['b'],
        updated_by: f.lead.id,
        created_by: f.tester.id,
      });
      expect(tags.body.current_revision_id).not.toBe(env.current_revision_id);
      expect(tags.body.snapshot_hash).not.toBe(env.snapshot_hash);
      expect(Date.parse(tags.body.updated_at)).toBeGreaterThanOrEqual(
        Date.parse(env.updated_at as string),
      );

      const both = await patch(env.id, {
        tags: ['c'],
        topology: { system_under_test: [{ name: 'api' }] },
        description: 'now described',
      });
      expect(both.status).toBe(200);
      expect(both.body.current_revision_number).toBe(3);

      const cleared = await patch(env.id, { description: null });
      expect(cleared.body).toMatchObject({ current_revision_number: 4, description: null });

      const revs = await revisions(env.id);
      expect(revs.map((r) => [r.revision_number, r.is_current, r.revision_note])).toEqual([
        [4, true, 'Changed: description'],
        [3, false, 'Changed: topology, description, tags'],
        [2, false, 'Changed: tags'],
        [1, false, 'Initial revision'],
      ]);
      for (const r of revs) {
        expect(r).not.toHaveProperty('full_snapshot');
        expect(r).not.toHaveProperty('entities');
        expect(r).not.toHaveProperty('edges');
        expect(r).toHaveProperty('entities_count');
        expect(r).toHaveProperty('edges_count');
      }
      expect(revs[1]).toMatchObject({ entities_count: 1, edges_count: 0 });

      // Old revisions keep their own snapshot; the environment reads the current one.
      const first = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/1`,
        f.viewer.token,
      );
      expect(first.body).toMatchObject({
        revision_number: 1,
        is_current: false,
        revision_note: 'Initial revision',
        schema_version: 1,
        snapshot_hash: env.snapshot_hash,
        created_by: f.tester.id,
      });
      expect(first.body.full_snapshot.environment.tags).toEqual(['a']);
      const fourth = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/4`,
        f.viewer.token,
      );
      expect(fourth.body.is_current).toBe(true);
      expect(fourth.body.snapshot_hash).toBe(sha(fourth.body.full_snapshot));
      expect(fourth.body.full_snapshot.environment).toMatchObject({
        tags: ['c'],
        description: null,
      });
      const got = await t.req('get', `${API}/environments/${String(env.id)}`, f.viewer.token);
      expect(got.body).toMatchObject({
        current_revision_number: 4,
        current_revision_id: fourth.body.id,
        snapshot_hash: fourth.body.snapshot_hash,
        tags: ['c'],
        topology: { system_under_test: [{ name: 'api', nodes: [] }] },
      });

      const current = await t.db.query<Json[]>(
        `SELECT count(*)::int AS n FROM environment_revisions WHERE environment_id = $1 AND is_current`,
        [env.id],
      );
      expect(current[0].n).toBe(1);
    });

    // Found by an audit: a PATCH through an upper-case spelling of the id answered that spelling.
    it('answers the stored id whatever the spelling of the path', async () => {
      const env = await create({ name: 'Spelled' });
      const upper = (env.id as string).toUpperCase();
      const res = await patch(upper, { description: 'via upper case' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: env.id, current_revision_number: 2 });
    });

    it('replaces topology, meta and extra wholesale', async () => {
      const env = await create({ name: 'Wholesale', meta: { a: 1, b: 2 }, extra: { x: 1 } });
      const res = await patch(env.id, { meta: { c: 3 } });
      expect(res.body).toMatchObject({ meta: { c: 3 }, extra: { x: 1 } });
      const revs = await revisions(env.id);
      expect(revs[0].revision_note).toBe('Changed: meta');
    });

    it('pages the revision list newest first', async () => {
      const env = await create({ name: 'Paged revisions' });
      for (const n of [1, 2, 3, 4]) await patch(env.id, { tags: [`t${n}`] });
      const page = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions?page=2&page_size=2`,
        f.viewer.token,
      );
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ page: 2, page_size: 2, has_next: true, total: 5 });
      expect(page.body.items.map((r: Json) => r.revision_number)).toEqual([3, 2]);
      const past = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions?page=9&page_size=2`,
        f.viewer.token,
      );
      expect(past.body).toMatchObject({ items: [], total: 5, has_next: false });
      expectProblem(
        await t.req(
          'get',
          `${API}/environments/${String(env.id)}/revisions?page_size=201`,
          f.viewer.token,
        ),
        422,
        'validation_error',
      );
    });

    it('validates the revision number and answers 404 for a missing one', async () => {
      const env = await create({ name: 'Revision numbers' });
      for (const bad of ['0', '-1', 'abc', '1.5', '99999999999']) {
        const res = await t.req(
          'get',
          `${API}/environments/${String(env.id)}/revisions/${bad}`,
          f.viewer.token,
        );
        const body = expectProblem(res, 422, 'validation_error');
        expect(Object.keys(body.errors as Json)).toEqual(['path.revision_number']);
      }
      expectProblem(
        await t.req('get', `${API}/environments/${String(env.id)}/revisions/2`, f.viewer.token),
        404,
        'environment_revision_not_found',
      );
    });

    it('checks the revision number with the request shape: 401, then 422, before 404', async () => {
      const env = await create({ name: 'Revision number order' });
      const url = `${API}/environments/${String(env.id)}/revisions/abc`;
      expectProblem(await t.req('get', url), 401, 'unauthorized');
      const outsider = expectProblem(
        await t.req('get', url, f.outsider.token),
        422,
        'validation_error',
      );
      expect(Object.keys(outsider.errors as Json)).toEqual(['path.revision_number']);
      expectProblem(
        await t.req('get', `${API}/environments/${randomUUID()}/revisions/0`, f.viewer.token),
        422,
        'validation_error',
      );
      expectProblem(
        await t.req('get', `${API}/environments/${String(env.id)}/revisions/1`, f.outsider.token),
        404,
        'environment_not_found',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('archive and restore', () => {
    it('DELETE archives with a new revision; repeating changes nothing', async () => {
      const env = await create({ name: 'To archive', use_cases: ['only-archived-uc'] });
      const del = await t.req('delete', `${API}/environments/${String(env.id)}`, f.lead.token);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');

      const got = await t.req('get', `${API}/environments/${String(env.id)}`, f.viewer.token);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        status: 'archived',
        current_revision_number: 2,
        updated_by: f.lead.id,
      });
      expect(got.body.archived_at).toEqual(expect.stringMatching(/Z$/));
      const revs = await revisions(env.id);
      expect(revs.map((r) => [r.revision_number, r.revision_note])).toEqual([
        [2, 'Changed: status'],
        [1, 'Initial revision'],
      ]);

      const again = await t.req('delete', `${API}/environments/${String(env.id)}`, f.lead.token);
      expect(again.status).toBe(204);
      const after = await t.req('get', `${API}/environments/${String(env.id)}`, f.viewer.token);
      expect(after.body).toEqual(got.body);

      // Hidden from lists and use cases unless asked for.
      const list = await t.req(
        'get',
        `${API}/environments?project_id=${f.projectId}&page_size=200`,
        f.viewer.token,
      );
      expect(list.body.items.map((e: Json) => e.id)).not.toContain(env.id);
      const all = await t.req(
        'get',
        `${API}/environments?project_id=${f.projectId}&page_size=200&include_archived=true`,
        f.viewer.token,
      );
      expect(all.body.items.map((e: Json) => e.id)).toContain(env.id);
      const uc = await t.req(
        'get',
        `${API}/environments/use-cases?project_id=${f.projectId}`,
        f.viewer.token,
      );
      expect(uc.body.items).not.toContain('only-archived-uc');
      const ucAll = await t.req(
        'get',
        `${API}/environments/use-cases?project_id=${f.projectId}&include_archived=true`,
        f.viewer.token,
      );
      expect(ucAll.body.items).toContain('only-archived-uc');

      // Revision records stay readable.
      const rev1 = await t.req(
        'get',
        `${API}/environments/${String(env.id)}/revisions/1`,
        f.viewer.token,
      );
      expect(rev1.body.full_snapshot.environment.status).toBe('active');
    });

    it('PATCH status to and from archived needs lead and archives / restores', async () => {
      const env = await create({ name: 'Status archive' });
      expectProblem(
        await patch(env.id, { status: 'archived' }, f.tester.token),
        403,
        'insufficient_project_role',
      );
      const archived = await patch(env.id, { status: 'Archived', tags: ['x'] }, f.lead.token);
      expect(archived.status).toBe(200);
      expect(archived.body).toMatchObject({ status: 'archived', current_revision_number: 2 });
      expect(archived.body.archived_at).not.toBeNull();

      // Same status again: nothing changes, no lead needed.
      const same = await patch(env.id, { status: 'archived' }, f.tester.token);
      expect(same.status).toBe(200);
      expect(same.body).toEqual(archived.body);

      // Other fields of an archived environment can still be edited; it stays archived.
      const edited = await patch(env.id, { description: 'still archived' }, f.tester.token);
      expect(edited.body).toMatchObject({
        status: 'archived',
        archived_at: archived.body.archived_at,
        current_revision_number: 3,
      });

      expectProblem(
        await patch(env.id, { status: 'active' }, f.tester.token),
        403,
        'insufficient_project_role',
      );
      const restored = await patch(env.id, { status: 'maintenance' }, f.lead.token);
      expect(restored.status).toBe(200);
      expect(restored.body).toMatchObject({
        status: 'maintenance',
        archived_at: null,
        current_revision_number: 4,
      });
      const revs = await revisions(env.id);
      expect(revs.map((r) => r.revision_note)).toEqual([
        'Changed: status',
        'Changed: description',
        'Changed: status, tags',
        'Initial revision',
      ]);
      const rows = await t.db.query<Json[]>(
        `SELECT status, archived_at FROM environments WHERE id = $1`,
        [env.id],
      );
      expect(rows[0]).toEqual({ status: 'maintenance', archived_at: null });

      // Other statuses are free text and need only tester.
      const maintenance = await patch(env.id, { status: 'deprecated' }, f.tester.token);
      expect(maintenance.body.status).toBe('deprecated');
    });

    it('creating an archived environment needs lead', async () => {
      expectProblem(
        await t
          .req('post', `${API}/environments`, f.tester.token)
          .send({ project_id: f.projectId, name: 'Born archived', status: 'archived' }),
        403,
        'insufficient_project_role',
      );
      const env = await create({ name: 'Born archived', status: 'archived' }, f.lead.token);
      expect(env.status).toBe('archived');
      expect(env.archived_at).not.toBeNull();
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('validation', () => {
    let envId: string;
    beforeAll(async () => {
      envId = (await create({ name: 'Validation target' })).id as string;
    });

    async function expect422(
      res: Awaited<ReturnType<TestApp['req']>>,
      paths: string[],
    ): Promise<void> {
      const body = expectProblem(res, 422, 'validation_error');
      expect(Object.keys(body.errors as Json).sort()).toEqual([...paths].sort());
    }

    it('a topology is accepted only if what is stored can be sent back: its GET form PATCHed unchanged is 200, no revision', async () => {
      const extras = (n: number) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
      const topology = (n: number) => ({
        system_under_test: [{ name: 'api', nodes: [{ host_type: 'vm', ...extras(n) }] }],
      });
      // 191 extra keys: 192 sent, 201 stored with the node's declared fields.
      await expect422(
        await t
          .req('post', `${API}/environments`, f.tester.token)
          .send({ project_id: f.projectId, name: t.unique('Keys '), topology: topology(191) }),
        ['topology.system_under_test.0.nodes.0'],
      );
      const env = await create({ name: t.unique('Keys '), topology: topology(190) });
      const got = await t.req('get', `${API}/environments/${String(env.id)}`, f.viewer.token);
      const sut = (got.body.topology as { system_under_test: Array<{ nodes: Json[] }> })
        .system_under_test;
      const node = sut[0].nodes[0];
      expect(Object.keys(node)).toHaveLength(200);
      const again = await patch(env.id, { topology: got.body.topology });
      expect(again.status).toBe(200);
      expect(again.body.current_revision_number).toBe(env.current_revision_number);
    });

    it.each<[string, Json, string[]]>([
      ['missing name', {}, ['name']],
      ['empty name', { name: '' }, ['name']],
      ['whitespace name', { name: '   ' }, ['name']],
      ['numeric name', { name: 42 }, ['name']],
      ['schema_version', { name: 'a', schema_version: 1 }, ['schema_version']],
      ['unknown field', { name: 'a', colour: 'red' }, ['colour']],
      ['client id', { name: 'a', id: randomUUID() }, ['id']],
      ['null kind', { name: 'a', kind: null }, ['kind']],
      ['null status', { name: 'a', status: null }, ['status']],
      ['blank kind', { name: 'a', kind: ' ' }, ['kind']],
      ['null tags', { name: 'a', tags: null }, ['tags']],
      ['non-string tag', { name: 'a', tags: ['ok', 1] }, ['tags']],
      ['null topology', { name: 'a', topology: null }, ['topology']],
      ['null meta', { name: 'a', meta: null }, ['meta']],
      ['array meta', { name: 'a', meta: [] }, ['meta']],
      ['string extra', { name: 'a', extra: 'x' }, ['extra']],
      ['topology string', { name: 'a', topology: 'x' }, ['topology']],
      [
        'section not an array',
        { name: 'a', topology: { system_under_test: {} } },
        ['topology.system_under_test'],
      ],
      [
        'component not an object',
        { name: 'a', topology: { load_generators: ['x'] } },
        ['topology.load_generators.0'],
      ],
      [
        'topology metadata not an object',
        { name: 'a', topology: { metadata: 'x' } },
        ['topology.metadata'],
      ],
      [
        'component without name',
        { name: 'a', topology: { system_under_test: [{ nodes: [] }] } },
        ['topology.system_under_test.0.name'],
      ],
      [
        'node without host_type',
        {
          name: 'a',
          topology: {
            system_under_test: [{ name: 'x', nodes: [{ host_type: 'vm' }, { count: 2 }] }],
          },
        },
        ['topology.system_under_test.0.nodes.1.host_type'],
      ],
      [
        'count zero and negative',
        {
          name: 'a',
          topology: {
            supporting_services: [
              {
                name: 'x',
                nodes: [
                  { host_type: 'vm', count: 0 },
                  { host_type: 'vm', count: -1 },
                ],
              },
            ],
          },
        },
        [
          'topology.supporting_services.0.nodes.0.count',
          'topology.supporting_services.0.nodes.1.count',
        ],
      ],
      [
        'null count and non-object resources',
        {
          name: 'a',
          topology: {
            system_under_test: [
              { name: 'x', nodes: [{ host_type: 'vm', count: null, resources: [] }] },
            ],
          },
        },
        [
          'topology.system_under_test.0.nodes.0.count',
          'topology.system_under_test.0.nodes.0.resources',
        ],
      ],
      [
        'errors of the body and the topology together',
        { name: ' ', topology: { system_under_test: [{ name: 'x', nodes: [{}] }] } },
        ['name', 'topology.system_under_test.0.nodes.0.host_type'],
      ],
      ['NUL character in a name', { name: 'a\u0000b' }, ['name']],
      ['NUL character inside meta', { name: 'a', meta: { k: ['\u0000'] } }, ['meta.k.0']],
    ])('POST rejects %s', async (_name, body, paths) => {
      await expect422(
        await t
          .req('post', `${API}/environments`, f.tester.token)
          .send({ project_id: f.projectId, ...body }),
        paths,
      );
    });

    it('POST without project_id is a 422 on project_id', async () => {
      await expect422(
        await t.req('post', `${API}/environments`, f.tester.token).send({ name: 'x' }),
        ['project_id'],
      );
    });

    it.each<[string, Json, string[]]>([
      ['empty name', { name: '' }, ['name']],
      ['whitespace name', { name: '  ' }, ['name']],
      ['null name', { name: null }, ['name']],
      ['null kind', { kind: null }, ['kind']],
      ['null status', { status: null }, ['status']],
      ['null tags', { tags: null }, ['tags']],
      ['null use_cases', { use_cases: null }, ['use_cases']],
      ['null topology', { topology: null }, ['topology']],
      ['null meta', { meta: null }, ['meta']],
      ['null extra', { extra: null }, ['extra']],
      ['schema_version', { schema_version: 2 }, ['schema_version']],
      ['project_id', { project_id: randomUUID() }, ['project_id']],
      ['unknown field', { archived_at: null }, ['archived_at']],
      [
        'node without host_type',
        {
          topology: {
            system_under_test: [{ name: 'api', nodes: [{ host_type: 'vm' }, { name: 'n' }] }],
          },
        },
        ['topology.system_under_test.0.nodes.1.host_type'],
      ],
      [
        'count below one',
        { topology: { load_generators: [{ name: 'k6', nodes: [{ host_type: 'vm', count: 0 }] }] } },
        ['topology.load_generators.0.nodes.0.count'],
      ],
    ])('PATCH rejects %s', async (_name, body, paths) => {
      await expect422(await patch(envId, body), paths);
    });

    it('validates the body before looking at the environment or the role (422 first)', async () => {
      await expect422(await patch(randomUUID(), { name: '' }, f.viewer.token), ['name']);
      await expect422(await patch(envId, { name: '' }, f.viewer.token), ['name']);
      expectProblem(await patch(envId, { name: '' }), 422, 'validation_error');
      const unchanged = await revisions(envId);
      expect(unchanged).toHaveLength(1);
    });

    it('keeps free-form keys named like Object.prototype members', async () => {
      const raw =
        `{"project_id":"${f.projectId}","name":"Reserved keys",` +
        `"meta":{"__proto__":{"a":1},"constructor":2,"hasOwnProperty":3,"toString":"s"},` +
        `"extra":{"valueOf":[1]},` +
        `"topology":{"__proto__":{"t":1},"system_under_test":[{"name":"c","toString":1,` +
        `"nodes":[{"host_type":"vm","constructor":{"k":"v"}}]}]}}`;
      const res = await t
        .req('post', `${API}/environments`, f.tester.token)
        .set('Content-Type', 'application/json')
        .send(raw);
      expect(res.status).toBe(201);
      const parsed = JSON.parse(raw) as Json;
      const meta = JSON.parse(res.text).meta as Json;
      expect(Object.keys(meta).sort()).toEqual(
        ['__proto__', 'constructor', 'hasOwnProperty', 'toString'].sort(),
      );
      expect(JSON.stringify(JSON.parse(res.text).extra)).toBe('{"valueOf":[1]}');
      const topology = JSON.parse(res.text).topology as Json;
      expect(Object.keys(topology)).toContain('__proto__');
      const component = (topology.system_under_test as Json[])[0];
      expect(Object.keys(component)).toContain('toString');
      expect(Object.keys((component.nodes as Json[])[0])).toContain('constructor');
      expect(Object.keys(parsed.meta as Json)).toHaveLength(4);
    });

    it.each(['__proto__', 'constructor', 'hasOwnProperty', 'toString'])(
      'rejects an unknown top-level field named %s (422, never 500)',
      async (key) => {
        const body = `{"project_id":"${f.projectId}","name":"x","${key}":{"a":1}}`;
        await expect422(
          await t
            .req('post', `${API}/environments`, f.tester.token)
            .set('Content-Type', 'application/json')
            .send(body),
          [key],
        );
        await expect422(
          await t
            .req('patch', `${API}/environments/${envId}`, f.tester.token)
            .set('Content-Type', 'application/json')
            .send(`{"${key}":1}`),
          [key],
        );
      },
    );

    it('rejects a body that is not a JSON object', async () => {
      expectProblem(
        await t
          .req('patch', `${API}/environments/${envId}`, f.tester.token)
          .set('Content-Type', 'application/json')
          .send('[1]'),
        422,
        'validation_error',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('list', () => {
    let p: RoleFixture;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      p = await t.roleFixture();
      const specs: Array<[string, Json]> = [
        ['alpha', { name: 'alpha', description: 'first 100% sure', use_cases: ['Load', 'smoke'] }],
        ['Bravo', { name: 'Bravo', description: 'second', use_cases: ['checkout'] }],
        ['charlie', { name: 'charlie', description: null, use_cases: ['smoke'] }],
        ['delta', { name: 'delta_x', description: 'has ALPHA inside', use_cases: [] }],
        ['echo', { name: 'Echo', use_cases: ['archived-only'] }],
      ];
      for (const [key, body] of specs) {
        ids[key] = (await create(body, p.tester.token, p.projectId)).id as string;
      }
      // Touch bravo so updated_at order differs from created_at order.
      await patch(ids.Bravo, { tags: ['touched'] }, p.tester.token);
      await t.req('delete', `${API}/environments/${ids.echo}`, p.lead.token).expect(204);
    });

    async function list(query: string): Promise<Json> {
      const res = await t.req(
        'get',
        `${API}/environments?project_id=${p.projectId}${query}`,
        p.viewer.token,
      );
      expect(res.status).toBe(200);
      return res.body as Json;
    }
    const names = (body: Json) => (body.items as Json[]).map((e) => e.name);

    it('requires project_id', async () => {
      const body = expectProblem(
        await t.req('get', `${API}/environments`, p.viewer.token),
        422,
        'validation_error',
      );
      expect(Object.keys(body.errors as Json)).toEqual(['query.project_id']);
      const uc = expectProblem(
        await t.req('get', `${API}/environments/use-cases`, p.viewer.token),
        422,
        'validation_error',
      );
      expect(Object.keys(uc.errors as Json)).toEqual(['query.project_id']);
    });

    it('defaults to created_at desc without archived environments', async () => {
      const body = await list('');
      expect(names(body)).toEqual(['delta_x', 'charlie', 'Bravo', 'alpha']);
      expect(body).toMatchObject({ page: 1, page_size: 50, has_next: false, total: 4 });
      const first = (body.items as Json[])[0];
      expect(first).toHaveProperty('topology');
      expect(first).toHaveProperty('snapshot_hash');
    });

    it('includes archived environments on request', async () => {
      const body = await list('&include_archived=true&sort_by=created_at&sort_order=asc');
      expect(names(body)).toEqual(['alpha', 'Bravo', 'charlie', 'delta_x', 'Echo']);
      expect(body.total).toBe(5);
    });

    it('sorts by name case-insensitively and by updated_at', async () => {
      expect(names(await list('&sort_by=name&sort_order=asc'))).toEqual([
        'alpha',
        'Bravo',
        'charlie',
        'delta_x',
      ]);
      expect(names(await list('&sort_by=name&sort_order=desc'))).toEqual([
        'delta_x',
        'charlie',
        'Bravo',
        'alpha',
      ]);
      expect(names(await list('&sort_by=updated_at&sort_order=desc'))[0]).toBe('Bravo');
    });

    it('searches name and description case-insensitively with literal % and _', async () => {
      expect(names(await list('&search=ALPHA&sort_by=name&sort_order=asc'))).toEqual([
        'alpha',
        'delta_x',
      ]);
      expect(names(await list('&search=100%25'))).toEqual(['alpha']);
      expect(names(await list('&search=a_x'))).toEqual(['delta_x']);
      expect(names(await list('&search=_'))).toEqual(['delta_x']);
      expect(names(await list('&search=nothing-matches'))).toEqual([]);
    });

    it('filters by any of the repeated use_case values', async () => {
      expect(names(await list('&use_case=smoke&sort_by=name&sort_order=asc'))).toEqual([
        'alpha',
        'charlie',
      ]);
      expect(
        names(await list('&use_case=checkout&use_case=Load&sort_by=name&sort_order=asc')),
      ).toEqual(['alpha', 'Bravo']);
      expect(names(await list('&use_case=load'))).toEqual([]);
      expect(names(await list('&use_case=archived-only'))).toEqual([]);
      expect(names(await list('&use_case=archived-only&include_archived=true'))).toEqual(['Echo']);
    });

    it('pages with has_next and total, past the end too', async () => {
      const one = await list('&sort_by=name&sort_order=asc&page=1&page_size=3');
      expect(names(one)).toEqual(['alpha', 'Bravo', 'charlie']);
      expect(one).toMatchObject({ page: 1, page_size: 3, has_next: true, total: 4 });
      const two = await list('&sort_by=name&sort_order=asc&page=2&page_size=3');
      expect(names(two)).toEqual(['delta_x']);
      expect(two).toMatchObject({ has_next: false, total: 4 });
      const past = await list('&page=5&page_size=3');
      expect(past).toMatchObject({ items: [], total: 4, has_next: false });
    });

    it('breaks ties by id in the sort direction', async () => {
      const q = await t.roleFixture();
      const made: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        made.push((await create({ name: 'same' }, q.tester.token, q.projectId)).id as string);
      }
      const asc = await t.req(
        'get',
        `${API}/environments?project_id=${q.projectId}&sort_by=name&sort_order=asc`,
        q.viewer.token,
      );
      expect(asc.body.items.map((e: Json) => e.id)).toEqual([...made].sort());
      const desc = await t.req(
        'get',
        `${API}/environments?project_id=${q.projectId}&sort_by=name&sort_order=desc`,
        q.viewer.token,
      );
      expect(desc.body.items.map((e: Json) => e.id)).toEqual([...made].sort().reverse());
    });

    it.each<[string, string]>([
      ['page_size above 200', '&page_size=201'],
      ['page_size 0', '&page_size=0'],
      ['page 0', '&page=0'],
      ['unknown sort_by', '&sort_by=status'],
      ['unknown sort_order', '&sort_order=up'],
      ['non-boolean include_archived', '&include_archived=maybe'],
    ])('rejects %s', async (_name, query) => {
      expectProblem(
        await t.req('get', `${API}/environments?project_id=${p.projectId}${query}`, p.viewer.token),
        422,
        'validation_error',
      );
    });

    it('ignores unknown query parameters', async () => {
      const res = await t.req(
        'get',
        `${API}/environments?project_id=${p.projectId}&colour=red`,
        p.viewer.token,
      );
      expect(res.status).toBe(200);
    });

    it.each<[string, string, string]>([
      ['a page beyond the safe integer range', '&page=99999999999999999999', 'query.page'],
      ['a NUL character in search', '&search=a%00b', 'query.search'],
      ['a NUL character in a use_case', '&use_case=ok&use_case=a%00b', 'query.use_case'],
    ])('answers 422 (never 500) for %s', async (_name, query, key) => {
      const body = expectProblem(
        await t.req('get', `${API}/environments?project_id=${p.projectId}${query}`, p.viewer.token),
        422,
        'validation_error',
      );
      expect(Object.keys(body.errors as Json)).toEqual([key]);
    });

    it('answers 422 for a revision list page beyond the safe integer range', async () => {
      const body = expectProblem(
        await t.req(
          'get',
          `${API}/environments/${ids.alpha}/revisions?page=99999999999999999999`,
          p.viewer.token,
        ),
        422,
        'validation_error',
      );
      expect(Object.keys(body.errors as Json)).toEqual(['query.page']);
    });

    it('lists distinct use cases sorted case-insensitively', async () => {
      const res = await t.req(
        'get',
        `${API}/environments/use-cases?project_id=${p.projectId}`,
        p.viewer.token,
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: ['checkout', 'Load', 'smoke'] });
      const all = await t.req(
        'get',
        `${API}/environments/use-cases?project_id=${p.projectId}&include_archived=true`,
        p.viewer.token,
      );
      expect(all.body).toEqual({ items: ['archived-only', 'checkout', 'Load', 'smoke'] });
    });
  });
});
