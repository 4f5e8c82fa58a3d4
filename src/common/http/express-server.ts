import * as http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';

type Constructor = new (...args: never[]) => object;

/** True when `base` can be called as a plain function on an object it did not create. */
function isFunctionConstructor(base: Constructor): boolean {
  return !/^class\b/.test(Function.prototype.toString.call(base));
}

/**
 * A constructor whose instances are initialised by the function constructor `base` (Node's
 * `IncomingMessage` and `ServerResponse` are plain functions) but are born with `prototype`.
 * (`Reflect.construct` with a new target would also work for classes, but measured on a bare
 * Express app it cost more than the prototype swap it avoids: 0.15 against 0.085 ms of CPU per
 * request, 0.025 ms with this constructor.)
 */
export function constructorWithPrototype(base: Constructor, prototype: object): Constructor {
  const init = base as unknown as (this: object, ...args: unknown[]) => void;
  function Constructed(this: object, ...args: unknown[]): void {
    init.apply(this, args);
  }
  Constructed.prototype = prototype;
  return Constructed as unknown as Constructor;
}

/**
 * Nest's Express adapter, with an HTTP server that creates each request and response with the
 * Express application's prototypes (`app.request`, `app.response`) from the start.
 *
 * Express gives them these prototypes itself, per request, with `Object.setPrototypeOf`
 * (`app.handle`). On V8 that change of prototype makes every request's objects outlive the young
 * generation: measured under load, about a sixth of everything a request allocated was promoted to
 * the old generation (a full mark-compact every 1.5 s, with 10 ms pauses), and a bare `node:http`
 * handler that only swaps the prototypes needs three times the CPU. When the objects already have
 * the prototype, Express's call changes nothing. The objects are the same as Express makes them:
 * built by Node's own `IncomingMessage` / `ServerResponse` constructors, with the application's
 * request and response prototypes (which inherit from Node's).
 *
 * With `httpsOptions`, `return503OnClosing` or `forceCloseConnections` (options this service does
 * not use), or on a Node.js whose constructors are classes, the server is Nest's own.
 */
export class ExpressServerAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    const plain =
      isFunctionConstructor(http.IncomingMessage as unknown as Constructor) &&
      isFunctionConstructor(http.ServerResponse as unknown as Constructor);
    if (
      !plain ||
      options?.httpsOptions ||
      options?.return503OnClosing ||
      options?.forceCloseConnections
    ) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<{ request: object; response: object } & http.RequestListener>();
    this.httpServer = http.createServer(
      {
        IncomingMessage: constructorWithPrototype(
          http.IncomingMessage as unknown as Constructor,
          app.request,
        ) as unknown as typeof http.IncomingMessage,
        ServerResponse: constructorWithPrototype(
          http.ServerResponse as unknown as Constructor,
          app.response,
        ) as unknown as typeof http.ServerResponse,
      },
      app,
    );
  }
}
