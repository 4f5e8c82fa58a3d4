import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Io } from '../../src/cli/client';
import { main } from '../../src/cli/tms';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * `tms import` at the edges of the server's rules, run in-process through `main()` against a test
 * server (cli.e2e-spec.ts spawns it; here `sleep` is in the test's hands): an import still running
 * when its request times out, a dry run with `--async`, a `--run-name` longer than the run list's
 * `search`, and a server with a lower MAX_UPLOAD_FILES.
 */
const API = '/api/v1';

type Json = Record<string, unknown>;
interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

const report = (suite: string, fail = false) =>
  `<testsuite name="${suite}"><testcase classname="c.${suite}" name="t1">` +
  `${fail ? '<failure message="x"/>' : ''}</testcase></testsuite>`;

describe('tms import: edges', () => {
  let t: TestApp;
  let work: string;
  let url: string;
  let apiKey: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tms-cli-edges-'));
    t = await createTestApp();
    url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
    apiKey = await newApiKey(t);
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function newApiKey(app: TestApp): Promise<string> {
    const key = await app
      .req('post', `${API}/users/me/api-keys`, app.adminToken)
      .send({ name: 'ci' })
      .expect(201);
    return key.body.api_key as string;
  }

  /**
   * Runs `tms` in-process. `sleep` (the waits between retries) defaults to a short real pause, so
   * the waits `tms` asks for cost no time: they are recorded in `sleeps`.
   */
  async function tms(
    args: string[],
    opts: { url?: string; apiKey?: string; sleep?: (ms: number) => Promise<void> } = {},
  ): Promise<Outcome & { sleeps: number[] }> {
    let stdout = '';
    let stderr = '';
    const sleeps: number[] = [];
    const io: Io = {
      stdout: (s) => void (stdout += s),
      stderr: (s) => void (stderr += s),
      env: { TMS_URL: opts.url ?? url, TMS_API_KEY: opts.apiKey ?? apiKey },
      cwd: work,
      fetch: (...a) => fetch(...a),
      sleep: async (ms) => {
        sleeps.push(ms);
        await (opts.sleep ?? (() => new Promise<void>((r) => setTimeout(r, 10))))(ms);
      },
      random: () => 0.5,
      now: Date.now,
    };
    const code = await main(args, io);
    return { code, stdout, stderr, sleeps };
  }

  function file(name: string, content: string): string {
    writeFileSync(join(work, name), content);
    return name;
  }

  async function importsInto(app: TestApp, column: 'test_run_id' | 'project_id', id: string) {
    const rows: Array<{ n: number }> = await app.db.query(
      `SELECT count(*)::int AS n FROM junit_imports WHERE ${column} = $1`,
      [id],
    );
    return rows[0].n;
  }

  async function until(what: () => Promise<boolean>, ms = 10_000): Promise<void> {
    for (const end = Date.now() + ms; !(await what()); ) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  describe('the first request still running (409 idempotency_request_in_progress)', () => {
    let holder: Client;
    let held = false;

    /** A run whose row another transaction holds locked: an import into it waits for it. */
    async function lockedRun(projectId: string): Promise<string> {
      const run = await t
        .req('post', `${API}/test-runs`, t.adminToken)
        .send({ project_id: projectId, name: 'held' })
        .expect(201);
      holder = new Client({ connectionString: t.databaseUrl });
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM test_runs WHERE id = $1 FOR UPDATE', [run.body.id]);
      held = true;
      return run.body.id as string;
    }

    async function release(): Promise<void> {
      if (!held) return;
      held = false;
      await holder.query('COMMIT');
      await holder.end();
    }

    afterEach(release);

    it('still answered after the last retry: exit 3 (transient), and the step run again replays the import', async () => {
      const projectId = await t.createProject();
      const runId = await lockedRun(projectId);
      const xml = file('held-exit.xml', report('HeldExit', true));
      const args = [
        'import',
        xml,
        '--project',
        projectId,
        '--run',
        runId,
        '--create-missing-cases',
      ];
      const o = await tms([...args, '--timeout', '2', '--retries', '1']);
      expect(o.stderr).toContain('409 idempotency_request_in_progress');
      expect(o.code).toBe(3);

      await release();
      await until(async () => (await importsInto(t, 'test_run_id', runId)) === 1);
      const again = await tms([...args, '--json']);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ test_run_id: runId });
      expect(await importsInto(t, 'test_run_id', runId)).toBe(1);
    });

    it('Retry-After: 1 does not shorten the backoff: the retries outlast an import that ends 5 s later', async () => {
      const projectId = await t.createProject();
      const runId = await lockedRun(projectId);
      const xml = file('held-wait.xml', report('HeldWait', true));
      let waited = 0;
      const o = await tms(
        [
          ...['import', xml, '--project', projectId, '--run', runId, '--create-missing-cases'],
          ...['--timeout', '2', '--json'],
        ],
        {
          // Time as tms counts it: the import ends once tms has waited 5 s in all.
          sleep: async (ms) => {
            waited += ms;
            if (held && waited >= 5000) {
              await release();
              await until(async () => (await importsInto(t, 'test_run_id', runId)) === 1);
            }
          },
        },
      );
      // The request timed out (backoff 1), then 409 with Retry-After: 1: the longer of that and
      // the backoff (random 0.5: three quarters of 0.5 s, 1 s, 2 s, 4 s).
      expect(o.sleeps).toEqual([375, 1000, 1500, 3000]);
      expect(o.stderr).toMatch(/answered 409; retry 4\/4 in 3\.0 s/);
      expect(o.code).toBe(0);
      expect(JSON.parse(o.stdout)).toMatchObject({ test_run_id: runId });
      expect(await importsInto(t, 'test_run_id', runId)).toBe(1);
    });
  });

  it.each<[string, string[]]>([
    ['into the project', []],
    ['into a run', ['--run-name', 'nightly-dry']],
  ])(
    'import --dry-run --async --wait (%s): the preview at once, nothing written',
    async (_name, target) => {
      const projectId = await t.createProject();
      const xml = file('dry-async.xml', report('DryAsync', true));
      const args = ['import', xml, '--project', projectId, ...target, '--dry-run'];
      const o = await tms([...args, '--async', '--wait', '--json']);
      expect(o.stderr).toContain('a dry run is never queued');
      expect(o.code).toBe(0);
      expect(JSON.parse(o.stdout)).toMatchObject({ dry_run: true, status: 'preview' });
      const table = await tms([...args, '--async']);
      expect(table.code).toBe(0);
      // The run the real import would create: with --run-name, that name (the project's preview
      // names the run after the report).
      const name = target.length > 0 ? 'nightly-dry' : 'DryAsync';
      expect(table.stdout).toContain(`Run: ${name} (dry run: would be created)\n`);
      expect(await importsInto(t, 'project_id', projectId)).toBe(0);
      const runs: Array<{ n: number }> = await t.db.query(
        'SELECT count(*)::int AS n FROM test_runs WHERE project_id = $1',
        [projectId],
      );
      expect(runs[0].n).toBe(0);
    },
  );

  it.each<[string, string]>([
    ['230 characters', 'n'.repeat(230)],
    // 219 characters, 239 UTF-16 units: the 200th character is a surrogate pair.
    ['a surrogate pair at the 200th character', 'a'.repeat(199) + '\u{1F600}'.repeat(20)],
    ['255 characters with spaces around', ` ${'x'.repeat(100)} ${'y'.repeat(152)} `],
  ])(
    'import --run-name longer than the run search (%s): the open run of that name, no second one',
    async (_name, name) => {
      const projectId = await t.createProject();
      // A run whose name starts like it (the search finds it too) but is not it.
      await t
        .req('post', `${API}/test-runs`, t.adminToken)
        .send({ project_id: projectId, name: `${[...name.trim()].slice(0, -1).join('')}~` })
        .expect(201);
      const xml = file('long-name.xml', report('LongName'));
      const args = [
        ...['import', xml, '--project', projectId, '--run-name', name],
        ...['--create-missing-cases', '--json'],
      ];
      const first = await tms(args);
      expect(first.code).toBe(0);
      const runId = (JSON.parse(first.stdout) as Json).test_run_id as string;
      expect(first.stderr).toContain(`created run "${name.trim()}"`);
      const run = await t.req('get', `${API}/test-runs/${runId}`, t.adminToken).expect(200);
      expect(run.body.name).toBe(name.trim());

      // Another report, another build: found by its name, not created again.
      const other = file('long-name-2.xml', report('LongName2'));
      const second = await tms([...args.slice(0, 1), other, ...args.slice(2), '--build', 'b2']);
      expect(second.code).toBe(0);
      expect((JSON.parse(second.stdout) as Json).test_run_id).toBe(runId);
      expect(second.stderr).not.toContain('created run');
      expect(await importsInto(t, 'test_run_id', runId)).toBe(2);
    },
  );

  describe('a server with MAX_UPLOAD_FILES=2', () => {
    let small: TestApp;
    let smallUrl: string;
    let smallKey: string;

    beforeAll(async () => {
      small = await createTestApp({ MAX_UPLOAD_FILES: '2' });
      smallUrl = `http://127.0.0.1:${(small.server.address() as AddressInfo).port}`;
      smallKey = await newApiKey(small);
    });
    afterAll(async () => {
      await small.close();
    });

    const onSmall = (args: string[]) => tms(args, { url: smallUrl, apiKey: smallKey });

    it('five files: 413 too_many_files halves the request until it fits; the step run again imports nothing twice', async () => {
      const projectId = await small.createProject();
      const files = ['m1', 'm2', 'm3', 'm4', 'm5'].map((n) => file(`${n}.xml`, report(n)));
      const args = ['import', ...files, '--project', projectId, '--run-name', 'many'];
      const o = await onSmall([...args, '--create-missing-cases', '--json']);
      expect(o.code).toBe(0);
      expect(o.stderr).toContain('413 too_many_files');
      expect(o.stderr).toMatch(/sending 3 per request[\s\S]*sending 2 per request/);
      const imports = JSON.parse(o.stdout) as Array<{ summary: { files: unknown[] } }>;
      expect(imports.map((i) => i.summary.files.length)).toEqual([2, 2, 1]);
      expect(await importsInto(small, 'project_id', projectId)).toBe(3);

      const again = await onSmall([...args, '--create-missing-cases', '--json']);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual(imports);
      expect(await importsInto(small, 'project_id', projectId)).toBe(3);
    });

    it('--files-per-request sets the split; out of range is a usage error', async () => {
      const projectId = await small.createProject();
      const files = ['p1', 'p2', 'p3'].map((n) => file(`${n}.xml`, report(n)));
      const args = ['import', ...files, '--project', projectId, '--json'];
      const o = await onSmall([...args, '--files-per-request', '1']);
      expect(o.code).toBe(0);
      expect(o.stderr).not.toContain('too_many_files');
      expect(JSON.parse(o.stdout)).toHaveLength(3);
      expect(await importsInto(small, 'project_id', projectId)).toBe(3);
      for (const bad of ['0', '100001', 'x']) {
        const refused = await onSmall([...args, '--files-per-request', bad]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('--files-per-request must be a whole number');
      }
    });
  });
});
