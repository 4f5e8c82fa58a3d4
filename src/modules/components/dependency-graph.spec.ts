import {
  DependencyEdge,
  buildAdjacency,
  collectReachable,
  edgesOf,
  findCycle,
  graphIndexBytes,
  indexGraph,
  replaceOutgoing,
  numberGraph,
  NumberedGraph,
  numberIdPairs,
  validateDependencyReplacement,
} from './dependency-graph';

/** Checks that `path` is a real cycle of the graph after the replacement. */
function expectValidCycle(
  path: string[] | null,
  edges: DependencyEdge[],
  replaceFrom: string,
  newTargets: string[],
): void {
  expect(path).not.toBeNull();
  const p = path as string[];
  expect(p[0]).toBe(replaceFrom);
  expect(p[p.length - 1]).toBe(replaceFrom);
  expect(p.length).toBeGreaterThanOrEqual(2);
  const edgeSet = new Set(edges.filter(([s]) => s !== replaceFrom).map(([s, t]) => `${s}>${t}`));
  for (const target of newTargets) edgeSet.add(`${replaceFrom}>${target}`);
  const missing: string[] = [];
  for (let i = 0; i + 1 < p.length; i++) {
    if (!edgeSet.has(`${p[i]}>${p[i + 1]}`)) missing.push(`${p[i]}>${p[i + 1]}`);
  }
  expect(missing).toEqual([]);
  // a simple cycle: no node repeated except the closing one
  expect(new Set(p.slice(0, -1)).size).toBe(p.length - 1);
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('findCycle: small graphs', () => {
  const diamond: DependencyEdge[] = [
    ['a', 'b'],
    ['a', 'c'],
    ['b', 'd'],
    ['c', 'd'],
  ];

  it.each<[string, DependencyEdge[], string, string[], string[] | null]>([
    ['no edges, no targets', [], 'a', [], null],
    ['no edges, one target', [], 'a', ['b'], null],
    ['self loop', [], 'a', ['a'], ['a', 'a']],
    ['self loop among other targets', [['b', 'a']], 'a', ['b', 'a'], ['a', 'a']],
    ['2-cycle', [['b', 'a']], 'a', ['b'], ['a', 'b', 'a']],
    [
      '3-cycle',
      [
        ['b', 'c'],
        ['c', 'a'],
      ],
      'a',
      ['b'],
      ['a', 'b', 'c', 'a'],
    ],
    ['diamond, adding a→d', diamond, 'a', ['b', 'c', 'd'], null],
    ['diamond, d→e', diamond, 'd', ['e'], null],
    [
      'diamond, d→a closes two cycles, shortest reported',
      diamond,
      'd',
      ['a'],
      ['d', 'a', 'b', 'd'],
    ],
    ['diamond, c→b (still acyclic)', diamond, 'c', ['b', 'd'], null],
    ['diamond, b→c (still acyclic)', diamond, 'b', ['c'], null],
    [
      'shortest of two cycles is returned',
      [
        ['x', 'y'],
        ['y', 'z'],
        ['z', 'a'],
        ['w', 'a'],
      ],
      'a',
      ['x', 'w'],
      ['a', 'w', 'a'],
    ],
    ['duplicate targets', [['b', 'a']], 'a', ['b', 'b'], ['a', 'b', 'a']],
    ['target unknown to the graph', [['b', 'c']], 'a', ['zzz'], null],
    [
      'an existing cycle elsewhere is not this replacement’s cycle',
      [
        ['b', 'c'],
        ['c', 'b'],
      ],
      'a',
      ['b'],
      null,
    ],
  ])('%s', (_label, edges, from, targets, expected) => {
    const result = findCycle(edges, from, targets);
    expect(result).toEqual(expected);
    if (expected) expectValidCycle(result, edges, from, targets);
  });
});

describe('findCycle: the replaced edges are ignored', () => {
  it.each<[string, DependencyEdge[], string, string[], string[] | null]>([
    // B→A exists, A→B proposed: the test-verified upstream case
    ['B→A exists, PUT A→B', [['b', 'a']], 'a', ['b'], ['a', 'b', 'a']],
    // replacing a's edges with nothing removes every cycle through a
    [
      'clearing the dependencies',
      [
        ['a', 'b'],
        ['b', 'a'],
      ],
      'a',
      [],
      null,
    ],
    // the legacy cycle a→b→a runs through the old edge a→b, which the replacement drops
    [
      'replacement drops the edge that closed a cycle',
      [
        ['a', 'b'],
        ['b', 'a'],
      ],
      'a',
      ['c'],
      null,
    ],
    // c used to depend on d; pointing c to a would cycle via a→b→c, but c→d only is fine
    [
      'keeping a harmless target',
      [
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'd'],
      ],
      'c',
      ['d'],
      null,
    ],
    [
      'moving a dependency that would cycle',
      [
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'd'],
      ],
      'c',
      ['a'],
      ['c', 'a', 'b', 'c'],
    ],
    // b's old edge b→a is replaced by b→c, so a→b becomes possible afterwards
    ['replacement removes a previous cycle risk', [['b', 'a']], 'b', ['c'], null],
  ])('%s', (_label, edges, from, targets, expected) => {
    expect(findCycle(edges, from, targets)).toEqual(expected);
  });

  it('after a replacement removes the risk, the reverse dependency is allowed', () => {
    let edges: DependencyEdge[] = [['b', 'a']];
    expect(findCycle(edges, 'a', ['b'])).not.toBeNull();
    expect(findCycle(edges, 'b', ['c'])).toBeNull();
    edges = [['b', 'c']]; // b's dependencies replaced
    expect(findCycle(edges, 'a', ['b'])).toBeNull();
  });
});

describe('findCycle: large graphs', () => {
  const N = 10_000;
  const chain: DependencyEdge[] = [];
  for (let i = 0; i + 1 < N; i++) chain.push([`n${i}`, `n${i + 1}`]);

  it('closes a 10,000-node chain without recursion', () => {
    const result = findCycle(chain, `n${N - 1}`, ['n0']);
    expect(result).toHaveLength(N + 1);
    expect(result?.[0]).toBe(`n${N - 1}`);
    expect(result?.[1]).toBe('n0');
    expect(result?.[N - 1]).toBe(`n${N - 2}`);
    expectValidCycle(result, chain, `n${N - 1}`, ['n0']);
  });

  it('extending the 10,000-node chain forward is fine', () => {
    expect(findCycle(chain, `n${N - 1}`, ['tail'])).toBeNull();
    expect(findCycle(chain, 'n0', ['n1', `n${N - 1}`])).toBeNull();
  });

  it('closes a cycle from the middle of the chain', () => {
    const result = findCycle(chain, 'n5000', ['n1000', 'n5001']);
    expect(result).toHaveLength(4002);
    expectValidCycle(result, chain, 'n5000', ['n1000', 'n5001']);
  });

  describe('random DAG of 10,000 components and 50,000 edges', () => {
    const random = rng(42);
    const edges: DependencyEdge[] = [];
    const seen = new Set<string>();
    while (edges.length < 50_000) {
      const a = Math.floor(random() * N);
      const b = Math.floor(random() * N);
      if (a === b) continue;
      const [s, t] = a < b ? [a, b] : [b, a]; // edges only go to higher indexes: acyclic
      const key = `${s}>${t}`;
      if (seen.has(key)) continue;
      seen.add(key);
      edges.push([`c${s}`, `c${t}`]);
    }

    it('accepts forward replacements', () => {
      for (let k = 0; k < 20; k++) {
        const from = Math.floor(random() * (N - 10));
        const targets = [from + 1, from + 5, N - 1].map((i) => `c${i}`);
        expect(findCycle(edges, `c${from}`, targets)).toBeNull();
      }
    });

    it('finds a backward edge that closes a cycle', () => {
      // pick an edge s→t and then walk forward to some u; replacing u's edges with u→s cycles
      const [s, t] = edges[0];
      const adjacency = buildAdjacency(edges);
      let u = t;
      for (let step = 0; step < 50; step++) {
        const next = adjacency.get(u);
        if (!next || next.length === 0) break;
        u = next[0];
      }
      const result = findCycle(edges, u, [s]);
      expectValidCycle(result, edges, u, [s]);
    });

    it('collectReachable covers the whole closure without recursion', () => {
      const reachable = collectReachable(edges, ['c0']);
      expect(reachable.has('c0')).toBe(true);
      const escaped = edges.filter(
        ([source, target]) => reachable.has(source) && !reachable.has(target),
      );
      expect(escaped).toEqual([]);
      expect(reachable.size).toBeGreaterThan(1);
    });
  });
});

describe('collectReachable', () => {
  const edges: DependencyEdge[] = [
    ['a', 'b'],
    ['b', 'c'],
    ['c', 'a'],
    ['d', 'e'],
  ];
  it.each<[string[], string[]]>([
    [[], []],
    [['a'], ['a', 'b', 'c']],
    [['d'], ['d', 'e']],
    [['e'], ['e']],
    [['x'], ['x']],
    [
      ['e', 'a'],
      ['e', 'a', 'b', 'c'],
    ],
  ])('from %j → %j', (starts, expected) => {
    expect([...collectReachable(edges, starts)]).toEqual(expected);
  });
});

describe('validateDependencyReplacement', () => {
  const project = new Set(['a', 'b', 'c', 'd']);
  const edges: DependencyEdge[] = [
    ['b', 'c'],
    ['c', 'a'],
  ];

  it.each<[string, string[], Record<string, unknown>]>([
    ['empty list', [], { ok: true }],
    ['valid targets', ['d'], { ok: true }],
    [
      'duplicate targets',
      ['d', 'd', 'b', 'd'],
      {
        ok: false,
        code: 'validation_error',
        errors: {
          'dependencies.1.target_component_id': ['duplicate of dependencies.0'],
          'dependencies.3.target_component_id': ['duplicate of dependencies.0'],
        },
      },
    ],
    [
      'self dependency',
      ['d', 'a'],
      {
        ok: false,
        code: 'component_dependency_cycle',
        detail: 'A component cannot depend on itself',
        errors: { 'dependencies.1.target_component_id': ['component cannot depend on itself'] },
      },
    ],
    [
      'foreign or unknown target',
      ['d', 'zz'],
      {
        ok: false,
        code: 'component_project_mismatch',
        detail: 'Dependencies must target components in the same project',
        errors: { 'dependencies.1.target_component_id': ['invalid target_component_id: zz'] },
      },
    ],
    [
      'first failing entry wins (mismatch before self)',
      ['zz', 'a'],
      { ok: false, code: 'component_project_mismatch' },
    ],
    [
      'cycle through existing edges',
      ['d', 'b'],
      {
        ok: false,
        code: 'component_dependency_cycle',
        detail: 'Dependency replacement introduces a cycle: a → b → c → a',
        errors: { 'dependencies.1.target_component_id': ['dependency cycle detected'] },
        cycle: ['a', 'b', 'c', 'a'],
      },
    ],
  ])('%s', (_label, targets, expected) => {
    const result = validateDependencyReplacement({
      componentId: 'a',
      targets,
      projectComponentIds: project,
      edges,
    });
    expect(result).toMatchObject(expected);
  });
});

describe('numbered graphs (the form the service reads from SQL)', () => {
  const u = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;

  it('numberIdPairs numbers uuid pairs in order of appearance', () => {
    const g = numberIdPairs(u(5) + u(3) + u(3) + u(9) + u(5) + u(9));
    expect(g.ids).toEqual([u(5), u(3), u(9)]);
    expect(Array.from(g.sources)).toEqual([0, 1, 0]);
    expect(Array.from(g.targets)).toEqual([1, 2, 2]);
    expect(numberIdPairs('')).toEqual({
      ids: [],
      sources: new Int32Array(0),
      targets: new Int32Array(0),
    });
  });

  it.each(['x', u(1), u(1) + u(2) + 'x'])(
    'numberIdPairs rejects a text that is not whole pairs (%#)',
    (text) => {
      expect(() => numberIdPairs(text)).toThrow(/edge list/);
    },
  );

  it('numberGraph numbers endpoints in order of appearance, extra ids last', () => {
    const g = numberGraph(
      [
        ['b', 'a'],
        ['a', 'c'],
      ],
      ['d', 'a'],
    );
    expect(g.ids).toEqual(['b', 'a', 'c', 'd']);
    expect(Array.from(g.sources)).toEqual([0, 1]);
    expect(Array.from(g.targets)).toEqual([1, 2]);
  });

  /** The graph as the service reads it: one text of id pairs (one-character ids here). */
  const fromSql = (edges: DependencyEdge[]): NumberedGraph =>
    numberIdPairs(edges.map(([s, t]) => s + t).join(''), 1);

  it('finds the same cycles as with pairs, components without edges included', () => {
    const edges: DependencyEdge[] = [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['x', 'a'],
    ];
    const graph = fromSql(edges);
    for (const [from, targets] of [
      ['d', ['a']],
      ['c', ['x', 'l']],
      ['l', ['a']],
      ['a', ['l']],
      ['b', ['b']],
      ['d', ['l', 'x']],
    ] as Array<[string, string[]]>) {
      expect(findCycle(graph, from, targets)).toEqual(findCycle(edges, from, targets));
    }
    expect(findCycle(graph, 'd', ['x'])).toEqual(['d', 'x', 'a', 'b', 'c', 'd']);
  });

  it('validateDependencyReplacement accepts the numbered form', () => {
    const result = validateDependencyReplacement({
      componentId: 'c',
      targets: ['a'],
      projectComponentIds: new Set(['a', 'b', 'c']),
      edges: fromSql([
        ['a', 'b'],
        ['b', 'c'],
      ]),
    });
    expect(result).toMatchObject({
      ok: false,
      code: 'component_dependency_cycle',
      cycle: ['c', 'a', 'b', 'c'],
    });
  });
});

describe('indexed graphs (the form the graph cache keeps per version)', () => {
  const sorted = (edges: readonly DependencyEdge[]) => edges.map(([a, b]) => `${a}>${b}`).sort();
  /** What replacing the outgoing edges of `from` leaves, as pairs. */
  const replacedPairs = (edges: DependencyEdge[], from: string, targets: string[]) => [
    ...edges.filter(([source]) => source !== from),
    ...targets.map((t): DependencyEdge => [from, t]),
  ];
  const base: DependencyEdge[] = [
    ['a', 'b'],
    ['b', 'c'],
    ['a', 'c'],
    ['c', 'd'],
    ['x', 'a'],
  ];

  it('indexGraph keeps every edge, grouped by source in edge order', () => {
    const g = indexGraph(numberGraph(base));
    expect(g.ids).toEqual(['a', 'b', 'c', 'd', 'x']);
    expect(Array.from(g.start)).toEqual([0, 2, 3, 4, 4, 5]);
    expect(edgesOf(g)).toEqual([
      ['a', 'b'],
      ['a', 'c'],
      ['b', 'c'],
      ['c', 'd'],
      ['x', 'a'],
    ]);
    expect(graphIndexBytes(g)).toBeGreaterThan(5 * 4);
  });

  it.each<[string, string, string[]]>([
    ['replaces the edges of a source in the middle', 'b', ['d', 'x']],
    ['replaces the edges of the first source', 'a', ['d']],
    ['replaces the edges of the last source', 'x', []],
    ['clears a source', 'a', []],
    ['adds edges to a component without outgoing edges', 'd', ['x']],
    ['numbers a new source after the others', 'n', ['a', 'd']],
    ['numbers new targets after the others', 'c', ['m', 'd', 'n']],
    ['a new source without targets changes no edge', 'n', []],
  ])('replaceOutgoing %s', (_name, from, targets) => {
    const before = indexGraph(numberGraph(base));
    const snapshot = { ids: [...before.ids], start: [...before.start], adj: [...before.adjacent] };
    const after = replaceOutgoing(before, from, targets);
    expect(sorted(edgesOf(after))).toEqual(sorted(replacedPairs(base, from, targets)));
    // the targets of `from` in payload order
    const f = after.index.get(from) as number;
    const row = Array.from(after.adjacent.subarray(after.start[f], after.start[f + 1]));
    expect(row.map((i) => after.ids[i])).toEqual(targets);
    for (const [id, i] of after.index) expect(after.ids[i]).toBe(id);
    expect(after.start).toHaveLength(after.ids.length + 1);
    // the version it came from is untouched (it stays cached under its own version)
    expect({ ids: [...before.ids], start: [...before.start], adj: [...before.adjacent] }).toEqual(
      snapshot,
    );
    expect(before.index.size).toBe(before.ids.length);
  });

  it('finds the same cycles as from pairs, before and after replacements (random graphs)', () => {
    const random = rng(7);
    const ids = Array.from({ length: 30 }, (_, i) => `k${i}`);
    const pick = () => ids[Math.floor(random() * ids.length)];
    let edges: DependencyEdge[] = [];
    const seen = new Set<string>();
    while (edges.length < 60) {
      const [s, t] = [pick(), pick()];
      if (s === t || seen.has(`${s}>${t}`)) continue;
      seen.add(`${s}>${t}`);
      edges.push([s, t]);
    }
    let graph = indexGraph(numberGraph(edges));
    for (let step = 0; step < 200; step++) {
      const from = pick();
      const targets = [...new Set([pick(), pick(), pick()])].filter((t) => t !== from);
      expect(findCycle(graph, from, targets)).toEqual(findCycle(edges, from, targets));
      // apply it whether or not it cycles: the index must follow any replacement
      graph = replaceOutgoing(graph, from, targets);
      edges = replacedPairs(edges, from, targets);
      expect(sorted(edgesOf(graph))).toEqual(sorted(edges));
    }
  });

  it('validateDependencyReplacement accepts the indexed form', () => {
    const result = validateDependencyReplacement({
      componentId: 'd',
      targets: ['x'],
      projectComponentIds: new Set(['a', 'b', 'c', 'd', 'x']),
      edges: indexGraph(numberGraph(base)),
    });
    expect(result).toMatchObject({ ok: false, cycle: ['d', 'x', 'a', 'c', 'd'] });
  });
});
