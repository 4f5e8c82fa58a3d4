import { randomUUID } from 'node:crypto';
import { AppException } from '../../src/common/errors/app-exception';
import { Db } from '../../src/common/persistence/db.service';
import { BindingExpansionService } from '../../src/modules/datasets/binding-expansion.service';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { withStepAfterStatement } from '../support/query-count';
import { waitFor } from '../support/wait-for';

const API = '/api/v1';

describe('dataset bindings (api.md §2.7, §4.5; CONTRACT §10)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let other: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    [f, other] = await Promise.all([t.roleFixture(), t.roleFixture()]);
  });
  afterAll(async () => {
    await t.close();
  });

  const createCase = async (fx: RoleFixture = f) => {
    const res = await t
      .req('post', `${API}/test-cases`, fx.tester.token)
      .send({ project_id: fx.projectId, title: t.unique('Case ') });
    if (res.status !== 201) throw new Error(`case: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string };
  };
  /** A dataset whose revision 1 has rows a, b (b inactive when asked) and revision 2 adds c. */
  const createDataset = async (
    fx: RoleFixture = f,
    opts: { inactiveB?: boolean; name?: string } = {},
  ) => {
    const rows1 = [
      { row_key: 'a', scenario_label: 'Alpha', values: { v: 1 } },
      { row_key: 'b', values: { v: 2 }, is_active: !opts.inactiveB },
    ];
    const res = await t.req('post', `${API}/datasets`, fx.tester.token).send({
      project_id: fx.projectId,
      name: opts.name ?? t.unique('DS '),
      columns: [{ column_key: 'v' }],
      rows: rows1,
    });
    if (res.status !== 201) throw new Error(`dataset: ${res.status} ${JSON.stringify(res.body)}`);
    const rev2 = await t
      .req('patch', `${API}/datasets/${res.body.id}`, fx.tester.token)
      .send({ rows: [...rows1, { row_key: 'c', values: { v: 3 } }] });
    expect(rev2.body.current_revision_number).toBe(2);
    return res.body as { id: string; name: string };
  };
  const url = (caseId: string, bindingId?: string) =>
    `${API}/test-cases/${caseId}/dataset-bindings${bindingId ? `/${bindingId}` : ''}`;
  const bind = (caseId: string, body: Record<string, unknown>, token = f.tester.token) =>
    t.req('post', url(caseId), token).send(body);
  const patchB = (caseId: string, bindingId: string, body: Record<string, unknown>) =>
    t.req('patch', url(caseId, bindingId), f.tester.token).send(body);

  describe('role matrix', () => {
    it('GET needs viewer', async () => {
      const c = await createCase();
      const res = await expectRoleMatrix(t, f, {
        method: 'get',
        url: url(c.id),
        minRole: 'viewer',
        okStatus: 200,
        notFoundCode: 'test_case_not_found',
      });
      expect(res.body).toEqual({ items: [] });
    });
    it('POST needs tester', async () => {
      const c = await createCase();
      const d = await createDataset();
      await expectRoleMatrix(t, f, {
        method: 'post',
        url: url(c.id),
        body: () => ({ dataset_id: d.id, dataset_alias: 'm' }),
        minRole: 'tester',
        okStatus: 201,
        notFoundCode: 'test_case_not_found',
      });
    });
    it('PATCH needs tester', async () => {
      const c = await createCase();
      const d = await createDataset();
      const b = await bind(c.id, { dataset_id: d.id, dataset_alias: 'm' });
      await expectRoleMatrix(t, f, {
        method: 'patch',
        url: url(c.id, b.body.id),
        body: () => ({ sort_order: 5 }),
        minRole: 'tester',
        okStatus: 200,
        notFoundCode: 'test_case_not_found',
      });
    });
    it('DELETE needs lead', async () => {
      const c = await createCase();
      const d = await createDataset();
      const b = await bind(c.id, { dataset_id: d.id, dataset_alias: 'm' });
      await expectRoleMatrix(t, f, {
        method: 'delete',
        url: url(c.id, b.body.id),
        minRole: 'lead',
        okStatus: 204,
        notFoundCode: 'test_case_not_found',
      });
      expect((await t.req('get', url(c.id), f.viewer.token)).body.items).toEqual([]);
    });
  });

  it('follow_latest + all by default; read shape adds dataset_name and resolved_revision_number', async () => {
    const c = await createCase();
    const d = await createDataset();
    const res = await bind(c.id, { dataset_id: d.id, dataset_alias: ' users ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      test_case_id: c.id,
      dataset_id: d.id,
      dataset_name: d.name,
      dataset_alias: 'users',
      mode: 'follow_latest',
      pinned_revision_number: null,
      resolved_revision_number: 2,
      row_selection_type: 'all',
      selected_row_keys: [],
      sort_order: 0,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    // follow_latest moves with the dataset
    await t
      .req('patch', `${API}/datasets/${d.id}`, f.tester.token)
      .send({ rows: [{ row_key: 'z' }] })
      .expect(200);
    const list = await t.req('get', url(c.id), f.viewer.token);
    expect(list.body.items[0].resolved_revision_number).toBe(3);
    const tc = await t.req('get', `${API}/test-cases/${c.id}`, f.viewer.token);
    expect(tc.body.dataset_bindings).toEqual(list.body.items);
  });

  it('pin_revision requires an existing pinned_revision_number', async () => {
    const c = await createCase();
    const d = await createDataset();
    const missing = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 'x',
      mode: 'pin_revision',
    });
    expect(expectProblem(missing, 422, 'validation_error').errors).toHaveProperty(
      'pinned_revision_number',
    );
    const nul = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 'x',
      mode: 'pin_revision',
      pinned_revision_number: null,
    });
    expectProblem(nul, 422, 'validation_error');
    const unknown = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 'x',
      mode: 'pin_revision',
      pinned_revision_number: 9,
    });
    expect(expectProblem(unknown, 422, 'dataset_revision_not_found').errors).toHaveProperty(
      'pinned_revision_number',
    );
    const zero = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 'x',
      mode: 'pin_revision',
      pinned_revision_number: 0,
    });
    expectProblem(zero, 422, 'validation_error');
    const ok = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 'x',
      mode: 'pin_revision',
      pinned_revision_number: 1,
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      mode: 'pin_revision',
      pinned_revision_number: 1,
      resolved_revision_number: 1,
    });
  });

  it('a selected row key of 128 characters outside the BMP is accepted on create, as on PATCH (characters, not UTF-16 units)', async () => {
    const key = '😀'.repeat(128);
    const ds = await t.req('post', `${API}/datasets`, f.tester.token).send({
      project_id: f.projectId,
      name: t.unique('Emoji keys '),
      columns: [{ column_key: 'c' }],
      rows: [{ row_key: key }, { row_key: 'plain' }],
    });
    expect(ds.status).toBe(201);
    const c = await createCase();
    const body = { dataset_id: ds.body.id, dataset_alias: 'e', row_selection_type: 'subset' };
    const created = await bind(c.id, { ...body, selected_row_keys: [key] });
    expect(created.status).toBe(201);
    expect(created.body.selected_row_keys).toEqual([key]);
    const tooLong = await bind((await createCase()).id, {
      ...body,
      selected_row_keys: [`${key}😀`],
    });
    expect(expectProblem(tooLong, 422, 'validation_error').errors).toHaveProperty(
      'selected_row_keys',
    );
  });

  it('subset requires selected_row_keys that exist in the resolved revision', async () => {
    const c = await createCase();
    const d = await createDataset();
    const none = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 's',
      row_selection_type: 'subset',
    });
    expect(expectProblem(none, 422, 'validation_error').errors).toHaveProperty('selected_row_keys');
    const empty = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 's',
      row_selection_type: 'subset',
      selected_row_keys: [],
    });
    expectProblem(empty, 422, 'validation_error');
    const unknown = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 's',
      row_selection_type: 'subset',
      selected_row_keys: ['a', 'nope'],
    });
    const body = expectProblem(unknown, 422, 'unknown_row_keys');
    expect(JSON.stringify(body.errors)).toContain('nope');
    // 'c' exists only in revision 2: fine for follow_latest, unknown when pinned to revision 1.
    const pinned = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 's',
      mode: 'pin_revision',
      pinned_revision_number: 1,
      row_selection_type: 'subset',
      selected_row_keys: ['c'],
    });
    expectProblem(pinned, 422, 'unknown_row_keys');
    const ok = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 's',
      row_selection_type: 'subset',
      selected_row_keys: ['c', 'a', 'c'],
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ row_selection_type: 'subset', selected_row_keys: ['c', 'a'] });
  });

  it('a pin with follow_latest and keys with all mean nothing: they are ignored, not stored', async () => {
    const c = await createCase();
    const d = await createDataset();
    const res = await bind(c.id, {
      dataset_id: d.id,
      dataset_alias: 'lenient',
      mode: 'follow_latest',
      pinned_revision_number: 99,
      row_selection_type: 'all',
      selected_row_keys: ['nope'],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      mode: 'follow_latest',
      pinned_revision_number: null,
      resolved_revision_number: 2,
      row_selection_type: 'all',
      selected_row_keys: [],
    });
    const pinAlone = await patchB(c.id, res.body.id, { pinned_revision_number: 1 });
    expect(pinAlone.status).toBe(200);
    expect(pinAlone.body).toMatchObject({ mode: 'follow_latest', pinned_revision_number: null });
    const keysAlone = await patchB(c.id, res.body.id, { selected_row_keys: ['a'] });
    expect(keysAlone.status).toBe(200);
    expect(keysAlone.body).toMatchObject({ row_selection_type: 'all', selected_row_keys: [] });
  });

  it('missing conditional fields are request-shape errors: 422 before 404 and 403 (CONTRACT §3)', async () => {
    const c = await createCase();
    const unknownDataset = await bind(c.id, {
      dataset_id: randomUUID(),
      dataset_alias: 'x',
      mode: 'pin_revision',
    });
    expect(expectProblem(unknownDataset, 422, 'validation_error').errors).toEqual({
      pinned_revision_number: ['pinned_revision_number is required when mode is pin_revision'],
    });
    const asViewer = await bind(
      c.id,
      { dataset_id: randomUUID(), dataset_alias: 'x', row_selection_type: 'subset' },
      f.viewer.token,
    );
    expect(expectProblem(asViewer, 422, 'validation_error').errors).toEqual({
      selected_row_keys: ['selected_row_keys is required when row_selection_type is subset'],
    });
    const unknownCase = await t.req('post', url(randomUUID()), f.tester.token).send({
      dataset_id: randomUUID(),
      dataset_alias: 'x',
      row_selection_type: 'subset',
      selected_row_keys: [],
    });
    expect(expectProblem(unknownCase, 422, 'validation_error').errors).toHaveProperty(
      'selected_row_keys',
    );
    for (const bad of [
      { pinned_revision_number: 0 },
      { pinned_revision_number: 1.5 },
      { pinned_revision_number: '1' },
      { pinned_revision_number: 1e20 },
      { selected_row_keys: 'a' },
      { selected_row_keys: [1] },
      { selected_row_keys: ['  '] },
      { selected_row_keys: ['k'.repeat(129)] },
    ]) {
      const res = await bind(c.id, { dataset_id: randomUUID(), dataset_alias: 'x', ...bad });
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([
        Object.keys(bad)[0],
      ]);
    }
  });

  it('a NUL character is 422 validation_error, never 500', async () => {
    const c = await createCase();
    const d = await createDataset();
    expectProblem(
      await bind(c.id, { dataset_id: d.id, dataset_alias: 'a\u0000b' }),
      422,
      'validation_error',
    );
    const b = await bind(c.id, { dataset_id: d.id, dataset_alias: 'ok' });
    expect(b.status).toBe(201);
    expectProblem(
      await patchB(c.id, b.body.id, { dataset_alias: 'x\u0000' }),
      422,
      'validation_error',
    );
  });

  it('conflicts come before revision and row-key checks; concurrent binds of one dataset: one wins', async () => {
    const c = await createCase();
    const [d1, d2] = [await createDataset(), await createDataset()];
    await bind(c.id, { dataset_id: d1.id, dataset_alias: 'one' }).expect(201);
    expectProblem(
      await bind(c.id, {
        dataset_id: d1.id,
        dataset_alias: 'one',
        mode: 'pin_revision',
        pinned_revision_number: 42,
      }),
      409,
      'dataset_already_bound',
    );
    expectProblem(
      await bind(c.id, {
        dataset_id: d2.id,
        dataset_alias: 'one',
        row_selection_type: 'subset',
        selected_row_keys: ['nope'],
      }),
      409,
      'dataset_alias_already_exists',
    );
    const two = (await bind(c.id, { dataset_id: d2.id, dataset_alias: 'two' })).body;
    expectProblem(
      await patchB(c.id, two.id, {
        dataset_alias: 'one',
        mode: 'pin_revision',
        pinned_revision_number: 42,
      }),
      409,
      'dataset_alias_already_exists',
    );
    const c2 = await createCase();
    const raced = await Promise.all(
      ['r1', 'r2', 'r3', 'r4'].map((alias) =>
        bind(c2.id, { dataset_id: d1.id, dataset_alias: alias }),
      ),
    );
    expect(raced.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of raced.filter((x) => x.status === 409))
      expectProblem(r, 409, 'dataset_already_bound');
    const c3 = await createCase();
    const sameAlias = await Promise.all(
      [d1, d2].map((d) => bind(c3.id, { dataset_id: d.id, dataset_alias: 'same' })),
    );
    expect(sameAlias.map((r) => r.status).sort()).toEqual([201, 409]);
    expectProblem(
      sameAlias.find((r) => r.status === 409) as (typeof sameAlias)[number],
      409,
      'dataset_alias_already_exists',
    );
  });

  it('conflicts: same dataset twice 409 dataset_already_bound; alias reused 409 dataset_alias_already_exists', async () => {
    const c = await createCase();
    const [d1, d2] = [await createDataset(), await createDataset()];
    await bind(c.id, { dataset_id: d1.id, dataset_alias: 'one' }).expect(201);
    expectProblem(
      await bind(c.id, { dataset_id: d1.id, dataset_alias: 'other' }),
      409,
      'dataset_already_bound',
    );
    // Uuids are case-insensitive: the same dataset spelled in capitals is still bound already.
    expectProblem(
      await bind(c.id, { dataset_id: d1.id.toUpperCase(), dataset_alias: 'other' }),
      409,
      'dataset_already_bound',
    );
    expectProblem(
      await bind(c.id, { dataset_id: d2.id, dataset_alias: 'one' }),
      409,
      'dataset_alias_already_exists',
    );
    const two = await bind(c.id, { dataset_id: d2.id, dataset_alias: 'two' });
    expect(two.status).toBe(201);
    expectProblem(
      await patchB(c.id, two.body.id, { dataset_alias: 'one' }),
      409,
      'dataset_alias_already_exists',
    );
    // Another case may use the same dataset and alias.
    const c2 = await createCase();
    expect((await bind(c2.id, { dataset_id: d1.id, dataset_alias: 'one' })).status).toBe(201);
  });

  it('datasets of another project are 422 dataset_project_mismatch; unknown ones 404', async () => {
    const c = await createCase();
    const foreign = await createDataset(other);
    const res = await bind(c.id, { dataset_id: foreign.id, dataset_alias: 'f' });
    expect(expectProblem(res, 422, 'dataset_project_mismatch').errors).toHaveProperty('dataset_id');
    expectProblem(
      await bind(c.id, { dataset_id: randomUUID(), dataset_alias: 'f' }),
      404,
      'dataset_not_found',
    );
  });

  it('rejects bad bodies: missing fields, explicit nulls, unknown fields, bad enums', async () => {
    const c = await createCase();
    const d = await createDataset();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ dataset_alias: 'x' }, 'dataset_id'],
      [{ dataset_id: d.id }, 'dataset_alias'],
      [{ dataset_id: d.id, dataset_alias: '   ' }, 'dataset_alias'],
      [{ dataset_id: d.id, dataset_alias: null }, 'dataset_alias'],
      [{ dataset_id: d.id, dataset_alias: 'x', mode: null }, 'mode'],
      [{ dataset_id: d.id, dataset_alias: 'x', mode: 'latest' }, 'mode'],
      [{ dataset_id: d.id, dataset_alias: 'x', row_selection_type: null }, 'row_selection_type'],
      [{ dataset_id: d.id, dataset_alias: 'x', selected_row_keys: null }, 'selected_row_keys'],
      [{ dataset_id: d.id, dataset_alias: 'x', sort_order: null }, 'sort_order'],
      [{ dataset_id: d.id, dataset_alias: 'x', sort_order: 1.5 }, 'sort_order'],
      [{ dataset_id: d.id, dataset_alias: 'x', is_default: true }, 'is_default'],
      [{ dataset_id: 'nope', dataset_alias: 'x' }, 'dataset_id'],
    ];
    for (const [body, key] of cases) {
      const res = await bind(c.id, body);
      expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty([key]);
    }
    expect((await t.req('get', url(c.id), f.viewer.token)).body.items).toEqual([]);
    const b = await bind(c.id, { dataset_id: d.id, dataset_alias: 'x' });
    for (const body of [
      { mode: null },
      { dataset_alias: null },
      { selected_row_keys: null },
      { sort_order: null },
      { dataset_id: d.id },
    ]) {
      expectProblem(await patchB(c.id, b.body.id, body), 422, 'validation_error');
    }
  });

  it('PATCH validates the resulting binding as a whole', async () => {
    const c = await createCase();
    const d = await createDataset();
    const b = (await bind(c.id, { dataset_id: d.id, dataset_alias: 'p' })).body;
    // mode alone → pin needs a number
    expect(
      expectProblem(await patchB(c.id, b.id, { mode: 'pin_revision' }), 422, 'validation_error')
        .errors,
    ).toHaveProperty('pinned_revision_number');
    expectProblem(
      await patchB(c.id, b.id, { mode: 'pin_revision', pinned_revision_number: 5 }),
      422,
      'dataset_revision_not_found',
    );
    const pinned = await patchB(c.id, b.id, { mode: 'pin_revision', pinned_revision_number: 1 });
    expect(pinned.body).toMatchObject({
      mode: 'pin_revision',
      pinned_revision_number: 1,
      resolved_revision_number: 1,
    });
    // subset keys are checked against the pinned revision
    expectProblem(
      await patchB(c.id, b.id, { row_selection_type: 'subset', selected_row_keys: ['c'] }),
      422,
      'unknown_row_keys',
    );
    const subset = await patchB(c.id, b.id, {
      row_selection_type: 'subset',
      selected_row_keys: ['b'],
    });
    expect(subset.body).toMatchObject({ row_selection_type: 'subset', selected_row_keys: ['b'] });
    expectProblem(await patchB(c.id, b.id, { selected_row_keys: [] }), 422, 'validation_error');
    expectProblem(
      await patchB(c.id, b.id, { pinned_revision_number: null }),
      422,
      'validation_error',
    );
    // moving the pin to a revision lacking a selected key fails as a whole
    await t
      .req('patch', `${API}/datasets/${d.id}`, f.tester.token)
      .send({ rows: [{ row_key: 'q' }] })
      .expect(200);
    expectProblem(await patchB(c.id, b.id, { pinned_revision_number: 3 }), 422, 'unknown_row_keys');
    // switching back clears pin and keys
    const latest = await patchB(c.id, b.id, {
      mode: 'follow_latest',
      row_selection_type: 'all',
      sort_order: 4,
      dataset_alias: 'renamed',
    });
    expect(latest.body).toMatchObject({
      mode: 'follow_latest',
      pinned_revision_number: null,
      resolved_revision_number: 3,
      row_selection_type: 'all',
      selected_row_keys: [],
      sort_order: 4,
      dataset_alias: 'renamed',
    });
  });

  it('bindings are addressed through their case: another case or an unknown id is 404 dataset_binding_not_found', async () => {
    const [c1, c2] = [await createCase(), await createCase()];
    const d = await createDataset();
    const b = (await bind(c1.id, { dataset_id: d.id, dataset_alias: 'x' })).body;
    expectProblem(await patchB(c2.id, b.id, { sort_order: 1 }), 404, 'dataset_binding_not_found');
    expectProblem(
      await t.req('delete', url(c2.id, b.id), f.lead.token),
      404,
      'dataset_binding_not_found',
    );
    expectProblem(
      await t.req('delete', url(c1.id, randomUUID()), f.lead.token),
      404,
      'dataset_binding_not_found',
    );
    expectProblem(
      await t.req('delete', url(c1.id, 'nope'), f.lead.token),
      404,
      'dataset_binding_not_found',
    );
    expectProblem(
      await t.req('get', url(randomUUID()), f.viewer.token),
      404,
      'test_case_not_found',
    );
    expect((await t.req('get', url(c1.id), f.viewer.token)).body.items).toHaveLength(1);
  });

  it('lists in sort_order, then creation order', async () => {
    const c = await createCase();
    const ds = [await createDataset(), await createDataset(), await createDataset()];
    await bind(c.id, { dataset_id: ds[0].id, dataset_alias: 'late', sort_order: 2 }).expect(201);
    await bind(c.id, { dataset_id: ds[1].id, dataset_alias: 'first', sort_order: 0 }).expect(201);
    await bind(c.id, { dataset_id: ds[2].id, dataset_alias: 'second' }).expect(201);
    const list = await t.req('get', url(c.id), f.viewer.token);
    expect(list.body.items.map((b: { dataset_alias: string }) => b.dataset_alias)).toEqual([
      'first',
      'second',
      'late',
    ]);
  });

  it('deleting the case removes its bindings', async () => {
    const c = await createCase();
    const d = await createDataset();
    await bind(c.id, { dataset_id: d.id, dataset_alias: 'x' }).expect(201);
    await t.req('delete', `${API}/test-cases/${c.id}`, f.lead.token).expect(204);
    const rows = await t.db.query(
      `SELECT count(*)::int AS n FROM test_case_dataset_bindings WHERE dataset_id = $1`,
      [d.id],
    );
    expect(rows[0].n).toBe(0);
  });

  it('OpenAPI documents both modes with examples and the role of every binding endpoint', async () => {
    const doc = await t.req('get', '/openapi.json');
    expect(doc.status).toBe(200);
    const path = doc.body.paths['/api/v1/test-cases/{test_case_id}/dataset-bindings'];
    const examples = path.post.requestBody.content['application/json'].examples;
    expect(Object.keys(examples)).toEqual(['follow_latest_all', 'pin_revision_subset']);
    expect(examples.pin_revision_subset.value).toMatchObject({
      mode: 'pin_revision',
      row_selection_type: 'subset',
    });
    expect(path.get.description).toContain('viewer');
    expect(path.post.description).toContain('tester');
    const one = doc.body.paths['/api/v1/test-cases/{test_case_id}/dataset-bindings/{binding_id}'];
    expect(Object.keys(one.patch.requestBody.content['application/json'].examples)).toContain(
      'follow_latest',
    );
    expect(one.delete.description).toContain('lead');
    expect(JSON.stringify(path.post.responses)).toContain('dataset_already_bound');
  });

  it('a case added to a run while its dataset is deleted gets the rows as they were or none, never a 422', async () => {
    const c = await createCase();
    const ds = await createDataset();
    expect((await bind(c.id, { dataset_id: ds.id, dataset_alias: 'q' })).status).toBe(201);
    const run = await t
      .req('post', `${API}/test-runs`, f.tester.token)
      .send({ project_id: f.projectId, name: t.unique('Run ') });
    expect(run.status).toBe(201);
    // Right after the bindings are read (before the revision rows), the dataset is deleted
    // (found by an audit: the revisions went with it, and the add answered 422
    // dataset_revision_not_found). The delete must wait for the add.
    let deletion: Promise<{ status: number }> | undefined;
    const { result: added } = await withStepAfterStatement(
      /FROM test_case_dataset_bindings b JOIN datasets d/,
      async () => {
        deletion = t.req('delete', `${API}/datasets/${ds.id}`, f.lead.token).then((r) => r);
        await waitFor(
          async () =>
            (
              await t.db.query(
                `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM datasets%'`,
              )
            ).length > 0,
          { timeoutMs: 3_000, what: 'the delete to wait for the add' },
        ).catch(() => undefined); // without the lock it does not wait: the add then shows why
      },
      () =>
        t
          .req('post', `${API}/run-cases`, f.tester.token)
          .send({ test_run_id: run.body.id, test_case_id: c.id }),
    );
    expect(added.status).toBe(201);
    expect((await deletion)?.status).toBe(204);
    const rows = await t.req('get', `${API}/run-cases/${added.body.id}/rows`, f.viewer.token);
    expect(rows.body.items.map((r: { scenario_label: string }) => r.scenario_label)).toEqual([
      'q:Alpha',
      'q:b',
      'q:c',
    ]);
  });

  describe('BindingExpansionService (rows for run items)', () => {
    let svc: BindingExpansionService;
    beforeAll(() => {
      svc = t.app.get(BindingExpansionService);
    });

    it('cartesian product in binding order, active rows, pins and subsets; default row without bindings', async () => {
      const plain = await createCase();
      const c = await createCase();
      const users = await createDataset(f, { inactiveB: true, name: t.unique('Users ') });
      const browsers = await t.req('post', `${API}/datasets`, f.tester.token).send({
        project_id: f.projectId,
        name: t.unique('Browsers '),
        columns: [{ column_key: 'name' }],
        rows: [
          { row_key: 'chrome', values: { name: 'Chrome' } },
          { row_key: 'firefox', scenario_label: 'FF', values: { name: 'Firefox' } },
          { row_key: 'safari', values: { name: 'Safari' } },
        ],
      });
      const ub = (await bind(c.id, { dataset_id: users.id, dataset_alias: 'u', sort_order: 1 }))
        .body;
      const bb = (
        await bind(c.id, {
          dataset_id: browsers.body.id,
          dataset_alias: 'br',
          sort_order: 0,
          row_selection_type: 'subset',
          selected_row_keys: ['safari', 'firefox'],
        })
      ).body;
      const result = await svc.expandForCases(f.projectId, [c.id, plain.id]);
      expect(result.get(plain.id)).toEqual([
        { scenario_label: 'Default scenario', row_snapshot: { datasets: [] } },
      ]);
      const rows = result.get(c.id)!;
      // br first (sort_order 0), subset kept in revision order; users: a, c active (b inactive), revision 2
      expect(rows.map((r) => r.scenario_label)).toEqual([
        'br:FF | u:Alpha',
        'br:FF | u:c',
        'br:safari | u:Alpha',
        'br:safari | u:c',
      ]);
      expect(rows[1].row_snapshot.datasets).toEqual([
        {
          binding_id: bb.id,
          dataset_alias: 'br',
          dataset_id: browsers.body.id,
          dataset_name: browsers.body.name,
          revision_number: 1,
          row_key: 'firefox',
          scenario_label: 'FF',
          values: { name: 'Firefox' },
        },
        {
          binding_id: ub.id,
          dataset_alias: 'u',
          dataset_id: users.id,
          dataset_name: users.name,
          revision_number: 2,
          row_key: 'c',
          scenario_label: null,
          values: { v: 3 },
        },
      ]);
      // Pinning users to revision 1 leaves only row a (b inactive).
      await patchB(c.id, ub.id, { mode: 'pin_revision', pinned_revision_number: 1 }).expect(200);
      const detailed = await svc.expandForCasesDetailed(f.projectId, [c.id]);
      expect(detailed.get(c.id)!.rows.map((r) => r.scenario_label)).toEqual([
        'br:FF | u:Alpha',
        'br:safari | u:Alpha',
      ]);
      expect(detailed.get(c.id)!.dataset_snapshot).toEqual({
        bindings: [
          {
            binding_id: bb.id,
            dataset_alias: 'br',
            dataset_id: browsers.body.id,
            revision_number: 1,
          },
          { binding_id: ub.id, dataset_alias: 'u', dataset_id: users.id, revision_number: 1 },
        ],
      });
      // useLatestRevisions ignores the pin (rerun with use_latest_revisions).
      const latest = await svc.expandForCases(f.projectId, [c.id], { useLatestRevisions: true });
      expect(latest.get(c.id)!.map((r) => r.scenario_label)).toEqual([
        'br:FF | u:Alpha',
        'br:FF | u:c',
        'br:safari | u:Alpha',
        'br:safari | u:c',
      ]);
      // Cases of another project are not expanded with this project's bindings.
      const foreign = await svc.expandForCases(other.projectId, [c.id]);
      expect(foreign.get(c.id)).toEqual([
        { scenario_label: 'Default scenario', row_snapshot: { datasets: [] } },
      ]);
    });

    it('an empty selection is 422 dataset_binding_empty_selection', async () => {
      const c = await createCase();
      const d = await createDataset(f, { inactiveB: true });
      await bind(c.id, {
        dataset_id: d.id,
        dataset_alias: 'x',
        row_selection_type: 'subset',
        selected_row_keys: ['b'],
      }).expect(201);
      await expect(svc.expandForCases(f.projectId, [c.id])).rejects.toMatchObject({
        code: 'dataset_binding_empty_selection',
        status: 422,
      });
      const err = await svc.expandForCases(f.projectId, [c.id]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppException);
    });

    it('batches: a constant number of queries for many cases', async () => {
      const d = await createDataset();
      const cases = await Promise.all(Array.from({ length: 20 }, () => createCase()));
      for (const c of cases) await bind(c.id, { dataset_id: d.id, dataset_alias: 'd' }).expect(201);
      const spy = jest.spyOn(t.app.get(Db), 'query');
      try {
        const result = await svc.expandForCases(
          f.projectId,
          cases.map((c) => c.id),
        );
        expect([...result.values()].every((rows) => rows.length === 3)).toBe(true);
        expect(spy).toHaveBeenCalledTimes(2);
      } finally {
        spy.mockRestore();
      }
      expect(await svc.expandForCases(f.projectId, [])).toEqual(new Map());
    });
  });
});
