import type { Response } from 'supertest';
import { SentStatement, statementsDuring } from './query-count';
import type { TestApp } from './test-app';

/** A step of a plan as `EXPLAIN (ANALYZE, FORMAT JSON)` answers it (`Output` with VERBOSE). */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Heap Fetches'?: number;
  Output?: string[];
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/**
 * The statement the service sent while answering `GET url` (the first that `pick` selects), with
 * its parameters, and the response.
 */
export async function sentWhileGetting(
  t: TestApp,
  url: string,
  token: string,
  pick: (statement: SentStatement) => boolean,
): Promise<SentStatement & { res: Response }> {
  const { result: res, sent } = await statementsDuring(async () => t.req('get', url, token));
  const statement = sent.find(pick);
  expect(statement).toBeDefined();
  return { ...(statement as SentStatement), res };
}

/**
 * Every step of the statement's plan under EXPLAIN ANALYZE (VERBOSE when asked), parents before
 * their children, run in a rolled-back transaction after `settings` such as `enable_seqscan = off`
 * (the walk a statement can do, whatever the planner makes of a test's small tables).
 */
export async function explainedSteps(
  t: TestApp,
  statement: SentStatement,
  settings: readonly string[] = [],
  verbose = false,
): Promise<PlanNode[]> {
  const rows = await t.inRolledBackTransaction(async (qr) => {
    for (const setting of settings) await qr.query(`SET LOCAL ${setting}`);
    return (await qr.query(
      `EXPLAIN (ANALYZE, ${verbose ? 'VERBOSE, ' : ''}FORMAT JSON) ${statement.sql}`,
      statement.values,
    )) as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>;
  });
  const steps: PlanNode[] = [];
  const walk = (n: PlanNode) => {
    steps.push(n);
    n.Plans?.forEach(walk);
  };
  rows[0]?.['QUERY PLAN'].forEach((p) => walk(p.Plan));
  return steps;
}

/**
 * The most rows any join, sort, window or limit of the statement's plan carried with `column` in
 * its output ({@link explainedSteps}, VERBOSE). Scans are left out: a scan reads each row it visits
 * whole whatever it passes on (PostgreSQL may then pass the whole row, for the step above to
 * narrow), where joins and sorts cost by what they carry. For a deferred join this is the page
 * size; for a statement that chooses its page from whole rows, every row it skips as well.
 */
export async function mostRowsCarrying(
  t: TestApp,
  statement: SentStatement,
  column: string,
  settings: readonly string[] = [],
): Promise<number> {
  let most = 0;
  for (const n of await explainedSteps(t, statement, settings, true)) {
    const carries = !n['Node Type'].endsWith('Scan') && !n['Node Type'].startsWith('Bitmap');
    if (carries && n.Output?.some((output) => output.includes(column))) {
      most = Math.max(most, (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1));
    }
  }
  return most;
}
