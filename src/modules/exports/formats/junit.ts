import type { RunItemStatus } from '../../test-runs/run-summary';
import type { ReportRow } from '../report';
import { secondsText } from '../report';
import { sortedAttributes } from '../../test-runs/run-metadata';
import type { ReportItemWithRows, RunReportReader } from '../exports.repository';
import { xmlAttr, xmlText } from './text';

/**
 * JUnit XML of a run, made to be imported again into the same cases (CONTRACT §6) as far as the
 * import's matching rules can tell them apart (reference §4.9: automation id, suite path and title,
 * title; `tms_test_case_key` is not a matching key, so a suite-less case without automation id
 * whose title other cases share imports back as ambiguous):
 *
 * - one `<testcase>` per row that has a result (`untested` / `in_progress` rows are left out);
 * - `name` = the case title; properties `tms_test_title` (title), `tms_suite_path` (the case's
 *   suite chain, JSON), `automation_id` (when the case has one), `tms_dataset_key` (the row label,
 *   so a re-import writes the same row) and `tms_test_case_key`;
 * - `classname` = the suite chain joined with `.` (absent without a suite);
 * - statuses: `failure` → `<failure>`, `error` → `<error>`, `skipped` → `<skipped>`,
 *   `xfailed` → `<skipped type="pytest.xfail">`, `xpassed` → `<failure message="[XPASS(strict)] …">`,
 *   `blocked` → `<skipped type="blocked">` (JUnit has no blocked: it imports back as skipped);
 *   the row comment becomes `message` (up to its first blank line) and the element text (the rest);
 * - the root has no name and the first `<testsuite>` is named after the run (a project-level
 *   import targets a run of that name); cases without a suite go to a second, nameless
 *   `<testsuite>` so that their suite path stays empty.
 */

const RESULT_STATUSES: ReadonlySet<string> = new Set([
  'passed',
  'failure',
  'error',
  'skipped',
  'blocked',
  'xfailed',
  'xpassed',
]);
const XPASS_PREFIX = '[XPASS(strict)]';

export interface JunitTotals {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  duration_ms: number;
}

export function emptyTotals(): JunitTotals {
  return { tests: 0, failures: 0, errors: 0, skipped: 0, duration_ms: 0 };
}

/** Adds `count` rows of `status` to the JUnit totals (rows without a result do not count). */
export function addToTotals(
  totals: JunitTotals,
  status: RunItemStatus,
  count: number,
  durationMs: number,
): void {
  if (!RESULT_STATUSES.has(status)) return;
  totals.tests += count;
  totals.duration_ms += durationMs;
  if (status === 'failure' || status === 'xpassed') totals.failures += count;
  else if (status === 'error') totals.errors += count;
  else if (status === 'skipped' || status === 'xfailed' || status === 'blocked')
    totals.skipped += count;
}

function totalsAttrs(t: JunitTotals): string {
  return `tests="${t.tests}" failures="${t.failures}" errors="${t.errors}" skipped="${t.skipped}" time="${secondsText(t.duration_ms) ?? '0'}"`;
}

/** A comment as `message` (up to the first blank line, else the first line) and body (the rest). */
export function splitComment(comment: string | null): {
  message: string | null;
  body: string | null;
} {
  if (comment === null || comment.trim() === '') return { message: null, body: null };
  const blank = comment.indexOf('\n\n');
  if (blank > 0)
    return { message: comment.slice(0, blank), body: comment.slice(blank + 2) || null };
  const newline = comment.indexOf('\n');
  if (newline > 0)
    return { message: comment.slice(0, newline), body: comment.slice(newline + 1) || null };
  return { message: comment, body: null };
}

function outcome(tag: string, attrs: Record<string, string | null>, body: string | null): string {
  const attributes = Object.entries(attrs)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([k, v]) => ` ${k}="${xmlAttr(v)}"`)
    .join('');
  return body === null
    ? `      <${tag}${attributes}/>\n`
    : `      <${tag}${attributes}>${xmlText(body)}</${tag}>\n`;
}

function property(name: string, value: string): string {
  return `        <property name="${xmlAttr(name)}" value="${xmlAttr(value)}"/>\n`;
}

/** The `<testcase>` of one row, or null when the row has no result. */
export function junitTestcase(item: ReportItemWithRows, row: ReportRow): string | null {
  if (!RESULT_STATUSES.has(row.status)) return null;
  const title = item.test_case.title ?? item.test_case.key ?? 'untitled';
  const attrs = [`name="${xmlAttr(title)}"`];
  if (item.suite_path.length > 0) attrs.push(`classname="${xmlAttr(item.suite_path.join('.'))}"`);
  const time = secondsText(row.duration_ms);
  if (time !== null) attrs.push(`time="${time}"`);
  let out = `    <testcase ${attrs.join(' ')}>\n      <properties>\n`;
  out += property('tms_test_title', title);
  if (item.suite_path.length > 0)
    out += property('tms_suite_path', JSON.stringify(item.suite_path));
  if (item.test_case.automation_id !== null)
    out += property('automation_id', item.test_case.automation_id);
  out += property('tms_dataset_key', row.label);
  if (item.test_case.key !== null) out += property('tms_test_case_key', item.test_case.key);
  out += '      </properties>\n';
  const { message, body } = splitComment(row.comment);
  switch (row.status) {
    case 'failure':
      out += outcome('failure', { message }, body);
      break;
    case 'error':
      out += outcome('error', { message }, body);
      break;
    case 'skipped':
      out += outcome('skipped', { message }, body);
      break;
    case 'blocked':
      out += outcome('skipped', { type: 'blocked', message }, body);
      break;
    case 'xfailed':
      out += outcome('skipped', { type: 'pytest.xfail', message }, body);
      break;
    case 'xpassed': {
      const text = message ?? '';
      const prefixed = text.startsWith(XPASS_PREFIX) ? text : `${XPASS_PREFIX} ${text}`.trim();
      out += outcome('failure', { message: prefixed }, body);
      break;
    }
    default:
      break;
  }
  if (row.system_out) out += `      <system-out>${xmlText(row.system_out)}</system-out>\n`;
  if (row.system_err) out += `      <system-err>${xmlText(row.system_err)}</system-err>\n`;
  return `${out}    </testcase>\n`;
}

/** The run as a JUnit XML document, streamed. */
export async function* junitReport(reader: RunReportReader): AsyncGenerator<string> {
  const run = reader.header.test_run;
  const all = emptyTotals();
  const suited = emptyTotals();
  const unsuited = emptyTotals();
  for (const t of await reader.rowTotals()) {
    addToTotals(all, t.status, t.count, t.duration_ms);
    addToTotals(t.suited ? suited : unsuited, t.status, t.count, t.duration_ms);
  }
  yield '<?xml version="1.0" encoding="UTF-8"?>\n';
  yield `<testsuites ${totalsAttrs(all)}>\n`;
  yield '  <properties>\n';
  const props: Array<[string, string | null]> = [
    ['test_run_id', run.id],
    ['test_run_status', run.status],
    ['build', run.build],
    ['environment', run.environment_name],
    ['milestone', run.milestone_name],
    // CI metadata and attributes (issue #24): `ci_<field>`, `attribute.<key>` (keys sorted).
    ['ci_provider', run.ci?.provider ?? null],
    ['ci_branch', run.ci?.branch ?? null],
    ['ci_commit_sha', run.ci?.commit_sha ?? null],
    ['ci_job_url', run.ci?.job_url ?? null],
    ['ci_pipeline_id', run.ci?.pipeline_id ?? null],
    ...sortedAttributes(run.attributes).map(([k, v]): [string, string] => [`attribute.${k}`, v]),
  ];
  for (const [name, value] of props) {
    if (value !== null) yield `    <property name="${xmlAttr(name)}" value="${xmlAttr(value)}"/>\n`;
  }
  yield '  </properties>\n';
  const timestamp = run.started_at ?? run.created_at;
  yield `  <testsuite name="${xmlAttr(run.name)}" ${totalsAttrs(suited)} timestamp="${timestamp}">\n`;
  let inUnsuited = false;
  for await (const item of reader.items({ withOutputs: true, suitedFirst: true })) {
    if (item.suite_path.length === 0 && !inUnsuited) {
      inUnsuited = true;
      yield `  </testsuite>\n  <testsuite ${totalsAttrs(unsuited)}>\n`;
    }
    for (const row of item.rows) {
      const testcase = junitTestcase(item, row);
      if (testcase !== null) yield testcase;
    }
  }
  yield '  </testsuite>\n</testsuites>\n';
}
