import { testRunJsonParts, toTestRunDto } from './test-run.mapper';
import { RUN_COLUMNS, RUN_COLUMNS_RAW_SNAPSHOT, TestRunRow } from './test-runs.repository';
import { revisionSnapshotBytes, SnapshotCache, snapshotBytesOf } from './snapshot-cache';

const at = new Date('2026-01-01T00:00:00Z');
const row = {
  id: 'r1',
  project_id: 'p1',
  name: 'Nightly "é" \u2028',
  description: null,
  environment_id: 'e1',
  environment_name: 'Staging',
  environment_revision_id: 'v1',
  environment_revision_number: 2,
  environment_snapshot_hash: 'sha256:x',
  environment_snapshot: null,
  milestone_id: null,
  milestone_name: null,
  build: 'v1',
  ci_provider: 'gitlab-ci',
  ci_branch: 'main',
  ci_commit_sha: null,
  ci_job_url: null,
  ci_pipeline_id: '42',
  attributes: { team: 'payments' },
  assignee_id: null,
  created_by: 'u1',
  created_by_name: 'ann',
  status: 'in_progress',
  started_at: at,
  completed_at: null,
  archived_at: null,
  planned_item_count: 3,
  count_untested: 1,
  count_in_progress: 0,
  count_passed: 2,
  count_error: 0,
  count_failure: 0,
  count_blocked: 0,
  count_skipped: 0,
  count_xfailed: 0,
  count_xpassed: 0,
  created_at: at,
  updated_at: at,
} as TestRunRow;

const join = (parts: (string | Buffer)[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString();

describe('run columns with the snapshot as text', () => {
  it('differ from RUN_COLUMNS only by the snapshot cast', () => {
    expect(RUN_COLUMNS).toContain('r.environment_snapshot,');
    expect(RUN_COLUMNS_RAW_SNAPSHOT).toBe(
      RUN_COLUMNS.replace(
        'r.environment_snapshot,',
        'r.environment_snapshot::text AS environment_snapshot,',
      ),
    );
  });
});

describe('testRunJsonParts', () => {
  it.each([
    ['an object', { nodes: [1, 2], name: 'ü' }],
    ['an empty snapshot', {}],
  ])('spells JSON.stringify(toTestRunDto) byte for byte, with %s', (_name, snapshot) => {
    const bytes = revisionSnapshotBytes(snapshot);
    expect(join(testRunJsonParts(row, bytes))).toBe(JSON.stringify(toTestRunDto(row, snapshot)));
  });

  it('writes the snapshot bytes as they are (a run’s own text keeps its spacing)', () => {
    const own = Buffer.from('{"nodes": [1, 2]}');
    const json = join(testRunJsonParts(row, own));
    expect(json).toContain(',"environment_snapshot":{"nodes": [1, 2]},"milestone_id":');
    expect(Object.keys(JSON.parse(json) as object)).toEqual(Object.keys(toTestRunDto(row, {})));
  });
});

describe('snapshotBytesOf', () => {
  const revision = { a: [1, 2.5], b: 'x' };
  it('answers the run’s own text, else the revision’s from one load of the missing revisions', async () => {
    const cache = new SnapshotCache(1 << 20);
    const load = jest.fn(async (ids: string[]) =>
      ids.map((id) => ({ id, full_snapshot: { ...revision, id } })),
    );
    const runs = [
      { environment_revision_id: 'v1', environment_snapshot: null },
      { environment_revision_id: null, environment_snapshot: '{}' },
      { environment_revision_id: 'v2', environment_snapshot: '{"own": 1}' },
      { environment_revision_id: 'v2', environment_snapshot: null },
      { environment_revision_id: 'v1', environment_snapshot: null },
    ];
    const got = (await snapshotBytesOf(runs, cache, load)).map(String);
    expect(got).toEqual([
      JSON.stringify({ ...revision, id: 'v1' }),
      '{}',
      '{"own": 1}',
      JSON.stringify({ ...revision, id: 'v2' }),
      JSON.stringify({ ...revision, id: 'v1' }),
    ]);
    expect(load).toHaveBeenCalledTimes(1);
    expect(load.mock.calls[0][0].sort()).toEqual(['v1', 'v2']);
    // Warm: nothing is loaded.
    expect((await snapshotBytesOf(runs, cache, load)).map(String)).toEqual(got);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('with a cache of size 0, loads every time and still answers', async () => {
    const cache = new SnapshotCache(0);
    const load = jest.fn(async (ids: string[]) =>
      ids.map((id) => ({ id, full_snapshot: revision })),
    );
    const runs = [{ environment_revision_id: 'v1', environment_snapshot: null }];
    await snapshotBytesOf(runs, cache, load);
    expect((await snapshotBytesOf(runs, cache, load)).map(String)).toEqual([
      JSON.stringify(revision),
    ]);
    expect(load).toHaveBeenCalledTimes(2);
  });
});
