import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RoleFixture, TestApp } from './test-app';

type Row = Record<string, unknown>;

const FIXTURES = join(__dirname, '..', 'fixtures', 'junit');

/** A report from `test/fixtures/junit`. */
export const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));

/**
 * Set-up and read-back helpers shared by the import e2e suites. `ctx` is read on each call, so the
 * helpers can be taken before `beforeAll` has created the app and the role fixture.
 */
export function importHelpers(ctx: () => { t: TestApp; f: RoleFixture }) {
  /** A project where the fixture's tester and viewer are members. */
  async function newProject(): Promise<string> {
    const { t, f } = ctx();
    const projectId = await t.createProject(f.lead.token);
    await t.addMember(projectId, f.tester.id, 'tester', f.lead.token);
    await t.addMember(projectId, f.viewer.id, 'viewer', f.lead.token);
    return projectId;
  }

  async function createRun(projectId: string, name?: string): Promise<string> {
    const { t, f } = ctx();
    const res = await t
      .req('post', '/api/v1/test-runs', f.tester.token)
      .send({ project_id: projectId, name: name ?? t.unique('Run ') });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function createCase(projectId: string, body: Row): Promise<string> {
    const { t, f } = ctx();
    const res = await t
      .req('post', '/api/v1/test-cases', f.tester.token)
      .send({ project_id: projectId, ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function addToRun(runId: string, caseIds: string[]): Promise<void> {
    const { t, f } = ctx();
    const res = await t
      .req('post', '/api/v1/run-cases/bulk', f.tester.token)
      .send({ test_run_id: runId, test_case_ids: caseIds });
    expect(res.status).toBe(201);
  }

  /** Everything an import may write in a project, plus the state of one run. */
  async function snapshot(projectId: string, runId: string): Promise<Row> {
    const rows = await ctx().t.db.query(
      `SELECT (SELECT count(*) FROM test_cases WHERE project_id = $1)::int AS cases,
              (SELECT count(*) FROM suites WHERE project_id = $1)::int AS suites,
              (SELECT count(*) FROM test_runs WHERE project_id = $1)::int AS runs,
              (SELECT count(*) FROM run_items WHERE project_id = $1)::int AS items,
              (SELECT count(*) FROM run_item_rows WHERE project_id = $1)::int AS rows,
              (SELECT count(*) FROM run_item_history WHERE project_id = $1)::int AS history,
              (SELECT count(*) FROM junit_imports WHERE project_id = $1)::int AS imports,
              (SELECT coalesce(max(updated_at), 'epoch')::text FROM run_items WHERE project_id = $1) AS items_updated,
              (SELECT coalesce(max(updated_at), 'epoch')::text FROM run_item_rows WHERE project_id = $1) AS rows_updated,
              (SELECT status || ' ' || coalesce(started_at::text, '-') || ' ' || updated_at::text
                 FROM test_runs WHERE id = $2) AS run,
              (SELECT value FROM project_counters WHERE project_id = $1 AND name = 'test_case_key') AS counter`,
      [projectId, runId],
    );
    return rows[0] as Row;
  }

  /** The rows of a run with their item and case, in case key then row order. */
  async function rowsOfRun(runId: string): Promise<Row[]> {
    return ctx().t.db.query(
      `SELECT tc.title, tc.automation_id, ri.status AS item_status, ri.comment AS item_comment,
              w.scenario_label, w.status, w.comment, w.system_out, w.system_err, w.duration_ms::int AS duration_ms,
              w.execution_count, w.executed_by_id, w.finished_at, ri.last_executed_at
         FROM run_items ri JOIN test_cases tc ON tc.id = ri.test_case_id
         JOIN run_item_rows w ON w.run_item_id = ri.id
        WHERE ri.test_run_id = $1 ORDER BY tc.key_number, w.row_order`,
      [runId],
    );
  }

  return { newProject, createRun, createCase, addToRun, snapshot, rowsOfRun };
}
