/**
 * What a cache entry costs beyond its value's own bytes: the Map entry, its key string, and for a
 * Buffer its object and its ArrayBuffer. Measured on Node.js 20 with 100,000 cached 35-byte
 * buffers under uuid keys: about 760 bytes of heap and 1.3 KB of resident memory an entry. The
 * byte bounds of the in-process caches count it for every entry, so a bound also bounds memory
 * when the values are tiny (a 64 MiB cache of 35-byte graphs would otherwise hold 1.9 million
 * entries, over 2 GB).
 */
export const CACHE_ENTRY_OVERHEAD_BYTES = 1024;

/**
 * `bytes` in memory of their own, for keeping in a cache. `Buffer.from(string)` of a short string
 * (under half of `Buffer.poolSize`, 4 KiB by default) answers a slice of a shared 8 KiB pool
 * block, and keeping the slice keeps the whole block alive: a cache counting the slice's length
 * would hold up to 8 KiB for each entry it counts as a few bytes. Such a slice is copied into a
 * buffer of its own (`Buffer.allocUnsafeSlow`, never pooled); a buffer that already spans its whole
 * ArrayBuffer is returned as it is.
 */
export function ownedBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}
