/**
 * Pure domain rules of environments: topology validation and normalisation, snapshot
 * construction, PATCH merge, entity/edge derivation, counters and revision notes.
 *
 * Sources, in order of precedence: api.md §2.2–2.4, CONTRACT.md §2 and §8, reference
 * environments-datasets-cases.md §1. No NestJS, no database, no HTTP: every function here is
 * deterministic and side-effect free. Wire names (snake_case) are used throughout because every
 * shape here is stored as JSON or returned as-is.
 *
 * Values are not deep-copied: free-form objects (`meta`, `extra`, `metadata`, `resources`, extra
 * keys) are carried by reference from the input into the output. Treat results as immutable.
 */
import { MAX_PG_INTEGER } from '../../common/validation/path-integer';
import { normalizeStringList } from '../../common/normalize';
import { freeFormIssues } from '../../common/validation/free-form';
import { canonicalJson, compareCodePoints, sameCanonicalJson } from './snapshot-hash';

// ---------------------------------------------------------------------------------------------
// types and constants

/** A JSON object with arbitrary content (`meta`, `extra`, `metadata`, `resources`). */
export type JsonObject = Record<string, unknown>;

/** Version of the snapshot/topology JSON contract; stored on environments and revisions. */
export const ENVIRONMENT_SCHEMA_VERSION = 1;

/** The three component sections of a topology, in derivation order. */
export const TOPOLOGY_SECTIONS = [
  'load_generators',
  'system_under_test',
  'supporting_services',
] as const;

/** Name of a component section of a topology. */
export type TopologySection = (typeof TOPOLOGY_SECTIONS)[number];

/** Entity `role` given to components and nodes of each section (reference §1.6). */
export const SECTION_ROLES: Readonly<Record<TopologySection, string>> = {
  load_generators: 'load_generator',
  system_under_test: 'system_under_test',
  supporting_services: 'dependency',
};

/** Defaults of the environment fields (reference §1.2). */
export const ENVIRONMENT_DEFAULTS = { kind: 'custom', status: 'active' } as const;

/**
 * Largest accepted node `count`. The reference only requires `count >= 1`; the cap (PostgreSQL
 * `integer` range) keeps sums such as `topology_node_count` exact and storable.
 */
export const MAX_NODE_COUNT = MAX_PG_INTEGER;

/**
 * Size limits of a topology (issue #22, defect 6). Generous for real systems (a test exercises a
 * 5,000-node component) while keeping every list and text bounded; the JSON body limit bounds the
 * whole. Keys at every level follow the free-form key rule (`src/common/validation/free-form.ts`).
 */
export const TOPOLOGY_LIMITS = {
  /** Components per section (`load_generators`, `system_under_test`, `supporting_services`). */
  componentsPerSection: 1000,
  /** Nodes per component. */
  nodesPerComponent: 10_000,
  /** Entries of a component's `endpoints`. */
  endpoints: 1000,
  /** Characters of one endpoint (component `endpoints` entries, node `endpoint`). */
  endpointLength: 2048,
  /** Entries of a `tags` list (component or node). */
  tags: 100,
  /** Characters of one tag. */
  tagLength: 100,
  /** Characters of a name, `component_type`, `host_type`, `role`, `provider`, `region`. */
  textLength: 255,
} as const;

/** A host (or a group of `count` identical hosts) of a component, fully defaulted. */
export interface TopologyNode {
  name: string | null;
  host_type: string;
  role: string | null;
  provider: string | null;
  region: string | null;
  endpoint: string | null;
  count: number;
  resources: JsonObject;
  tags: string[];
  metadata: JsonObject;
  /** Environment-specific extra fields are preserved verbatim (for example `entity_key`). */
  [extra: string]: unknown;
}

/** A functional part of the topology with its nodes, fully defaulted. */
export interface TopologyComponent {
  name: string;
  component_type: string | null;
  nodes: TopologyNode[];
  endpoints: string[];
  tags: string[];
  metadata: JsonObject;
  /** Environment-specific extra fields are preserved verbatim (for example `entity_key`). */
  [extra: string]: unknown;
}

/** A fully defaulted topology: the stored, hashed and returned form. */
export interface Topology {
  load_generators: TopologyComponent[];
  system_under_test: TopologyComponent[];
  supporting_services: TopologyComponent[];
  metadata: JsonObject;
  /** Extra keys are preserved verbatim (for example custom `entities` and `edges`). */
  [extra: string]: unknown;
}

/** One validation problem: a dot-joined field path (CONTRACT §3) and a message. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** Thrown by the normalising functions when their input breaks a rule; carries every issue. */
export class EnvironmentValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(`Invalid environment: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'EnvironmentValidationError';
  }
}

/** The `environment` section of a snapshot (reference §1.4), in stored key order. */
export interface EnvironmentSection {
  name: string;
  kind: string;
  status: string;
  description: string | null;
  tags: string[];
  use_cases: string[];
  schema_version: number;
  meta: JsonObject;
  extra: JsonObject;
}

/** A revision's `full_snapshot`: exactly these three top-level keys (reference §1.4). */
export interface EnvironmentSnapshot {
  environment: EnvironmentSection;
  topology: Topology;
  project_id: string;
}

/** Input of {@link buildSnapshot}: the (validated) fields of an environment create body. */
export interface EnvironmentFields {
  project_id: string;
  name: string;
  kind?: string;
  status?: string;
  description?: string | null;
  tags?: readonly string[];
  use_cases?: readonly string[];
  /** Raw topology as received; validated and normalised by {@link normalizeTopology}. */
  topology?: unknown;
  meta?: JsonObject;
  extra?: JsonObject;
  /** Defaults to {@link ENVIRONMENT_SCHEMA_VERSION}; not client-settable. */
  schema_version?: number;
}

/** Input of {@link applyEnvironmentPatch}: absent (`undefined`) keys mean "no change". */
export interface EnvironmentPatch {
  name?: string;
  kind?: string;
  status?: string;
  /** `null` clears the description. */
  description?: string | null;
  tags?: readonly string[];
  use_cases?: readonly string[];
  topology?: unknown;
  meta?: JsonObject;
  extra?: JsonObject;
}

/** An entity derived from a revision's topology (reference §1.6); the service adds id/created_at. */
export interface DerivedEntity {
  entity_key: string;
  entity_type: string;
  name: string | null;
  role: string | null;
  spec: JsonObject;
  extra: JsonObject;
}

/** An edge derived from a revision's topology (reference §1.6); the service adds id/created_at. */
export interface DerivedEdge {
  from_entity_key: string;
  to_entity_key: string;
  relation_type: string;
  spec: JsonObject;
  extra: JsonObject;
}

/** Entities (de-duplicated by key) and edges (never de-duplicated), in derivation order. */
export interface DerivedGraph {
  entities: DerivedEntity[];
  edges: DerivedEdge[];
}

/** Counter and infra summary fields of the environment response (api.md §2.2, reference §1.7). */
export interface TopologyCounters {
  entities_count: number;
  edges_count: number;
  topology_component_count: number;
  topology_node_count: number;
  topology_endpoint_count: number;
  infra_host_types: string[];
  infra_providers: string[];
  infra_regions: string[];
}

/**
 * Top-level fields compared for the revision note, in the order they are listed
 * (`Changed: topology, tags`, CONTRACT §8): topology first, then the environment fields in api.md
 * order. `schema_version` is listed only if a future migration ever changes it.
 */
export const REVISION_TRACKED_FIELDS = [
  'topology',
  'name',
  'kind',
  'status',
  'description',
  'tags',
  'use_cases',
  'meta',
  'extra',
  'schema_version',
] as const;

/** A field named in a revision note. */
export type RevisionTrackedField = (typeof REVISION_TRACKED_FIELDS)[number];

// ---------------------------------------------------------------------------------------------
// validation

const NODE_OPTIONAL_TEXT = ['name', 'role', 'provider', 'region', 'endpoint'] as const;

/**
 * Validates a raw topology (as received in a create or patch body) and returns every problem
 * found, with full dot paths such as `topology.system_under_test.0.nodes.1.host_type`. An empty
 * list means {@link normalizeTopology} will accept it. `undefined` (field absent) is valid.
 *
 * Rules (reference §1.2 unless noted):
 * - the topology, each component and each node must be JSON objects; section values must be
 *   arrays; `metadata`/`resources` must be objects; explicit `null` is rejected wherever the
 *   field is not nullable (CONTRACT §2);
 * - component: `name` required, a string, not blank; `component_type` null or a non-blank string;
 *   `nodes` an array of nodes; `endpoints`/`tags` arrays of strings;
 * - node: `host_type` required, a string, not blank; `name`, `role`, `provider`, `region`,
 *   `endpoint` null or a string (blank becomes null); `count` an integer from 1 to
 *   {@link MAX_NODE_COUNT} (the upper bound is our addition); `tags` an array of strings;
 * - any other key, at any level, is an environment-specific extra and is accepted as-is.
 */
export function validateTopology(value: unknown, path = 'topology'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (value === undefined) return issues;
  if (!checkObject(value, path, issues)) return issues;

  for (const section of TOPOLOGY_SECTIONS) {
    const list = value[section];
    const sectionPath = join(path, section);
    if (list === undefined) continue;
    if (!checkArray(list, sectionPath, issues, TOPOLOGY_LIMITS.componentsPerSection)) continue;
    list.forEach((component, index) =>
      validateComponent(component, join(sectionPath, index), issues),
    );
  }
  optionalObject(value.metadata, join(path, 'metadata'), issues);
  // Keys are counted as stored, every declared field defaulted (a node always has its 10, a
  // component its 6, the topology its 4): whatever is accepted can then be sent back as a GET
  // answers it. Counting the input's keys accepted a node of 196 keys, stored it with 205, and
  // refused the unchanged topology sent back.
  issues.push(...freeFormIssues(issues.length === 0 ? normalizeValidTopology(value) : value, path));
  return issues;
}

function validateComponent(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (!checkObject(value, path, issues)) return;
  requiredText(value.name, join(path, 'name'), issues);
  if (value.component_type !== null && value.component_type !== undefined) {
    nonBlankText(value.component_type, join(path, 'component_type'), issues);
  }
  const nodesPath = join(path, 'nodes');
  if (
    value.nodes !== undefined &&
    checkArray(value.nodes, nodesPath, issues, TOPOLOGY_LIMITS.nodesPerComponent)
  ) {
    value.nodes.forEach((node, index) => validateNode(node, join(nodesPath, index), issues));
  }
  optionalStringList(
    value.endpoints,
    join(path, 'endpoints'),
    issues,
    TOPOLOGY_LIMITS.endpoints,
    TOPOLOGY_LIMITS.endpointLength,
  );
  optionalStringList(
    value.tags,
    join(path, 'tags'),
    issues,
    TOPOLOGY_LIMITS.tags,
    TOPOLOGY_LIMITS.tagLength,
  );
  optionalObject(value.metadata, join(path, 'metadata'), issues);
}

function validateNode(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (!checkObject(value, path, issues)) return;
  requiredText(value.host_type, join(path, 'host_type'), issues);
  for (const field of NODE_OPTIONAL_TEXT) {
    const text = value[field];
    if (text !== undefined && text !== null && typeof text !== 'string') {
      issues.push(issue(join(path, field), 'must be a string'));
    } else if (typeof text === 'string') {
      const max =
        field === 'endpoint' ? TOPOLOGY_LIMITS.endpointLength : TOPOLOGY_LIMITS.textLength;
      checkLength(text, join(path, field), issues, max);
    }
  }
  validateCount(value.count, join(path, 'count'), issues);
  optionalObject(value.resources, join(path, 'resources'), issues);
  optionalStringList(
    value.tags,
    join(path, 'tags'),
    issues,
    TOPOLOGY_LIMITS.tags,
    TOPOLOGY_LIMITS.tagLength,
  );
  optionalObject(value.metadata, join(path, 'metadata'), issues);
}

function validateCount(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (value === undefined) return;
  if (value === null) issues.push(issue(path, 'must not be null'));
  else if (typeof value !== 'number' || !Number.isInteger(value)) {
    issues.push(issue(path, 'must be an integer'));
  } else if (value < 1) issues.push(issue(path, 'must not be less than 1'));
  else if (value > MAX_NODE_COUNT) {
    issues.push(issue(path, `must not be greater than ${MAX_NODE_COUNT}`));
  }
}

function requiredText(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (value === undefined) issues.push(issue(path, 'is required'));
  else if (value === null) issues.push(issue(path, 'must not be null'));
  else nonBlankText(value, path, issues);
}

function nonBlankText(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (typeof value !== 'string') issues.push(issue(path, 'must be a string'));
  else if (value.trim() === '') issues.push(issue(path, 'must not be empty'));
  else checkLength(value, path, issues, TOPOLOGY_LIMITS.textLength);
}

/** Length in characters as PostgreSQL counts them (code points), after trimming. */
function checkLength(value: string, path: string, issues: ValidationIssue[], max: number): void {
  if (value.length > max && [...value.trim()].length > max) {
    issues.push(issue(path, `must be at most ${max} characters long`));
  }
}

function optionalStringList(
  value: unknown,
  path: string,
  issues: ValidationIssue[],
  maxItems: number,
  maxLength: number,
): void {
  if (value === undefined || !checkArray(value, path, issues, maxItems)) return;
  value.forEach((item, index) => {
    if (typeof item !== 'string') issues.push(issue(join(path, index), 'must be a string'));
    else checkLength(item, join(path, index), issues, maxLength);
  });
}

function optionalObject(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (value !== undefined) checkObject(value, path, issues);
}

function checkObject(value: unknown, path: string, issues: ValidationIssue[]): value is JsonObject {
  if (isJsonObject(value)) return true;
  issues.push(issue(path, value === null ? 'must not be null' : 'must be an object'));
  return false;
}

function checkArray(
  value: unknown,
  path: string,
  issues: ValidationIssue[],
  maxItems: number,
): value is unknown[] {
  if (!Array.isArray(value)) {
    issues.push(issue(path, value === null ? 'must not be null' : 'must be an array'));
    return false;
  }
  if (value.length > maxItems) {
    issues.push(issue(path, `must contain at most ${maxItems} items`));
    return false;
  }
  return true;
}

/**
 * Message of an issue: the field name followed by the rule, in the style of the request
 * validation pipe (`host_type must not be empty`); list items read `nodes[1] must be an object`.
 */
function issue(path: string, rule: string): ValidationIssue {
  const segments = path.split('.');
  const last = segments[segments.length - 1];
  const label =
    /^\d+$/.test(last) && segments.length > 1 ? `${segments[segments.length - 2]}[${last}]` : last;
  return { path, message: `${label} ${rule}` };
}

function join(path: string, segment: string | number): string {
  return path === '' ? String(segment) : `${path}.${segment}`;
}

/**
 * Groups issues into the problem body's `errors` map (field path → messages), keeping the order in
 * which paths were first reported.
 */
export function issuesToErrorMap(issues: readonly ValidationIssue[]): Record<string, string[]> {
  const map: Record<string, string[]> = {};
  for (const { path, message } of issues) {
    if (!Object.prototype.hasOwnProperty.call(map, path)) {
      Object.defineProperty(map, path, {
        value: [],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    map[path].push(message);
  }
  return map;
}

// ---------------------------------------------------------------------------------------------
// normalisation

const TOPOLOGY_FIELDS = new Set<string>([...TOPOLOGY_SECTIONS, 'metadata']);
const COMPONENT_FIELDS = new Set<string>([
  'name',
  'component_type',
  'nodes',
  'endpoints',
  'tags',
  'metadata',
]);
const NODE_FIELDS = new Set<string>([
  'name',
  'host_type',
  'role',
  'provider',
  'region',
  'endpoint',
  'count',
  'resources',
  'tags',
  'metadata',
]);

/** A new empty topology: every section `[]` and `metadata` `{}`. */
export function emptyTopology(): Topology {
  return { load_generators: [], system_under_test: [], supporting_services: [], metadata: {} };
}

/**
 * Returns the stored form of a topology: the fully defaulted dump of reference §1.2.
 *
 * - `undefined` (absent) gives {@link emptyTopology}.
 * - Sections default to `[]`, `metadata` to `{}`.
 * - Component: `name` and `component_type` trimmed (`component_type` defaults to `null`);
 *   `nodes` default `[]`; `endpoints` and `tags` normalised with the shared list rule
 *   (CONTRACT §2); `metadata` default `{}`.
 * - Node: `host_type` trimmed; `name`, `role`, `provider`, `region`, `endpoint` trimmed, blank or
 *   absent → `null`; `count` default `1`; `resources` and `metadata` default `{}`; `tags`
 *   normalised.
 * - Keys are emitted in declaration order, followed by every extra key with its value untouched.
 *
 * Idempotent: normalising a normalised topology returns an equal topology.
 *
 * @throws EnvironmentValidationError when {@link validateTopology} reports any issue.
 */
export function normalizeTopology(input: unknown): Topology {
  const issues = validateTopology(input);
  if (issues.length > 0) throw new EnvironmentValidationError(issues);
  return normalizeValidTopology(input);
}

/** Normalises a topology that {@link validateTopology} accepted; every cast below relies on it. */
function normalizeValidTopology(input: unknown): Topology {
  if (input === undefined) return emptyTopology();
  const raw = input as JsonObject;
  const topology: Topology = {
    load_generators: normalizeComponents(raw.load_generators),
    system_under_test: normalizeComponents(raw.system_under_test),
    supporting_services: normalizeComponents(raw.supporting_services),
    metadata: (raw.metadata as JsonObject | undefined) ?? {},
  };
  copyExtras(raw, topology, TOPOLOGY_FIELDS);
  return topology;
}

function normalizeComponents(value: unknown): TopologyComponent[] {
  return value === undefined ? [] : (value as JsonObject[]).map(normalizeComponent);
}

function normalizeComponent(raw: JsonObject): TopologyComponent {
  const component: TopologyComponent = {
    name: (raw.name as string).trim(),
    component_type: typeof raw.component_type === 'string' ? raw.component_type.trim() : null,
    nodes: raw.nodes === undefined ? [] : (raw.nodes as JsonObject[]).map(normalizeNode),
    endpoints: normalizeStringList((raw.endpoints as string[] | undefined) ?? []),
    tags: normalizeStringList((raw.tags as string[] | undefined) ?? []),
    metadata: (raw.metadata as JsonObject | undefined) ?? {},
  };
  copyExtras(raw, component, COMPONENT_FIELDS);
  return component;
}

function normalizeNode(raw: JsonObject): TopologyNode {
  const node: TopologyNode = {
    name: trimToNull(raw.name),
    host_type: (raw.host_type as string).trim(),
    role: trimToNull(raw.role),
    provider: trimToNull(raw.provider),
    region: trimToNull(raw.region),
    endpoint: trimToNull(raw.endpoint),
    count: (raw.count as number | undefined) ?? 1,
    resources: (raw.resources as JsonObject | undefined) ?? {},
    tags: normalizeStringList((raw.tags as string[] | undefined) ?? []),
    metadata: (raw.metadata as JsonObject | undefined) ?? {},
  };
  copyExtras(raw, node, NODE_FIELDS);
  return node;
}

/** Copies extra keys verbatim; defineProperty keeps an own `__proto__` key a plain data key. */
function copyExtras(from: JsonObject, to: JsonObject, declared: ReadonlySet<string>): void {
  for (const key of Object.keys(from)) {
    if (declared.has(key) || from[key] === undefined) continue;
    Object.defineProperty(to, key, {
      value: from[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}

function trimToNull(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

// ---------------------------------------------------------------------------------------------
// snapshots

/**
 * Builds a revision's `full_snapshot` from an environment's fields (reference §1.4):
 * `{environment: {name, kind, status, description, tags, use_cases, schema_version, meta, extra},
 * topology, project_id}`.
 *
 * Applies the create defaults and normalisation (reference §1.2, CONTRACT §2): `name`, `kind`,
 * `status` and `project_id` trimmed; `kind` defaults to `custom`, `status` to `active`;
 * `description` trimmed, blank or absent → `null`; `tags` and `use_cases` normalised (default
 * `[]`); `meta` and `extra` default `{}`; topology through {@link normalizeTopology};
 * `schema_version` is {@link ENVIRONMENT_SCHEMA_VERSION} unless given. Idempotent, so rebuilding a
 * snapshot from its own fields yields the same hash.
 *
 * @throws EnvironmentValidationError when `name`, `kind`, `status` or `project_id` is blank, or the
 *   topology is invalid (the request validation should have rejected these already).
 */
export function buildSnapshot(fields: EnvironmentFields): EnvironmentSnapshot {
  return snapshotOf(fields);
}

/**
 * {@link buildSnapshot}, or with `stored` (a topology already stored: validated and defaulted when
 * it was written) kept as it is instead of validating and normalising `fields.topology` again
 * (one stored before keys were counted in their stored form may hold more than 200 keys an object).
 */
function snapshotOf(fields: EnvironmentFields, stored?: Topology): EnvironmentSnapshot {
  const issues: ValidationIssue[] = [];
  const requiredFields = {
    project_id: fields.project_id,
    name: fields.name,
    kind: fields.kind ?? ENVIRONMENT_DEFAULTS.kind,
    status: fields.status ?? ENVIRONMENT_DEFAULTS.status,
  };
  for (const [key, value] of Object.entries(requiredFields)) requiredText(value, key, issues);
  if (stored === undefined) issues.push(...validateTopology(fields.topology));
  if (issues.length > 0) throw new EnvironmentValidationError(issues);

  return {
    environment: {
      name: requiredFields.name.trim(),
      kind: requiredFields.kind.trim(),
      status: requiredFields.status.trim(),
      description: trimToNull(fields.description),
      tags: normalizeStringList(fields.tags ?? []),
      use_cases: normalizeStringList(fields.use_cases ?? []),
      schema_version: fields.schema_version ?? ENVIRONMENT_SCHEMA_VERSION,
      meta: fields.meta ?? {},
      extra: fields.extra ?? {},
    },
    topology: stored ?? normalizeValidTopology(fields.topology),
    project_id: requiredFields.project_id.trim(),
  };
}

/**
 * Merges a PATCH into the current snapshot and returns the candidate snapshot of the next
 * revision (reference §1.5 with CONTRACT §2 null semantics): each present key replaces the
 * previous value wholesale (no deep merge of `topology`, `meta` or `extra`); absent keys keep
 * theirs; `description: null` clears the description. `schema_version` is reset to
 * {@link ENVIRONMENT_SCHEMA_VERSION}, `project_id` is kept. Whether the result is a new revision is
 * decided by comparing hashes (CONTRACT §8), not here.
 *
 * @throws EnvironmentValidationError for an explicit `null` on a non-nullable field (CONTRACT §2)
 *   or for any value {@link buildSnapshot} rejects.
 */
export function applyEnvironmentPatch(
  base: EnvironmentSnapshot,
  patch: EnvironmentPatch,
): EnvironmentSnapshot {
  const nulls = (Object.keys(patch) as (keyof EnvironmentPatch)[])
    .filter((key) => key !== 'description' && patch[key] === null)
    .map((key) => issue(key, 'must not be null'));
  if (nulls.length > 0) throw new EnvironmentValidationError(nulls);

  const env = base.environment;
  // Without a new topology the stored one is kept as it is: it was validated when it was written,
  // and validating its defaulted form again could refuse it (found by an audit: an environment
  // whose topology had 199 keys could no longer be patched or archived).
  const fields: EnvironmentFields = {
    project_id: base.project_id,
    name: patch.name ?? env.name,
    kind: patch.kind ?? env.kind,
    status: patch.status ?? env.status,
    description: patch.description !== undefined ? patch.description : env.description,
    tags: patch.tags ?? env.tags,
    use_cases: patch.use_cases ?? env.use_cases,
    topology: patch.topology ?? base.topology,
    meta: patch.meta ?? env.meta,
    extra: patch.extra ?? env.extra,
  };
  return patch.topology === undefined ? snapshotOf(fields, base.topology) : snapshotOf(fields);
}

// ---------------------------------------------------------------------------------------------
// revisions

/**
 * Lists the top-level fields that differ between two snapshots, in {@link REVISION_TRACKED_FIELDS}
 * order (values compared by canonical JSON, so key order does not matter). Returns `null` when
 * there is no previous snapshot, which {@link revisionNote} turns into `Initial revision`.
 */
export function changedTopLevelFields(
  oldSnapshot: EnvironmentSnapshot,
  newSnapshot: EnvironmentSnapshot,
): RevisionTrackedField[];
export function changedTopLevelFields(
  oldSnapshot: null | undefined,
  newSnapshot: EnvironmentSnapshot,
): null;
export function changedTopLevelFields(
  oldSnapshot: EnvironmentSnapshot | null | undefined,
  newSnapshot: EnvironmentSnapshot,
): RevisionTrackedField[] | null;
export function changedTopLevelFields(
  oldSnapshot: EnvironmentSnapshot | null | undefined,
  newSnapshot: EnvironmentSnapshot,
): RevisionTrackedField[] | null {
  if (oldSnapshot === null || oldSnapshot === undefined) return null;
  const valueOf = (snapshot: EnvironmentSnapshot, field: RevisionTrackedField): unknown =>
    field === 'topology' ? snapshot.topology : snapshot.environment?.[field];
  return REVISION_TRACKED_FIELDS.filter(
    (field) => !sameJson(valueOf(oldSnapshot, field), valueOf(newSnapshot, field)),
  );
}

/**
 * The `revision_note` of a revision (CONTRACT §8): `Initial revision` when `changedFields` is
 * `null` (revision 1), otherwise `Changed: <fields>` joined with `, ` (for example
 * `Changed: topology, tags`). An empty list (no revision should have been written) gives
 * `No changes`.
 */
export function revisionNote(changedFields: readonly string[] | null): string {
  if (changedFields === null) return 'Initial revision';
  if (changedFields.length === 0) return 'No changes';
  return `Changed: ${changedFields.join(', ')}`;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  return sameCanonicalJson(a, b);
}

// ---------------------------------------------------------------------------------------------
// entities and edges

/**
 * Derives the entities and edges of a revision from its snapshot's `topology` (reference §1.6).
 * Tolerant of any JSON: a missing or non-object topology yields nothing, non-object items are
 * skipped. Order:
 *
 * 1. custom entities from `topology.entities` (a list): `entity_key` = `entity_key` || `id` ||
 *    `entity:<i>`, `entity_type` = `entity_type` || `entity`, `name`/`role` as given, `spec` = the
 *    item's `spec` object or else the whole item, `extra` = the item's `extra` object or `{}`;
 * 2. custom edges from `topology.edges` (a list): `from_entity_key` || `from` and
 *    `to_entity_key` || `to` (items lacking either are skipped), `relation_type` =
 *    `relation_type` || `depends_on`, `spec`/`extra` as for entities;
 * 3. for each section (`load_generators` → role `load_generator`, `system_under_test` →
 *    `system_under_test`, `supporting_services` → `dependency`) and each component `c`: an entity
 *    with key `entity_key` || `<section>:<c>`, type `component_type` || `component`, name `name`
 *    || `<section>-<c+1>`, the section role, `spec` = the whole component (nodes included);
 *    then for each node `n`: an entity with key `entity_key` || `<component key>:node:<n>`, type
 *    `host`, the node's name (or `null`), the section role, `spec` = the whole node, plus an edge
 *    `<component key> → <node key>` of type `contains` with empty `spec`/`extra`. A node with
 *    `count > 1` is still one entity.
 * 4. entities are de-duplicated by key, first occurrence wins; edges are kept as they are, even
 *    duplicates or edges to unknown keys.
 *
 * "||" follows the reference's Python truthiness (null, false, 0, '', [] and {} fall through).
 * Non-string keys and names are stringified (numbers and booleans as in JSON, objects and arrays
 * as canonical JSON): the reference's `str()` would give Python reprs, which is not useful here.
 */
export function deriveEntitiesAndEdges(snapshot: unknown): DerivedGraph {
  const topology = isJsonObject(snapshot) ? snapshot.topology : undefined;
  return deriveTopologyGraph(topology);
}

/** {@link deriveEntitiesAndEdges} for a topology object rather than a whole snapshot. */
export function deriveTopologyGraph(topology: unknown): DerivedGraph {
  const entities: DerivedEntity[] = [];
  const edges: DerivedEdge[] = [];
  if (!isJsonObject(topology)) return { entities, edges };

  const customEntities = topology.entities;
  if (Array.isArray(customEntities)) {
    customEntities.forEach((item: unknown, index) => {
      if (!isJsonObject(item)) return;
      entities.push({
        entity_key: firstTruthyText(item.entity_key, item.id) ?? `entity:${index}`,
        entity_type: firstTruthyText(item.entity_type) ?? 'entity',
        name: optionalText(item.name),
        role: optionalText(item.role),
        spec: objectOr(item.spec, item),
        extra: objectOr(item.extra, {}),
      });
    });
  }

  const customEdges = topology.edges;
  if (Array.isArray(customEdges)) {
    for (const item of customEdges as unknown[]) {
      if (!isJsonObject(item)) continue;
      const from = firstTruthyText(item.from_entity_key, item.from);
      const to = firstTruthyText(item.to_entity_key, item.to);
      if (from === null || to === null) continue;
      edges.push({
        from_entity_key: from,
        to_entity_key: to,
        relation_type: firstTruthyText(item.relation_type) ?? 'depends_on',
        spec: objectOr(item.spec, item),
        extra: objectOr(item.extra, {}),
      });
    }
  }

  for (const section of TOPOLOGY_SECTIONS) {
    const components = topology[section];
    if (!Array.isArray(components)) continue;
    const role = SECTION_ROLES[section];
    components.forEach((component: unknown, componentIndex) => {
      if (!isJsonObject(component)) return;
      const componentKey = firstTruthyText(component.entity_key) ?? `${section}:${componentIndex}`;
      entities.push({
        entity_key: componentKey,
        entity_type: firstTruthyText(component.component_type) ?? 'component',
        name: firstTruthyText(component.name) ?? `${section}-${componentIndex + 1}`,
        role,
        spec: component,
        extra: objectOr(component.extra, {}),
      });
      const nodes = component.nodes;
      if (!Array.isArray(nodes)) return;
      nodes.forEach((node: unknown, nodeIndex) => {
        if (!isJsonObject(node)) return;
        const nodeKey = firstTruthyText(node.entity_key) ?? `${componentKey}:node:${nodeIndex}`;
        entities.push({
          entity_key: nodeKey,
          entity_type: 'host',
          name: optionalText(node.name),
          role,
          spec: node,
          extra: objectOr(node.extra, {}),
        });
        edges.push({
          from_entity_key: componentKey,
          to_entity_key: nodeKey,
          relation_type: 'contains',
          spec: {},
          extra: {},
        });
      });
    });
  }

  const seen = new Set<string>();
  const unique = entities.filter((entity) => {
    if (seen.has(entity.entity_key)) return false;
    seen.add(entity.entity_key);
    return true;
  });
  return { entities: unique, edges };
}

/** Python truthiness, as the reference's `a or b` fallbacks use it. */
function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') {
    return false;
  }
  if (typeof value === 'number' && Number.isNaN(value)) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isJsonObject(value)) return Object.keys(value).length > 0;
  return true;
}

function firstTruthyText(...values: unknown[]): string | null {
  const found = values.find(isTruthy);
  return found === undefined ? null : toText(found);
}

function optionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : toText(value);
}

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return canonicalJson(value);
}

function objectOr(value: unknown, fallback: JsonObject): JsonObject {
  return isJsonObject(value) ? value : fallback;
}

// ---------------------------------------------------------------------------------------------
// counters

/**
 * Computes the counters and infra summaries of an environment from its current topology
 * (reference §1.7). Only the three section arrays are read; non-object components are skipped.
 *
 * - `topology_component_count`: component objects across the sections;
 * - `topology_node_count`: sum of node `count`s; a node whose `count` is missing or not a positive
 *   number counts 1 (fractions are truncated), a non-object node entry counts 1;
 * - `topology_endpoint_count`: total length of the components' `endpoints` lists (a node's
 *   `endpoint` is not counted);
 * - `entities_count`, `edges_count`: sizes of {@link deriveTopologyGraph} (pass `graph` when it is
 *   already derived, to avoid deriving twice);
 * - `infra_host_types`, `infra_providers`, `infra_regions`: distinct trimmed non-empty string
 *   values of the nodes' `host_type`, `provider`, `region`; de-duplicated case-sensitively
 *   (`AWS` and `aws` are both listed), sorted case-insensitively with code-point order breaking
 *   ties between case variants (the reference leaves those ties undefined).
 */
export function topologyCounters(topology: unknown, graph?: DerivedGraph): TopologyCounters {
  const derived = graph ?? deriveTopologyGraph(topology);
  let componentCount = 0;
  let nodeCount = 0;
  let endpointCount = 0;
  const hostTypes = new Set<string>();
  const providers = new Set<string>();
  const regions = new Set<string>();

  if (isJsonObject(topology)) {
    for (const section of TOPOLOGY_SECTIONS) {
      const components = topology[section];
      if (!Array.isArray(components)) continue;
      for (const component of components as unknown[]) {
        if (!isJsonObject(component)) continue;
        componentCount += 1;
        if (Array.isArray(component.endpoints)) endpointCount += component.endpoints.length;
        if (!Array.isArray(component.nodes)) continue;
        for (const node of component.nodes as unknown[]) {
          if (!isJsonObject(node)) {
            nodeCount += 1;
            continue;
          }
          nodeCount += nodeMultiplicity(node.count);
          addTrimmed(hostTypes, node.host_type);
          addTrimmed(providers, node.provider);
          addTrimmed(regions, node.region);
        }
      }
    }
  }

  return {
    entities_count: derived.entities.length,
    edges_count: derived.edges.length,
    topology_component_count: componentCount,
    topology_node_count: nodeCount,
    topology_endpoint_count: endpointCount,
    infra_host_types: sortCaseInsensitive(hostTypes),
    infra_providers: sortCaseInsensitive(providers),
    infra_regions: sortCaseInsensitive(regions),
  };
}

function nodeMultiplicity(count: unknown): number {
  return typeof count === 'number' && Number.isFinite(count) && count >= 1 ? Math.trunc(count) : 1;
}

function addTrimmed(set: Set<string>, value: unknown): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed !== '') set.add(trimmed);
}

function sortCaseInsensitive(values: Iterable<string>): string[] {
  return [...values].sort(
    (a, b) => compareCodePoints(a.toLowerCase(), b.toLowerCase()) || compareCodePoints(a, b),
  );
}

// ---------------------------------------------------------------------------------------------
// shared helpers

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
