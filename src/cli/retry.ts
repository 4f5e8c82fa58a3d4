/**
 * When `tms` tries a request again: network errors, 429 and 5xx answers (and 409
 * `idempotency_request_in_progress`: the first request with that key is still running), at most
 * `retries` more times, waiting an exponential backoff, or the server's `Retry-After` when longer.
 * Pure.
 */

/** Retries after the first attempt, unless `--retries` says otherwise (so 5 attempts in all). */
export const DEFAULT_RETRIES = 4;
/** Most retries `--retries` accepts. */
export const MAX_RETRIES = 10;
/** First backoff delay; it doubles on every retry. */
export const BACKOFF_BASE_MS = 500;
/** Longest backoff delay, and longest wait a `Retry-After` may impose. */
export const BACKOFF_MAX_MS = 30_000;

/** The problem codes that a retry of the same request may get past. */
const RETRYABLE_CODES = new Set(['idempotency_request_in_progress']);

export function isRetryableStatus(status: number, code: string | null): boolean {
  if (status === 429 || (status >= 500 && status <= 599)) return true;
  return status === 409 && code !== null && RETRYABLE_CODES.has(code);
}

/**
 * Delay before retry number `retry` (1-based): `BACKOFF_BASE_MS · 2^(retry-1)` capped at
 * `BACKOFF_MAX_MS`, with "equal jitter" (between half of it and all of it; `random` in [0, 1)) so
 * that many jobs failing together do not come back together.
 */
export function backoffDelayMs(retry: number, random: number): number {
  const full = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, retry - 1));
  return Math.round(full / 2 + (full / 2) * Math.min(Math.max(random, 0), 1));
}

/**
 * A `Retry-After` header (delay in seconds, or an HTTP date) in milliseconds from `nowMs`, capped
 * at `BACKOFF_MAX_MS`; null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, BACKOFF_MAX_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return null;
  return Math.min(Math.max(0, at - nowMs), BACKOFF_MAX_MS);
}

/**
 * The wait before retry number `retry`: the backoff, or the server's `Retry-After` when it asks for
 * longer. Never less than the backoff: a server that keeps answering `Retry-After: 1` (409
 * `idempotency_request_in_progress` while the first request still runs) would otherwise shrink
 * the whole series of retries to a few seconds.
 */
export function retryDelayMs(
  retry: number,
  retryAfter: string | null,
  nowMs: number,
  random: number,
): number {
  return Math.max(parseRetryAfter(retryAfter, nowMs) ?? 0, backoffDelayMs(retry, random));
}
