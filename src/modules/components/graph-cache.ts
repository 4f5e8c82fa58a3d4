/**
 * The in-process cache of projects' component graphs (issue #23): at most one entry per (kind,
 * project), holding the value of one graph version. A value is immutable for its (project,
 * version): the version is bumped in the transaction of every write that changes the graph, and
 * a version is never handed out twice (a sequence), so an entry read for the version the database
 * currently holds is exact on any number of instances. Least recently used entries go first when
 * the total of the entries' sizes would exceed the bound; a value larger than the bound is not
 * kept; a bound of 0 keeps nothing.
 */
export type GraphCacheKind = 'response' | 'topology';

interface Entry {
  version: string;
  value: unknown;
  bytes: number;
}

export class ProjectGraphCache {
  /** Map order is the recency order: least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  /** Total size of the entries held. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value stored for exactly this version, if any (and marks it recently used). */
  get<T>(kind: GraphCacheKind, projectId: string, version: string): T | undefined {
    const key = `${kind}:${projectId}`;
    const entry = this.entries.get(key);
    if (entry === undefined || entry.version !== version) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value as T;
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
    const key = `${kind}:${projectId}`;
    this.remove(key);
    if (this.maxBytes === 0 || bytes > this.maxBytes) return;
    for (const [oldest, entry] of this.entries) {
      if (this.used + bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.used -= entry.bytes;
    }
    this.entries.set(key, { version, value, bytes });
    this.used += bytes;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.bytes;
  }
}
