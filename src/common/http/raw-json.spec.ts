import {
  installRawJsonResponses,
  jsonParts,
  RawJson,
  STREAM_RAW_JSON_FROM,
  stringifyWithRawJson,
} from './raw-json';

describe('RawJson', () => {
  const snapshot = '{"nodes": [{"id": "a", "count": 2}], "note": "quote \\" and \\\\u0000"}';

  it('is spliced as its text, wherever it is nested', () => {
    const body = {
      items: [
        { id: 1, environment_snapshot: new RawJson(snapshot) },
        { id: 2, environment_snapshot: new RawJson('{}') },
      ],
      total: 2,
    };
    const text = stringifyWithRawJson(body);
    expect(text).toBe(
      `{"items":[{"id":1,"environment_snapshot":${snapshot}},{"id":2,"environment_snapshot":{}}],"total":2}`,
    );
    expect(JSON.parse(text)).toEqual({
      items: [
        { id: 1, environment_snapshot: JSON.parse(snapshot) },
        { id: 2, environment_snapshot: {} },
      ],
      total: 2,
    });
  });

  it('without RawJson values the text is exactly JSON.stringify', () => {
    const body = { a: 'x', b: [1, null, { c: '\u0000:0' }] };
    expect(stringifyWithRawJson(body)).toBe(JSON.stringify(body));
  });

  it('text that looks like a marker is not replaced (the marker carries a random nonce)', () => {
    const body = { a: '\u0000deadbeefdeadbeef:0', b: new RawJson('[1]') };
    expect(JSON.parse(stringifyWithRawJson(body))).toEqual({
      a: '\u0000deadbeefdeadbeef:0',
      b: [1],
    });
  });

  it('any other JSON.stringify serialises it as its parsed value', () => {
    expect(JSON.stringify({ s: new RawJson(snapshot) })).toBe(
      JSON.stringify({ s: JSON.parse(snapshot) }),
    );
  });

  it('res.json of the application sends the spliced text, keeping a Content-Type already set', () => {
    const app = { response: {} as Record<string, unknown> };
    installRawJsonResponses(app);
    const sent: Array<{ type: string | undefined; body: string }> = [];
    const make = (type?: string) => {
      const headers: Record<string, string> = type ? { 'Content-Type': type } : {};
      const res = Object.create(app.response) as {
        get(f: string): string | undefined;
        set(f: string, v: string): void;
        send(b: string): void;
        json(b: unknown): void;
      };
      res.get = (f) => headers[f];
      res.set = (f, v) => {
        headers[f] = v;
      };
      res.send = (b) => sent.push({ type: headers['Content-Type'], body: b });
      return res;
    };
    make().json({ s: new RawJson('{"a": 1}') });
    make('application/problem+json').json({ status: 404 });
    expect(sent).toEqual([
      { type: 'application/json', body: '{"s":{"a": 1}}' },
      { type: 'application/problem+json', body: '{"status":404}' },
    ]);
  });

  it('splits the JSON around each raw text', () => {
    expect(jsonParts({ a: 1 })).toEqual(['{"a":1}']);
    expect(jsonParts({ a: new RawJson('[1]'), b: [new RawJson('{}')] })).toEqual([
      '{"a":',
      '[1]',
      ',"b":[',
      '{}',
      ']}',
    ]);
  });

  describe('res.json with large raw JSON', () => {
    const big = JSON.stringify({ nodes: Array.from({ length: 2000 }, (_, i) => ({ id: `n${i}`, é: 'ü' })) });
    const make = (method: string, type?: string) => {
      const app = { response: {} as Record<string, unknown> };
      installRawJsonResponses(app);
      const headers: Record<string, string | number> = type ? { 'Content-Type': type } : {};
      const written: string[] = [];
      const calls: string[] = [];
      const res = Object.create(app.response) as Record<string, unknown> & { json(b: unknown): void };
      Object.assign(res, {
        req: { method },
        statusCode: 200,
        get: (f: string) => headers[f],
        set: (f: string, v: string) => {
          headers[f] = v;
        },
        setHeader: (f: string, v: string | number) => {
          headers[f] = v;
        },
        send: () => calls.push('send'),
        cork: () => calls.push('cork'),
        write: (chunk: string) => {
          written.push(chunk);
          return true;
        },
        end: () => calls.push('end'),
      });
      return { res, headers, written, calls };
    };

    it('writes the parts without joining them, with length and charset', () => {
      expect(big.length).toBeGreaterThanOrEqual(STREAM_RAW_JSON_FROM);
      const { res, headers, written, calls } = make('GET');
      const body = { id: 'r1', environment_snapshot: new RawJson(big) };
      res.json(body);
      expect(calls).toEqual(['cork', 'end']);
      expect(written).toHaveLength(3);
      const text = written.join('');
      expect(text).toBe(stringifyWithRawJson(body));
      expect(JSON.parse(text)).toEqual({ id: 'r1', environment_snapshot: JSON.parse(big) });
      expect(headers['Content-Length']).toBe(Buffer.byteLength(text));
      expect(headers['Content-Type']).toBe('application/json; charset=utf-8');
    });

    it('sends no body for HEAD, and keeps a Content-Type already set', () => {
      const { res, headers, written, calls } = make('HEAD', 'application/vnd.x+json');
      const body = { s: new RawJson(big) };
      res.json(body);
      expect(written).toEqual([]);
      expect(calls).toEqual(['end']);
      expect(headers['Content-Length']).toBe(Buffer.byteLength(stringifyWithRawJson(body)));
      expect(headers['Content-Type']).toBe('application/vnd.x+json; charset=utf-8');
    });
  });
});
