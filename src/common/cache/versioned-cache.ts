import { CACHE_ENTRY_OVERHEAD_BYTES } from './owned-bytes';

/**
 * An in-process cache of values computed at one version of what they read: at most one entry per
 * key, holding the value of one version (the insights answers per project result version,
 * `project_result_changes`; the component graph per graph version). A (key, version) pair names
 * immutable data: every transaction that changes what the value reads changes the version, so an
 * entry whose version is the database's current one is exact on any number of instances. The latest store of a key wins. Least recently used entries go first when
 * the total of the entries' sizes would exceed the bound, or their number would exceed
 * `maxEntries`; a value larger than the bound is not kept; a bound of 0 keeps nothing. Each entry
 * counts as its given size plus `entryOverhead` (its own cost in memory,
 * {@link CACHE_ENTRY_OVERHEAD_BYTES}), so a byte bound also bounds the number of tiny entries.
 */
interface Entry<T> {
  version: string;
  value: T;
  bytes: number;
}

export class VersionedCache<T> {
  /** Map order is the recency order: least recently used first. */
  private readonly entries = new Map<string, Entry<T>>();
  private used = 0;

  constructor(
    readonly maxBytes: number,
    readonly maxEntries: number,
    readonly entryOverhead = CACHE_ENTRY_OVERHEAD_BYTES,
  ) {}

  /** Total size of the entries held, their overhead included. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry held for the key, whatever its version (marks it recently used). */
  peek(key: string): { version: string; value: T } | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { version: entry.version, value: entry.value };
  }

  /** Stores `value` as the key's entry for `version`, replacing the one held before. */
  set(key: string, version: string, value: T, size: number): void {
    this.remove(key);
    const bytes = size + this.entryOverhead;
    if (this.maxBytes === 0 || this.maxEntries === 0 || bytes > this.maxBytes) return;
    for (const [oldest, entry] of this.entries) {
      if (this.used + bytes <= this.maxBytes && this.entries.size < this.maxEntries) break;
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
