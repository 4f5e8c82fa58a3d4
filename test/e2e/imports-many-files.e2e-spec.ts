import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { importHelpers } from '../support/import-fixture';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

/**
 * Issue #18 §2, end to end: several `file` parts (JUnit XML and results JSON mixed, gzip parts
 * among them) form ONE import — one transaction, one record, `summary.files` per file —; one refused
 * file refuses everything, naming the file; MAX_UPLOAD_BYTES holds for the decompressed sum and
 * MAX_UPLOAD_FILES for the count.
 */
describe('JUnit import: many files in one import (issue #18 §2)', () => {
  let t: TestApp;
  let f: RoleFixture;
  /** A second instance on the same database with small limits: 3 files, 2,000 bytes. */
  let small: INestApplication;
  const SMALL_FILES = 3;
  const SMALL_BYTES = 2000;
  const { newProject, createRun, snapshot } = importHelpers(() => ({ t, f }));

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    small = await createApp(
      { ...t.config, maxUploadFiles: SMALL_FILES, maxUploadBytes: SMALL_BYTES },
      t.databaseUrl,
    );
    await small.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await small.close();
    await t.close();
  });

  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  const xml = (suite: string, cases: Array<[string, '' | 'failure' | 'skipped']>): Buffer =>
    Buffer.from(
      `<testsuite name="${suite}">${cases
        .map(([name, outcome]) =>
          outcome === ''
            ? `<testcase classname="${suite}" name="${name}"/>`
            : `<testcase classname="${suite}" name="${name}"><${outcome} message="m"/></testcase>`,
        )
        .join('')}</testsuite>`,
    );
  const json = (cases: Array<[string, string]>): Buffer =>
    Buffer.from(
      JSON.stringify({
        cases: cases.map(([name, status]) => ({ name, classname: 'json', status })),
      }),
    );
  const runUrl = (runId: string, query = '?create_missing_cases=true'): string =>
    `/api/v1/test-runs/${runId}/imports/junit${query}`;

  const A = xml('alpha', [
    ['a1', ''],
    ['a2', 'failure'],
  ]);
  const B = json([
    ['b1', 'passed'],
    ['b2', 'skipped'],
    ['b3', 'error'],
  ]);
  const C = xml('gamma', [['c1', 'skipped']]);

  it('imports XML and JSON files of one request as ONE import with a summary per file', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const res = await t
      .req('post', runUrl(runId), f.tester.token)
      .attach('file', A, 'TEST-alpha.xml')
      .attach('file', B, 'results.json')
      .attach('file', C, 'TEST-gamma.xml');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      source_filename: 'TEST-alpha.xml',
      size_bytes: A.length + B.length + C.length,
      sha256: sha(Buffer.from(`${sha(A)}\n${sha(B)}\n${sha(C)}\n`)),
      status: 'completed',
      summary: {
        total_cases: 6,
        created_test_cases: 6,
        updated: 6,
        files: [
          { name: 'TEST-alpha.xml', testcases: 2, passed: 1, failed: 1, skipped: 0 },
          { name: 'results.json', testcases: 3, passed: 1, failed: 1, skipped: 1 },
          { name: 'TEST-gamma.xml', testcases: 1, passed: 0, failed: 0, skipped: 1 },
        ],
      },
      statuses: { passed: 2, failure: 1, error: 1, skipped: 2 },
    });
    // One record, listing the files too.
    const records = await t.db.query(
      `SELECT id, summary->'summary'->'files' AS files FROM junit_imports WHERE test_run_id = $1`,
      [runId],
    );
    expect(records).toHaveLength(1);
    expect(records[0].id).toBe(res.body.id);
    expect(records[0].files).toHaveLength(3);
    const [items] = await t.db.query(
      `SELECT count(*)::int AS n FROM run_items WHERE test_run_id = $1`,
      [runId],
    );
    expect(items.n).toBe(6);
    const list = await t.req('get', `/api/v1/test-runs/${runId}/imports`, f.viewer.token);
    expect(list.body.total).toBe(1);
    expect(list.body.items[0].summary.total_cases).toBe(6);
  });

  /** A multipart body built by hand: each part's Content-Disposition parameters as given. */
  const rawMultipart = (parts: Array<[disposition: string, content: Buffer]>): Buffer =>
    Buffer.concat([
      ...parts.flatMap(([disposition, content]) => [
        Buffer.from(`--raw-b\r\nContent-Disposition: form-data; name="file"${disposition}\r\n\r\n`),
        content,
        Buffer.from('\r\n'),
      ]),
      Buffer.from('--raw-b--\r\n'),
    ]);
  const sendRaw = (url: string, body: Buffer) =>
    t
      .req('post', url, f.tester.token)
      .set('Content-Type', 'multipart/form-data; boundary=raw-b')
      .send(body);

  // Found by an audit: multer dropped a part with filename="", so its report was not imported.
  it('imports a file part with an empty filename under the default name, never drops it', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const res = await sendRaw(
      runUrl(runId),
      rawMultipart([
        ['; filename=""', A],
        ['; filename="TEST-gamma.xml"', C],
      ]),
    );
    expect(res.status).toBe(201);
    expect(res.body.summary.total_cases).toBe(3);
    expect(res.body.summary.files.map((file: { name: string }) => file.name)).toEqual([
      'junit.xml',
      'TEST-gamma.xml',
    ]);
  });

  // Found by an audit: the name was cut at 255 UTF-16 units inside a surrogate pair, and the lone
  // half made the summary's jsonb write fail (500).
  it('cuts a file name of 128 emoji at 255 units without splitting a character', async () => {
    const projectId = await newProject();
    const runId = await createRun(projectId);
    const name = `${'\u{1F600}'.repeat(128)}.xml`;
    const res = await sendRaw(
      runUrl(runId),
      rawMultipart([[`; filename*=UTF-8''${encodeURIComponent(name)}`, A]]),
    );
    expect(res.status).toBe(201);
    expect(res.body.source_filename).toBe('\u{1F600}'.repeat(127));
    expect(res.body.summary.files[0].name).toBe('\u{1F600}'.repeat(127));
  });

  it('takes the run name of a project import from the first file, and previews several files', async () => {
    const projectId = await newProject();
    const url = `/api/v1/projects/${projectId}/imports/junit`;
    const preview = await t
      .req('post', `${url}?dry_run=true&create_missing_cases=true`, f.tester.token)
      .attach('file', C, 'TEST-gamma.xml')
      .attach('file', A, 'TEST-alpha.xml');
    expect(preview.status).toBe(201);
    expect(preview.body).toMatchObject({
      id: null,
      status: 'preview',
      target_run: { id: null, name: 'gamma', match_mode: 'created' },
      summary: { total_cases: 3, files: [{ name: 'TEST-gamma.xml' }, { name: 'TEST-alpha.xml' }] },
    });
    const real = await t
      .req('post', `${url}?create_missing_cases=true`, f.tester.token)
      .attach('file', C, 'TEST-gamma.xml')
      .attach('file', A, 'TEST-alpha.xml');
    expect(real.status).toBe(201);
    expect(real.body.target_run).toMatchObject({ name: 'gamma', match_mode: 'created' });
    expect(real.body.summary.updated).toBe(3);
  });

  describe('one refused file refuses the import, names the file, and changes nothing', () => {
    /** A file of each kind the import refuses, and the problem code it gets. */
    const REFUSED: Array<[string, Buffer, string]> = [
      ['malformed XML', Buffer.from('<testsuite><testcase name="x">'), 'invalid_junit_xml'],
      ['an empty file', Buffer.alloc(0), 'empty_upload'],
      ['plain text', Buffer.from('hello'), 'unsupported_report_format'],
      ['invalid results JSON', Buffer.from('{"cases": []}'), 'invalid_tms_results_json'],
      [
        'a part that starts like gzip but does not decompress',
        Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(64)]),
        'invalid_gzip',
      ],
    ];

    it.each(REFUSED)('%s among valid files → 422 naming it', async (_what, bad, code) => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const res = await t
        .req('post', runUrl(runId), f.tester.token)
        .attach('file', A, 'TEST-alpha.xml')
        .attach('file', bad, 'TEST-broken.xml')
        .attach('file', gzipSync(C), 'TEST-gamma.xml.gz');
      const body = expectProblem(res, 422, code);
      expect(body.detail).toContain('File "TEST-broken.xml" (2 of 3)');
      const messages = (body.errors as { file: string[] }).file;
      expect(messages.length).toBeGreaterThan(0);
      for (const m of messages) expect(m.startsWith('TEST-broken.xml: ')).toBe(true);
      expect(JSON.stringify(body)).not.toContain('TEST-alpha.xml');
      expect(await snapshot(projectId, runId)).toEqual(before);
    });

    // (A gzip part's detail began "is not a valid gzip file": the file's name left out, and the
    // subject with it.)
    it.each(REFUSED)(
      'names nothing but the reason with a single file (%s), in a sentence',
      async (_what, bad, code) => {
        const projectId = await newProject();
        const runId = await createRun(projectId);
        const res = await t
          .req('post', runUrl(runId), f.tester.token)
          .attach('file', bad, 'one.xml');
        const body = expectProblem(res, 422, code);
        expect((body.errors as { file: string[] }).file[0]).not.toContain('one.xml');
        expect(body.detail).not.toContain('one.xml');
        expect(body.detail).toMatch(/^The (uploaded )?file /);
      },
    );
  });

  describe('gzip parts', () => {
    it('decompresses a part starting with the gzip magic bytes; size and SHA-256 are of the content', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await t
        .req('post', runUrl(runId), f.tester.token)
        .attach('file', gzipSync(A), 'TEST-alpha.xml.gz')
        .attach('file', gzipSync(B), {
          filename: 'results.bin',
          contentType: 'application/octet-stream',
        });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        size_bytes: A.length + B.length,
        sha256: sha(Buffer.from(`${sha(A)}\n${sha(B)}\n`)),
        summary: {
          total_cases: 5,
          files: [
            { name: 'TEST-alpha.xml.gz', testcases: 2 },
            { name: 'results.bin', testcases: 3 },
          ],
        },
      });
      // A single gzip part: its SHA-256 is the content's, as for the plain file.
      const single = await t
        .req('post', runUrl(runId, '?dry_run=true'), f.tester.token)
        .attach('file', gzipSync(A), 'TEST-alpha.xml.gz');
      expect(single.body).toMatchObject({ size_bytes: A.length, sha256: sha(A) });
    });

    it('reads a plain file named .gz as it is (the magic bytes decide)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const res = await t
        .req('post', runUrl(runId), f.tester.token)
        .attach('file', A, 'TEST-alpha.xml.gz');
      expect(res.status).toBe(201);
      expect(res.body.summary.total_cases).toBe(2);
    });

    it('holds the decompressed size to MAX_UPLOAD_BYTES (a gzip bomb is refused with 413)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      // 1 MB of XML whitespace that compresses to about 1 KB: under the limit on the wire (so only
      // the decompressed count can refuse it), 500 times over it decompressed.
      const bomb = gzipSync(
        Buffer.concat([Buffer.from('<testsuite>'), Buffer.alloc(1024 * 1024, 0x20)]),
      );
      expect(bomb.length).toBeLessThan(SMALL_BYTES);
      const started = Date.now();
      const res = await request(small.getHttpServer())
        .post(runUrl(runId))
        .set('Authorization', `Bearer ${f.tester.token}`)
        .attach('file', bomb, 'bomb.xml.gz');
      expectProblem(res, 413, 'payload_too_large');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await snapshot(projectId, runId)).toEqual(before);
    });
  });

  describe('limits', () => {
    const upload = (runId: string, files: Buffer[]) => {
      let r = request(small.getHttpServer())
        .post(runUrl(runId))
        .set('Authorization', `Bearer ${f.tester.token}`);
      files.forEach((file, i) => {
        r = r.attach('file', file, `f${i}.xml`);
      });
      return r;
    };
    const tiny = (i: number): Buffer => xml(`s${i}`, [[`t${i}`, '']]);

    it('caps the number of files at MAX_UPLOAD_FILES (413 too_many_files, nothing changes)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const over = await upload(
        runId,
        Array.from({ length: SMALL_FILES + 1 }, (_, i) => tiny(i)),
      );
      const body = expectProblem(over, 413, 'too_many_files');
      expect(body.detail).toContain(String(SMALL_FILES));
      expect(await snapshot(projectId, runId)).toEqual(before);
      const atLimit = await upload(
        runId,
        Array.from({ length: SMALL_FILES }, (_, i) => tiny(i)),
      );
      expect(atLimit.status).toBe(201);
      expect(atLimit.body.summary.files).toHaveLength(SMALL_FILES);
    });

    it('holds the sum of the files to MAX_UPLOAD_BYTES, each file being under it (413)', async () => {
      const projectId = await newProject();
      const runId = await createRun(projectId);
      const before = await snapshot(projectId, runId);
      const big = (i: number): Buffer =>
        Buffer.concat([tiny(i), Buffer.alloc(SMALL_BYTES * 0.6 - tiny(i).length, 0x20)]);
      expect(big(0).length).toBeLessThan(SMALL_BYTES);
      const res = await upload(runId, [big(0), big(1)]);
      expectProblem(res, 413, 'payload_too_large');
      expect(await snapshot(projectId, runId)).toEqual(before);
      const one = await upload(runId, [big(0)]);
      expect(one.status).toBe(201);
    });
  });
});
