import { createHash } from 'node:crypto';

/**
 * `Idempotency-Key` of a request of `tms`: derived from what the request does (its target) and the
 * SHA-256 of every file it sends, so running the same step again (a retried CI job) sends the same
 * key and a server that honours the header answers the stored response instead of applying the
 * report twice. `tms-` + 64 hex characters: printable ASCII, within the 1–255 characters allowed.
 */
export type IdempotencyTarget = Readonly<Record<string, string | boolean | null>>;

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The key for `target` (an operation name and its parameters; key order does not matter) and the
 * files' SHA-256 digests (their order matters: it is the order of the parts).
 */
export function idempotencyKey(target: IdempotencyTarget, fileDigests: readonly string[]): string {
  const canonical = Object.keys(target)
    .sort()
    .map((k) => [k, target[k]]);
  return `tms-${sha256Hex(JSON.stringify({ v: 1, target: canonical, files: fileDigests }))}`;
}
