import { createTestApp, TestApp } from '../support/test-app';

/**
 * `test_cases_lower_tags` is the expression of two GIN indexes: migration `LowerTagsInPlpgsql`
 * replaced its body in place, which is only sound if every answer is the old one. Compared with
 * the old definition's expression on the inputs where the two forms could differ.
 */
describe('test_cases_lower_tags (the tag indexes’ expression)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    [`'{}'::text[]`],
    [`NULL::text[]`],
    [`'{Auto-Imported}'::text[]`],
    [`'{A,NULL,"NULL","a b","x\\\\y\\"z",ÄÖ,ΑΣ,"",Smoke}'::text[]`],
    [`ARRAY[NULL, NULL]::text[]`],
    [`'{{A,B},{C,D}}'::text[]`],
    [`'[0:2]={X,y,Z}'::text[]`],
    [`ARRAY['İstanbul', 'ǅ', 'ẞ', 'Ω']`],
  ])('%s: the same answer as the old SQL definition', async (input) => {
    const rows = (await t.db.query(
      `SELECT test_cases_lower_tags(${input}) AS now,
              (SELECT coalesce(array_agg(lower(e)), '{}') FROM unnest(${input}) AS e) AS old,
              array_dims(test_cases_lower_tags(${input})) AS dims_now,
              array_dims((SELECT coalesce(array_agg(lower(e)), '{}') FROM unnest(${input}) AS e)) AS dims_old`,
    )) as Array<{ now: unknown; old: unknown; dims_now: string | null; dims_old: string | null }>;
    expect(rows[0].now).toEqual(rows[0].old);
    expect(rows[0].dims_now).toBe(rows[0].dims_old);
  });

  it('is what the indexes and the tag filter use (IMMUTABLE, so indexable)', async () => {
    const rows = (await t.db.query(
      `SELECT p.provolatile, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.proname = 'test_cases_lower_tags'`,
    )) as Array<{ provolatile: string; lanname: string }>;
    expect(rows).toEqual([{ provolatile: 'i', lanname: 'plpgsql' }]);
    const indexes = (await t.db.query(
      `SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%test_cases_lower_tags(tags)%' ORDER BY 1`,
    )) as Array<{ indexname: string }>;
    expect(indexes.map((i) => i.indexname)).toEqual(['ix_test_cases_tags', 'ix_test_plans_tags']);
  });
});
