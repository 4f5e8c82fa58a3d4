import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { Response as AgentResponse } from 'superagent';
import type { Response } from 'supertest';
import { parseStringPromise } from 'xml2js';
import {
  createTestApp,
  expectProblem,
  expectRoleMatrix,
  RoleFixture,
  TestApp,
} from '../support/test-app';
import { pdfText } from '../support/pdf-text';

const FIXTURES = join(__dirname, '..', 'fixtures', 'junit');

/** The parts of an OpenAPI schema object the report check reads. */
interface Schema {
  type?: string;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
}
const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));

/** supertest parser that keeps the raw body as a Buffer (any content type). */
function binary(res: AgentResponse, done: (err: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
  stream.on('error', (e: Error) => done(e, Buffer.alloc(0)));
}

/** Minimal RFC 4180 reader for the assertions (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

describe('Run report export (CONTRACT §6)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let runId: string;
  let manualCaseId: string;

  const exportRun = (format?: string, id = runId): Promise<Response> =>
    t
      .req(
        'get',
        `/api/v1/test-runs/${id}/export${format === undefined ? '' : `?format=${format}`}`,
        f.viewer.token,
      )
      .buffer(true)
      .parse(binary);

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    const run = await t.req('post', '/api/v1/test-runs', f.tester.token).send({
      project_id: f.projectId,
      name: 'Nightly "export", run',
      build: '1.2.3',
      assignee: f.tester.id,
    });
    runId = run.body.id as string;
    const imported = await t
      .req(
        'post',
        `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', fixture('basic.xml'), 'basic.xml');
    expect(imported.status).toBe(201);
    const manual = await t
      .req('post', '/api/v1/test-cases', f.tester.token)
      .send({ project_id: f.projectId, title: 'Manual, "quoted"\ncheck' });
    manualCaseId = manual.body.id as string;
    const added = await t
      .req('post', '/api/v1/run-cases/bulk', f.tester.token)
      .send({ test_run_id: runId, test_case_ids: [manualCaseId] });
    expect(added.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /test-runs/{id}/export: viewer and above', async () => {
    const ok = await expectRoleMatrix(t, f, {
      method: 'get',
      url: `/api/v1/test-runs/${runId}/export`,
      minRole: 'viewer',
      okStatus: 200,
      notFoundCode: 'test_run_not_found',
    });
    expect(ok.headers['content-type']).toMatch(/^application\/json/);
  });

  it('refuses an unknown format with 422 query.format', async () => {
    const res = await t.req('get', `/api/v1/test-runs/${runId}/export?format=docx`, f.viewer.token);
    expect(expectProblem(res, 422, 'validation_error').errors).toHaveProperty(['query.format']);
    // An unknown parameter is ignored: the default format applies.
    const unknown = await t.req(
      'get',
      `/api/v1/test-runs/${runId}/export?formats=csv`,
      f.viewer.token,
    );
    expect(unknown.status).toBe(200);
    expect(unknown.headers['content-type']).toMatch(/^application\/json/);
  });

  it('json (default): the report payload as a download', async () => {
    const res = await exportRun();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="test-run-${runId}-report.json"`,
    );
    // Streamed as it is read: no ETag (the OpenAPI document says so), so no 304 either.
    expect(res.headers.etag).toBeUndefined();
    // The file is named after the run's id as the service writes it, whatever the path's spelling.
    const upper = await exportRun('json', runId.toUpperCase());
    expect(upper.headers['content-disposition']).toBe(
      `attachment; filename="test-run-${runId}-report.json"`,
    );
    const body = JSON.parse((res.body as Buffer).toString('utf8'));
    expect(body).toMatchObject({
      report_type: 'test_run',
      format_version: 1,
      generated_at: expect.stringMatching(/Z$/),
      test_run: {
        id: runId,
        project_id: f.projectId,
        name: 'Nightly "export", run',
        build: '1.2.3',
        status: 'in_progress',
        created_by: f.tester.id,
        assignee: f.tester.id,
        started_at: expect.stringMatching(/Z$/),
      },
      summary: {
        total: 5,
        passed: 1,
        failure: 1,
        error: 1,
        skipped: 1,
        untested: 1,
        in_progress: 0,
        blocked: 0,
        xfailed: 0,
        xpassed: 0,
        pass_rate: 20,
        progress_rate: 80,
      },
    });
    expect(body.by_status.map((s: { status: string }) => s.status)).toEqual([
      'untested',
      'in_progress',
      'passed',
      'error',
      'failure',
      'blocked',
      'skipped',
      'xfailed',
      'xpassed',
    ]);
    expect(body.by_assignee).toEqual([
      { assignee_id: f.tester.id, assignee_name: expect.any(String), count: 5 },
    ]);
    expect(body.failures.map((x: { test_case_key: string }) => x.test_case_key)).toEqual([
      'TC-2',
      'TC-3',
    ]);
    expect(body.failures[0]).toMatchObject({
      comment: 'logout failed\n\nTraceback: boom',
      defect_ids: [],
    });
    expect(body.items.map((i: { test_case: { key: string } }) => i.test_case.key)).toEqual([
      'TC-1',
      'TC-2',
      'TC-3',
      'TC-4',
      'TC-5',
    ]);
    expect(body.items[0]).toMatchObject({
      test_case: {
        title: 'test_login_works',
        suite_name: 'login',
        tags: ['auto-imported'],
        automation_id: 'AUTH-LOGIN-1',
      },
      status: 'passed',
      executed_by: f.tester.id,
      execution_count: 1,
      duration_ms: 1500,
      time: '1.5',
      last_executed_at: expect.stringMatching(/Z$/),
    });
    expect(body.items[4]).toMatchObject({
      status: 'untested',
      execution_count: 0,
      executed_by: null,
      duration_ms: null,
    });
  });

  it('json: the OpenAPI document describes every object of the report, field by field', async () => {
    const doc = (await t.req('get', '/openapi.json')).body as {
      paths: Record<
        string,
        { get: { responses: Record<string, { content: Record<string, { schema: Schema }> }> } }
      >;
    };
    const content = doc.paths['/api/v1/test-runs/{id}/export'].get.responses['200'].content;
    const schema = content['application/json'].schema;
    expect(content['text/csv'].schema).toEqual({ type: 'string', format: 'binary' });
    const report: unknown = JSON.parse(((await exportRun()).body as Buffer).toString('utf8'));
    // Every object has exactly the schema's properties, each value of the schema's type.
    const mismatches: string[] = [];
    const typeOf = (v: unknown): string =>
      Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
    const check = (value: unknown, s: Schema, path: string): void => {
      const type = value === null ? 'null' : typeOf(value);
      const documented = type === 'integer' && s.type === 'number' ? 'integer' : s.type;
      if (type === 'null' ? s.nullable !== true : type !== documented) {
        mismatches.push(`${path}: ${type}, documented ${String(s.type)}`);
      } else if (type === 'array') {
        (value as unknown[]).forEach((v, i) => check(v, s.items as Schema, `${path}[${i}]`));
      } else if (type === 'object' && s.properties !== undefined) {
        expect([path, Object.keys(value as object).sort()]).toEqual([
          path,
          [...(s.required ?? [])].sort(),
        ]);
        for (const [key, v] of Object.entries(value as object)) {
          check(v, s.properties[key], `${path}.${key}`);
        }
      }
    };
    check(report, schema, 'report');
    expect(mismatches).toEqual([]);
    const body = report as { failures: unknown[]; items: unknown[] };
    expect(body.failures.length).toBeGreaterThan(0);
    expect(body.items).toHaveLength(5);
  });

  it('xml: the same payload under <test_run_report>', async () => {
    const res = await exportRun('xml');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="test-run-${runId}-report.xml"`,
    );
    const text = (res.body as Buffer).toString('utf8');
    expect(text.startsWith("<?xml version='1.0' encoding='utf-8'?>\n<test_run_report>")).toBe(true);
    const doc = await parseStringPromise(text, { explicitArray: false });
    const report = doc.test_run_report;
    expect(report.report_type).toBe('test_run');
    expect(report.test_run.name).toBe('Nightly "export", run');
    expect(report.summary.pass_rate).toBe('20.0');
    expect(report.by_status.item).toHaveLength(9);
    expect(report.items.item).toHaveLength(5);
    expect(report.items.item[1].comment).toBe('logout failed\n\nTraceback: boom');
    expect(report.items.item[4].test_case.title).toBe('Manual, "quoted"\ncheck');
    expect(text).toContain('<description />');
  });

  it('csv: a header and one line per run item, properly quoted', async () => {
    const res = await exportRun('csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="test-run-${runId}-report.csv"`,
    );
    const rows = parseCsv((res.body as Buffer).toString('utf8'));
    expect(rows[0].slice(0, 4)).toEqual([
      'run_item_id',
      'test_case_id',
      'test_case_key',
      'test_case_title',
    ]);
    expect(rows).toHaveLength(6);
    const header = rows[0];
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    expect(rows.slice(1).map((r) => col(r, 'status'))).toEqual([
      'passed',
      'failure',
      'error',
      'skipped',
      'untested',
    ]);
    expect(col(rows[5], 'test_case_title')).toBe('Manual, "quoted"\ncheck');
    expect(col(rows[5], 'test_case_id')).toBe(manualCaseId);
    expect(col(rows[2], 'comment')).toBe('logout failed\n\nTraceback: boom');
    expect(col(rows[1], 'duration_ms')).toBe('1500');
    for (const row of rows) expect(row).toHaveLength(header.length);
  });

  it('csv: bom=true starts it with a UTF-8 byte order mark (for Excel); other formats ignore it', async () => {
    const plain = (await exportRun('csv')).body as Buffer;
    expect(plain.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
    expect(plain.subarray(0, 11).toString('latin1')).toBe('run_item_id');
    const withBom = await exportRun('csv&bom=true');
    expect(withBom.status).toBe(200);
    const bytes = withBom.body as Buffer;
    expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(true);
    // The rest is the same report (no `generated_at` in a CSV): the same bytes.
    expect(bytes.subarray(3).equals(plain)).toBe(true);
    expect((await exportRun('csv&bom=false')).body).toEqual(plain);
    const json = await exportRun('json&bom=true');
    expect(json.status).toBe(200);
    expect((json.body as Buffer)[0]).toBe(0x7b); // "{"
    const refused = await t.req(
      'get',
      `/api/v1/test-runs/${runId}/export?format=csv&bom=maybe`,
      f.viewer.token,
    );
    expect(expectProblem(refused, 422, 'validation_error').errors).toHaveProperty(['query.bom']);
  });

  it('pdf: a real PDF with pages', async () => {
    const res = await exportRun('pdf');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="test-run-${runId}-report.pdf"`,
    );
    const pdf = res.body as Buffer;
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.subarray(-6).toString('latin1')).toMatch(/%%EOF/);
    const text = pdf.toString('latin1');
    expect(text.match(/\/Type \/Page\b/g)?.length).toBe(1);
    // Page content is compressed: inflate the streams and look for the drawn text and shapes.
    // pdfkit ends a stream's data with "\nendstream" exactly: no optional \r before it, which would
    // eat a last data byte of 0x0D (one compressed stream in 256 failed to inflate).
    const streams = [...text.matchAll(/stream\r?\n([\s\S]*?)\nendstream/g)].map((m) => {
      try {
        return inflateSync(Buffer.from(m[1], 'latin1')).toString('latin1');
      } catch {
        return '';
      }
    });
    const content = streams.join('\n');
    expect(content).toMatch(/ re\b/); // rectangles (bars, cards)
    expect(content).toMatch(/ c\b/); // curves (pie, circles)
    expect(content).toMatch(/Tj|TJ/); // text
  });

  it('pdf: names in Polish, Czech or Cyrillic are drawn as written (an embedded Unicode font)', async () => {
    // The standard PDF fonts drew only Western European letters: these came out as `?`.
    // "fi" and "fl" are drawn as ligature glyphs, whose ToUnicode entries hold two code points.
    const name = 'Zażółć gęślą jaźń – Проверка – official flow';
    const title = 'Příliš žluťoučký kůň';
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name });
    expect(run.status).toBe(201);
    const imported = await t
      .req(
        'post',
        `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach(
        'file',
        Buffer.from(
          `<testsuite name="i18n"><testcase classname="i18n" name="${title}"/></testsuite>`,
        ),
        'i18n.xml',
      );
    expect(imported.status).toBe(201);
    const res = await exportRun('pdf', run.body.id as string);
    expect(res.status).toBe(200);
    const text = (res.body as Buffer).toString('latin1');
    // The font is embedded (a subset of DejaVu Sans), no standard font is used.
    expect(text).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans\b/);
    expect(text).toMatch(/\/FontFile2 /);
    expect(text).not.toMatch(/\/BaseFont \/Helvetica/);
    // Drawn as written (the text read back through the font's ToUnicode map).
    const drawn = pdfText(res.body as Buffer);
    expect(drawn).toContain(name);
    expect(drawn).toContain(title);
  });

  it('pdf: the item list continues over several pages', async () => {
    const tcs = Array.from(
      { length: 130 },
      (_, i) => `<testcase classname="bulk.Case" name="test_${i}"/>`,
    ).join('');
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'Big' });
    const imported = await t
      .req(
        'post',
        `/api/v1/test-runs/${run.body.id}/imports/junit?create_missing_cases=true`,
        f.tester.token,
      )
      .attach('file', Buffer.from(`<testsuite name="bulk">${tcs}</testsuite>`), 'bulk.xml');
    expect(imported.body.summary.created_test_cases).toBe(130);
    const res = await exportRun('pdf', run.body.id as string);
    expect(res.status).toBe(200);
    const pages = (res.body as Buffer).toString('latin1').match(/\/Type \/Page\b/g)?.length ?? 0;
    expect(pages).toBeGreaterThanOrEqual(3);
    const json = JSON.parse((await exportRun('json', run.body.id as string)).body.toString('utf8'));
    expect(json.items).toHaveLength(130);
    expect(json.summary).toMatchObject({ total: 130, passed: 130, pass_rate: 100 });
  });

  describe('junit', () => {
    it('is a JUnit XML document of the run', async () => {
      const res = await exportRun('junit');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="test-run-${runId}-report.xml"`,
      );
      const doc = await parseStringPromise((res.body as Buffer).toString('utf8'));
      const root = doc.testsuites;
      expect(root.$).toMatchObject({ tests: '4', failures: '1', errors: '1', skipped: '1' });
      const suite = root.testsuite[0];
      expect(suite.$.name).toBe('Nightly "export", run');
      const cases = suite.testcase as Array<{
        $: Record<string, string>;
        failure?: unknown;
        error?: unknown;
        skipped?: unknown;
      }>;
      expect(cases.map((c) => c.$.name)).toEqual([
        'test_login_works',
        'test_logout_works',
        'test_token_refresh',
        'test_invoice_pdf',
      ]);
      expect(cases[0].$).toMatchObject({ classname: 'Nightly.auth.login', time: '1.5' });
      expect(cases[1].failure).toBeDefined();
      expect(cases[2].error).toBeDefined();
      expect(cases[3].skipped).toBeDefined();
    });

    it('round-trips: importing the export again matches the same cases and rows, creating nothing', async () => {
      const before = await t.db.query(
        `SELECT ri.test_case_id, w.id AS row_id, w.scenario_label, w.status, w.comment, w.execution_count
           FROM run_items ri JOIN run_item_rows w ON w.run_item_id = ri.id
          WHERE ri.test_run_id = $1 ORDER BY w.id`,
        [runId],
      );
      const cases = await t.db.query(
        `SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1`,
        [f.projectId],
      );
      const exported = (await exportRun('junit')).body as Buffer;
      const res = await t
        .req(
          'post',
          `/api/v1/test-runs/${runId}/imports/junit?create_missing_cases=true`,
          f.tester.token,
        )
        .attach('file', exported, 'round-trip.junit.xml');
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 4,
        created_test_cases: 0,
        updated: 4,
        unmatched: 0,
        ambiguous: 0,
      });
      const after = await t.db.query(
        `SELECT ri.test_case_id, w.id AS row_id, w.scenario_label, w.status, w.comment, w.execution_count
           FROM run_items ri JOIN run_item_rows w ON w.run_item_id = ri.id
          WHERE ri.test_run_id = $1 ORDER BY w.id`,
        [runId],
      );
      expect(after.map((r: Record<string, unknown>) => ({ ...r, execution_count: 0 }))).toEqual(
        before.map((r: Record<string, unknown>) => ({ ...r, execution_count: 0 })),
      );
      const executed = after.filter((r: { status: string }) => r.status !== 'untested');
      expect(executed.map((r: { execution_count: number }) => r.execution_count)).toEqual([
        2, 2, 2, 2,
      ]);
      const casesAfter = await t.db.query(
        `SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1`,
        [f.projectId],
      );
      expect(casesAfter[0].n).toBe(cases[0].n);
    });

    it('round-trips xfailed, xpassed and cases without a suite', async () => {
      const run = await t
        .req('post', '/api/v1/test-runs', f.tester.token)
        .send({ project_id: f.projectId, name: 'Dialects' });
      const id = run.body.id as string;
      const suiteless = Buffer.from(
        '<testsuites><testsuite><testcase name="no suite at all"/></testsuite></testsuites>',
      );
      await t
        .req(
          'post',
          `/api/v1/test-runs/${id}/imports/junit?create_missing_cases=true`,
          f.tester.token,
        )
        .attach('file', fixture('dialects.xml'), 'dialects.xml');
      await t
        .req(
          'post',
          `/api/v1/test-runs/${id}/imports/junit?create_missing_cases=true`,
          f.tester.token,
        )
        .attach('file', suiteless, 'suiteless.xml');
      const statuses = async () =>
        t.db.query(
          `SELECT ri.test_case_id, w.status FROM run_items ri JOIN run_item_rows w ON w.run_item_id = ri.id
            WHERE ri.test_run_id = $1 ORDER BY ri.test_case_id`,
          [id],
        );
      const before = await statuses();
      const exported = (await exportRun('junit', id)).body as Buffer;
      const res = await t
        .req('post', `/api/v1/test-runs/${id}/imports/junit`, f.tester.token)
        .attach('file', exported, 'again.xml');
      expect(res.status).toBe(201);
      expect(res.body.summary).toMatchObject({
        total_cases: 7,
        updated: 7,
        unmatched: 0,
        ambiguous: 0,
      });
      expect(await statuses()).toEqual(before);
      expect(before.map((r: { status: string }) => r.status).sort()).toEqual(
        ['failure', 'failure', 'passed', 'passed', 'passed', 'xfailed', 'xpassed'].sort(),
      );
    });
  });

  it('keeps items whose test case was deleted, with their snapshot data', async () => {
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'Deleted' });
    const id = run.body.id as string;
    const kase = await t
      .req('post', '/api/v1/test-cases', f.tester.token)
      .send({ project_id: f.projectId, title: 'Soon gone' });
    await t
      .req('post', '/api/v1/run-cases/bulk', f.tester.token)
      .send({ test_run_id: id, test_case_ids: [kase.body.id] });
    const removed = await t.req('delete', `/api/v1/test-cases/${kase.body.id}`, f.lead.token);
    expect(removed.status).toBe(204);
    const json = JSON.parse((await exportRun('json', id)).body.toString('utf8'));
    expect(json.summary.total).toBe(1);
    expect(json.items).toHaveLength(1);
    expect(json.items[0].test_case).toMatchObject({
      id: null,
      key: kase.body.key,
      title: 'Soon gone',
    });
  });

  it('exports an empty run', async () => {
    const run = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: f.projectId, name: 'Empty' });
    const id = run.body.id as string;
    const json = JSON.parse((await exportRun('json', id)).body.toString('utf8'));
    expect(json).toMatchObject({
      summary: { total: 0, pass_rate: 0, progress_rate: 0 },
      failures: [],
      items: [],
    });
    const csv = (await exportRun('csv', id)).body.toString('utf8');
    expect(parseCsv(csv)).toHaveLength(1);
    const xml = await parseStringPromise((await exportRun('xml', id)).body.toString('utf8'));
    expect(xml.test_run_report.items).toEqual(['']);
    const junit = await parseStringPromise((await exportRun('junit', id)).body.toString('utf8'));
    expect(junit.testsuites.$.tests).toBe('0');
    const pdf = (await exportRun('pdf', id)).body as Buffer;
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });
});
