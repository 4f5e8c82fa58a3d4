import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import request from 'supertest';
import { signAccessToken } from '../../src/common/auth/tokens';
import { TEST_AUTH_SECRET } from '../support/constants';
import { createTestApp, TestApp } from '../support/test-app';
import { Body, described, FuzzRequest, requestArbitrary } from '../support/fuzz/arbitraries';
import { checkRequest, Sent, ServerLog } from '../support/fuzz/client';
import { FixtureRef, Fixtures, pathParamKind } from '../support/fuzz/fixtures';
import { describeRequest } from '../support/fuzz/format';
import { Operation, operationsOf } from '../support/fuzz/openapi-model';

/**
 * Property-based fuzzing of every operation of the OpenAPI document (issue 22, "make it impossible
 * to come back"). For each operation, fast-check generates requests from the operation's own
 * description — path parameters (real fixture ids, random uuids, junk, broken percent-encoding),
 * query strings (each documented parameter valid, wrong, empty, repeated, huge, unicode) and bodies
 * (built from the request schema, then mutated: wrong types, nulls, gaps, extra keys, huge strings,
 * lone surrogates, deep nesting, huge arrays, numbers out of range; multipart for uploads) — sent as
 * a project lead most of the time, sometimes as administrator, without or with junk credentials.
 * The property, for every response: never a 5xx, a problem body (application/problem+json with
 * `status` = the HTTP status, a string `code` and `title`) for every status ≥ 400, never more than
 * 2 s (a request over 2 s is sent again, and fails when it is slow twice: one slow answer on a
 * busy shared machine is not a property of the input).
 *
 * Operations come from the document the running app serves (/openapi.json, the one
 * `npm run openapi:generate` writes): the committed openapi.json only names the tests (jest needs
 * them before the app is up), and operations the app has but that file lacks are fuzzed too.
 *
 * Knobs: FUZZ_SEED (default 22 when CI is set, random otherwise; a failure prints the seed and the
 * shrunk request), FUZZ_RUNS (requests per operation, default 40), FUZZ_ONLY (a regular expression
 * on `METHOD /path` to fuzz some operations only).
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : process.env.CI ? 22 : undefined;
const ONLY = process.env.FUZZ_ONLY ? new RegExp(process.env.FUZZ_ONLY) : undefined;
/**
 * One operation's fuzzing stops after this long: a failure already found is reported as far as it
 * was shrunk; an operation that could not send all its requests in time fails.
 */
const TIME_PER_OPERATION_MS = 60_000;

const committed = operationsOf(JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')));
const selected = (ops: Operation[]) => ops.filter((o) => !ONLY || ONLY.test(o.key));
const committedKeys = new Set(committed.map((o) => o.key));

describe('fuzz: every operation of the OpenAPI document', () => {
  let t: TestApp;
  let f: Fixtures;
  const log = new ServerLog();
  const live = new Map<string, Operation>();

  beforeAll(async () => {
    // No lockout per client address: every request comes from 127.0.0.1, so the fuzzed logins'
    // failures would lock out the fixtures' own logins once they pass the default 50 (FUZZ_RUNS
    // above about 60). The per-username count stays on; the address lockout has its own tests.
    t = await createTestApp({ LOG_LEVEL: 'error', LOGIN_MAX_FAILURES_PER_ADDRESS: '0' }, log.stream);
    const doc = await request(t.server).get('/openapi.json');
    expect(doc.status).toBe(200);
    for (const op of operationsOf(doc.body)) live.set(op.key, op);
    f = new Fixtures(t);
    await f.ensure();
  });
  afterAll(async () => {
    await t?.close();
  });
  // A generated request may delete, close or archive a fixture, or take the lead's access away.
  beforeEach(async () => {
    await f.ensure();
  });

  /** FUZZ_STATS=1 prints, per operation, the statuses answered and the slowest request. */
  const stats = new Map<string, { statuses: Record<number, number>; maxMs: number; totalMs: number; slowest: string }>();
  const record = (op: Operation, s: Sent, r: FuzzRequest) => {
    const st = stats.get(op.key) ?? { statuses: {}, maxMs: 0, totalMs: 0, slowest: '' };
    st.statuses[s.status] = (st.statuses[s.status] ?? 0) + 1;
    if (s.ms > st.maxMs) st.slowest = describeRequest(r);
    st.maxMs = Math.max(st.maxMs, s.ms);
    st.totalMs += s.ms;
    stats.set(op.key, st);
  };
  afterAll(() => {
    if (!process.env.FUZZ_STATS) return;
    const lines = [...stats].map(
      ([k, v]) =>
        `${k.padEnd(75)} max ${Math.round(v.maxMs)} ms, total ${Math.round(v.totalMs)} ms ${JSON.stringify(v.statuses)}` +
        (v.maxMs > 300 ? `\n    slowest: ${v.slowest.replace(/\n/g, '\n    ')}` : ''),
    );
    process.stdout.write(`${lines.join('\n')}\nfixture generations: ${f.generation}\n`);
  });

  async function fuzz(op: Operation): Promise<void> {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(op), async (r) => {
        const sent = await checkRequest(t, f, log, r);
        record(op, sent, r);
        // A write that succeeded on a fixture may have deleted, closed or disabled it.
        if (sent.status < 300 && op.method !== 'get' && r.path.some((p) => p instanceof FixtureRef)) await f.ensure();
      }),
      {
        numRuns: RUNS,
        seed: SEED,
        interruptAfterTimeLimit: TIME_PER_OPERATION_MS,
        markInterruptAsFailure: true,
      },
    );
  }

  const liveOp = (key: string): Operation => {
    const op = live.get(key);
    if (!op) throw new Error(`${key} is in openapi.json but the app no longer has it: run npm run openapi:generate`);
    return op;
  };

  const reading = selected(committed.filter((o) => o.method !== 'delete'));
  const deleting = selected(committed.filter((o) => o.method === 'delete'));

  // (A FUZZ_ONLY pattern may select none of one kind: jest refuses an empty table.)
  if (reading.length > 0) {
    it.each(reading.map((o) => o.key))('%s', async (key) => {
      await fuzz(liveOp(key));
    }, 120_000);
  }

  it('fuzzes the operations the app has beyond the committed openapi.json', async () => {
    const extra = selected([...live.values()].filter((o) => !committedKeys.has(o.key)));
    for (const op of extra) await fuzz(op);
    expect(live.size).toBeGreaterThan(0);
  }, 600_000);

  describe('known nasty inputs (issue 22)', () => {
    const nasty = (key: string, auth: FuzzRequest['auth'], path: FuzzRequest['path'], body: Body): FuzzRequest => ({
      op: liveOp(key),
      auth,
      credential: null,
      path,
      query: [],
      body,
    });
    const json = (value: unknown): Body => ({ kind: 'json', value });
    const ref = (k: ConstructorParameters<typeof FixtureRef>[0]) => new FixtureRef(k);
    const cases: Array<[string, () => FuzzRequest]> = [
      ['lone-surrogate email on POST /users', () =>
        nasty('POST /api/v1/users', 'admin', [], json({ username: t.unique('u'), password: 'long enough password', email: 'a\ud800@x.io' }))],
      ['lone-surrogate email on PATCH /users/{id}', () =>
        nasty('PATCH /api/v1/users/{id}', 'admin', [ref('user')], json({ email: 'a\ud800@x.io' }))],
      ['test_case_ids: null on POST /run-cases/bulk', () =>
        nasty('POST /api/v1/run-cases/bulk', 'lead', [], json({ test_run_id: ref('run'), test_case_ids: null }))],
      ['suite_id "not-a-uuid" on POST /run-cases/bulk', () =>
        nasty('POST /api/v1/run-cases/bulk', 'lead', [], json({ test_run_id: ref('run'), suite_id: 'not-a-uuid' }))],
      ['topology key $ne on POST /environments', () =>
        nasty('POST /api/v1/environments', 'lead', [], json({ project_id: ref('project'), name: t.unique('Env '), topology: { $ne: null } }))],
      ['topology key $ne on PATCH /environments/{id}', () =>
        nasty('PATCH /api/v1/environments/{id}', 'lead', [ref('environment')], json({ topology: { $ne: null } }))],
    ];

    it.each(cases)('%s: no 5xx, a problem body', async (_name, make) => {
      const s = await checkRequest(t, f, log, make());
      expect(s.status).toBeLessThan(500);
    });

    it('suite_id "not-a-uuid" on POST /run-cases/bulk is a 422', async () => {
      const s = await checkRequest(t, f, log, cases[3][1]());
      expect(s.status).toBe(422);
    });

    it('10,000 tags (or use cases) on every operation whose body has them: no 5xx, a problem body', async () => {
      const manyTags = Array.from({ length: 10_000 }, (_, i) => `tag-${i}`);
      let tried = 0;
      for (const op of live.values()) {
        const props = op.jsonBody?.properties ?? {};
        for (const field of ['tags', 'use_cases'].filter((k) => props[k]?.type === 'array')) {
          const body: Record<string, unknown> = { [field]: manyTags };
          for (const name of op.jsonBody?.required ?? []) {
            if (name === 'project_id') body[name] = ref('project');
            else if (props[name]?.type === 'string') body[name] = t.unique('Fuzz ');
          }
          const path = op.pathParams.map((p) => ref(pathParamKind(op.path, p.name) ?? 'project'));
          const r = nasty(op.key, 'lead', path, json(body));
          await checkRequest(t, f, log, r);
          tried += 1;
        }
      }
      expect(tried).toBeGreaterThanOrEqual(4);
    }, 120_000);

    it('a signed token whose sub is not a uuid is a 401 problem', async () => {
      const { token } = signAccessToken({ sub: 'not-a-uuid', ver: 0 }, TEST_AUTH_SECRET, 600);
      const res = await t.req('get', '/api/v1/auth/me', token);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 401, code: expect.any(String), title: expect.any(String) });
    });

    it('describes a request readably (summarised values, lone surrogates escaped, fixtures by kind)', () => {
      const text = describeRequest(
        nasty('POST /api/v1/run-cases/bulk', 'lead', [], json({ test_run_id: ref('run'), test_case_ids: Array(10_000).fill('a'), x: 'a\ud800'.repeat(100) })),
      );
      expect(text).toBe(
        'POST /api/v1/run-cases/bulk as lead\n  body (application/json): {"test_run_id": <run id>, "test_case_ids": Array(10000).fill("a"), "x": "a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800a\\ud800"… (200 chars)}',
      );
    });
  });

  it('Content-Encoding on every operation that takes a body: no 5xx, a problem body', async () => {
    const json = Buffer.from('{"name":"fuzz","project_id":"0190d1c2-7c3a-7b4e-8f00-000000000000"}');
    const payloads: Array<[string, Buffer]> = [
      ['plain json', json],
      ['gzip json', gzipSync(json)],
      ['deflate json', deflateSync(json)],
      ['brotli json', brotliCompressSync(json)],
      ['truncated gzip', gzipSync(json).subarray(0, 12)],
      ['gzip bomb', gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20))],
      ['random bytes', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0xfd])],
      ['empty', Buffer.alloc(0)],
    ];
    const encodings = ['gzip', 'deflate', 'br', 'identity', 'x-compress', 'gzip, gzip', 'GZIP', 'gzip;q=1', 'zstd'];
    const bodyOps = [...live.values()].filter((o) => o.jsonBody || o.multipartBody).filter((o) => !ONLY || ONLY.test(o.key));
    if (bodyOps.length === 0) return;
    const arb = fc
      .tuple(fc.constantFrom(...bodyOps), fc.constantFrom(...encodings), fc.constantFrom(...payloads), fc.constantFrom<FuzzRequest['auth']>('lead', 'none'))
      .map(([op, encoding, [label, bytes], auth]) =>
        described({
          op,
          auth,
          credential: null,
          path: op.pathParams.map((p) => new FixtureRef(pathParamKind(op.path, p.name) ?? 'project')),
          query: [],
          body: { kind: 'raw', contentType: op.multipartBody ? 'multipart/form-data; boundary=x' : 'application/json', bytes },
          headers: [['Content-Encoding', encoding], ['X-Fuzz-Payload', label]],
        }),
      );
    await fc.assert(
      fc.asyncProperty(arb, async (r) => {
        await checkRequest(t, f, log, r);
      }),
      { numRuns: Math.max(RUNS * 4, 40), seed: SEED, interruptAfterTimeLimit: TIME_PER_OPERATION_MS, markInterruptAsFailure: true },
    );
  }, 120_000);

  if (deleting.length > 0) {
    it.each(deleting.map((o) => o.key))('%s', async (key) => {
      await fuzz(liveOp(key));
    }, 120_000);
  }

  // Guards the generators themselves: requests that never pass validation would make every
  // property above vacuous for the services behind it.
  it('reaches the services: most operations answered a 2xx to some generated request', () => {
    const fuzzed = [...stats].filter(([k]) => !k.startsWith('DELETE '));
    expect(fuzzed.length).toBeGreaterThan(0);
    const missed = fuzzed.filter(([, v]) => !Object.keys(v.statuses).some((st) => Number(st) < 300)).map(([k]) => k);
    // FUZZ_ONLY runs may fuzz too few operations to judge.
    if (fuzzed.length >= 20 && missed.length > fuzzed.length * 0.3) {
      throw new Error(`${missed.length} of ${fuzzed.length} operations never answered a 2xx: ${missed.join(', ')}`);
    }
  });
});
