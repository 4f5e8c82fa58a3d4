import { fieldSelection } from '../../common/pagination/fields';
import { TEST_RUN_FIELDS } from './dto/test-run.dto';
import { selectedRunJsonParts } from './test-run-fields';
import { testRunJsonParts, toTestRunDto } from './test-run.mapper';
import { RUN_COLUMNS, RUN_COLUMNS_NO_SNAPSHOT, TestRunRow } from './test-runs.repository';

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
} as unknown as TestRunRow;

const SNAPSHOT = Buffer.from('{"environment":{"name":"Staging"},"topology":{"x":[1,2]}}');

const join = (parts: (string | Buffer)[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString();

describe('sparse fields of a run', () => {
  it('TEST_RUN_FIELDS are the run object’s fields, in its order', () => {
    expect(Object.keys(toTestRunDto(row, {}))).toEqual(TEST_RUN_FIELDS);
  });

  const full = JSON.parse(join(testRunJsonParts(row, SNAPSHOT))) as Record<string, unknown>;

  it.each<[string, string[]]>([
    ['one field', ['name']],
    ['several, listed out of order', ['updated_at', 'id', 'status']],
    ['only the snapshot', ['environment_snapshot']],
    ['the snapshot first of the answered', ['environment_snapshot', 'build']],
    ['the snapshot last of the answered', ['environment_revision_number', 'environment_snapshot']],
    ['the snapshot in the middle', ['updated_at', 'environment_snapshot', 'id']],
    ['the first and the last fields', ['id', 'updated_at']],
    ['every field', [...TEST_RUN_FIELDS]],
  ])(
    '%s: valid JSON with those fields in the schema’s order, values as in the full run',
    (_n, names) => {
      const selection = fieldSelection(names);
      const withSnapshot = names.includes('environment_snapshot');
      const parts = selectedRunJsonParts(row, withSnapshot ? SNAPSHOT : null, selection);
      const got = JSON.parse(join(parts)) as Record<string, unknown>;
      expect(Object.keys(got)).toEqual(TEST_RUN_FIELDS.filter((f) => names.includes(f)));
      for (const k of Object.keys(got)) expect(got[k]).toEqual(full[k]);
      // The snapshot goes out as its bytes, never parsed nor copied.
      if (withSnapshot) expect(parts).toContain(SNAPSHOT);
    },
  );

  it('no selection: the whole run, byte for byte as before', () => {
    expect(join(selectedRunJsonParts(row, SNAPSHOT, null))).toBe(
      join(testRunJsonParts(row, SNAPSHOT)),
    );
  });

  it('the columns without the snapshot differ from RUN_COLUMNS only there', () => {
    expect(RUN_COLUMNS_NO_SNAPSHOT).toBe(
      RUN_COLUMNS.replace('r.environment_snapshot,', 'NULL::text AS environment_snapshot,'),
    );
    expect(RUN_COLUMNS_NO_SNAPSHOT).not.toMatch(/r\.environment_snapshot\b/);
  });
});
