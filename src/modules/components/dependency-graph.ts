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
 * Finds a dependency cycle created by replacing all outgoing edges of `replaceFrom` with edges to
 * `newTargets`. The old outgoing edges of `replaceFrom` are ignored; every other edge is kept.
 *
 * Returns the shortest cycle through `replaceFrom` as a list of ids whose first and last element
 * are `replaceFrom` (`[a, a]` for a self-dependency, `[a, b, a]` for a 2-cycle), or `null` when the
 * resulting graph has no cycle through `replaceFrom`. A cycle elsewhere in the existing graph
 * that does not pass through `replaceFrom` is not reported: this replacement does not create it.
 *
 * Breadth-first search from the new targets, O(V + E), no recursion.
 */
export function findCycle(
  edges: Iterable<DependencyEdge>,
  replaceFrom: string,
  newTargets: readonly string[],
): string[] | null {
  if (newTargets.includes(replaceFrom)) return [replaceFrom, replaceFrom];
  if (newTargets.length === 0) return null;

  const adjacency = new Map<string, string[]>();
  for (const [source, target] of edges) {
    if (source === replaceFrom) continue;
    const list = adjacency.get(source);
    if (list) list.push(target);
    else adjacency.set(source, [target]);
  }

  // parent of each visited node on its BFS path from replaceFrom
  const parent = new Map<string, string>();
  const queue: string[] = [];
  for (const target of newTargets) {
    if (parent.has(target)) continue;
    parent.set(target, replaceFrom);
    queue.push(target);
  }

  for (let head = 0; head < queue.length; head++) {
    const node = queue[head];
    const next = adjacency.get(node);
    if (!next) continue;
    for (const target of next) {
      if (target === replaceFrom) return buildPath(parent, replaceFrom, node);
      if (parent.has(target)) continue;
      parent.set(target, node);
      queue.push(target);
    }
  }
  return null;
}

/** replaceFrom → … → last → replaceFrom, following parent links back from `last`. */
function buildPath(parent: Map<string, string>, replaceFrom: string, last: string): string[] {
  const reversed: string[] = [];
  let node = last;
  while (node !== replaceFrom) {
    reversed.push(node);
    node = parent.get(node) as string;
  }
  reversed.reverse();
  return [replaceFrom, ...reversed, replaceFrom];
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
  /** Every dependency edge of the project (the current outgoing edges of `componentId` included). */
  edges: Iterable<DependencyEdge>;
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
