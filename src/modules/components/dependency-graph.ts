/**
 * Pure graph rules for component dependencies (reference products-auth-errors.md §8.4–8.5).
 * An edge `[source, target]` means "source depends on target". Everything here is iterative
 * (no recursion) and linear in the size of the graph.
 */
import type { ErrorCode } from '../../common/errors/error-codes';

/** `[source_component_id, target_component_id]`. */
export type DependencyEdge = readonly [string, string];

/** Outgoing adjacency lists, keeping edge order. */
export function buildAdjacency(edges: Iterable<DependencyEdge>): Map<string, string[]> {
  const adjacency = new Map<string, string[]>();
  for (const [source, target] of edges) {
    const list = adjacency.get(source);
    if (list) list.push(target);
    else adjacency.set(source, [target]);
  }
  return adjacency;
}

/**
 * A project's dependency edges with its components numbered 0 … ids.length − 1: edge k goes from
 * component `sources[k]` to component `targets[k]`. The compact form a cycle check over a large
 * graph reads from SQL (two arrays of numbers instead of an object and two id strings per edge).
 */
export interface NumberedGraph {
  ids: readonly string[];
  sources: Int32Array;
  targets: Int32Array;
}

function isNumberedGraph(
  edges: Iterable<DependencyEdge> | NumberedGraph | GraphIndex,
): edges is NumberedGraph {
  return (edges as NumberedGraph).sources instanceof Int32Array;
}

/** Numbers ids 0, 1, … in order of first appearance; `ids[i]` is the id numbered `i`. */
function numbering(): { ids: string[]; number: (id: string) => number } {
  const index = new Map<string, number>();
  const ids: string[] = [];
  const number = (id: string): number => {
    let i = index.get(id);
    if (i === undefined) {
      i = ids.length;
      index.set(id, i);
      ids.push(id);
    }
    return i;
  };
  return { ids, number };
}

/** Numbers the components of `edges` and of `extraIds`, in order of appearance. */
export function numberGraph(
  edges: Iterable<DependencyEdge>,
  extraIds: Iterable<string> = [],
): NumberedGraph {
  const { ids, number } = numbering();
  const sources: number[] = [];
  const targets: number[] = [];
  for (const [source, target] of edges) {
    sources.push(number(source));
    targets.push(number(target));
  }
  for (const id of extraIds) number(id);
  return { ids, sources: Int32Array.from(sources), targets: Int32Array.from(targets) };
}

/**
 * Numbers the edges given as one text of ids of `idLength` characters each, source then target,
 * edge after edge (as SQL's `string_agg(source::text || target::text, '')` writes uuids: 36
 * characters each), in order of appearance. `''` is no edge.
 */
export function numberIdPairs(text: string, idLength = 36): NumberedGraph {
  const pairLength = 2 * idLength;
  if (text.length % pairLength !== 0) throw new Error('edge list: not a whole number of id pairs');
  const count = text.length / pairLength;
  const { ids, number } = numbering();
  const sources = new Int32Array(count);
  const targets = new Int32Array(count);
  for (let k = 0; k < count; k++) {
    const at = k * pairLength;
    sources[k] = number(text.slice(at, at + idLength));
    targets[k] = number(text.slice(at + idLength, at + pairLength));
  }
  return { ids, sources, targets };
}

/**
 * A project's dependency graph indexed for cycle checks: components numbered 0 … ids.length − 1
 * (`index` maps an id to its number), outgoing adjacency as compressed rows (the targets of
 * component `i` are `adjacent[start[i]] … adjacent[start[i + 1] − 1]`, in edge order). Immutable
 * once built: the per-version cache of a project's graph shares it between requests, and
 * {@link replaceOutgoing} derives the next version's index without touching this one.
 */
export interface GraphIndex {
  ids: readonly string[];
  index: ReadonlyMap<string, number>;
  start: Int32Array;
  adjacent: Int32Array;
}

/** Indexes a numbered graph (edge order kept). O(V + E). */
export function indexGraph(graph: NumberedGraph): GraphIndex {
  const { ids, sources, targets } = graph;
  const n = ids.length;
  const index = new Map<string, number>();
  for (let i = 0; i < n; i++) index.set(ids[i], i);
  const start = new Int32Array(n + 1);
  for (let k = 0; k < sources.length; k++) start[sources[k] + 1]++;
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const next = start.slice(0, n);
  const adjacent = new Int32Array(sources.length);
  for (let k = 0; k < sources.length; k++) adjacent[next[sources[k]]++] = targets[k];
  return { ids, index, start, adjacent };
}

/** The edges of an index, `[source, target]`, grouped by source in numbering order. */
export function edgesOf(graph: GraphIndex): DependencyEdge[] {
  const edges: DependencyEdge[] = [];
  for (let i = 0; i < graph.ids.length; i++) {
    for (let e = graph.start[i]; e < graph.start[i + 1]; e++) {
      edges.push([graph.ids[i], graph.ids[graph.adjacent[e]]]);
    }
  }
  return edges;
}

/**
 * The graph after replacing every outgoing edge of `from` with edges to `newTargets` (what a
 * successful `PUT /components/{from}/dependencies` writes), as a new index; `graph` is left as it
 * is. Components met for the first time are numbered after the existing ones; the numbering and
 * its map are shared with `graph` when there is none. O(V + E).
 */
export function replaceOutgoing(
  graph: GraphIndex,
  from: string,
  newTargets: readonly string[],
): GraphIndex {
  let ids = graph.ids;
  let index = graph.index;
  const unknown = [from, ...newTargets].filter((id) => !graph.index.has(id));
  if (unknown.length > 0) {
    const grownIds = [...graph.ids];
    const grownIndex = new Map(graph.index);
    for (const id of unknown) {
      if (grownIndex.has(id)) continue;
      grownIndex.set(id, grownIds.length);
      grownIds.push(id);
    }
    ids = grownIds;
    index = grownIndex;
  }
  const oldN = graph.ids.length;
  const n = ids.length;
  const f = index.get(from) as number;
  const oldEdgeCount = graph.start[oldN];
  // Where f's old row begins and ends (an empty row at the end for a new component).
  const rowStart = f < oldN ? graph.start[f] : oldEdgeCount;
  const rowEnd = f < oldN ? graph.start[f + 1] : oldEdgeCount;
  const shift = newTargets.length - (rowEnd - rowStart);

  const adjacent = new Int32Array(oldEdgeCount + shift);
  adjacent.set(graph.adjacent.subarray(0, rowStart), 0);
  for (let k = 0; k < newTargets.length; k++) {
    adjacent[rowStart + k] = index.get(newTargets[k]) as number;
  }
  adjacent.set(graph.adjacent.subarray(rowEnd, oldEdgeCount), rowStart + newTargets.length);

  const start = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) {
    const old = i <= oldN ? graph.start[i] : oldEdgeCount;
    start[i] = i <= f ? old : old + shift;
  }
  return { ids, index, start, adjacent };
}

/** Approximate heap bytes of an index (its ids, map and arrays), for a cache's size bound. */
export function graphIndexBytes(graph: GraphIndex): number {
  // An id string (~36 characters plus header), its array slot and its map entry.
  return graph.ids.length * 120 + graph.start.byteLength + graph.adjacent.byteLength;
}

/**
 * Finds a dependency cycle created by replacing all outgoing edges of `replaceFrom` with edges to
 * `newTargets`. The old outgoing edges of `replaceFrom` are ignored; every other edge is kept.
 *
 * Returns the shortest cycle through `replaceFrom` as a list of ids whose first and last element
 * are `replaceFrom` (`[a, a]` for a self-dependency, `[a, b, a]` for a 2-cycle), or `null` when the
 * resulting graph has no cycle through `replaceFrom`. A cycle elsewhere in the existing graph
 * that does not pass through `replaceFrom` is not reported: this replacement does not create it.
 *
 * Breadth-first search from the new targets over numbered components, O(V + E), no recursion.
 * `edges` may be given already numbered ({@link NumberedGraph}, which must number every endpoint
 * of its edges) or indexed ({@link GraphIndex}: nothing is rebuilt, the search visits only what it
 * reaches).
 */
export function findCycle(
  edges: Iterable<DependencyEdge> | NumberedGraph | GraphIndex,
  replaceFrom: string,
  newTargets: readonly string[],
): string[] | null {
  if (newTargets.includes(replaceFrom)) return [replaceFrom, replaceFrom];
  if (newTargets.length === 0) return null;
  const graph = isGraphIndex(edges)
    ? edges
    : indexGraph(isNumberedGraph(edges) ? edges : numberGraph(edges, [replaceFrom]));
  const { ids, index, start, adjacent } = graph;
  const from = index.get(replaceFrom);
  // A component without a number is the endpoint of no edge: nothing leads back to it.
  if (from === undefined) return null;

  // The search ends as soon as it reaches replaceFrom, so its (replaced) outgoing edges are never
  // followed: no need to leave them out of the index.
  // parent of each visited component on its BFS path from replaceFrom (-1: not visited)
  const n = ids.length;
  const parent = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  let tail = 0;
  for (const target of newTargets) {
    const t = index.get(target);
    if (t === undefined || parent[t] !== -1) continue; // without a number: no outgoing edge
    parent[t] = from;
    queue[tail++] = t;
  }
  for (let head = 0; head < tail; head++) {
    const node = queue[head];
    for (let e = start[node]; e < start[node + 1]; e++) {
      const target = adjacent[e];
      if (target === from) return buildPath(ids, parent, from, node);
      if (parent[target] !== -1) continue;
      parent[target] = node;
      queue[tail++] = target;
    }
  }
  return null;
}

function isGraphIndex(
  edges: Iterable<DependencyEdge> | NumberedGraph | GraphIndex,
): edges is GraphIndex {
  return (edges as GraphIndex).adjacent instanceof Int32Array;
}

/** replaceFrom → … → last → replaceFrom, following parent links back from `last`. */
function buildPath(
  ids: readonly string[],
  parent: Int32Array,
  from: number,
  last: number,
): string[] {
  const reversed: string[] = [];
  let node = last;
  while (node !== from) {
    reversed.push(ids[node]);
    node = parent[node];
  }
  reversed.reverse();
  return [ids[from], ...reversed, ids[from]];
}

/**
 * All nodes reachable from `starts` along outgoing edges, the starts included (transitive closure,
 * e.g. "include dependent components" of plan generation). Iteration order: starts first, then
 * breadth-first discovery order.
 */
export function collectReachable(
  edges: Iterable<DependencyEdge>,
  starts: Iterable<string>,
): Set<string> {
  const adjacency = buildAdjacency(edges);
  const seen = new Set<string>();
  const queue: string[] = [];
  for (const start of starts) {
    if (seen.has(start)) continue;
    seen.add(start);
    queue.push(start);
  }
  for (let head = 0; head < queue.length; head++) {
    const next = adjacency.get(queue[head]);
    if (!next) continue;
    for (const target of next) {
      if (seen.has(target)) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return seen;
}

export type DependencyReplacementErrorCode = Extract<
  ErrorCode,
  'validation_error' | 'component_dependency_cycle' | 'component_project_mismatch'
>;

export interface DependencyReplacementFailure {
  ok: false;
  code: DependencyReplacementErrorCode;
  detail: string;
  /** Keyed by body path, e.g. `dependencies.1.target_component_id`. */
  errors: Record<string, string[]>;
  /** The cycle found, for `component_dependency_cycle` caused by a longer path. */
  cycle?: string[];
}

export type DependencyReplacementResult = { ok: true } | DependencyReplacementFailure;

export interface DependencyReplacementInput {
  /** Component whose outgoing dependencies are replaced. */
  componentId: string;
  /** `target_component_id` of each entry of the PUT body, in payload order. */
  targets: readonly string[];
  /** Ids of all components of the component's project. */
  projectComponentIds: ReadonlySet<string>;
  /**
   * Every dependency edge of the project (the current outgoing edges of `componentId` included),
   * as pairs, numbered or indexed.
   */
  edges: Iterable<DependencyEdge> | NumberedGraph | GraphIndex;
}

function fieldPath(index: number): string {
  return `dependencies.${index}.target_component_id`;
}

/**
 * Validates `PUT /components/{id}/dependencies`. Order (first failure wins):
 * 1. duplicate targets → `validation_error` on every repeated entry (CONTRACT §9);
 * 2. entry by entry in payload order: self-dependency → `component_dependency_cycle`, target not
 *    in the project → `component_project_mismatch` (reference §8.4);
 * 3. a cycle through the component in the resulting graph → `component_dependency_cycle`, the detail
 *    spelling out the cycle.
 */
export function validateDependencyReplacement(
  input: DependencyReplacementInput,
): DependencyReplacementResult {
  const { componentId, targets, projectComponentIds, edges } = input;

  const firstIndex = new Map<string, number>();
  const duplicateErrors: Record<string, string[]> = {};
  targets.forEach((target, index) => {
    const first = firstIndex.get(target);
    if (first === undefined) firstIndex.set(target, index);
    else duplicateErrors[fieldPath(index)] = [`duplicate of dependencies.${first}`];
  });
  if (Object.keys(duplicateErrors).length > 0) {
    return {
      ok: false,
      code: 'validation_error',
      detail: 'Request contains invalid fields',
      errors: duplicateErrors,
    };
  }

  for (let index = 0; index < targets.length; index++) {
    const target = targets[index];
    if (target === componentId) {
      return {
        ok: false,
        code: 'component_dependency_cycle',
        detail: 'A component cannot depend on itself',
        errors: { [fieldPath(index)]: ['component cannot depend on itself'] },
      };
    }
    if (!projectComponentIds.has(target)) {
      return {
        ok: false,
        code: 'component_project_mismatch',
        detail: 'Dependencies must target components in the same project',
        errors: { [fieldPath(index)]: [`invalid target_component_id: ${target}`] },
      };
    }
  }

  const cycle = findCycle(edges, componentId, targets);
  if (cycle) {
    const index = targets.indexOf(cycle[1]);
    return {
      ok: false,
      code: 'component_dependency_cycle',
      detail: `Dependency replacement introduces a cycle: ${cycle.join(' → ')}`,
      errors: { [fieldPath(index)]: ['dependency cycle detected'] },
      cycle,
    };
  }
  return { ok: true };
}
