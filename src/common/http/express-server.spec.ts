import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { expressServerClasses, ExpressServerAdapter } from './express-server';

describe('expressServerClasses', () => {
  it("makes the application's prototypes those of subclasses of Node's classes, keeping Express's API", () => {
    const app = express();
    const appRequest = app.request;
    const appResponse = app.response;
    const { IncomingMessage, ServerResponse } = expressServerClasses(app);
    expect(app.request).toBe(IncomingMessage.prototype);
    expect(app.response).toBe(ServerResponse.prototype);
    expect(Object.getPrototypeOf(app.request)).toBe(appRequest);
    expect(Object.getPrototypeOf(app.response)).toBe(appResponse);
    expect(app.request).toBeInstanceOf(http.IncomingMessage);
    expect(app.response).toBeInstanceOf(http.ServerResponse);
    expect(app.request.app).toBe(app);
    expect(typeof app.request.get).toBe('function');
    expect(typeof app.response.json).toBe('function');
  });
});

describe('ExpressServerAdapter', () => {
  it('creates each request and response with the application prototypes before Express runs', async () => {
    const adapter = new ExpressServerAdapter();
    adapter.initHttpServer({});
    const app = adapter.getInstance<{
      request: object;
      response: object;
      get(path: string, fn: (req: unknown, res: { json(v: unknown): void }) => void): void;
    }>();
    app.get('/probe', (_req, res) => res.json({ ok: true }));
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
        expect(JSON.parse(body)).toEqual({ ok: true });
      }
      expect(born).toHaveLength(2);
      for (const [req, res] of born) {
        expect(req).toBe(app.request);
        expect(res).toBe(app.response);
      }
      expect(Object.getPrototypeOf(app.request)).not.toBe(http.IncomingMessage.prototype);
      expect(app.request).toBeInstanceOf(http.IncomingMessage);
      expect(app.response).toBeInstanceOf(http.ServerResponse);
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
