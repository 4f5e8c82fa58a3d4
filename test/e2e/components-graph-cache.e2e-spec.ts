import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { statementsDuring, withStepAfterStatement } from '../support/query-count';
import { createTestApp, expectProblem, TestApp } from '../support/test-app';
// After test-app, which loads the application's modules in their usual order.
import { createApp } from '../../src/bootstrap';

/**
 * The per-process cache of a project's component graph (issue #23) is keyed by the graph version
 * stored in PostgreSQL, bumped by every write that changes the graph: two instances of the service
 * on one database never answer a graph, or check a cycle against one, that a write on the other
 * has made stale.
 */
const API = '/api/v1';

type Json = Record<string, unknown>;
interface Graph {
  components: Array<Json & { id: string }>;
  dependencies: Array<Json & { source_component_id: string; target_component_id: string }>;
}

describe('components: the cached graph across two instances', () => {
  let t: TestApp;
  /** A second instance of the service on the same database. */
  let other: INestApplication;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp();
    other = await createApp(t.config, t.databaseUrl);
    await other.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  beforeEach(async () => {
    // A project of its own per test: no cached graph carries over.
    const res = await t
      .req('post', `${API}/projects`, t.adminToken)
      .send({ name: t.unique('Graph project ') });
    expect(res.status).toBe(201);
    projectId = res.body.id as string;
  });

  /** An authenticated request to the first (`a`) or the second (`b`) instance. */
  function on(
    instance: 'a' | 'b',
    method: 'get' | 'post' | 'put' | 'patch' | 'delete',
    url: string,
  ) {
    const server = instance === 'a' ? t.server : other.getHttpServer();
    return request(server)[method](url).set('Authorization', `Bearer ${t.adminToken}`);
  }

  async function graph(instance: 'a' | 'b'): Promise<Graph> {
    const res = await on(instance, 'get', `${API}/components/graph?project_id=${projectId}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return res.body as Graph;
  }

  async function create(instance: 'a' | 'b', name: string): Promise<string> {
    const res = await on(instance, 'post', `${API}/components`).send({
      project_id: projectId,
      name,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  function replace(instance: 'a' | 'b', id: string, targets: string[]) {
    return on(instance, 'put', `${API}/components/${id}/dependencies`).send({
      dependencies: targets.map((target) => ({ target_component_id: target })),
    });
  }

  async function replaceOk(instance: 'a' | 'b', id: string, targets: string[]): Promise<void> {
    const res = await replace(instance, id, targets);
    if (res.status !== 200) throw new Error(`PUT: ${res.status} ${JSON.stringify(res.body)}`);
    // The answer is the new set as a read of it gives (on either instance), in payload order here.
    const read = await on(
      instance === 'a' ? 'b' : 'a',
      'get',
      `${API}/components/${id}/dependencies`,
    );
    expect(res.body).toEqual(read.body);
    expect(res.body.items.map((d: Json) => d.target_component_id)).toEqual(targets);
  }

  const names = (g: Graph) => g.components.map((c) => c.name).sort();
  const edges = (g: Graph, byId: Map<string, string>) =>
    g.dependencies
      .map((d) => `${byId.get(d.source_component_id)}>${byId.get(d.target_component_id)}`)
      .sort();

  /** Both instances answer the same graph; warms both caches. */
  async function sameOnBoth(): Promise<Graph> {
    const a = await graph('a');
    const b = await graph('b');
    expect(b).toEqual(a);
    // A second read (from the cache) answers the same.
    expect(await graph('a')).toEqual(a);
    return a;
  }

  it('shows every kind of write at once, on both instances, whichever instance wrote', async () => {
    expect(await sameOnBoth()).toEqual({ components: [], dependencies: [] });

    const x = await create('b', 'X');
    const y = await create('a', 'Y');
    const z = await create('b', 'Z');
    const byId = new Map([
      [x, 'X'],
      [y, 'Y'],
      [z, 'Z'],
    ]);
    expect(names(await sameOnBoth())).toEqual(['X', 'Y', 'Z']);

    await replaceOk('b', x, [y, z]);
    expect(edges(await graph('a'), byId)).toEqual(['X>Y', 'X>Z']);
    expect(edges(await sameOnBoth(), byId)).toEqual(['X>Y', 'X>Z']);

    // An update changes what a component shows (name, risk, key), not the edges.
    const patched = await on('a', 'patch', `${API}/components/${y}`).send({
      name: 'Y2',
      business_criticality: 5,
      key: 'renamed-y',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.key).toBe('renamed-y');
    byId.set(y, 'Y2');
    const afterPatch = await graph('b');
    const yNow = afterPatch.components.find((c) => c.id === y);
    expect(yNow).toMatchObject({ name: 'Y2', key: patched.body.key, business_criticality: 5 });
    expect(yNow?.risk_score).toBe(patched.body.risk_score);
    expect(yNow?.updated_at).toBe(patched.body.updated_at);
    expect(await sameOnBoth()).toEqual(afterPatch);

    await replaceOk('a', y, [z]);
    expect(edges(await graph('b'), byId)).toEqual(['X>Y2', 'X>Z', 'Y2>Z']);
    await replaceOk('b', x, []);
    expect(edges(await graph('a'), byId)).toEqual(['Y2>Z']);
    expect(edges(await sameOnBoth(), byId)).toEqual(['Y2>Z']);

    // A delete removes the component and every edge it was an end of.
    expect((await on('b', 'delete', `${API}/components/${z}`)).status).toBe(204);
    const afterDelete = await graph('a');
    expect(names(afterDelete)).toEqual(['X', 'Y2']);
    expect(afterDelete.dependencies).toEqual([]);
    expect(await sameOnBoth()).toEqual(afterDelete);
  });

  it('answers the graph exactly as built from the database', async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await create(i % 2 ? 'a' : 'b', `N${i}`));
    await replaceOk('a', ids[0], [ids[1], ids[2]]);
    await replaceOk('b', ids[2], [ids[3]]);
    const g = await sameOnBoth();
    const rows = await t.db.query<Array<{ id: string }>>(
      `SELECT id FROM components WHERE project_id = $1 ORDER BY risk_score DESC, updated_at DESC, id DESC`,
      [projectId],
    );
    expect(g.components.map((c) => c.id)).toEqual(rows.map((r) => r.id));
    const edgeRows = await t.db.query<Array<{ id: string }>>(
      `SELECT id FROM component_dependencies WHERE project_id = $1 ORDER BY created_at, id`,
      [projectId],
    );
    expect(g.dependencies.map((d) => d.id)).toEqual(edgeRows.map((r) => r.id));
    // Each component as GET /components/{id} answers it.
    for (const component of g.components) {
      const one = await on('b', 'get', `${API}/components/${component.id}`);
      expect(component).toEqual(one.body);
    }
  });

  it('answers one state of the graph when a write commits while it is read', async () => {
    const [x, y] = [await create('a', 'X'), await create('a', 'Y')];
    const byId = new Map([
      [x, 'X'],
      [y, 'Y'],
    ]);
    await replaceOk('a', x, [y]);
    // Right after the components are read (before the edges), the other instance deletes Y,
    // and with it the edge X → Y, and commits (found by an audit: the answer mixed both states).
    const { result: during, between: deleted } = await withStepAfterStatement(
      /FROM components c WHERE c\.project_id/,
      () => on('b', 'delete', `${API}/components/${y}`),
      () => graph('a'),
    );
    expect(deleted?.status).toBe(204);
    // The state before the delete, whole: Y with the edge X → Y.
    expect(names(during)).toEqual(['X', 'Y']);
    expect(edges(during, byId)).toEqual(['X>Y']);
    // The next read answers the state after it.
    const after = await graph('a');
    expect([names(after), edges(after, byId)]).toEqual([['X'], []]);
  });

  it('a cached graph answers with one statement; a write makes the next read load it again', async () => {
    await create('a', 'Solo');
    await graph('a');
    const warm = await statementsDuring(() => graph('a'));
    const graphStatements = (s: string[]) =>
      s.filter((sql) =>
        /component_graph_versions|FROM components|component_dependencies/.test(sql),
      );
    expect(graphStatements(warm.statements)).toHaveLength(1);
    expect(warm.statements.join('\n')).toMatch(/FROM component_graph_versions/);

    await create('b', 'Other');
    const cold = await statementsDuring(() => graph('a'));
    expect(names(cold.result)).toEqual(['Other', 'Solo']);
    expect(graphStatements(cold.statements).length).toBeGreaterThan(1);
  });

  it('checks a cycle against the graph written by the other instance', async () => {
    const [p, q, r, s] = [
      await create('a', 'P'),
      await create('a', 'Q'),
      await create('a', 'R'),
      await create('a', 'S'),
    ];
    // Both instances index the graph (a replacement that checks it, then a rejected one).
    await replaceOk('a', p, [q]);
    expectProblem(await replace('a', q, [p]), 422, 'component_dependency_cycle');
    expectProblem(await replace('b', q, [p]), 422, 'component_dependency_cycle');

    // Q → R on the other instance: R → P now closes P → Q → R → P on the first.
    await replaceOk('b', q, [r]);
    const res = await replace('a', r, [p]);
    expectProblem(res, 422, 'component_dependency_cycle');
    expect(res.body.detail).toBe(
      `Dependency replacement introduces a cycle: ${r} → ${p} → ${q} → ${r}`,
    );

    // Chains built by replacements in a row on one instance (each derived from the last).
    await replaceOk('a', r, [s]);
    const chain = await replace('b', s, [p]);
    expectProblem(chain, 422, 'component_dependency_cycle');
    expect(chain.body.detail).toContain(`${s} → ${p} → ${q} → ${r} → ${s}`);

    // Deleting Q on the other instance breaks the path: S → P is now fine on the first.
    expect((await on('b', 'delete', `${API}/components/${q}`)).status).toBe(204);
    await replaceOk('a', s, [p]);
    // And clearing an edge on one instance lets the other accept its reverse.
    await replaceOk('b', s, []);
    await replaceOk('a', p, [s]);
    expectProblem(await replace('b', s, [p]), 422, 'component_dependency_cycle');
  });

  it('bumps the graph version with each write that changes the graph, never with a rejected one', async () => {
    const version = async () => {
      const rows = await t.db.query<Array<{ version: string; previous_version: string }>>(
        `SELECT version, previous_version FROM component_graph_versions WHERE project_id = $1`,
        [projectId],
      );
      return rows[0] ?? null;
    };
    expect(await version()).toBeNull();
    const a = await create('a', 'A');
    const first = await version();
    expect(first).toMatchObject({ previous_version: '0' });
    const b = await create('b', 'B');
    const second = await version();
    expect(BigInt(second!.version)).toBeGreaterThan(BigInt(first!.version));
    expect(second!.previous_version).toBe(first!.version);

    await replaceOk('a', a, [b]);
    const third = await version();
    expect(third!.previous_version).toBe(second!.version);

    expectProblem(await replace('b', b, [a]), 422, 'component_dependency_cycle');
    expectProblem(await replace('b', b, [b]), 422, 'component_dependency_cycle');
    expect(await version()).toEqual(third);
    // A PATCH that changes nothing writes nothing.
    const unchanged = await on('a', 'patch', `${API}/components/${a}`).send({});
    expect(unchanged.status).toBe(200);
    expect(await version()).toEqual(third);

    expect((await on('b', 'delete', `${API}/components/${b}`)).status).toBe(204);
    expect((await version())!.previous_version).toBe(third!.version);
  });

  it('checks each replacement against the ones just made on the same instance', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create('a', `K${i}`));
    // The first replacement loads and indexes the graph; each next one checks the index derived
    // from it in memory (no other write came between).
    for (let i = 0; i + 1 < ids.length; i++) await replaceOk('a', ids[i], [ids[i + 1]]);
    const res = await replace('a', ids[4], [ids[0]]);
    expectProblem(res, 422, 'component_dependency_cycle');
    expect(res.body.detail).toContain([ids[4], ...ids.slice(0, 4), ids[4]].join(' → '));
    // Replacing an edge in the middle of the chain breaks it: K4 → K0 is now fine.
    await replaceOk('a', ids[2], []);
    await replaceOk('a', ids[4], [ids[0]]);
    expectProblem(await replace('a', ids[1], [ids[4]]), 422, 'component_dependency_cycle');
  });

  it('two instances replacing concurrently never close a cycle together', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await create('a', `C${i}`));
    for (let round = 0; round < 5; round++) {
      // Warm both caches with the current graph, then race i → j against j → i.
      await graph('a');
      await graph('b');
      const [i, j] = [round % 6, (round + 1) % 6];
      const [one, two] = await Promise.all([
        replace('a', ids[i], [ids[j]]),
        replace('b', ids[j], [ids[i]]),
      ]);
      const statuses = [one.status, two.status].sort();
      expect(statuses).toEqual([200, 422]);
      for (const id of [ids[i], ids[j]]) await replaceOk(round % 2 ? 'a' : 'b', id, []);
    }
    expect((await sameOnBoth()).dependencies).toEqual([]);
  });
});
