import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { bornWith, expressServerClasses, ExpressServerAdapter } from './express-server';

describe('bornWith', () => {
  class Base {
    readonly args: unknown[];
    constructor(...args: unknown[]) {
      this.args = args;
    }
  }
  function LegacyBase(this: { args: unknown[] }, ...args: unknown[]) {
    this.args = args;
  }

  it.each([
    ['a class', Base as unknown as new (...a: never[]) => { args: unknown[] }],
    ['a function', LegacyBase as unknown as new (...a: never[]) => { args: unknown[] }],
  ])('runs %s for an object born with the given prototype', (_name, ctor) => {
    const proto = Object.create(ctor.prototype as object) as object;
    const Born = bornWith(ctor, proto);
    const made = new (Born as unknown as new (...a: unknown[]) => { args: unknown[] })(1, 'two');
    expect(Object.getPrototypeOf(made)).toBe(proto);
    expect(made.args).toEqual([1, 'two']);
    expect(made).toBeInstanceOf(ctor);
  });
});

describe('expressServerClasses', () => {
  it("builds Node's requests and responses on the application's prototypes without replacing them", () => {
    const app = express();
    const appRequest = app.request;
    const appResponse = app.response;
    const { IncomingMessage, ServerResponse } = expressServerClasses(app);
    expect(app.request).toBe(appRequest);
    expect(app.response).toBe(appResponse);
    expect(IncomingMessage.prototype).toBe(appRequest);
    expect(ServerResponse.prototype).toBe(appResponse);
    expect(app.request).toBeInstanceOf(http.IncomingMessage);
    expect(app.response).toBeInstanceOf(http.ServerResponse);
  });
});

describe('ExpressServerAdapter', () => {
  it('creates each request and response with the application prototypes before Express runs', async () => {
    const adapter = new ExpressServerAdapter();
    adapter.initHttpServer({});
    const app = adapter.getInstance<{
      request: object;
      response: object;
      get(
        path: string,
        fn: (req: { get(h: string): string }, res: { json(v: unknown): void }) => void,
      ): void;
    }>();
    app.get('/probe', (req, res) => res.json({ ok: true, host: req.get('host') }));
    const server = adapter.getHttpServer() as http.Server;
    const born: Array<[object, object]> = [];
    // Runs before Express's own 'request' listener, so it sees the objects as Node created them.
    server.prependListener('request', (req, res) => {
      born.push([Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      for (let i = 0; i < 2; i++) {
        const body = await new Promise<string>((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port, path: '/probe', agent: false }, (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () => resolve(text));
            })
            .on('error', reject);
        });
        expect(JSON.parse(body)).toEqual({ ok: true, host: `127.0.0.1:${port}` });
      }
      expect(born).toHaveLength(2);
      for (const [req, res] of born) {
        expect(req).toBe(app.request);
        expect(res).toBe(app.response);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('leaves the server to Nest when HTTPS options are given', () => {
    const adapter = new ExpressServerAdapter();
    adapter.initHttpServer({ httpsOptions: {} });
    expect(adapter.getHttpServer()).toBeInstanceOf(https.Server);
  });
});
