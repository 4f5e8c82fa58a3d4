import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Io } from './client';
import { main } from './tms';

/** `main` in-process against a scripted fetch: each call takes the next answer (or throws it). */
function harness(answers: (Response | Error)[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const calls: { url: string; init: RequestInit }[] = [];
  const sleeps: number[] = [];
  let dir = '';
  const io = (cwd: string): Io => ({
    stdout: (s) => out.push(s),
    stderr: (s) => err.push(s),
    env: { TMS_URL: 'http://tms.test', TMS_API_KEY: 'tms_key', ...env },
    cwd,
    fetch: async (url, init) => {
      calls.push({ url: String(url), init: init ?? {} });
      const next = answers.shift();
      if (next === undefined) throw new Error('no more scripted answers');
      if (next instanceof Error) throw next;
      return next;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    now: () => 0,
  });
  return {
    run: (argv: string[]) => {
      dir = mkdtempSync(join(tmpdir(), 'tms-main-'));
      writeFileSync(join(dir, 'a.xml'), '<testsuite name="a"><testcase name="t"/></testsuite>');
      return main(argv, io(dir)).finally(() => rmSync(dir, { recursive: true, force: true }));
    },
    out: () => out.join(''),
    err: () => err.join(''),
    calls,
    sleeps,
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
      ...headers,
    },
  });

const imported = {
  id: 'i1',
  test_run_id: 'r1',
  target_run: { id: 'r1', name: 'a', match_mode: 'created' },
  source_filename: 'a.xml',
  dry_run: false,
  status: 'completed',
  summary: {
    total_cases: 1,
    matched_by_automation_id: 0,
    matched_by_name: 0,
    created_test_cases: 1,
    updated: 1,
    unmatched: 0,
    ambiguous: 0,
    warnings: 0,
  },
  statuses: { passed: 0, failure: 1, error: 0, skipped: 0, xfailed: 0, xpassed: 0, flaky: 0 },
};
const fetchFailed = () =>
  new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });

describe('tms main', () => {
  it.each<[string, string[], RegExp]>([
    ['no arguments', [], /Usage: tms/],
    ['an unknown command', ['bogus'], /unknown command/],
    ['import without --project', ['import', 'a.xml'], /--project/],
    [
      '--run with --run-name',
      ['import', 'a.xml', '--project', 'p', '--run', 'r', '--run-name', 'n'],
      /cannot be used with/,
    ],
    [
      '--build and --attribute with --run (that run exists)',
      ['import', 'a.xml', '--project', 'p', '--run', 'r', '--build', '1', '--attribute', 'a=b'],
      /--build, --attribute describe the run tms creates: give --run-name too \(not --run/,
    ],
    [
      '--environment without --run-name',
      ['import', 'a.xml', '--project', 'p', '--environment', 'e'],
      /--environment describe the run tms creates: give --run-name too/,
    ],
    [
      'an --attribute without =',
      ['import', 'a.xml', '--project', 'p', '--attribute', 'team'],
      /--attribute team: expected key=value/,
    ],
    [
      'a --commit-sha that is not hex',
      ['import', 'a.xml', '--project', 'p', '--commit-sha', 'HEAD'],
      /--commit-sha HEAD: 7 to 64 hexadecimal digits/,
    ],
    [
      '--wait without --async',
      ['import', 'a.xml', '--project', 'p', '--wait'],
      /--wait goes with --async/,
    ],
    ['a missing file', ['import', 'missing.xml', '--project', 'p'], /missing\.xml: no such file/],
    ['compare without a base', ['compare', 'r'], /exactly one of --base <run> and --previous/],
    [
      'compare with both bases',
      ['compare', 'r', '--base', 'b', '--previous'],
      /cannot be used with/,
    ],
    [
      '--retries out of range',
      ['readiness', 'p', '--retries', '11'],
      /--retries must be a whole number from 0 to 10/,
    ],
    [
      'a URL that is not http(s)',
      ['readiness', 'p', '--url', 'tms.example.com'],
      /--url must be an http\(s\) URL/,
    ],
  ])('%s: usage error, exit 2, no request', async (_name, argv, message) => {
    const h = harness([]);
    expect(await h.run(argv)).toBe(2);
    expect(h.out() + h.err()).toMatch(message);
    expect(h.calls).toHaveLength(0);
  });

  it('--help exits 0 and lists the commands and exit codes', async () => {
    const h = harness([]);
    expect(await h.run(['--help'])).toBe(0);
    expect(h.out()).toMatch(
      /import \[options\] <files\.\.\.>[\s\S]*compare[\s\S]*readiness[\s\S]*Exit codes:/,
    );
  });

  it('without TMS_URL nor --url: exit 2', async () => {
    const h = harness([], { TMS_URL: '' });
    expect(await h.run(['readiness', 'p'])).toBe(2);
    expect(h.err()).toContain('no server: set TMS_URL or give --url');
  });

  it('retries network errors, 429 (after Retry-After) and 503 with the same Idempotency-Key, then prints the table', async () => {
    const h = harness([
      fetchFailed(),
      json(429, { code: 'too_many_requests' }, { 'retry-after': '2' }),
      json(503, {}),
      json(201, imported),
    ]);
    expect(await h.run(['import', 'a.xml', '--project', 'p1'])).toBe(0);
    expect(h.calls).toHaveLength(4);
    expect(h.calls[0].url).toBe('http://tms.test/api/v1/projects/p1/imports/junit');
    const keys = h.calls.map((c) => (c.init.headers as Record<string, string>)['Idempotency-Key']);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^tms-[0-9a-f]{64}$/);
    expect((h.calls[0].init.headers as Record<string, string>)['X-API-Key']).toBe('tms_key');
    expect(h.sleeps).toEqual([250, 2000, 1000]);
    expect(h.err()).toMatch(/retry 1\/4[\s\S]*retry 2\/4[\s\S]*retry 3\/4/);
    expect(h.out()).toMatch(/^Run: a \(r1, created\)\nfile\s+status/);
  });

  it.each<[string, (Response | Error)[], number, RegExp]>([
    [
      '5xx after the retries: exit 3',
      [
        json(500, { title: 'Internal Server Error', code: 'internal_error' }),
        json(500, { title: 'Internal Server Error', code: 'internal_error' }),
      ],
      3,
      /Internal Server Error \(500 internal_error\)/,
    ],
    [
      '409 idempotency_request_in_progress after the retries (the first request still runs): exit 3',
      [
        json(
          409,
          { title: 'Conflict', code: 'idempotency_request_in_progress' },
          { 'retry-after': '1' },
        ),
        json(
          409,
          { title: 'Conflict', code: 'idempotency_request_in_progress' },
          { 'retry-after': '1' },
        ),
      ],
      3,
      /Conflict \(409 idempotency_request_in_progress\)/,
    ],
    [
      'another 409 is not retried: exit 2',
      [json(409, { title: 'Conflict', code: 'run_import_not_allowed' })],
      2,
      /Conflict \(409 run_import_not_allowed\)/,
    ],
    [
      'unreachable after the retries: exit 3',
      [fetchFailed(), fetchFailed()],
      3,
      /cannot reach http:\/\/tms\.test\/api\/v1\/projects\/p1\/imports\/junit: connect ECONNREFUSED/,
    ],
    [
      'a 4xx is not retried: exit 2 with title, code and detail',
      [json(404, { title: 'Not Found', code: 'project_not_found', detail: 'Project not found' })],
      2,
      /tms: Not Found \(404 project_not_found\)\n {2}Project not found\n/,
    ],
  ])('%s', async (_name, answers, code, message) => {
    const h = harness(answers);
    expect(await h.run(['import', 'a.xml', '--project', 'p1', '--retries', '1'])).toBe(code);
    expect(h.err()).toMatch(message);
    expect(h.err()).not.toMatch(/\n\s+at /);
    expect(answers).toHaveLength(0);
  });

  it('--fail-on-failures exits 1 when the report has failing tests; --json prints the server JSON', async () => {
    const h = harness([json(201, imported)]);
    expect(
      await h.run(['import', 'a.xml', '--project', 'p1', '--fail-on-failures', '--json']),
    ).toBe(1);
    expect(JSON.parse(h.out())).toEqual(imported);
    expect(h.err()).toContain('1 failing test (--fail-on-failures)');
  });

  it('--async sends Prefer: respond-async and, with --wait, polls the Location until the import ends', async () => {
    const h = harness([
      json(202, { id: 'j1', status: 'queued' }, { location: '/api/v1/imports/j1' }),
      json(200, { id: 'j1', status: 'running' }),
      json(200, { ...imported, status: 'succeeded' }),
    ]);
    expect(await h.run(['import', 'a.xml', '--project', 'p1', '--async', '--wait'])).toBe(0);
    expect((h.calls[0].init.headers as Record<string, string>).Prefer).toBe('respond-async');
    expect(h.calls.slice(1).map((c) => c.url)).toEqual([
      'http://tms.test/api/v1/imports/j1',
      'http://tms.test/api/v1/imports/j1',
    ]);
    expect(h.sleeps).toEqual([1000]);
  });

  it('--dry-run --async: the preview is asked for at once (a dry run is never queued)', async () => {
    const h = harness([json(201, { ...imported, dry_run: true, status: 'preview' })]);
    expect(
      await h.run(['import', 'a.xml', '--project', 'p1', '--dry-run', '--async', '--wait']),
    ).toBe(0);
    expect((h.calls[0].init.headers as Record<string, string>).Prefer).toBeUndefined();
    expect(h.err()).toContain('a dry run is never queued');
  });

  it('--run-name longer than the run search: the first 200 characters, never half a surrogate pair', async () => {
    const name = 'a'.repeat(199) + '\u{1F600}'.repeat(20);
    const h = harness([
      json(200, {
        items: [
          { id: 'r0', name: `${name}!` },
          { id: 'r1', name },
        ],
        has_next: false,
      }),
      json(201, imported),
    ]);
    expect(await h.run(['import', 'a.xml', '--project', 'p1', '--run-name', name])).toBe(0);
    const search = new URL(h.calls[0].url).searchParams.get('search');
    expect(search).toBe('a'.repeat(199) + '\u{1F600}');
    expect(h.calls[1].url).toBe('http://tms.test/api/v1/test-runs/r1/imports/junit');
  });

  describe('run metadata (issue #24): from the CI provider unless given', () => {
    const SHA = '0123456789abcdef0123456789abcdef01234567';
    const gitlab = {
      GITLAB_CI: 'true',
      CI_PIPELINE_ID: '4242',
      CI_COMMIT_SHA: SHA,
      CI_COMMIT_REF_NAME: 'main',
      CI_JOB_URL: 'https://gitlab.example.com/acme/shop/-/jobs/77',
    };

    it('--run-name creates the run with build, ci and attributes', async () => {
      const h = harness(
        [json(200, { items: [], has_next: false }), json(201, { id: 'r9' }), json(201, imported)],
        gitlab,
      );
      expect(
        await h.run([
          'import',
          'a.xml',
          '--project',
          'p1',
          '--run-name',
          'Nightly',
          '--branch',
          'hotfix',
          '--attribute',
          'team=payments',
          '--attribute',
          'os=linux',
        ]),
      ).toBe(0);
      expect(h.calls[1].url).toBe('http://tms.test/api/v1/test-runs');
      expect(JSON.parse(String(h.calls[1].init.body))).toEqual({
        project_id: 'p1',
        name: 'Nightly',
        build: 'main #4242 (0123456789ab)',
        ci: {
          provider: 'gitlab-ci',
          branch: 'hotfix',
          commit_sha: SHA,
          job_url: 'https://gitlab.example.com/acme/shop/-/jobs/77',
          pipeline_id: '4242',
        },
        attributes: { team: 'payments', os: 'linux' },
      });
      // Into the run tms created: no metadata form fields.
      expect(h.calls[2].url).toBe('http://tms.test/api/v1/test-runs/r9/imports/junit');
      const form = h.calls[2].init.body as FormData;
      expect(form.get('branch')).toBeNull();
      expect(form.getAll('attribute')).toEqual([]);
    });

    it('without --run / --run-name the metadata goes as form fields (the server creates the run)', async () => {
      const h = harness([json(201, imported)], gitlab);
      expect(
        await h.run([
          'import',
          'a.xml',
          '--project',
          'p1',
          '--build',
          'b7',
          '--commit-sha',
          'ABCDEF0',
          '--attribute',
          'team=payments',
          '--attribute',
          'url=https://x/?a=b',
        ]),
      ).toBe(0);
      const form = h.calls[0].init.body as FormData;
      expect(form.get('build')).toBe('b7');
      expect(form.get('ci_provider')).toBe('gitlab-ci');
      expect(form.get('branch')).toBe('main');
      expect(form.get('commit_sha')).toBe('ABCDEF0');
      expect(form.get('job_url')).toBe('https://gitlab.example.com/acme/shop/-/jobs/77');
      expect(form.get('pipeline_id')).toBe('4242');
      expect(form.getAll('attribute')).toEqual(['team:payments', 'url:https://x/?a=b']);
    });

    it('outside CI without options: only the usual fields; another commit, another Idempotency-Key', async () => {
      const h = harness([json(201, imported), json(201, imported)]);
      expect(await h.run(['import', 'a.xml', '--project', 'p1'])).toBe(0);
      const form = h.calls[0].init.body as FormData;
      expect([...form.keys()].sort()).toEqual(['create_missing_cases', 'dry_run', 'file']);
      // A different commit is a different request: another key.
      expect(await h.run(['import', 'a.xml', '--project', 'p1', '--commit-sha', 'abcdef0'])).toBe(
        0,
      );
      const keys = h.calls.map(
        (c) => (c.init.headers as Record<string, string>)['Idempotency-Key'],
      );
      expect(keys[0]).not.toBe(keys[1]);
    });
  });

  it('--run-name: a replayed run creation is used only while that run is open and so named', async () => {
    const replayed = { 'idempotent-replayed': 'true' };
    const h = harness([
      json(200, { items: [], has_next: false }),
      json(201, { id: 'r1' }, replayed),
      json(200, { id: 'r1', name: 'Nightly', status: 'completed' }),
      json(201, { id: 'r2' }, replayed),
      json(200, { id: 'r2', name: 'Nightly (old)', status: 'in_progress' }),
      json(201, { id: 'r3' }, replayed),
      json(404, { status: 404, code: 'test_run_not_found', title: 'Not Found' }),
      json(201, { id: 'r4' }, replayed),
      json(200, { id: 'r4', name: ' nightly', status: 'not_started' }),
      json(201, imported),
    ]);
    expect(await h.run(['import', 'a.xml', '--project', 'p1', '--run-name', 'Nightly'])).toBe(0);
    expect(h.calls.map((c) => `${String(c.init.method)} ${c.url.split('?')[0]}`)).toEqual([
      'GET http://tms.test/api/v1/test-runs',
      ...['r1', 'r2', 'r3', 'r4'].flatMap((id) => [
        'POST http://tms.test/api/v1/test-runs',
        `GET http://tms.test/api/v1/test-runs/${id}`,
      ]),
      'POST http://tms.test/api/v1/test-runs/r4/imports/junit',
    ]);
    const keys = h.calls
      .filter((c) => c.url === 'http://tms.test/api/v1/test-runs')
      .map((c) => (c.init.headers as Record<string, string>)['Idempotency-Key']);
    expect(new Set(keys).size).toBe(4);
    expect(h.err()).toMatch(/\(r1\) created earlier is completed: creating a new one/);
    expect(h.err()).toMatch(/\(r2\) created earlier is renamed/);
    expect(h.err()).toMatch(/\(r3\) created earlier is deleted/);
    expect(h.err()).toMatch(/using run "Nightly" \(r4\)/);

    // Another try of the step walks the same keys: the second one comes from the first and r1.
    const again = harness([
      json(200, { items: [], has_next: false }),
      json(201, { id: 'r1' }, replayed),
      json(200, { id: 'r1', name: 'Nightly', status: 'completed' }),
      json(201, { id: 'r4' }, replayed),
      json(200, { id: 'r4', name: 'Nightly', status: 'in_progress' }),
      json(201, imported),
    ]);
    expect(await again.run(['import', 'a.xml', '--project', 'p1', '--run-name', 'Nightly'])).toBe(
      0,
    );
    const againKeys = again.calls
      .filter((c) => c.url === 'http://tms.test/api/v1/test-runs')
      .map((c) => (c.init.headers as Record<string, string>)['Idempotency-Key']);
    expect(againKeys).toEqual(keys.slice(0, 2));
  });

  it('--async against a server without background imports: the 201 is the result', async () => {
    const h = harness([json(201, imported)]);
    expect(await h.run(['import', 'a.xml', '--project', 'p1', '--async', '--wait'])).toBe(0);
    expect(h.calls).toHaveLength(1);
    expect(h.out()).toContain('a.xml');
  });

  // Found by an audit of the CLI (issue: a CI client that is safe to retry).
  describe('retries, redirects and secrets', () => {
    /** A 2xx whose body breaks off half-way (the connection dropped, or the deadline fired). */
    const brokenBody = () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"id":'));
            c.error(new TypeError('terminated'));
          },
        }),
        { status: 201, headers: { 'content-type': 'application/json' } },
      );
    const keysOf = (h: ReturnType<typeof harness>) =>
      h.calls.map((c) => (c.init.headers as Record<string, string>)['Idempotency-Key']);

    it('retries an answer whose body broke off, with the same Idempotency-Key', async () => {
      const h = harness([brokenBody(), json(201, imported)]);
      expect(await h.run(['import', 'a.xml', '--project', 'p1'])).toBe(0);
      expect(h.calls).toHaveLength(2);
      expect(new Set(keysOf(h)).size).toBe(1);
      expect(h.err()).toMatch(/failed \(terminated\); retry 1\/4/);
    });

    it('ends with exit 3 when the body keeps breaking off', async () => {
      const h = harness([brokenBody(), brokenBody()]);
      expect(await h.run(['import', 'a.xml', '--project', 'p1', '--retries', '1'])).toBe(3);
      expect(h.err()).toMatch(/cannot reach .*: terminated/);
    });

    it.each<[string, Record<string, string>, RegExp, string]>([
      ['an API key with a line break', { TMS_API_KEY: 'tms_SECRET\nVALUE' }, /API key/, 'SECRET'],
      [
        'an API key with a non-ASCII character',
        { TMS_API_KEY: 'tms_SECRET\u2026' },
        /API key/,
        'SECRET',
      ],
      [
        'a URL with a password',
        { TMS_URL: 'http://admin:hunter2@tms.test' },
        /user name or password/,
        'hunter2',
      ],
    ])(
      'refuses %s (exit 2), sends nothing and prints no secret',
      async (_name, env, message, secret) => {
        const h = harness([], env);
        expect(await h.run(['readiness', 'p1'])).toBe(2);
        expect(h.calls).toHaveLength(0);
        expect(h.err()).toMatch(message);
        expect(h.err()).not.toContain(secret);
      },
    );

    it('never follows a redirect to another origin (the API key would go along)', async () => {
      const h = harness([
        new Response(null, { status: 302, headers: { location: 'http://elsewhere.test/x' } }),
      ]);
      expect(await h.run(['readiness', 'p1'])).toBe(2);
      expect(h.calls.map((c) => c.url)).toEqual(['http://tms.test/api/v1/products/p1/readiness']);
      expect(h.err()).toContain('redirects to http://elsewhere.test');
    });

    it('follows a redirect within the origin: 307/308 repeat the request, the others continue with a GET', async () => {
      const h = harness([
        new Response(null, { status: 308, headers: { location: '/v2/projects/p1/imports/junit' } }),
        json(201, imported),
      ]);
      expect(await h.run(['import', 'a.xml', '--project', 'p1'])).toBe(0);
      expect(h.calls.map((c) => [c.init.method, c.url])).toEqual([
        ['POST', 'http://tms.test/api/v1/projects/p1/imports/junit'],
        ['POST', 'http://tms.test/v2/projects/p1/imports/junit'],
      ]);
      expect(h.calls[1].init.body).toBeInstanceOf(FormData);
      expect(h.calls.every((c) => c.init.redirect === 'manual')).toBe(true);
    });

    it('without --async, a replayed 202 (an earlier --async run of the same files) is followed to its end', async () => {
      const h = harness([
        json(202, { id: 'j1', status: 'queued' }, { location: '/api/v1/imports/j1' }),
        json(200, {
          id: 'j1',
          status: 'failed',
          problem: { status: 422, code: 'invalid_junit_xml', title: 'Invalid JUnit XML' },
        }),
      ]);
      expect(await h.run(['import', 'a.xml', '--project', 'p1'])).toBe(2);
      expect((h.calls[0].init.headers as Record<string, string>).Prefer).toBeUndefined();
      expect(h.calls[1].url).toBe('http://tms.test/api/v1/imports/j1');
      expect(h.err()).toMatch(/Invalid JUnit XML \(422 invalid_junit_xml\)/);
    });

    it('a background import that failed exits 2 with its problem, whatever its status', async () => {
      const h = harness([
        json(202, { id: 'j1', status: 'queued' }, { location: '/api/v1/imports/j1' }),
        json(200, {
          id: 'j1',
          status: 'failed',
          problem: { status: 500, code: 'internal_error', title: 'Internal Server Error' },
        }),
      ]);
      expect(await h.run(['import', 'a.xml', '--project', 'p1', '--async', '--wait'])).toBe(2);
      expect(h.err()).toMatch(/Internal Server Error \(500 internal_error\)/);
    });

    it('the same bytes under another file name are another Idempotency-Key', async () => {
      const h = harness([json(201, imported), json(201, imported)]);
      const dir = mkdtempSync(join(tmpdir(), 'tms-names-'));
      try {
        const content = '<testsuite name="a"><testcase name="t"/></testsuite>';
        writeFileSync(join(dir, 'one.xml'), content);
        writeFileSync(join(dir, 'two.xml'), content);
        expect(await h.run(['import', join(dir, 'one.xml'), '--project', 'p1'])).toBe(0);
        expect(await h.run(['import', join(dir, 'two.xml'), '--project', 'p1'])).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const [first, second] = keysOf(h);
      expect(first).not.toBe(second);
    });
  });
});
