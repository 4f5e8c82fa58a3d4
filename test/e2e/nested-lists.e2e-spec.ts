import { createTestApp, expectProblem, TestApp } from '../support/test-app';
import type { RoleFixture } from '../support/test-app';

/**
 * Lists of objects in request bodies (dataset columns and rows, test case steps and component coverages,
 * dependencies, product links) refuse an item that is not an object. class-validator's
 * `@ValidateNested({ each: true })` walked into a nested array instead: `rows: [[]]` created a
 * dataset with a row without a key (201). A list of thousands of junk objects is refused after
 * validating its first 100 invalid ones.
 */
describe('lists of objects in request bodies', () => {
  let t: TestApp;
  let f: RoleFixture;
  let datasetId: string;
  let caseId: string;
  let componentId: string;
  let productId: string;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    const ok = async (method: 'post', url: string, body: object) => {
      const res = await t.req(method, url, f.lead.token).send(body);
      if (res.status !== 201) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    };
    datasetId = await ok('post', '/api/v1/datasets', {
      project_id: f.projectId,
      name: 'Users',
      columns: [{ column_key: 'user' }],
      rows: [{ row_key: 'admin', values: { user: 'root' } }],
    });
    caseId = await ok('post', '/api/v1/test-cases', {
      project_id: f.projectId,
      title: 'Login',
      steps: [{ action: 'Open the page' }],
    });
    componentId = await ok('post', '/api/v1/components', { project_id: f.projectId, name: 'Auth' });
    productId = await ok('post', '/api/v1/products', { project_id: f.projectId, name: 'Portal' });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** What each endpoint's stored state reads as, to show that a refused request changed nothing. */
  const stored = async (): Promise<unknown> => {
    const read = async (url: string) => {
      const res = await t.req('get', url, f.lead.token);
      expect(res.status).toBe(200);
      return res.body as unknown;
    };
    return {
      datasets: await read(`/api/v1/datasets?project_id=${f.projectId}&limit=100`),
      dataset: await read(`/api/v1/datasets/${datasetId}`),
      cases: await read(`/api/v1/test-cases?project_id=${f.projectId}&limit=100`),
      testCase: await read(`/api/v1/test-cases/${caseId}`),
      dependencies: await read(`/api/v1/components/${componentId}/dependencies`),
      links: await read(`/api/v1/products/${productId}/components`),
    };
  };

  /** `:dataset`, `:case`, `:component` and `:product` in a url stand for the fixtures' ids. */
  type Endpoint = [method: 'post' | 'patch' | 'put', url: string, list: string, body: () => object];
  const resolve = (url: string) =>
    url
      .replace(':dataset', datasetId)
      .replace(':case', caseId)
      .replace(':component', componentId)
      .replace(':product', productId);
  const endpoints: Endpoint[] = [
    ['post', '/api/v1/datasets', 'rows', () => ({ project_id: f.projectId, name: 'New' })],
    ['post', '/api/v1/datasets', 'columns', () => ({ project_id: f.projectId, name: 'New' })],
    ['patch', '/api/v1/datasets/:dataset', 'rows', () => ({})],
    ['patch', '/api/v1/datasets/:dataset', 'columns', () => ({})],
    ['post', '/api/v1/test-cases', 'steps', () => ({ project_id: f.projectId, title: 'New' })],
    [
      'post',
      '/api/v1/test-cases',
      'component_coverages',
      () => ({ project_id: f.projectId, title: 'New' }),
    ],
    ['patch', '/api/v1/test-cases/:case', 'steps', () => ({})],
    ['patch', '/api/v1/test-cases/:case', 'component_coverages', () => ({})],
    ['put', '/api/v1/components/:component/dependencies', 'dependencies', () => ({})],
    ['put', '/api/v1/products/:product/components', 'links', () => ({})],
  ];
  const items: Array<[string, unknown]> = [
    ['an empty nested array', []],
    ['a nested array of objects', [{}]],
    ['null', null],
    ['a string', 'a'],
  ];

  it.each(endpoints)(
    '%s %s: an item of %s that is not an object is a 422 and changes nothing',
    async (method, url, list, body) => {
      const before = await stored();
      for (const [name, item] of items) {
        const res = await t
          .req(method, resolve(url), f.lead.token)
          .send({ ...body(), [list]: [item] });
        const problem = expectProblem(res, 422, 'validation_error');
        expect({ name, errors: (problem.errors as Record<string, string[]>)[`${list}.0`] }).toEqual(
          {
            name,
            errors: expect.arrayContaining([`each value in ${list} must be an object`]),
          },
        );
      }
      expect(await stored()).toEqual(before);
    },
  );

  it('refuses 10,000 junk rows after validating their first 100, listing those', async () => {
    const res = await t.req('post', '/api/v1/datasets', f.lead.token).send({
      project_id: f.projectId,
      name: 'Junk',
      rows: Array.from({ length: 10_000 }, () => ({ a: 1 })),
    });
    const problem = expectProblem(res, 422, 'validation_error');
    const paths = Object.keys(problem.errors as object);
    expect(paths).toHaveLength(100);
    expect(paths.slice(0, 2)).toEqual(['rows.0.a', 'rows.0.row_key']);
    expect(paths[paths.length - 1]).toBe('rows.49.row_key');
    expect(problem.detail).toBe(
      'Request contains invalid fields (the first 100 of 200 are listed; the objects after rows[99] were not checked)',
    );
  });
});
