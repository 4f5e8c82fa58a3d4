/**
 * The difference between two environment revisions (issue #17 §2): a pure function over two stored
 * snapshots (`environment_revisions.full_snapshot`, see {@link EnvironmentSnapshot}). No NestJS, no
 * database; used by `GET /environments/{id}/revisions/{n}/diff` and by the run comparison.
 *
 * Rules:
 * - Top-level fields are the environment section's (`name`, `kind`, `status`, `description`,
 *   `tags`, `use_cases`, `schema_version`, `meta`, `extra`), with paths such as `["name"]` or
 *   `["meta", "owner"]`; the topology's paths start with `"topology"`.
 * - Topology components are matched by section and `name` (path
 *   `["topology", section, name]`), nodes by `name` within their component
 *   (`[..., "nodes", name]`); an unnamed node is matched by its position among the unnamed nodes of
 *   its component, and that position (a number, from 0) is its path segment. Reordering therefore
 *   changes nothing, and a rename is a removal plus an addition. A name used more than once in a
 *   section (or component) is matched by order of occurrence and shares its path segment.
 * - An added or removed component or node is one change carrying the whole object.
 * - Arrays of scalars (`tags`, `use_cases`, `endpoints`, …) are compared as sets: a difference is
 *   one `changed` change whose `from`/`to` are the de-duplicated values sorted by code point; order
 *   and duplicates change nothing.
 * - Free-form objects (`meta`, `extra`, `metadata`, `resources`, extra keys) are compared key by key
 *   (keys in code-point order), recursively, down to {@link MAX_DIFF_DEPTH} levels below the field;
 *   deeper, and for any other array, a difference is one `changed` change with the whole values.
 *   A key present on one side only is `added`/`removed`.
 * - `from === null` (the first revision, with nothing before it): every top-level field, every
 *   component and the topology's `metadata` (and extra keys) are reported as `added`.
 *
 * Works with an explicit stack, so the nesting depth of the input cannot overflow the call stack.
 */
import { canonicalJson, compareCodePoints, sameCanonicalJson } from './snapshot-hash';
import { TOPOLOGY_SECTIONS } from './topology';

/** How deep below a field free-form objects are compared key by key (deeper: as whole values). */
export const MAX_DIFF_DEPTH = 16;

/** The kind of one change. */
export type RevisionChangeOp = 'added' | 'removed' | 'changed';

/** One path segment: a field, key or name, or the position of an unnamed node. */
export type RevisionPathSegment = string | number;

/** One difference between two revisions. `from` is `null` for `added`, `to` for `removed`. */
export interface RevisionChange {
  op: RevisionChangeOp;
  path: RevisionPathSegment[];
  from: unknown;
  to: unknown;
}

/** Number of changes of each kind. */
export interface RevisionDiffCounts {
  added: number;
  removed: number;
  changed: number;
}

/** The result of {@link diffRevisions}. */
export interface RevisionDiff {
  identical: boolean;
  counts: RevisionDiffCounts;
  changes: RevisionChange[];
}

/**
 * A stored snapshot as {@link diffRevisions} reads it: `environment` and `topology` (the stored
 * form of {@link EnvironmentSnapshot}; other keys such as `project_id` are ignored). Typed loosely
 * because it comes from a `jsonb` column.
 */
export interface RevisionSnapshotLike {
  environment?: Record<string, unknown> | null;
  topology?: Record<string, unknown> | null;
  [key: string]: unknown;
}

/** A revision as the endpoint's response describes it. */
export interface RevisionRef {
  revision_number: number;
  snapshot_hash: string;
  full_snapshot: RevisionSnapshotLike;
}

/** The response of `GET /environments/{id}/revisions/{n}/diff` (and `environment.diff` of §1). */
export interface RevisionDiffResponse extends RevisionDiff {
  from_revision: number | null;
  to_revision: number;
  from_hash: string | null;
  to_hash: string;
}

/** Top-level fields of the environment section, in the order they are compared. */
export const DIFFED_ENVIRONMENT_FIELDS = [
  'name',
  'kind',
  'status',
  'description',
  'tags',
  'use_cases',
  'schema_version',
  'meta',
  'extra',
] as const;

const SECTION_SET = new Set<string>([...TOPOLOGY_SECTIONS]);

/**
 * The response for two revisions: `from` is the older side (`null`: nothing before `to`). When
 * both hashes are equal the revisions are identical and the snapshots are not compared.
 */
export function revisionDiffResponse(
  from: RevisionRef | null,
  to: RevisionRef,
): RevisionDiffResponse {
  const same = from !== null && from.snapshot_hash === to.snapshot_hash;
  const diff = same ? emptyDiff() : diffRevisions(from?.full_snapshot ?? null, to.full_snapshot);
  return {
    from_revision: from?.revision_number ?? null,
    to_revision: to.revision_number,
    from_hash: from?.snapshot_hash ?? null,
    to_hash: to.snapshot_hash,
    ...diff,
  };
}

/** Every change from `from` to `to` (see the module comment for the rules). */
export function diffRevisions(
  from: RevisionSnapshotLike | null,
  to: RevisionSnapshotLike,
): RevisionDiff {
  const out: RevisionChange[] = [];
  const fromEnv = from === null ? null : asObject(from.environment);
  const toEnv = asObject(to.environment);
  for (const field of DIFFED_ENVIRONMENT_FIELDS) {
    diffField(out, [field], fromEnv, toEnv, field);
  }
  diffTopology(out, from === null ? null : asObject(from.topology), asObject(to.topology));
  const counts: RevisionDiffCounts = { added: 0, removed: 0, changed: 0 };
  for (const change of out) counts[change.op] += 1;
  return { identical: out.length === 0, counts, changes: out };
}

function emptyDiff(): RevisionDiff {
  return { identical: true, counts: { added: 0, removed: 0, changed: 0 }, changes: [] };
}

// ---------------------------------------------------------------------------------------------
// topology

/** `from === null`: nothing before, so everything in `to` is added. */
function diffTopology(
  out: RevisionChange[],
  from: Record<string, unknown> | null,
  to: Record<string, unknown>,
): void {
  const base = ['topology'];
  for (const section of TOPOLOGY_SECTIONS) {
    diffNamedList(out, [...base, section], asArray(from?.[section]), asArray(to[section]), false);
  }
  diffField(out, [...base, 'metadata'], from, to, 'metadata');
  for (const key of unionKeys(from ?? {}, to)) {
    if (SECTION_SET.has(key) || key === 'metadata') continue;
    diffField(out, [...base, key], from, to, key);
  }
}

/**
 * Matches two lists of components (or nodes) by `name` and diffs each pair; unmatched items are
 * added/removed whole. Nodes without a name are matched by their position among unnamed nodes.
 */
function diffNamedList(
  out: RevisionChange[],
  path: RevisionPathSegment[],
  from: unknown[],
  to: unknown[],
  nodes: boolean,
): void {
  const fromKeys = keyed(from);
  const toKeys = keyed(to);
  const fromMap = new Map(fromKeys.map((k) => [k.id, k]));
  const toMap = new Map(toKeys.map((k) => [k.id, k]));
  const union = new Map<string, ItemKey>(fromMap);
  for (const k of toKeys) if (!union.has(k.id)) union.set(k.id, k);
  const ordered = [...union.values()].sort(compareKeys);
  for (const key of ordered) {
    const a = fromMap.get(key.id);
    const b = toMap.get(key.id);
    const itemPath = [...path, key.segment];
    if (a === undefined) out.push(change('added', itemPath, null, b?.value));
    else if (b === undefined) out.push(change('removed', itemPath, a.value, null));
    else diffItem(out, itemPath, asObject(a.value), asObject(b.value), nodes);
  }
}

/** A matched component (`nodes === false`) or node: fields key by key, nodes matched by name. */
function diffItem(
  out: RevisionChange[],
  path: RevisionPathSegment[],
  from: Record<string, unknown>,
  to: Record<string, unknown>,
  nodes: boolean,
): void {
  for (const key of unionKeys(from, to)) {
    if (key === 'name') continue; // the match key: equal by construction
    if (!nodes && key === 'nodes' && Array.isArray(from.nodes) && Array.isArray(to.nodes)) {
      diffNamedList(out, [...path, 'nodes'], from.nodes, to.nodes, true);
      continue;
    }
    diffField(out, [...path, key], from, to, key);
  }
}

interface ItemKey {
  /** Unique match id: kind, name or position, occurrence. */
  id: string;
  segment: RevisionPathSegment;
  /** 0 named, 1 unnamed: named items are listed first. */
  rank: number;
  occurrence: number;
  value: unknown;
}

function keyed(list: unknown[]): ItemKey[] {
  const seen = new Map<string, number>();
  let unnamed = 0;
  return list.map((value) => {
    const name = isObject(value) ? value.name : undefined;
    if (typeof name === 'string') {
      const occurrence = seen.get(name) ?? 0;
      seen.set(name, occurrence + 1);
      return { id: `n${occurrence}:${name}`, segment: name, rank: 0, occurrence, value };
    }
    const position = unnamed;
    unnamed += 1;
    return { id: `p${position}`, segment: position, rank: 1, occurrence: 0, value };
  });
}

function compareKeys(a: ItemKey, b: ItemKey): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (typeof a.segment === 'number' && typeof b.segment === 'number') {
    return a.segment - b.segment;
  }
  return compareCodePoints(String(a.segment), String(b.segment)) || a.occurrence - b.occurrence;
}

// ---------------------------------------------------------------------------------------------
// values

/**
 * Diffs `from[key]` against `to[key]` at `path` (`from === null`: the whole side is absent):
 * objects key by key down to {@link MAX_DIFF_DEPTH} levels, arrays of scalars as sets, anything
 * else as a whole value. Iterative (explicit stack).
 */
function diffField(
  out: RevisionChange[],
  path: RevisionPathSegment[],
  fromHolder: Record<string, unknown> | null,
  toHolder: Record<string, unknown>,
  key: string,
): void {
  const stack: Array<{ path: RevisionPathSegment[]; depth: number; a: Side; b: Side }> = [
    { path, depth: 0, a: side(fromHolder, key), b: side(toHolder, key) },
  ];
  while (stack.length > 0) {
    const { path: at, depth, a, b } = stack.pop() as (typeof stack)[number];
    if (!a.present && !b.present) continue;
    if (!a.present) {
      out.push(change('added', at, null, b.value));
      continue;
    }
    if (!b.present) {
      out.push(change('removed', at, a.value, null));
      continue;
    }
    const x = a.value;
    const y = b.value;
    if (isObject(x) && isObject(y) && depth < MAX_DIFF_DEPTH) {
      // Pushed in reverse so that keys come out in code-point order.
      const keys = unionKeys(x, y);
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        const k = keys[i];
        stack.push({ path: [...at, k], depth: depth + 1, a: side(x, k), b: side(y, k) });
      }
      continue;
    }
    if (isScalarArray(x) && isScalarArray(y)) {
      const sx = scalarSet(x);
      const sy = scalarSet(y);
      if (!sameCanonicalJson(sx, sy)) out.push(change('changed', at, sx, sy));
      continue;
    }
    if (!sameValue(x, y)) out.push(change('changed', at, x, y));
  }
}

interface Side {
  present: boolean;
  value: unknown;
}

function side(holder: Record<string, unknown> | null, key: string): Side {
  if (holder === null || !Object.prototype.hasOwnProperty.call(holder, key)) {
    return { present: false, value: undefined };
  }
  const value = holder[key];
  return value === undefined ? { present: false, value } : { present: true, value };
}

function change(
  op: RevisionChangeOp,
  path: RevisionPathSegment[],
  from: unknown,
  to: unknown,
): RevisionChange {
  return { op, path, from: from ?? null, to: to ?? null };
}

function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
  return sameCanonicalJson(x, y);
}

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  );
}

function isScalarArray(value: unknown): value is Scalar[] {
  return Array.isArray(value) && value.every(isScalar);
}

/**
 * De-duplicated and sorted: `null` first, then booleans (false, true), numbers (ascending) and
 * strings (by code point).
 */
function scalarSet(values: Scalar[]): Scalar[] {
  const byText = new Map<string, Scalar>();
  for (const v of values) byText.set(canonicalJson(v), v);
  return [...byText.values()].sort(compareScalars);
}

const SCALAR_RANK: Readonly<Record<string, number>> = { boolean: 1, number: 2, string: 3 };

function compareScalars(a: Scalar, b: Scalar): number {
  const ra = a === null ? 0 : SCALAR_RANK[typeof a];
  const rb = b === null ? 0 : SCALAR_RANK[typeof b];
  if (ra !== rb) return ra - rb;
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  return Number(a) - Number(b);
}

function unionKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareCodePoints);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
