import { randomUUID } from 'node:crypto';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';

const API = '/api/v1';
const SUT = ['topology', 'system_under_test'];

type Json = Record<string, unknown>;

describe('environment drift: GET /environments/{id}/revisions/{n}/diff', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function create(body: Json): Promise<string> {
    const res = await t
      .req('post', `${API}/environments`, f.tester.token)
      .send({ project_id: f.projectId, name: t.unique('Env '), ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function patch(id: string, body: Json): Promise<number> {
    const res = await t.req('patch', `${API}/environments/${id}`, f.tester.token).send(body);
    expect(res.status).toBe(200);
    return res.body.current_revision_number as number;
  }

  function diff(id: string, n: number | string, query = '', token = f.viewer.token) {
    return t.req('get', `${API}/environments/${id}/revisions/${n}/diff${query}`, token);
  }

  const api = (nodes: Json[]) => ({ name: 'api', component_type: 'service', nodes });
  const db = (name: string | null, region: string) => ({
    ...(name === null ? {} : { name }),
    host_type: 'vm',
    region,
  });

  it('role matrix: viewer and up; no credential 401, non-member 404', async () => {
    const id = await create({});
    const res = await expectRoleMatrix(t, f, {
      method: 'get',
      url: `${API}/environments/${id}/revisions/1/diff`,
      minRole: 'viewer',
      okStatus: 200,
      notFoundCode: 'environment_not_found',
    });
    expect(res.body).toMatchObject({ from_revision: null, to_revision: 1, from_hash: null });
  });

  it('a node change names the node; default against is the previous revision', async () => {
    const id = await create({
      tags: ['a'],
      topology: { system_under_test: [api([db('db-1', 'eu'), db('db-2', 'eu')])] },
    });
    const two = await patch(id, {
      topology: { system_under_test: [api([db('db-1', 'us'), db('db-2', 'eu')])] },
    });
    expect(two).toBe(2);
    const revisions = await t.req('get', `${API}/environments/${id}/revisions`, f.viewer.token);
    const hashes = new Map(
      (revisions.body.items as Json[]).map((r) => [r.revision_number, r.snapshot_hash]),
    );

    const res = await diff(id, 2);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      from_revision: 1,
      to_revision: 2,
      from_hash: hashes.get(1),
      to_hash: hashes.get(2),
      identical: false,
      counts: { added: 0, removed: 0, changed: 1 },
      changes: [
        {
          op: 'changed',
          path: [...SUT, 'api', 'nodes', 'db-1', 'region'],
          from: 'eu',
          to: 'us',
        },
      ],
    });

    // The reverse direction reads backwards.
    const back = await diff(id, 1, '?against=2');
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({
      from_revision: 2,
      to_revision: 1,
      changes: [{ op: 'changed', from: 'us', to: 'eu' }],
    });
  });

  it('reordering components, nodes and tags is no change', async () => {
    const id = await create({
      tags: ['x', 'y'],
      topology: {
        system_under_test: [
          api([db('db-1', 'eu'), db('db-2', 'eu'), db(null, 'ap')]),
          { name: 'web' },
        ],
      },
    });
    const n = await patch(id, {
      tags: ['y', 'x'],
      topology: {
        system_under_test: [
          { name: 'web' },
          api([db(null, 'ap'), db('db-2', 'eu'), db('db-1', 'eu')]),
        ],
      },
    });
    expect(n).toBe(2); // the snapshot (order) changed, so a revision was written
    const res = await diff(id, 2);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      identical: true,
      counts: { added: 0, removed: 0, changed: 0 },
      changes: [],
    });
    expect(res.body.from_hash).not.toBe(res.body.to_hash);
  });

  it('a rename is a removal plus an addition; top-level fields and meta are diffed', async () => {
    const id = await create({
      description: 'old',
      meta: { owner: 'qa', limits: { cpu: 2 } },
      topology: { system_under_test: [api([db('db-1', 'eu')])] },
    });
    await patch(id, {
      description: 'new',
      meta: { owner: 'qa', limits: { cpu: 4 } },
      topology: { system_under_test: [api([db('db-9', 'eu')])] },
    });
    const res = await diff(id, 2);
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ added: 1, removed: 1, changed: 2 });
    expect(res.body.changes).toEqual([
      { op: 'changed', path: ['description'], from: 'old', to: 'new' },
      { op: 'changed', path: ['meta', 'limits', 'cpu'], from: 2, to: 4 },
      {
        op: 'removed',
        path: [...SUT, 'api', 'nodes', 'db-1'],
        from: expect.objectContaining({ name: 'db-1', region: 'eu' }),
        to: null,
      },
      {
        op: 'added',
        path: [...SUT, 'api', 'nodes', 'db-9'],
        from: null,
        to: expect.objectContaining({ name: 'db-9', region: 'eu' }),
      },
    ]);
  });

  it('renaming a component is a removal plus an addition', async () => {
    const id = await create({ topology: { system_under_test: [{ name: 'api' }] } });
    await patch(id, { topology: { system_under_test: [{ name: 'gateway' }] } });
    const res = await diff(id, 2);
    expect(res.body.changes.map((c: Json) => [c.op, c.path])).toEqual([
      ['removed', [...SUT, 'api']],
      ['added', [...SUT, 'gateway']],
    ]);
  });

  it('revision 1 without against reports every field as added', async () => {
    const id = await create({ tags: ['t'], topology: { system_under_test: [{ name: 'api' }] } });
    const res = await diff(id, 1);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from_revision: null, from_hash: null, identical: false });
    const paths = (res.body.changes as Json[]).map((c) => c.path);
    expect(paths).toEqual(
      expect.arrayContaining([['name'], ['tags'], ['meta'], ['extra'], [...SUT, 'api']]),
    );
    expect((res.body.changes as Json[]).every((c) => c.op === 'added' && c.from === null)).toBe(
      true,
    );
    expect(res.body.counts.added).toBe(res.body.changes.length);
  });

  it('against equal to the revision is identical with no changes', async () => {
    const id = await create({});
    await patch(id, { description: 'changed' });
    const res = await diff(id, 2, '?against=2');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from_revision: 2,
      to_revision: 2,
      identical: true,
      counts: { added: 0, removed: 0, changed: 0 },
      changes: [],
    });
    expect(res.body.from_hash).toBe(res.body.to_hash);
  });

  it('unknown environment, revision or against: 404', async () => {
    const id = await create({});
    expectProblem(await diff(randomUUID(), 1), 404, 'environment_not_found');
    expectProblem(await diff(id, 7), 404, 'environment_revision_not_found');
    const res = await diff(id, 1, '?against=5');
    expectProblem(res, 404, 'environment_revision_not_found');
    expect(res.body.detail).toContain('against');
  });

  it.each([
    ['revision_number 0', '0', '', 'path.revision_number'],
    ['revision_number not a number', 'abc', '', 'path.revision_number'],
    ['revision_number fractional', '1.5', '', 'path.revision_number'],
    ['against not a number', '1', '?against=abc', 'query.against'],
    ['against fractional', '1', '?against=1.5', 'query.against'],
    ['against 0', '1', '?against=0', 'query.against'],
    ['against empty', '1', '?against=', 'query.against'],
  ])('%s is 422', async (_label, n, query, field) => {
    const id = await create({});
    const res = await diff(id, n, query);
    expectProblem(res, 422, 'validation_error');
    expect(Object.keys(res.body.errors as Json)).toContain(field);
  });
});
