import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

type Json = Record<string, unknown>;

/**
 * Case-insensitive filters compare values lower-cased by the database on both sides. JavaScript's
 * toLowerCase() follows other rules than PostgreSQL's lower() for some letters ('ΟΔΟΣ' → 'οδος'
 * with a final sigma, 'İ' → 'i' plus a combining dot), so a query lower-cased in JavaScript could
 * miss an item even when it gave the item's own spelling. (Lower-casing is not case folding: a
 * final sigma 'ς' stays itself, so 'οδος' does not find 'ΟΔΟΣ', in either language.)
 */
describe('case-insensitive filters with letters JavaScript and PostgreSQL lower-case differently', () => {
  let t: TestApp;
  let f: RoleFixture;
  const api = (path: string) => `/api/v1${path}`;
  const ids: Record<string, string> = {};

  const create = async (path: string, body: Json): Promise<string> => {
    const res = await t
      .req('post', api(path), f.lead.token)
      .send({ project_id: f.projectId, ...body });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { id: string }).id;
  };
  const listed = async (path: string, query: string): Promise<string[]> => {
    const res = await t.req(
      'get',
      api(`${path}?project_id=${f.projectId}&${query}`),
      f.viewer.token,
    );
    expect(res.status).toBe(200);
    return ((res.body as { items: Json[] }).items ?? []).map((i) => String(i.id)).sort();
  };

  const TAGS = { sigma: 'ΟΔΟΣ', dotted: 'İstanbul', umlaut: 'Äpfel' };
  const KINDS: Array<[string, string, (n: string) => Json]> = [
    ['component', '/components', (n) => ({ name: `Component ${n}` })],
    ['product', '/products', (n) => ({ name: `Product ${n}` })],
    ['test case', '/test-cases', (n) => ({ title: `Case ${n}` })],
    ['test plan', '/test-plans', (n) => ({ name: `Plan ${n}` })],
  ];

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    for (const [kind, path, body] of KINDS) {
      for (const [name, tag] of Object.entries(TAGS)) {
        ids[`${kind}:${name}`] = await create(path, { ...body(name), tags: [tag] });
      }
    }
    for (const [name, build] of Object.entries(TAGS)) {
      ids[`run:${name}`] = await create('/test-runs', { name: `Run ${name}`, build });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const queries: Array<[string, keyof typeof TAGS]> = [
    ['ΟΔΟΣ', 'sigma'],
    ['οδοσ', 'sigma'],
    ['İstanbul', 'dotted'],
    ['İSTANBUL', 'dotted'],
    ['Äpfel', 'umlaut'],
    ['äPFEL', 'umlaut'],
  ];

  describe.each(KINDS)('%s tag filter', (kind, path) => {
    it.each(queries)('tag=%s finds the item tagged %s', async (query, name) => {
      expect(await listed(path, `tag=${encodeURIComponent(query)}`)).toEqual([
        ids[`${kind}:${name}`],
      ]);
    });
  });

  it.each(queries)('test run build=%s finds the run built %s', async (query, name) => {
    expect(await listed('/test-runs', `build=${encodeURIComponent(query)}`)).toEqual([
      ids[`run:${name}`],
    ]);
  });

  it.each(KINDS)(
    'a %s keeps one of two tags PostgreSQL lower-cases alike (first spelling)',
    async (_kind, path, body) => {
      const res = await t
        .req('post', api(path), f.lead.token)
        .send({
          project_id: f.projectId,
          ...body('dedup'),
          tags: ['ΟΔΟΣ', 'οδοσ', 'İstanbul', 'istanbul'],
        });
      expect(res.status).toBe(201);
      expect(res.body.tags).toEqual(['ΟΔΟΣ', 'İstanbul']);
    },
  );
});
