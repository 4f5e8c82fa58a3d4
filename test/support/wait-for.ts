import type { DataSource, QueryRunner } from 'typeorm';

export interface WaitForOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between two checks (default 10 ms). */
  intervalMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

/**
 * Waits until `predicate` holds, checking it every `intervalMs`; throws after `timeoutMs`. Tests wait
 * for the condition they need (a log line written, a request blocked on a lock), never a fixed time.
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, intervalMs = 10, what = 'a condition' }: WaitForOptions = {},
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Tracks whether a promise has settled, for `waitFor` conditions. */
export function settledFlag(promise: Promise<unknown>): () => boolean {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

/** The backend process id of a connected query runner (to find who waits for its locks). */
export async function backendPid(qr: QueryRunner): Promise<number> {
  const rows = (await qr.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
  return rows[0].pid;
}

/** True when some session waits for a lock held by the backend `pid`. */
export async function someoneWaitsFor(db: DataSource, pid: number): Promise<boolean> {
  const rows = (await db.query(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
    [pid],
  )) as Array<{ n: number }>;
  return rows[0].n > 0;
}

/**
 * Waits until `pending` (a request racing a transaction that `qr` holds open) is blocked on one of
 * `qr`'s locks, or has already answered without needing one.
 */
export async function waitUntilBlockedOrDone(
  db: DataSource,
  qr: QueryRunner,
  pending: Promise<unknown>,
  options: WaitForOptions = {},
): Promise<void> {
  const pid = await backendPid(qr);
  const done = settledFlag(pending);
  await waitFor(async () => done() || (await someoneWaitsFor(db, pid)), {
    what: 'the request to wait for the open transaction',
    ...options,
  });
}
