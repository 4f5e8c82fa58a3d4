import * as http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * A constructor for the HTTP server's `IncomingMessage` or `ServerResponse` option whose instances
 * are built by Node's own class (`base`) but born with `proto` as their prototype.
 *
 * `Reflect.construct(base, args, newTarget)` is the language's way to run a constructor for an
 * object whose prototype comes from `newTarget.prototype`: Node's constructor does all of its own
 * initialisation, and the object has the prototype Express will ask for from its first moment.
 * Works the same whether Node defines `base` as a function or as a class.
 */
export function bornWith<T extends object>(
  base: new (...args: never[]) => T,
  proto: object,
): new (...args: never[]) => T {
  function Born(...args: never[]): T {
    return Reflect.construct(base, args, Born) as T;
  }
  Born.prototype = proto;
  return Born as unknown as new (...args: never[]) => T;
}

/**
 * The request and response classes for an HTTP server serving the Express application `app`:
 * Node's public `IncomingMessage` / `ServerResponse`, with `app.request` / `app.response` (Express's
 * documented app-specific prototypes, "Overriding the Express API"; read here, never assigned) as
 * the prototypes of the objects they build.
 *
 * Why: Express gives each request and response `app.request` / `app.response` as prototype in
 * `app.handle` (`Object.setPrototypeOf`). Changing an object's prototype after it was built makes
 * V8 give it a new, unshared map: every request's objects then outlived the young generation (a
 * sixth of what a request allocated was promoted, a full mark-compact every 1.5 s under load), and
 * `get-run` served 0.33× the baseline's requests against 0.54× without it (bench/README.md, fixes
 * 13, 20, 21). Born with the prototype Express asks for, the objects keep their shape, and
 * Express's `Object.setPrototypeOf` finds the prototype already in place, which changes nothing.
 */
export function expressServerClasses(app: Pick<Express, 'request' | 'response'>) {
  return {
    IncomingMessage: bornWith(
      http.IncomingMessage,
      app.request,
    ) as unknown as typeof http.IncomingMessage,
    ServerResponse: bornWith(
      http.ServerResponse,
      app.response,
    ) as unknown as typeof http.ServerResponse,
  };
}

/**
 * Nest's Express adapter with an HTTP server whose requests and responses are born with the
 * Express application's prototypes ({@link expressServerClasses}). Uses only public pieces: Nest's
 * `initHttpServer` extension point and `setHttpServer`, Node's documented
 * `http.createServer({ IncomingMessage, ServerResponse })` options, Express's `app.request` /
 * `app.response` (read only).
 *
 * With `httpsOptions`, `return503OnClosing` or `forceCloseConnections` (options this service does
 * not use), the server is Nest's own.
 */
export class ExpressServerAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.return503OnClosing || options?.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.setHttpServer(http.createServer(expressServerClasses(app), app));
  }
}
