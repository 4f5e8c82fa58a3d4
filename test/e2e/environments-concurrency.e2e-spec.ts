import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/modules/environments/snapshot-hash';
import { statementsDuring } from '../support/query-count';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const API = '/api/v1';

type Json = Record<string, unknown>;

describe('environments: concurrency and large topologies', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function create(body: Json): Promise<Json> {
    const res = await t
      .req('post', `${API}/environments`, f.tester.token)
      .send({ project_id: f.projectId, ...body });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function revisionRows(envId: unknown) {
    return t.db.query<
      Array<{ revision_number: number; is_current: boolean; tags: string[]; id: string }>
    >(
      `SELECT revision_number, is_current, full_snapshot -> 'environment' -> 'tags' AS tags, id
         FROM environment_revisions WHERE environment_id = $1 ORDER BY revision_number`,
      [envId],
    );
  }

  it('serialises 30 concurrent PATCHes: contiguous revisions, nothing lost, one current', async () => {
    const env = await create({ name: 'Contended', tags: ['start'] });
    const n = 30;
    const responses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        t
          .req('patch', `${API}/environments/${String(env.id)}`, f.tester.token)
          .send({ tags: [`tag-${i}`] }),
      ),
    );
    for (const res of responses) {
      if (res.status !== 200) throw new Error(`PATCH: ${res.status} ${JSON.stringify(res.body)}`);
    }
    // Every PATCH got its own revision number, 2..31.
    const numbers = responses
      .map((r) => r.body.current_revision_number as number)
      .sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: n }, (_, i) => i + 2));

    const rows = await revisionRows(env.id);
    expect(rows.map((r) => r.revision_number)).toEqual(
      Array.from({ length: n + 1 }, (_, i) => i + 1),
    );
    expect(rows.filter((r) => r.is_current)).toHaveLength(1);
    expect(rows[rows.length - 1].is_current).toBe(true);
    // Nothing lost: every tag set was recorded by exactly one revision.
    const recorded = rows
      .slice(1)
      .map((r) => r.tags[0])
      .sort();
    expect(recorded).toEqual(Array.from({ length: n }, (_, i) => `tag-${i}`).sort());
    // Each response matches the revision it created.
    for (const res of responses) {
      const row = rows.find((r) => r.revision_number === res.body.current_revision_number);
      expect(row?.id).toBe(res.body.current_revision_id);
      expect(row?.tags).toEqual(res.body.tags);
    }

    const got = await t.req('get', `${API}/environments/${String(env.id)}`, f.viewer.token);
    expect(got.body.current_revision_number).toBe(n + 1);
    expect(got.body.tags).toEqual(rows[rows.length - 1].tags);
    const envRow = await t.db.query<Array<{ current_revision_id: string; tags: string[] }>>(
      `SELECT current_revision_id, tags FROM environments WHERE id = $1`,
      [env.id],
    );
    expect(envRow[0].current_revision_id).toBe(rows[rows.length - 1].id);
    expect(envRow[0].tags).toEqual(rows[rows.length - 1].tags);
  });

  it('concurrent archives and identical PATCHes write one revision each change, never a 500', async () => {
    const env = await create({ name: 'Archive race' });
    const deletes = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.req('delete', `${API}/environments/${String(env.id)}`, f.lead.token),
      ),
    );
    expect(deletes.map((r) => r.status)).toEqual(Array.from({ length: 8 }, () => 204));
    const same = await Promise.all(
      Array.from({ length: 8 }, () =>
        t
          .req('patch', `${API}/environments/${String(env.id)}`, f.tester.token)
          .send({ description: 'same text' }),
      ),
    );
    expect(same.map((r) => r.status)).toEqual(Array.from({ length: 8 }, () => 200));
    const rows = await revisionRows(env.id);
    expect(rows.map((r) => r.revision_number)).toEqual([1, 2, 3]);
    expect(rows.filter((r) => r.is_current).map((r) => r.revision_number)).toEqual([3]);
  });

  /** SQL statements the service sends while `fn` runs (transaction control not counted). */
  async function queriesDuring(fn: () => Promise<unknown>): Promise<number> {
    return (await statementsDuring(fn)).statements.length;
  }

  function topologyOf(nodes: number): Json {
    return {
      system_under_test: [
        {
          name: 'svc',
          nodes: Array.from({ length: nodes }, (_, i) => ({ host_type: 'vm', name: `n${i}` })),
        },
      ],
    };
  }

  it('writes a revision in a constant number of queries, whatever the topology size', async () => {
    const small = await create({ name: 'Small' });
    const big = await create({ name: 'Large' });
    const patchTo = (id: unknown, nodes: number) =>
      t
        .req('patch', `${API}/environments/${String(id)}`, f.tester.token)
        .send({ topology: topologyOf(nodes) })
        .expect(200);
    const one = await queriesDuring(() => patchTo(small.id, 1));
    const thousand = await queriesDuring(() => patchTo(big.id, 1000));
    expect(one).toBeGreaterThanOrEqual(4);
    expect(one).toBeLessThanOrEqual(10);
    expect(thousand).toBe(one);
    const rev = await t.db.query<Array<{ entities_count: number; edges_count: number }>>(
      `SELECT entities_count, edges_count FROM environment_revisions
        WHERE environment_id = $1 AND is_current`,
      [big.id],
    );
    expect(rev[0]).toEqual({ entities_count: 1001, edges_count: 1000 });
  });

  it('lists a page in a constant number of queries, whatever its size', async () => {
    for (let i = 0; i < 4; i += 1) await create({ name: `Listed ${i}`, topology: topologyOf(3) });
    const list = (size: number) =>
      t
        .req(
          'get',
          `${API}/environments?project_id=${f.projectId}&page_size=${size}`,
          f.viewer.token,
        )
        .expect(200);
    const one = await queriesDuring(() => list(1));
    const many = await queriesDuring(() => list(50));
    expect(one).toBeGreaterThanOrEqual(2);
    expect(one).toBeLessThanOrEqual(5);
    expect(many).toBe(one);
    // The revision list: two queries for the page whatever its size.
    const env = await create({ name: 'Revised' });
    for (let i = 0; i < 3; i += 1) {
      await t
        .req('patch', `${API}/environments/${String(env.id)}`, f.tester.token)
        .send({ tags: [`t${i}`] })
        .expect(200);
    }
    const revisions = (size: number) =>
      t
        .req(
          'get',
          `${API}/environments/${String(env.id)}/revisions?page_size=${size}`,
          f.viewer.token,
        )
        .expect(200);
    const firstRevision = await queriesDuring(() => revisions(1));
    expect(firstRevision).toBeGreaterThanOrEqual(2);
    expect(await queriesDuring(() => revisions(50))).toBe(firstRevision);
  });

  it('handles a 5,000-node topology within the JSON body limit', async () => {
    const components = Array.from({ length: 5 }, (_, c) => ({
      name: `service-${c}`,
      component_type: 'service',
      endpoints: [`/svc-${c}/health`, `/svc-${c}/api`],
      nodes: Array.from({ length: 1000 }, (_, i) => ({
        name: `node-${c}-${i}`,
        host_type: i % 2 === 0 ? 'vm' : 'container',
        provider: 'aws',
        region: i % 3 === 0 ? 'eu-central-1' : 'us-east-1',
        count: 2,
        resources: { cpu: '4', memory: '8Gi' },
        tags: ['fleet'],
      })),
    }));
    const topology = { system_under_test: components };
    const bodyBytes = Buffer.byteLength(
      JSON.stringify({ project_id: f.projectId, name: 'Big', topology }),
    );
    expect(bodyBytes).toBeLessThan(t.config.maxJsonBytes);

    const env = await create({ name: 'Big', topology });
    expect(env).toMatchObject({
      current_revision_number: 1,
      topology_component_count: 5,
      topology_node_count: 10_000,
      topology_endpoint_count: 10,
      entities_count: 5_005,
      edges_count: 5_000,
      infra_host_types: ['container', 'vm'],
      infra_providers: ['aws'],
      infra_regions: ['eu-central-1', 'us-east-1'],
    });
    const sut = (env.topology as Json).system_under_test as Array<{ nodes: unknown[] }>;
    expect(sut[4].nodes).toHaveLength(1000);

    // Sending the same topology again changes nothing.
    const same = await t
      .req('patch', `${API}/environments/${String(env.id)}`, f.tester.token)
      .send({ topology });
    expect(same.status).toBe(200);
    expect(same.body.current_revision_number).toBe(1);
    expect(same.body.snapshot_hash).toBe(env.snapshot_hash);

    const renamed = await t
      .req('patch', `${API}/environments/${String(env.id)}`, f.tester.token)
      .send({ name: 'Big renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ current_revision_number: 2, topology_node_count: 10_000 });

    const rev = await t.req(
      'get',
      `${API}/environments/${String(env.id)}/revisions/2`,
      f.viewer.token,
    );
    expect(rev.status).toBe(200);
    expect(rev.body.entities).toHaveLength(5_005);
    expect(rev.body.edges).toHaveLength(5_000);
    expect(rev.body.revision_note).toBe('Changed: name');
    const hash =
      'sha256:' +
      createHash('sha256').update(canonicalJson(rev.body.full_snapshot), 'utf8').digest('hex');
    expect(rev.body.snapshot_hash).toBe(hash);
  });
});
