import fc from 'fast-check';
import {
  CANDIDATES_BY_KEY_SQL,
  ImportRepository,
} from '../../src/modules/imports/import.repository';
import type { CandidateFilter } from '../../src/modules/imports/matching';
import { TRANSLATE_TITLE_PROBE_SQL } from '../../src/database/migrations/1763700019930-TestCaseTitleProbe';
import {
  FasterTitleProbe1763700019970,
  REGEXP_TITLE_PROBE_SQL,
} from '../../src/database/migrations/1763700019970-FasterTitleProbe';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';
import { sqlTitleProbe } from '../support/title-probe-model';

/**
 * An import of a report smaller than its project reads only the cases under its results'
 * automation ids or title probes (`test_case_title_probe`, migrations `TestCaseTitleProbe` and
 * `FasterTitleProbe`). The unit tests prove the filter never leaves out a case the rules match,
 * with `sqlTitleProbe` standing for the database; this checks the SQL function against it and
 * against its first body, the query's plan, and imports that match through either read.
 */
describe('JUnit import: candidate cases read by title probe', () => {
  let t: TestApp;
  let f: RoleFixture;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  /** Imports three results against `Login <word>`, `Café <word>` and `Unrelated <word>`. */
  async function importAndMatch(word: string): Promise<CandidateFilter | null> {
    const make = async (title: string) => {
      const res = await t
        .req('post', '/api/v1/test-cases', f.lead.token)
        .send({ project_id: f.projectId, title });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
      return res.body.id as string;
    };
    const login = await make(`Login ${word}`);
    const cafe = await make(`Café crème ${word}`);
    await make(`Unrelated ${word}`);
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: `probe ${word}` });
    const xml =
      '<?xml version="1.0"?><testsuite name="S">' +
      `<testcase name="test_login_${word}"/><testcase name="CAFÉ_CRÈME-${word.toUpperCase()}"/>` +
      `<testcase name="no such case ${word}"/></testsuite>`;
    const repo = t.app.get(ImportRepository);
    const spy = jest.spyOn(repo, 'loadCandidates');
    const res = await t
      .req(
        'post',
        `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', Buffer.from(xml), 'junit.xml');
    const filter = spy.mock.calls[0]?.[1];
    spy.mockRestore();
    expect(res.status).toBe(201);
    expect(res.body.summary).toMatchObject({ matched_by_name: 2, created_test_cases: 1 });
    const items = (await t.db.query(
      `SELECT test_case_id FROM run_items
        WHERE test_run_id = $1 AND test_case_id = ANY($2::uuid[]) ORDER BY test_case_id`,
      [run.body.id, [login, cafe]],
    )) as Array<{ test_case_id: string }>;
    expect(items.map((i) => i.test_case_id)).toEqual([login, cafe].sort());
    if (filter === undefined) throw new Error('loadCandidates was not called');
    return filter;
  }

  it('the SQL function answers what the model says, on random titles', async () => {
    const noNul = (s: string) => !s.includes('\u0000');
    const titles = [
      ...fc.sample(fc.string({ unit: 'binary' }).filter(noNul), { numRuns: 1500, seed: 7 }),
      ...fc.sample(
        fc.string({ unit: fc.integer({ min: 1, max: 127 }).map((c) => String.fromCharCode(c)) }),
        { numRuns: 1500, seed: 11 },
      ),
      'test_Login-works 2',
      'Café',
      "it's a \\ test $1 %",
      'ẞ',
      '',
    ];
    const rows = (await t.db.query(
      `SELECT test_case_title_probe(x) AS probe FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n)
        ORDER BY n`,
      [titles],
    )) as Array<{ probe: string }>;
    expect(rows.map((r) => r.probe)).toEqual(titles.map(sqlTitleProbe));
  });

  it('answers what the translate body of migration TestCaseTitleProbe did (FasterTitleProbe kept the index)', async () => {
    const ascii = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1));
    const anyText = fc.string({ unit: 'binary' }).filter((s) => !s.includes('\u0000'));
    const titles = [
      '',
      ...ascii,
      ...ascii.flatMap((a) => ascii.map((b) => a + b)),
      ...fc.sample(anyText, { numRuns: 2000, seed: 23 }),
      'İstanbul TEST',
      'KELVIN \u212a',
      'Straße',
      'x\u0080',
    ];
    /** The function's answer and `expression`'s, for each title. */
    const both = (expression: string) =>
      `SELECT test_case_title_probe(title) AS now, ${expression} AS other
         FROM unnest($1::text[]) AS u(title)`;
    const rows = (await t.db.query(both(TRANSLATE_TITLE_PROBE_SQL), [titles])) as Array<{
      now: string;
      other: string;
    }>;
    expect(rows).toHaveLength(titles.length);
    expect(rows.filter((r) => r.now !== r.other)).toEqual([]);
    // The migration is reversible (in a transaction rolled back after): down puts the translate
    // body back, answering as the new one, and up the new body again.
    const migration = new FasterTitleProbe1763700019970();
    const qr = t.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await migration.down(qr);
      const body = (await qr.query(
        `SELECT prosrc FROM pg_proc WHERE proname = 'test_case_title_probe'`,
      )) as Array<{ prosrc: string }>;
      expect(body[0].prosrc).toContain('translate(');
      const down = (await qr.query(both(REGEXP_TITLE_PROBE_SQL), [titles])) as typeof rows;
      expect(down).toHaveLength(titles.length);
      expect(down.filter((r) => r.now !== r.other)).toEqual([]);
      await migration.up(qr);
      const up = (await qr.query(
        `SELECT prosrc FROM pg_proc WHERE proname = 'test_case_title_probe'`,
      )) as Array<{ prosrc: string }>;
      expect(up[0].prosrc).toContain('regexp_replace(');
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
  });

  it('a small project is read whole, and matches by name across case, separators and test', async () => {
    expect(await importAndMatch('works')).toBeNull();
  });

  it('a project larger than the report is read by key, through both indexes', async () => {
    // 20,000 more cases (and the key counter that says so), analysed: what a large project is.
    await t.db.query(
      `INSERT INTO test_cases (id, project_id, key, key_number, title, automation_id, created_by)
       SELECT gen_random_uuid(), $1, 'B-' || n, 1000000 + n, 'Bulk case ' || n,
              'pkg.Bulk.case' || n, (SELECT id FROM users ORDER BY created_at LIMIT 1)
         FROM generate_series(1, 20000) AS n`,
      [f.projectId],
    );
    await t.db.query(
      `UPDATE project_counters SET value = value + 20000 WHERE project_id = $1 AND name = 'test_case_key'`,
      [f.projectId],
    );
    await t.db.query('ANALYZE test_cases');
    const plan = (await t.db.query(`EXPLAIN ${CANDIDATES_BY_KEY_SQL}`, [
      f.projectId,
      ['pkg.Bulk.case7', 'pkg.Bulk.case8'],
      ['', 'bulkca7', 'bulkca8'],
    ])) as Array<{ 'QUERY PLAN': string }>;
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain('ix_test_cases_title_probe');
    expect(text).toContain('uq_test_cases_project_automation_id');
    const read = (await t.db.query(CANDIDATES_BY_KEY_SQL, [
      f.projectId,
      ['pkg.Bulk.case7'],
      ['', 'bulkca8'],
    ])) as Array<{ title: string }>;
    // A title with other than ASCII characters has the probe '' (always read).
    expect(read.map((r) => r.title)).toEqual(['Café crème works', 'Bulk case 7', 'Bulk case 8']);

    const filter = await importAndMatch('passes');
    expect(filter?.titleProbes).toEqual(expect.arrayContaining(['', 'loginpa', 'cafcrmpa']));
  });
});
