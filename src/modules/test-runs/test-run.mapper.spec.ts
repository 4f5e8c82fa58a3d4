import { RawJson, stringifyWithRawJson } from '../../common/http/raw-json';
import { toTestRunDto } from './test-run.mapper';
import { RUN_COLUMNS, RUN_COLUMNS_RAW_SNAPSHOT, TestRunRow } from './test-runs.repository';

describe('run columns with the snapshot as text', () => {
  it('differ from RUN_COLUMNS only by the snapshot cast', () => {
    expect(RUN_COLUMNS).toContain('r.environment_snapshot,');
    expect(RUN_COLUMNS_RAW_SNAPSHOT).toBe(
      RUN_COLUMNS.replace(
        'r.environment_snapshot,',
        'r.environment_snapshot::text AS environment_snapshot,',
      ),
    );
    expect(RUN_COLUMNS_RAW_SNAPSHOT).toContain(
      'r.environment_snapshot::text AS environment_snapshot',
    );
  });

  it('a snapshot read as text is answered as that text; a parsed one as the object', () => {
    const row = {
      id: 'r1',
      environment_revision_id: null,
      milestone_id: null,
      started_at: null,
      completed_at: null,
      archived_at: null,
      created_at: new Date('2026-01-01T00:00:00Z'),
      updated_at: new Date('2026-01-01T00:00:00Z'),
    } as unknown as TestRunRow;
    const asText = toTestRunDto({ ...row, environment_snapshot: '{"nodes": [1, 2]}' });
    expect(asText.environment_snapshot).toBeInstanceOf(RawJson);
    expect(stringifyWithRawJson({ s: asText.environment_snapshot })).toBe(
      '{"s":{"nodes": [1, 2]}}',
    );
    const parsed = toTestRunDto({ ...row, environment_snapshot: { nodes: [1, 2] } });
    expect(parsed.environment_snapshot).toEqual({ nodes: [1, 2] });
    expect(toTestRunDto({ ...row, environment_snapshot: null }).environment_snapshot).toEqual({});
  });
});
