import * as http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * The request and response classes of the HTTP server of `app`, and the application prototypes
 * made theirs: `app.request` / `app.response` (Express's documented app-specific prototypes, see
 * "Overriding the Express API") become the prototypes of these classes, which extend Node's public
 * `IncomingMessage` / `ServerResponse` and inherit everything Express's prototypes had (the
 * application's own ones in between, so `req.app` and any app-specific extension stay).
 *
 * Why: Express gives each request and response `app.request` / `app.response` as prototype per
 * request (`Object.setPrototypeOf` in `app.handle`). On V8 that change of prototype made every
 * request's objects outlive the young generation (a sixth of everything a request allocated
 * promoted to the old generation under load, a full mark-compact every 1.5 s), and a bare
 * `node:http` handler that only swaps the prototypes needs three times the CPU. Born with the
 * prototype Express asks for, the objects keep their shape: Express's call changes nothing.
 *
 * Built from public pieces only: Node's documented `http.createServer({ IncomingMessage,
 * ServerResponse })` options with subclasses of its public classes, and Express's public
 * `app.request` / `app.response` (typed on `Express`). Call once per application, before it serves.
 */
export function expressServerClasses(app: Pick<Express, 'request' | 'response'>) {
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse<AppRequest> {}
  // Once per application, on our own prototype objects (never on a request).
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  app.request = AppRequest.prototype as unknown as Express['request'];
  app.response = AppResponse.prototype as unknown as Express['response'];
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse };
}

/**
 * Nest's Express adapter, with an HTTP server whose requests and responses are born with the
 * Express application's prototypes ({@link expressServerClasses}). Overrides only Nest's public
 * `initHttpServer` extension point and stores the server with the public `setHttpServer`.
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
