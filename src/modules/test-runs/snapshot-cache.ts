import { CACHE_ENTRY_OVERHEAD_BYTES, ownedBytes } from '../../common/cache/owned-bytes';

/**
 * Bounded in-process cache of environment revisions' snapshots as the JSON bytes a run answers,
 * keyed by revision id. Revisions never change, so an entry is never stale and any number of
 * instances may each keep their own. Bounded by the bytes it holds (`maxBytes`, the
 * SNAPSHOT_CACHE_BYTES setting; 0 keeps nothing), each entry counted as its snapshot's length plus
 * `entryOverhead` (the entry's own cost in memory, {@link CACHE_ENTRY_OVERHEAD_BYTES}): adding
 * beyond the bound evicts the least recently used entries; a single snapshot larger than the bound
 * is not kept at all. A kept snapshot is held in memory of its own ({@link ownedBytes}), never as a
 * slice of a shared pool block.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, Buffer>();
  private held = 0;

  constructor(
    readonly maxBytes: number,
    readonly entryOverhead = CACHE_ENTRY_OVERHEAD_BYTES,
  ) {}

  /** The bytes of the revision's snapshot, marked as recently used; undefined when not cached. */
  get(revisionId: string): Buffer | undefined {
    const bytes = this.entries.get(revisionId);
    if (bytes !== undefined) {
      // A Map iterates in insertion order: re-inserting makes it the most recently used.
      this.entries.delete(revisionId);
      this.entries.set(revisionId, bytes);
    }
    return bytes;
  }

  /** Keeps the bytes of a revision's snapshot, evicting the least recently used beyond the bound. */
  set(revisionId: string, bytes: Buffer): void {
    const previous = this.entries.get(revisionId);
    if (previous !== undefined) {
      this.entries.delete(revisionId);
      this.held -= this.cost(previous);
    }
    if (this.cost(bytes) > this.maxBytes) return;
    const own = ownedBytes(bytes);
    this.entries.set(revisionId, own);
    this.held += this.cost(own);
    for (const [id, old] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(id);
      this.held -= this.cost(old);
    }
  }

  private cost(bytes: Buffer): number {
    return bytes.length + this.entryOverhead;
  }

  /** Bytes currently counted, entries' overhead included (at most `maxBytes`). */
  get bytes(): number {
    return this.held;
  }

  /** Snapshots currently held. */
  get size(): number {
    return this.entries.size;
  }
}

/** A revision's stored snapshot as pg parses it (`environment_revisions.full_snapshot`). */
export interface RevisionSnapshotRow {
  id: string;
  full_snapshot: unknown;
}

/**
 * The bytes a run answers for its revision's snapshot: `JSON.stringify` of the parsed jsonb (`{}`
 * for none), exactly the text runs stored of it before snapshots were kept once per revision.
 */
export function revisionSnapshotBytes(fullSnapshot: unknown): Buffer {
  return Buffer.from(JSON.stringify(fullSnapshot ?? {}), 'utf8');
}

/** What a run row carries of its snapshot: its own JSON text, or none (then its revision's). */
export interface RunSnapshotRef {
  environment_revision_id: string | null;
  /** The run's own JSON text (or parsed JSON); null when it is the revision's. */
  environment_snapshot: string | Record<string, unknown> | null;
}

/**
 * The snapshot bytes of each run, in order: its own text, else its revision's from the cache, the
 * revisions missing from it loaded with one call of `load` (and cached).
 */
export async function snapshotBytesOf(
  runs: readonly RunSnapshotRef[],
  cache: SnapshotCache,
  load: (revisionIds: string[]) => Promise<RevisionSnapshotRow[]>,
): Promise<Buffer[]> {
  const found = new Map<string, Buffer>();
  const missing = new Set<string>();
  for (const r of runs) {
    if (r.environment_snapshot !== null || r.environment_revision_id === null) continue;
    const id = r.environment_revision_id;
    if (found.has(id) || missing.has(id)) continue;
    const bytes = cache.get(id);
    if (bytes !== undefined) found.set(id, bytes);
    else missing.add(id);
  }
  if (missing.size > 0) {
    for (const row of await load([...missing])) {
      const bytes = revisionSnapshotBytes(row.full_snapshot);
      cache.set(row.id, bytes);
      found.set(row.id, bytes);
    }
  }
  return runs.map((r) => {
    if (typeof r.environment_snapshot === 'string') return Buffer.from(r.environment_snapshot);
    if (r.environment_snapshot !== null) return revisionSnapshotBytes(r.environment_snapshot);
    // The foreign key and ck_test_runs_environment_snapshot keep the revision of such a run.
    return (r.environment_revision_id && found.get(r.environment_revision_id)) || EMPTY;
  });
}

const EMPTY = Buffer.from('{}');
