import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { constructorWithPrototype, ExpressServerAdapter } from './express-server';

type Constructor = Parameters<typeof constructorWithPrototype>[0];

describe('constructorWithPrototype', () => {
  it('builds objects with the given prototype, initialised by the base constructor', () => {
    function Point(this: { x: number; y: number }, x: number, y: number) {
      this.x = x;
      this.y = y;
    }
    Point.prototype.sum = function sum(this: { x: number; y: number }) {
      return this.x + this.y;
    };
    const proto = Object.create(Point.prototype as object) as object;
    const Made = constructorWithPrototype(Point as unknown as Constructor, proto);
    const p = new (Made as unknown as new (x: number, y: number) => { x: number; sum(): number })(
      2,
      3,
    );
    expect(Object.getPrototypeOf(p)).toBe(proto);
    expect(p.x).toBe(2);
    expect(p.sum()).toBe(5);
    expect(p).toBeInstanceOf(Point);
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
