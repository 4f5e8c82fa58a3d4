import type { Response } from 'supertest';
import { createTestApp, expectProblem, Method, RoleFixture, TestApp } from '../support/test-app';

const API = '/api/v1';
const STRONG_ETAG = /^"[A-Za-z0-9_-]{22}"$/;

type Json = Record<string, unknown>;

/**
 * Conditional requests (issue #19 §1–2): strong ETags on every GET, 304 on a matching
 * If-None-Match, and If-Match on the writes of every resource family (412 precondition_failed with
 * the current ETag, nothing changed; two writers with the same tag: exactly one wins).
 */
describe('HTTP conditional requests: ETag, If-None-Match, If-Match', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    await t.close();
  });

  async function created(path: string, body: Json): Promise<Json> {
    const res = await t
      .req('post', `${API}${path}`, f.lead.token)
      .send({ project_id: f.projectId, ...body });
    if (res.status !== 201)
      throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    let r = t.req('get', `${API}${path}`, f.lead.token);
    for (const [k, v] of Object.entries(headers)) r = r.set(k, v);
    return r;
  }

  async function etagOf(path: string): Promise<string> {
    const res = await get(path);
    expect(res.status).toBe(200);
    const etag = res.headers.etag as string;
    expect(etag).toMatch(STRONG_ETAG);
    return etag;
  }

  function write(method: Method, path: string, body: Json | undefined, ifMatch?: string) {
    let r = t.req(method, `${API}${path}`, f.lead.token);
    if (ifMatch !== undefined) r = r.set('If-Match', ifMatch);
    return body === undefined ? r : r.send(body);
  }

  async function runWithItem(): Promise<{ run: Json; item: Json }> {
    const run = await created('/test-runs', { name: t.unique('Run ') });
    const tc = await created('/test-cases', { title: t.unique('Case ') });
    const res = await t
      .req('post', `${API}/run-cases`, f.lead.token)
      .send({ test_run_id: run.id, test_case_id: tc.id });
    expect(res.status).toBe(201);
    return { run, item: res.body as Json };
  }

  describe('conditional GET', () => {
    it('a single GET: 304 without a body on a matching If-None-Match, ETag and Vary kept', async () => {
      const env = await created('/environments', { name: t.unique('Env ') });
      const first = await get(`/environments/${String(env.id)}`);
      expect(first.status).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(STRONG_ETAG);
      expect(first.headers.vary).toMatch(/Accept-Encoding/i);

      const again = await get(`/environments/${String(env.id)}`, { 'If-None-Match': etag });
      expect(again.status).toBe(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers['content-length'] ?? '0').toBe('0');
      expect(again.headers['content-type']).toBeUndefined();
      expect(again.headers.etag).toBe(etag);
      expect(again.headers.vary).toMatch(/Accept-Encoding/i);

      // Another tag: the full answer, byte for byte the first one.
      const other = await get(`/environments/${String(env.id)}`, { 'If-None-Match': '"nope"' });
      expect(other.status).toBe(200);
      expect(other.text).toBe(first.text);
      expect(other.headers.etag).toBe(etag);
    });

    it('a list GET: 304 round trip, and a new tag once an item changes', async () => {
      await created('/environments', { name: t.unique('Listed ') });
      const path = `/environments?project_id=${f.projectId}`;
      const etag = await etagOf(path);
      expect((await get(path, { 'If-None-Match': etag })).status).toBe(304);

      await created('/environments', { name: t.unique('Another ') });
      const changed = await get(path, { 'If-None-Match': etag });
      expect(changed.status).toBe(200);
      expect(changed.headers.etag).toMatch(STRONG_ETAG);
      expect(changed.headers.etag).not.toBe(etag);
    });

    it('runs (written in parts, with their snapshot) and a page of runs: 304 round trips', async () => {
      const env = await created('/environments', { name: t.unique('Snap ') });
      const run = await created('/test-runs', { name: t.unique('Run '), environment_id: env.id });
      for (const path of [`/test-runs/${String(run.id)}`, `/test-runs?project_id=${f.projectId}`]) {
        const first = await get(path);
        expect(first.status).toBe(200);
        const etag = first.headers.etag as string;
        expect(etag).toMatch(STRONG_ETAG);
        // The same bytes give the same tag.
        const second = await get(path);
        expect(second.text).toBe(first.text);
        expect(second.headers.etag).toBe(etag);
        const cached = await get(path, { 'If-None-Match': etag });
        expect(cached.status).toBe(304);
        expect(cached.text ?? '').toBe('');
        expect(cached.headers.etag).toBe(etag);
      }
      const before = await etagOf(`/test-runs/${String(run.id)}`);
      const patched = await write('patch', `/test-runs/${String(run.id)}`, {
        name: t.unique('Renamed '),
      }).expect(200);
      const after = await get(`/test-runs/${String(run.id)}`);
      expect(after.headers.etag).not.toBe(before);
      // The PATCH answer (written in parts too) carries the tag the GET then gives.
      expect(patched.text).toBe(after.text);
      expect(patched.headers.etag).toBe(after.headers.etag);
    });

    it.each([
      ['a list with the tag', (e: string) => `"x", ${e}, "y"`],
      ['the weak form of the tag', (e: string) => `W/${e}`],
      ['*', () => '*'],
    ])('If-None-Match with %s is 304', async (_name, header) => {
      const tc = await created('/test-cases', { title: t.unique('Case ') });
      const etag = await etagOf(`/test-cases/${String(tc.id)}`);
      const res = await get(`/test-cases/${String(tc.id)}`, { 'If-None-Match': header(etag) });
      expect(res.status).toBe(304);
      expect(res.headers.etag).toBe(etag);
    });

    it('HEAD answers the same ETag and honours If-None-Match', async () => {
      const tc = await created('/test-cases', { title: t.unique('Case ') });
      const etag = await etagOf(`/test-cases/${String(tc.id)}`);
      const head = await t.req('head', `${API}/test-cases/${String(tc.id)}`, f.lead.token);
      expect(head.status).toBe(200);
      expect(head.headers.etag).toBe(etag);
      const cached = await t
        .req('head', `${API}/test-cases/${String(tc.id)}`, f.lead.token)
        .set('If-None-Match', etag);
      expect(cached.status).toBe(304);
    });

    it('a 304 keeps the Cache-Control of the 200 (the favicon), and Cache-Control: no-cache does not prevent it', async () => {
      const first = await t.req('get', '/favicon.ico');
      expect(first.status).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(STRONG_ETAG);
      const again = await t
        .req('get', '/favicon.ico')
        .set('If-None-Match', etag)
        .set('Cache-Control', 'no-cache');
      expect(again.status).toBe(304);
      expect(again.headers['cache-control']).toBe(first.headers['cache-control']);
      expect(again.headers.etag).toBe(etag);
    });

    it('creations and problems carry no ETag; If-None-Match never turns a 404 into a 304', async () => {
      const made = await t
        .req('post', `${API}/test-cases`, f.lead.token)
        .send({ project_id: f.projectId, title: t.unique('Case ') });
      expect(made.status).toBe(201);
      expect(made.headers.etag).toBeUndefined();
      const missing = await get('/test-cases/0190f3a4-0000-7000-8000-000000000000', {
        'If-None-Match': '*',
      });
      expectProblem(missing, 404, 'test_case_not_found');
      expect(missing.headers.etag).toBeUndefined();
    });
  });

  describe('If-Match on every resource family', () => {
    interface Family {
      name: string;
      /** Creates the resource; answers the GET path whose tag the write compares with. */
      setup: () => Promise<{ getPath: string; writePath: string }>;
      method: Method;
      /** A change (i-th one: every call changes the resource), or undefined for DELETE. */
      body?: (i: number) => Json;
      /** The status of a successful write. */
      ok: number;
      /** Its 200 is not the GET's representation (a run case without its history): no ETag. */
      answerUntagged?: boolean;
    }

    const families: Family[] = [
      {
        name: 'PATCH test run',
        setup: async () => {
          const run = await created('/test-runs', { name: t.unique('Run ') });
          return {
            getPath: `/test-runs/${String(run.id)}`,
            writePath: `/test-runs/${String(run.id)}`,
          };
        },
        method: 'patch',
        body: (i) => ({ name: `Run v${i}` }),
        ok: 200,
      },
      {
        name: 'DELETE test run',
        setup: async () => {
          const run = await created('/test-runs', { name: t.unique('Run ') });
          return {
            getPath: `/test-runs/${String(run.id)}`,
            writePath: `/test-runs/${String(run.id)}`,
          };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PATCH run case',
        setup: async () => {
          const { item } = await runWithItem();
          return {
            getPath: `/run-cases/${String(item.id)}`,
            writePath: `/run-cases/${String(item.id)}`,
          };
        },
        method: 'patch',
        body: (i) => ({ comment: `comment ${i}` }),
        ok: 200,
        answerUntagged: true,
      },
      {
        name: 'DELETE run case',
        setup: async () => {
          const { item } = await runWithItem();
          return {
            getPath: `/run-cases/${String(item.id)}`,
            writePath: `/run-cases/${String(item.id)}`,
          };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PATCH environment',
        setup: async () => {
          const env = await created('/environments', { name: t.unique('Env ') });
          return {
            getPath: `/environments/${String(env.id)}`,
            writePath: `/environments/${String(env.id)}`,
          };
        },
        method: 'patch',
        body: (i) => ({ description: `description ${i}` }),
        ok: 200,
      },
      {
        name: 'DELETE (archive) environment',
        setup: async () => {
          const env = await created('/environments', { name: t.unique('Env ') });
          return {
            getPath: `/environments/${String(env.id)}`,
            writePath: `/environments/${String(env.id)}`,
          };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PATCH component',
        setup: async () => {
          const c = await created('/components', { name: t.unique('Component ') });
          return {
            getPath: `/components/${String(c.id)}`,
            writePath: `/components/${String(c.id)}`,
          };
        },
        method: 'patch',
        body: (i) => ({ name: t.unique(`Component v${i} `) }),
        ok: 200,
      },
      {
        name: 'DELETE component',
        setup: async () => {
          const c = await created('/components', { name: t.unique('Component ') });
          return {
            getPath: `/components/${String(c.id)}`,
            writePath: `/components/${String(c.id)}`,
          };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PUT component dependencies',
        setup: async () => {
          const c = await created('/components', { name: t.unique('Component ') });
          const deps = await Promise.all(
            [1, 2, 3].map(() => created('/components', { name: t.unique('Dependency ') })),
          );
          familyTargets.set(
            String(c.id),
            deps.map((d) => String(d.id)),
          );
          return {
            getPath: `/components/${String(c.id)}/dependencies`,
            writePath: `/components/${String(c.id)}/dependencies`,
          };
        },
        method: 'put',
        body: (i) => ({
          dependencies: [{ target_component_id: currentTargets[i % currentTargets.length] }],
        }),
        ok: 200,
      },
      {
        name: 'PATCH product',
        setup: async () => {
          const p = await created('/products', { name: t.unique('Product ') });
          return { getPath: `/products/${String(p.id)}`, writePath: `/products/${String(p.id)}` };
        },
        method: 'patch',
        body: (i) => ({ name: t.unique(`Product v${i} `) }),
        ok: 200,
      },
      {
        name: 'DELETE product',
        setup: async () => {
          const p = await created('/products', { name: t.unique('Product ') });
          return { getPath: `/products/${String(p.id)}`, writePath: `/products/${String(p.id)}` };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PUT product components',
        setup: async () => {
          const p = await created('/products', { name: t.unique('Product ') });
          const cs = await Promise.all(
            [1, 2, 3].map(() => created('/components', { name: t.unique('Linked ') })),
          );
          familyTargets.set(
            String(p.id),
            cs.map((c) => String(c.id)),
          );
          return {
            getPath: `/products/${String(p.id)}/components`,
            writePath: `/products/${String(p.id)}/components`,
          };
        },
        method: 'put',
        body: (i) => ({ links: [{ component_id: currentTargets[i % currentTargets.length] }] }),
        ok: 200,
      },
      {
        name: 'PATCH test case',
        setup: async () => {
          const tc = await created('/test-cases', { title: t.unique('Case ') });
          return {
            getPath: `/test-cases/${String(tc.id)}`,
            writePath: `/test-cases/${String(tc.id)}`,
          };
        },
        method: 'patch',
        body: (i) => ({ title: `Case v${i}` }),
        ok: 200,
      },
      {
        name: 'DELETE test case',
        setup: async () => {
          const tc = await created('/test-cases', { title: t.unique('Case ') });
          return {
            getPath: `/test-cases/${String(tc.id)}`,
            writePath: `/test-cases/${String(tc.id)}`,
          };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PATCH dataset',
        setup: async () => {
          const d = await created('/datasets', {
            name: t.unique('Dataset '),
            columns: [{ column_key: 'user' }],
            rows: [{ row_key: 'a', values: { user: 'a' } }],
          });
          return { getPath: `/datasets/${String(d.id)}`, writePath: `/datasets/${String(d.id)}` };
        },
        method: 'patch',
        body: (i) => ({ description: `description ${i}` }),
        ok: 200,
      },
      {
        name: 'DELETE dataset',
        setup: async () => {
          const d = await created('/datasets', { name: t.unique('Dataset ') });
          return { getPath: `/datasets/${String(d.id)}`, writePath: `/datasets/${String(d.id)}` };
        },
        method: 'delete',
        ok: 204,
      },
      {
        name: 'PATCH test plan',
        setup: async () => {
          const p = await created('/test-plans', { name: t.unique('Plan ') });
          return {
            getPath: `/test-plans/${String(p.id)}`,
            writePath: `/test-plans/${String(p.id)}`,
          };
        },
        method: 'patch',
        body: (i) => ({ name: `Plan v${i}` }),
        ok: 200,
      },
      {
        name: 'DELETE test plan',
        setup: async () => {
          const p = await created('/test-plans', { name: t.unique('Plan ') });
          return {
            getPath: `/test-plans/${String(p.id)}`,
            writePath: `/test-plans/${String(p.id)}`,
          };
        },
        method: 'delete',
        ok: 204,
      },
    ];
    // PUT bodies name other resources made by their setup (keyed by the resource's id).
    const familyTargets = new Map<string, string[]>();
    let currentTargets: string[] = [];

    it.each(families.map((fam) => [fam.name, fam] as const))(
      '%s: a stale If-Match is 412 with the current ETag and changes nothing; the current one writes',
      async (_name, fam) => {
        const { getPath, writePath } = await fam.setup();
        currentTargets = familyTargets.get(writePath.split('/')[2]) ?? [];
        const stale = await etagOf(getPath);

        if (fam.body !== undefined) {
          // Someone else changes it: the tag changes.
          const other = await write(fam.method, writePath, fam.body(1));
          expect(other.status).toBe(fam.ok);
        } else {
          // A DELETE's stale tag: the resource changed through another family member's write.
          await changeForDelete(writePath);
        }
        const current = await etagOf(getPath);
        expect(current).not.toBe(stale);
        const before = (await get(getPath)).text;

        const refused = await write(fam.method, writePath, fam.body?.(2), stale);
        expectProblem(refused, 412, 'precondition_failed');
        expect(refused.headers.etag).toBe(current);
        // Nothing changed.
        const after = await get(getPath);
        expect(after.status).toBe(200);
        expect(after.headers.etag).toBe(current);
        expect(after.text).toBe(before);

        // Weak tags never match If-Match; garbage neither.
        expectProblem(
          await write(fam.method, writePath, fam.body?.(2), `W/${current}`),
          412,
          'precondition_failed',
        );
        expectProblem(
          await write(fam.method, writePath, fam.body?.(2), 'garbage'),
          412,
          'precondition_failed',
        );

        // The current tag (in a list) writes.
        const done = await write(fam.method, writePath, fam.body?.(3), `"other", ${current}`);
        expect(done.status).toBe(fam.ok);
        if (fam.ok !== 200) return;
        // A 200 answers the resource as its GET now does, with the ETag that GET gives: the next
        // conditional write needs no read first (issue #19 left clients a GET per write).
        if (fam.answerUntagged) {
          expect(done.headers.etag).toBeUndefined();
          return;
        }
        const now = await get(getPath);
        expect(done.text).toBe(now.text);
        expect(done.headers.etag).toBe(now.headers.etag);
        const again = await write(
          fam.method,
          writePath,
          fam.body?.(4),
          done.headers.etag as string,
        );
        expect(again.status).toBe(200);
        expect(again.headers.etag).toBe(await etagOf(getPath));
        expect(again.headers.etag).not.toBe(done.headers.etag);
      },
    );

    /** Changes the resource behind a DELETE route so that its earlier tag is stale. */
    async function changeForDelete(path: string): Promise<void> {
      const body: Json = path.startsWith('/test-runs/')
        ? { name: t.unique('Renamed ') }
        : path.startsWith('/run-cases/')
          ? { comment: t.unique('comment ') }
          : path.startsWith('/environments/') || path.startsWith('/datasets/')
            ? { description: t.unique('description ') }
            : path.startsWith('/test-cases/')
              ? { title: t.unique('Title ') }
              : { name: t.unique('Name ') };
      const res = await write('patch', path, body);
      expect(res.status).toBe(200);
    }

    it('If-Match: * writes to an existing resource; without If-Match the write is unconditional', async () => {
      const tc = await created('/test-cases', { title: t.unique('Case ') });
      const path = `/test-cases/${String(tc.id)}`;
      expect((await write('patch', path, { title: 'Star' }, '*')).status).toBe(200);
      expect((await write('patch', path, { title: 'Plain' })).status).toBe(200);
      expect((await get(path)).body).toMatchObject({ title: 'Plain' });
    });

    it('run case rows: the PATCH answer carries the row ETag; a stale one is 412', async () => {
      const { item } = await runWithItem();
      const rows = await get(`/run-cases/${String(item.id)}/rows`);
      const row = (rows.body.items as Json[])[0];
      const path = `/run-cases/rows/${String(row.id)}`;

      const first = await write('patch', path, { comment: 'first' });
      expect(first.status).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(STRONG_ETAG);

      const second = await write('patch', path, { comment: 'second' }, etag);
      expect(second.status).toBe(200);
      const next = second.headers.etag as string;
      expect(next).not.toBe(etag);

      const refused = await write('patch', path, { comment: 'lost' }, etag);
      expectProblem(refused, 412, 'precondition_failed');
      expect(refused.headers.etag).toBe(next);
      const listed = await get(`/run-cases/${String(item.id)}/rows`);
      expect((listed.body.items as Json[])[0]).toMatchObject({ comment: 'second' });
      // The row's tag is the hash of its JSON as the rows list shows it.
      expect(JSON.stringify((listed.body.items as Json[])[0])).toBe(JSON.stringify(second.body));
    });
  });

  describe('lost updates', () => {
    it('two concurrent PATCHes with the same If-Match: exactly one 200, one 412', async () => {
      for (const [kind, body] of [
        ['environments', (i: number) => ({ description: `writer ${i}` })],
        ['test-cases', (i: number) => ({ title: `writer ${i}` })],
      ] as const) {
        const made =
          kind === 'environments'
            ? await created('/environments', { name: t.unique('Contended ') })
            : await created('/test-cases', { title: t.unique('Contended ') });
        const path = `/${kind}/${String(made.id)}`;
        const etag = await etagOf(path);
        const answers = await Promise.all([1, 2].map((i) => write('patch', path, body(i), etag)));
        const statuses = answers.map((a) => a.status).sort();
        expect(statuses).toEqual([200, 412]);
        const winner = answers.find((a) => a.status === 200) as Response;
        const loser = answers.find((a) => a.status === 412) as Response;
        expectProblem(loser, 412, 'precondition_failed');
        // The loser is told the winner's version, which is what a GET now answers.
        const now = await get(path);
        expect(loser.headers.etag).toBe(now.headers.etag);
        const field = kind === 'environments' ? 'description' : 'title';
        expect(now.body[field]).toBe((winner.body as Json)[field]);
      }
    });

    it('the same for a run case (the lock is its run, the one every change of its items takes)', async () => {
      const { item } = await runWithItem();
      const path = `/run-cases/${String(item.id)}`;
      const etag = await etagOf(path);
      const answers = await Promise.all(
        [1, 2].map((i) => write('patch', path, { comment: `writer ${i}` }, etag)),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200) as Response;
      const loser = answers.find((a) => a.status === 412) as Response;
      const now = await get(path);
      expect(loser.headers.etag).toBe(now.headers.etag);
      expect(now.body.comment).toBe((winner.body as Json).comment);
    });
  });
});
