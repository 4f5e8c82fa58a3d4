import {
  diffRevisions,
  MAX_DIFF_DEPTH,
  RevisionChange,
  revisionDiffResponse,
  RevisionSnapshotLike,
} from './revision-diff';
import { buildSnapshot } from './topology';

/** A stored snapshot built the way the service builds it (normalised, defaulted). */
function snap(fields: Record<string, unknown> = {}): RevisionSnapshotLike {
  return buildSnapshot({
    project_id: '0190a000-0000-7000-8000-000000000001',
    name: 'staging',
    ...fields,
  } as Parameters<typeof buildSnapshot>[0]) as unknown as RevisionSnapshotLike;
}

const api = (nodes: unknown[], extra: Record<string, unknown> = {}) => ({
  name: 'api',
  component_type: 'service',
  nodes,
  ...extra,
});
const node = (name: string | null, extra: Record<string, unknown> = {}) => ({
  ...(name === null ? {} : { name }),
  host_type: 'vm',
  ...extra,
});
const topo = (sut: unknown[], more: Record<string, unknown> = {}) => ({
  topology: { system_under_test: sut, ...more },
});

const SUT = ['topology', 'system_under_test'];

describe('diffRevisions', () => {
  const cases: Array<{
    name: string;
    from: RevisionSnapshotLike;
    to: RevisionSnapshotLike;
    changes: Array<Partial<RevisionChange>>;
  }> = [
    { name: 'same snapshot', from: snap(), to: snap(), changes: [] },
    {
      name: 'reordered components and nodes change nothing',
      from: snap(
        topo([
          api([node('a', { region: 'eu' }), node('b'), node(null, { host_type: 'x' })]),
          { name: 'web' },
        ]),
      ),
      to: snap(
        topo([
          { name: 'web' },
          api([node(null, { host_type: 'x' }), node('b'), node('a', { region: 'eu' })]),
        ]),
      ),
      changes: [],
    },
    {
      name: 'tags reordered or duplicated change nothing (sets)',
      from: { environment: { tags: ['b', 'a'], use_cases: ['x'] } },
      to: { environment: { tags: ['a', 'b', 'a'], use_cases: ['x'] } },
      changes: [],
    },
    {
      name: 'a node field changes',
      from: snap(topo([api([node('db-1', { region: 'eu' })])])),
      to: snap(topo([api([node('db-1', { region: 'us' })])])),
      changes: [
        { op: 'changed', path: [...SUT, 'api', 'nodes', 'db-1', 'region'], from: 'eu', to: 'us' },
      ],
    },
    {
      name: 'a renamed component is a removal plus an addition',
      from: snap(topo([{ name: 'api' }])),
      to: snap(topo([{ name: 'gateway' }])),
      changes: [
        { op: 'removed', path: [...SUT, 'api'], to: null },
        { op: 'added', path: [...SUT, 'gateway'], from: null },
      ],
    },
    {
      name: 'a renamed node is a removal plus an addition',
      from: snap(topo([api([node('db-1')])])),
      to: snap(topo([api([node('db-2')])])),
      changes: [
        { op: 'removed', path: [...SUT, 'api', 'nodes', 'db-1'] },
        { op: 'added', path: [...SUT, 'api', 'nodes', 'db-2'] },
      ],
    },
    {
      name: 'components are matched within their section',
      from: snap(topo([{ name: 'api' }])),
      to: snap({ topology: { supporting_services: [{ name: 'api' }] } }),
      changes: [
        { op: 'removed', path: [...SUT, 'api'] },
        { op: 'added', path: ['topology', 'supporting_services', 'api'] },
      ],
    },
    {
      name: 'unnamed nodes are matched by position among unnamed nodes',
      from: snap(topo([api([node(null, { count: 1 }), node('n'), node(null, { count: 2 })])])),
      to: snap(topo([api([node('n'), node(null, { count: 1 }), node(null, { count: 3 })])])),
      changes: [{ op: 'changed', path: [...SUT, 'api', 'nodes', 1, 'count'], from: 2, to: 3 }],
    },
    {
      name: 'an added unnamed node',
      from: snap(topo([api([node(null)])])),
      to: snap(topo([api([node(null), node(null, { host_type: 'bm' })])])),
      changes: [{ op: 'added', path: [...SUT, 'api', 'nodes', 1], from: null }],
    },
    {
      name: 'duplicate names are matched by occurrence',
      from: snap(topo([{ name: 'api', component_type: 'a' }, { name: 'api', component_type: 'b' }])),
      to: snap(topo([{ name: 'api', component_type: 'a' }, { name: 'api', component_type: 'c' }])),
      changes: [{ op: 'changed', path: [...SUT, 'api', 'component_type'], from: 'b', to: 'c' }],
    },
    {
      name: 'top-level scalar fields',
      from: snap({ kind: 'qa', status: 'active', description: null }),
      to: snap({ name: 'prod', kind: 'qa', status: 'frozen', description: 'd' }),
      changes: [
        { op: 'changed', path: ['name'], from: 'staging', to: 'prod' },
        { op: 'changed', path: ['status'], from: 'active', to: 'frozen' },
        { op: 'changed', path: ['description'], from: null, to: 'd' },
      ],
    },
    {
      name: 'tags as sorted sets',
      from: snap({ tags: ['z', 'a'] }),
      to: snap({ tags: ['b', 'z'] }),
      changes: [{ op: 'changed', path: ['tags'], from: ['a', 'z'], to: ['b', 'z'] }],
    },
    {
      name: 'meta per key, recursively',
      from: snap({ meta: { owner: 'qa', deep: { a: 1, b: [1, 2] }, gone: true } }),
      to: snap({ meta: { owner: 'qa', deep: { a: 2, b: [2, 1] }, fresh: 'x' } }),
      changes: [
        { op: 'changed', path: ['meta', 'deep', 'a'], from: 1, to: 2 },
        { op: 'added', path: ['meta', 'fresh'], from: null, to: 'x' },
        { op: 'removed', path: ['meta', 'gone'], from: true, to: null },
      ],
    },
    {
      name: 'arrays of objects are compared whole',
      from: snap({ extra: { list: [{ a: 1 }, { b: 2 }] } }),
      to: snap({ extra: { list: [{ b: 2 }, { a: 1 }] } }),
      changes: [
        {
          op: 'changed',
          path: ['extra', 'list'],
          from: [{ a: 1 }, { b: 2 }],
          to: [{ b: 2 }, { a: 1 }],
        },
      ],
    },
    {
      name: 'a value changing type',
      from: snap({ meta: { v: { a: 1 } } }),
      to: snap({ meta: { v: 'flat' } }),
      changes: [{ op: 'changed', path: ['meta', 'v'], from: { a: 1 }, to: 'flat' }],
    },
    {
      name: 'component fields: endpoints as sets, metadata per key, extra keys',
      from: snap(topo([api([], { endpoints: ['b', 'a'], metadata: { t: 1 }, owner: 'x' })])),
      to: snap(topo([api([], { endpoints: ['a', 'c'], metadata: { t: 2 }, owner: 'y' })])),
      changes: [
        { op: 'changed', path: [...SUT, 'api', 'endpoints'], from: ['a', 'b'], to: ['a', 'c'] },
        { op: 'changed', path: [...SUT, 'api', 'metadata', 't'], from: 1, to: 2 },
        { op: 'changed', path: [...SUT, 'api', 'owner'], from: 'x', to: 'y' },
      ],
    },
    {
      name: 'node resources per key',
      from: snap(topo([api([node('n', { resources: { cpu: 2, mem: '4G' } })])])),
      to: snap(topo([api([node('n', { resources: { cpu: 4, mem: '4G' } })])])),
      changes: [
        { op: 'changed', path: [...SUT, 'api', 'nodes', 'n', 'resources', 'cpu'], from: 2, to: 4 },
      ],
    },
    {
      name: 'topology metadata and extra topology keys',
      from: snap(topo([], { metadata: { zone: 'a' }, edges: [] })),
      to: snap(topo([], { metadata: { zone: 'b' }, edges: [{ from: 'x', to: 'y' }] })),
      changes: [
        { op: 'changed', path: ['topology', 'metadata', 'zone'], from: 'a', to: 'b' },
        { op: 'changed', path: ['topology', 'edges'], from: [], to: [{ from: 'x', to: 'y' }] },
      ],
    },
  ];

  it.each(cases)('$name', ({ from, to, changes }) => {
    const diff = diffRevisions(from, to);
    expect(diff.changes).toEqual(changes.map((c) => expect.objectContaining(c)));
    expect(diff.identical).toBe(changes.length === 0);
    expect(diff.counts).toEqual({
      added: changes.filter((c) => c.op === 'added').length,
      removed: changes.filter((c) => c.op === 'removed').length,
      changed: changes.filter((c) => c.op === 'changed').length,
    });
  });

  it('carries whole components and nodes on additions and removals', () => {
    const diff = diffRevisions(
      snap(topo([api([node('db-1')])])),
      snap(topo([api([node('db-1'), node('db-2', { region: 'eu' })]), { name: 'web' }])),
    );
    expect(diff.changes).toEqual([
      {
        op: 'added',
        path: [...SUT, 'api', 'nodes', 'db-2'],
        from: null,
        to: expect.objectContaining({ name: 'db-2', region: 'eu', host_type: 'vm', count: 1 }),
      },
      {
        op: 'added',
        path: [...SUT, 'web'],
        from: null,
        to: expect.objectContaining({ name: 'web', nodes: [] }),
      },
    ]);
  });

  it('reports every field as added when there is no earlier revision', () => {
    const diff = diffRevisions(
      null,
      snap({ tags: ['t'], meta: { a: 1 }, topology: { system_under_test: [{ name: 'api' }] } }),
    );
    expect(diff.changes.map((c) => [c.op, c.path])).toEqual([
      ['added', ['name']],
      ['added', ['kind']],
      ['added', ['status']],
      ['added', ['description']],
      ['added', ['tags']],
      ['added', ['use_cases']],
      ['added', ['schema_version']],
      ['added', ['meta']],
      ['added', ['extra']],
      ['added', [...SUT, 'api']],
      ['added', ['topology', 'metadata']],
    ]);
    expect(diff.changes[4]).toEqual({ op: 'added', path: ['tags'], from: null, to: ['t'] });
    expect(diff.counts).toEqual({ added: 11, removed: 0, changed: 0 });
  });

  it('compares objects deeper than MAX_DIFF_DEPTH as whole values, without recursion', () => {
    const nest = (depth: number, leaf: unknown): unknown => {
      let value: unknown = leaf;
      for (let i = 0; i < depth; i += 1) value = { k: value };
      return value;
    };
    const deep = diffRevisions(
      snap({ meta: nest(MAX_DIFF_DEPTH + 5, 1) as Record<string, unknown> }),
      snap({ meta: nest(MAX_DIFF_DEPTH + 5, 2) as Record<string, unknown> }),
    );
    expect(deep.changes).toHaveLength(1);
    // meta + MAX_DIFF_DEPTH keys: the comparison stops there and reports the whole sub-object.
    expect(deep.changes[0].path).toHaveLength(1 + MAX_DIFF_DEPTH);
    expect(deep.changes[0].from).toEqual(nest(5, 1));

    const huge = diffRevisions(
      { environment: { meta: nest(100_000, 1) as Record<string, unknown> } },
      { environment: { meta: nest(100_000, 2) as Record<string, unknown> } },
    );
    expect(huge.counts.changed).toBe(1);
  });
});

describe('revisionDiffResponse', () => {
  const a = snap({ tags: ['a'] });
  const b = snap({ tags: ['b'] });

  it('names both revisions and their hashes', () => {
    expect(
      revisionDiffResponse(
        { revision_number: 1, snapshot_hash: 'sha256:1', full_snapshot: a },
        { revision_number: 2, snapshot_hash: 'sha256:2', full_snapshot: b },
      ),
    ).toEqual({
      from_revision: 1,
      to_revision: 2,
      from_hash: 'sha256:1',
      to_hash: 'sha256:2',
      identical: false,
      counts: { added: 0, removed: 0, changed: 1 },
      changes: [{ op: 'changed', path: ['tags'], from: ['a'], to: ['b'] }],
    });
  });

  it('equal hashes are identical', () => {
    const ref = { revision_number: 3, snapshot_hash: 'sha256:x', full_snapshot: a };
    expect(revisionDiffResponse(ref, ref)).toMatchObject({
      from_revision: 3,
      to_revision: 3,
      identical: true,
      counts: { added: 0, removed: 0, changed: 0 },
      changes: [],
    });
  });

  it('no earlier revision: from is null', () => {
    const res = revisionDiffResponse(null, {
      revision_number: 1,
      snapshot_hash: 'sha256:1',
      full_snapshot: a,
    });
    expect(res).toMatchObject({ from_revision: null, from_hash: null, identical: false });
    expect(res.counts.added).toBeGreaterThan(0);
  });
});
