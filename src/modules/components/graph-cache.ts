import { CACHE_ENTRY_OVERHEAD_BYTES } from '../../common/cache/owned-bytes';
import { VersionedCache } from '../../common/cache/versioned-cache';

/**
 * The in-process cache of projects' component graphs (issue #23): at most one entry per (kind,
 * project), holding the value of one graph version. A value is immutable for its (project,
 * version): the version is bumped in the transaction of every write that changes the graph, and
 * a version is never handed out twice (a sequence), so an entry read for the version the database
 * currently holds is exact on any number of instances. Least recently used entries go first when
 * the total of the entries' sizes (each with {@link CACHE_ENTRY_OVERHEAD_BYTES}) would exceed the
 * bound; a value larger than the bound is not kept; a bound of 0 keeps nothing.
 */
export type GraphCacheKind = 'response' | 'topology';

/** The graph cache: a {@link VersionedCache} keyed by (kind, project), bounded by bytes only. */
export class ProjectGraphCache {
  private readonly cache: VersionedCache<unknown>;

  constructor(
    readonly maxBytes: number,
    entryOverhead = CACHE_ENTRY_OVERHEAD_BYTES,
  ) {
    this.cache = new VersionedCache<unknown>(maxBytes, Number.POSITIVE_INFINITY, entryOverhead);
  }

  /** Total size of the entries held, their overhead included. */
  get bytes(): number {
    return this.cache.bytes;
  }

  get size(): number {
    return this.cache.size;
  }

  /** The value stored for exactly this version, if any (and marks it recently used). */
  get<T>(kind: GraphCacheKind, projectId: string, version: string): T | undefined {
    const entry = this.cache.peek(`${kind}:${projectId}`);
    return entry !== undefined && entry.version === version ? (entry.value as T) : undefined;
  }

  /**
   * Stores `value` as the (kind, project)'s entry, replacing the one of any other version (the
   * latest store wins: a version is only ever asked for while it is the database's current one).
   */
  set(
    kind: GraphCacheKind,
    projectId: string,
    version: string,
    value: unknown,
    bytes: number,
  ): void {
    this.cache.set(`${kind}:${projectId}`, version, value, bytes);
  }
}
