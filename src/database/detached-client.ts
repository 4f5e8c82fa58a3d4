import { AsyncResource } from 'node:async_hooks';
import { Client } from 'pg';

/**
 * The async context database connections are opened in: the process's own, captured when this
 * module loads (at startup, outside any request).
 */
const ROOT = new AsyncResource('tms.pg-connection');

/**
 * A pg Client whose connection is opened outside its caller's async context.
 *
 * The pool opens a connection when a request needs one. Its socket is an async resource, and one
 * created inside `requestContext.run` carries that request's store (the request, its transaction
 * manager, its validated DTOs) for as long as the socket lives, i.e. as long as the pooled
 * connection: up to one finished request's object graph per connection (seen in a heap
 * snapshot). Opened from the process's context instead, a connection keeps no request. Queries
 * are unaffected: their callers resume in their own context (`await` restores it).
 */
export class DetachedClient extends Client {
  override connect(): Promise<void>;
  override connect(callback: (err: Error) => void): void;
  override connect(callback?: (err: Error) => void): Promise<void> | void {
    return ROOT.runInAsyncScope(() => (callback ? super.connect(callback) : super.connect()));
  }
}
