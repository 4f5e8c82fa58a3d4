import { signAccessToken } from '../../../src/common/auth/tokens';
import { TEST_ADMIN, TEST_AUTH_SECRET } from '../constants';
import type { TestApp, TestUser } from '../test-app';

/**
 * Real resources the generated requests may address, so that path parameters and id fields are
 * sometimes real ids and requests get past the 404s into validation and the services. Generated
 * values hold a `FixtureRef` (a kind), resolved to the current id when the request is sent: the
 * fixtures are recreated when an operation deleted or disabled one of them.
 */
export const FIXTURE_KINDS = [
  'project',
  'otherProject',
  'lead',
  'member',
  'user',
  'apiKey',
  'environment',
  'milestone',
  'run',
  'suite',
  'case',
  'runItem',
  'row',
  'component',
  'product',
  'dataset',
  'binding',
  'plan',
] as const;
export type FixtureKind = (typeof FIXTURE_KINDS)[number];

/** A reference to a fixture's id inside a generated value. */
export class FixtureRef {
  constructor(readonly kind: FixtureKind) {}
  toString(): string {
    return `<${this.kind} id>`;
  }
}

/** Path segment before a `{param}` → the fixture it addresses (`/test-runs/{id}` → a run). */
const COLLECTIONS: Record<string, FixtureKind> = {
  users: 'user',
  'api-keys': 'apiKey',
  projects: 'project',
  members: 'member',
  environments: 'environment',
  milestones: 'milestone',
  'test-runs': 'run',
  'run-cases': 'runItem',
  rows: 'row',
  components: 'component',
  products: 'product',
  suites: 'suite',
  'test-cases': 'case',
  datasets: 'dataset',
  'dataset-bindings': 'binding',
  'test-plans': 'plan',
};

/** The fixture a path parameter addresses, or undefined (an unknown collection: any fixture). */
export function pathParamKind(pathTemplate: string, param: string): FixtureKind | undefined {
  const segments = pathTemplate.split('/');
  const i = segments.indexOf(`{${param}}`);
  return i > 0 ? COLLECTIONS[segments[i - 1]] : undefined;
}

/** Field or query parameter name → the fixture its id names, by suffix (longest first). */
const FIELD_SUFFIXES: Array<[string, FixtureKind]> = (
  [
    ['project_id', 'project'],
    ['test_run_id', 'run'],
    ['run_case_row_id', 'row'],
    ['row_id', 'row'],
    ['run_case_id', 'runItem'],
    ['case_id', 'case'],
    ['suite_id', 'suite'],
    ['parent_id', 'suite'],
    ['environment_id', 'environment'],
    ['milestone_id', 'milestone'],
    ['dataset_id', 'dataset'],
    ['binding_id', 'binding'],
    ['product_id', 'product'],
    ['component_id', 'component'],
    ['plan_id', 'plan'],
    ['user_id', 'member'],
    ['owner_id', 'member'],
    ['assignee_id', 'member'],
    ['assignee', 'member'],
    ['created_by', 'member'],
    ['executed_by', 'member'],
  ] as Array<[string, FixtureKind]>
).sort((a, b) => b[0].length - a[0].length);

/** The fixture kind an id field (`test_case_id`, `test_case_ids`, `assignee`) refers to. */
export function fieldKind(name: string): FixtureKind | undefined {
  const singular = name.endsWith('_ids') ? name.slice(0, -1) : name;
  return FIELD_SUFFIXES.find(([suffix]) => singular.endsWith(suffix))?.[1];
}

type Ids = Record<FixtureKind, string>;

export class Fixtures {
  ids = {} as Ids;
  lead!: TestUser;
  /** How many times the fixtures were (re)created. */
  generation = 0;

  constructor(private readonly t: TestApp) {}

  id(kind: FixtureKind): string {
    return this.ids[kind];
  }

  /** Creates every fixture (a new project and new resources in it). */
  async create(): Promise<void> {
    await this.build(new Set(FIXTURE_KINDS));
  }

  /**
   * (Re)creates the `broken` fixtures and those that depend on them, in dependency order: a new
   * lead or project means everything is new; a new test case needs a new binding and run item, a
   * new run a new run item, and so on.
   */
  private async build(broken: Set<FixtureKind>): Promise<void> {
    const t = this.t;
    this.generation += 1;
    const need = new Set(broken);
    if (need.has('lead') || need.has('project')) FIXTURE_KINDS.forEach((k) => need.add(k));
    if (need.has('row')) ['run', 'runItem'].forEach((k) => need.add(k as FixtureKind));
    if (need.has('case')) ['binding', 'runItem', 'row'].forEach((k) => need.add(k as FixtureKind));
    if (need.has('dataset')) need.add('binding');
    if (need.has('run') || need.has('runItem')) ['runItem', 'row'].forEach((k) => need.add(k as FixtureKind));
    const ids = this.ids;
    if (need.has('lead')) {
      this.lead = await t.createUser();
      ids.lead = this.lead.id;
      ids.project = await t.createProject(this.lead.token);
    }
    const lead = this.lead;
    const post = async (url: string, body: object): Promise<string> => {
      const res = await t.req('post', url, lead.token).send(body);
      if (res.status !== 201) throw new Error(`fixture ${url}: ${res.status} ${JSON.stringify(res.body)}`);
      // An API key answers {api_key, key: {id…}}, every other resource itself.
      return (res.body.key?.id ?? res.body.id) as string;
    };
    const p = () => ({ project_id: ids.project });
    // Independent resources are created concurrently: a new project needs a dozen of them.
    const step = async (kind: FixtureKind, make: () => Promise<string>) => {
      if (need.has(kind)) ids[kind] = await make();
    };
    await Promise.all([
      step('member', async () => {
        const member = await t.createUser();
        await t.addMember(ids.project, member.id, 'tester', lead.token);
        return member.id;
      }),
      step('user', async () => (await t.createUser()).id),
      step('otherProject', () => t.createProject(t.adminToken)),
      step('apiKey', () => post('/api/v1/users/me/api-keys', { name: t.unique('fuzz key ') })),
      step('environment', () => post('/api/v1/environments', { ...p(), name: t.unique('Env ') })),
      step('milestone', () => post('/api/v1/milestones', { ...p(), name: t.unique('Milestone ') })),
      step('suite', () => post('/api/v1/suites', { ...p(), name: t.unique('Suite ') })),
      step('component', () => post('/api/v1/components', { ...p(), name: t.unique('Component ') })),
      step('product', () => post('/api/v1/products', { ...p(), name: t.unique('Product ') })),
      step('dataset', () =>
        post('/api/v1/datasets', {
          ...p(),
          name: t.unique('Dataset '),
          columns: [{ column_key: 'username' }],
          rows: [
            { row_key: 'admin', values: { username: 'admin' } },
            { row_key: 'guest', values: { username: 'guest' } },
          ],
        }),
      ),
    ]);
    if (need.has('case')) ids.case = await post('/api/v1/test-cases', { ...p(), title: t.unique('Case '), suite_id: ids.suite });
    if (need.has('binding')) {
      ids.binding = await post(`/api/v1/test-cases/${ids.case}/dataset-bindings`, {
        dataset_id: ids.dataset,
        dataset_alias: t.unique('alias'),
      });
    }
    if (need.has('run')) ids.run = await post('/api/v1/test-runs', { ...p(), name: t.unique('Run '), environment_id: ids.environment });
    if (need.has('runItem')) ids.runItem = await post('/api/v1/run-cases', { test_run_id: ids.run, test_case_id: ids.case });
    if (need.has('row')) {
      const rows = await t.req('get', `/api/v1/run-cases/${ids.runItem}/rows`, lead.token);
      const row = (rows.body.items as Array<{ id: string }> | undefined)?.[0]?.id;
      if (!row) throw new Error(`fixture run item rows: ${rows.status} ${JSON.stringify(rows.body)}`);
      ids.row = row;
    }
    if (need.has('plan')) ids.plan = await post('/api/v1/test-plans', { ...p(), name: t.unique('Plan '), case_ids: [ids.case] });
  }

  /**
   * Recreates the fixtures when a generated request deleted, closed or archived one of them, left
   * the dataset without an active row (a new binding to it could not expand into a run item), or
   * took the lead's access away; gives the administrator a new token when its token stopped working.
   * Returns true when they were recreated.
   */
  async ensure(): Promise<boolean> {
    const t = this.t;
    if ((await t.req('get', '/api/v1/auth/me', t.adminToken)).status !== 200) {
      // A generated POST /auth/logout (or password change) revoked it. Minted, not logged in: the
      // generated logins with wrong passwords may have locked the administrator's username out.
      const [admin] = (await t.db.query('SELECT id, token_version FROM users WHERE lower(username) = lower($1)', [
        TEST_ADMIN.username,
      ])) as Array<{ id: string; token_version: number }>;
      t.adminToken = signAccessToken({ sub: admin.id, ver: admin.token_version }, TEST_AUTH_SECRET, 3600).token;
    }
    if (this.generation === 0) {
      await this.create();
      return true;
    }
    const me = await t.req('get', '/api/v1/auth/me', this.lead.token);
    const i = this.ids;
    const [row] = (await t.db.query(
      `SELECT
         EXISTS (SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $2 AND role = 'lead') AS lead,
         EXISTS (SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $3) AS member,
         EXISTS (SELECT 1 FROM projects WHERE id = $4) AS "otherProject",
         EXISTS (SELECT 1 FROM users WHERE id = $5) AS user,
         EXISTS (SELECT 1 FROM api_keys WHERE id = $6) AS "apiKey",
         EXISTS (SELECT 1 FROM environments WHERE id = $7 AND archived_at IS NULL) AS environment,
         EXISTS (SELECT 1 FROM milestones WHERE id = $8) AS milestone,
         EXISTS (SELECT 1 FROM test_runs WHERE id = $9 AND status NOT IN ('completed', 'archived')) AS run,
         EXISTS (SELECT 1 FROM suites WHERE id = $10) AS suite,
         EXISTS (SELECT 1 FROM test_cases WHERE id = $11 AND status = 'active') AS "case",
         EXISTS (SELECT 1 FROM run_items WHERE id = $13) AS "runItem",
         EXISTS (SELECT 1 FROM run_item_rows WHERE id = $12 AND run_item_id = $13) AS row,
         EXISTS (SELECT 1 FROM components WHERE id = $14) AS component,
         EXISTS (SELECT 1 FROM products WHERE id = $15) AS product,
         EXISTS (SELECT 1 FROM datasets d JOIN dataset_revisions r ON r.id = d.current_revision_id
                  WHERE d.id = $16 AND d.archived_at IS NULL
                    AND EXISTS (SELECT 1 FROM jsonb_array_elements(r.rows) e
                                 WHERE (e->>'is_active') IS DISTINCT FROM 'false')) AS dataset,
         EXISTS (SELECT 1 FROM test_case_dataset_bindings WHERE id = $17) AS binding,
         EXISTS (SELECT 1 FROM test_plans WHERE id = $18) AS plan`,
      [
        i.project,
        i.lead,
        i.member,
        i.otherProject,
        i.user,
        i.apiKey,
        i.environment,
        i.milestone,
        i.run,
        i.suite,
        i.case,
        i.row,
        i.runItem,
        i.component,
        i.product,
        i.dataset,
        i.binding,
        i.plan,
      ],
    )) as Array<Record<string, boolean>>;
    const broken = new Set<FixtureKind>(
      (Object.entries(row) as Array<[FixtureKind, boolean]>).filter(([, ok]) => !ok).map(([k]) => k),
    );
    if (me.status !== 200) broken.add('lead');
    if (broken.size === 0) return false;
    await this.build(broken);
    return true;
  }
}
