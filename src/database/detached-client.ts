import { AsyncResource } from 'node:async_hooks';
import { Client } from 'pg';

/**
 * The async context database connections are opened in: the process's own, captured when this
 * module loads (at startup, outside any request).
 */
const ROOT = new AsyncResource('tms.pg-connection');

/** pg's error when a query outlives `query_timeout` (client side: the server never answered). */
export const QUERY_READ_TIMEOUT = 'Query read timeout';

type Callback = (err: Error | null | undefined, result?: unknown) => void;

/**
 * The pool's pg Client: opened outside its caller's async context, and closed when one of its
 * queries misses the query deadline.
 *
 * The pool opens a connection when a request needs one. Its socket is an async resource, and one
 * created inside `requestContext.run` carries that request's store (the request, its transaction
 * manager, its validated DTOs) for as long as the socket lives, i.e. as long as the pooled
 * connection: up to one finished request's object graph per connection (seen in a heap
 * snapshot). Opened from the process's context instead, a connection keeps no request. Queries
 * are unaffected: their callers resume in their own context (`await` restores it).
 *
 * After pg's `query_timeout` fires, the query is still in flight: the connection answers nothing
 * else until the server does (node-postgres issue #3399), and a ROLLBACK queued behind it is dropped
 * unsent, which would leave the transaction open on the server. pg-pool's own `pool.query` discards
 * the client on any error, but TypeORM's query runner releases it without one, so the pool would
 * hand the stuck (maybe mid-transaction) connection to the next request. The client therefore ends
 * itself: `end()` closes the socket of a client with a query in flight, the server rolls back, and
 * the pool drops an ended client when it is released.
 *
 * Why a subclass (issue #16 asks for pg's pool through public APIs): the pool's `Client` option is
 * pg-pool's documented way to supply "a custom client constructor", and this class uses only pg's
 * public surface: the exported `Client`, its constructor, and its public `connect` and `query`, which
 * it overrides and calls through; it reads and writes no private field. No other public hook does
 * either job. The pool's `connect` event and `onConnect` option run once the socket exists, already
 * in the request's context; leaving the context around the pool's `connect` (`AsyncResource`,
 * `AsyncLocalStorage.exit`) would mean overriding the pool's `connect` instead (a subclass all the
 * same) or wrapping TypeORM's call of it. pg reports a missed deadline
 * only to the query's caller (no client event), and TypeORM releases the client without the error,
 * so the pool's `release` event does not see it either.
 */
export class DetachedClient extends Client {
  override connect(): Promise<void>;
  override connect(callback: (err: Error) => void): void;
  override connect(callback?: (err: Error) => void): Promise<void> | void {
    return ROOT.runInAsyncScope(() => (callback ? super.connect(callback) : super.connect()));
  }
}

function closeAfterTimeout(client: Client, err: unknown): void {
  if (err instanceof Error && err.message === QUERY_READ_TIMEOUT) client.end().catch(() => undefined);
}

// pg's query() with all its overloads: the arguments pass through unchanged; the error is only looked at.
DetachedClient.prototype.query = function query(this: DetachedClient, ...args: unknown[]): unknown {
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    // Callback form (pg-pool's pool.query).
    args[last] = (err: Error | null | undefined, result?: unknown) => {
      if (err) closeAfterTimeout(this, err);
      (callback as Callback)(err, result);
    };
  }
  // Looked up at each call, like `super.query` (the tests count statements with a spy on it).
  const result = (Client.prototype.query as (this: Client, ...a: unknown[]) => unknown).apply(this, args);
  // Promise form (TypeORM's query runner): the caller gets `result` itself; this branch only looks.
  if (result instanceof Promise) result.then(undefined, (err: unknown) => closeAfterTimeout(this, err));
  return result;
} as unknown as Client['query'];
