/**
 * Plain-text output of `tms` (pure): fixed-width tables, numbers right-aligned, no colours (CI
 * logs). The server's JSON is printed as is with `--json` instead.
 */
export type Cell = string | number | null;

/** A table with a header line and a dashed rule; `null` cells print as `-`. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
): string {
  const text = rows.map((row) =>
    headers.map((_, i) => ((row[i] ?? null) === null ? '-' : String(row[i]))),
  );
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number' || r[i] === null),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return (
    [line(headers), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n') + '\n'
  );
}

/** What `tms` reads of an import answer (`JunitImportDto`). */
export interface ImportResult {
  id: string | null;
  test_run_id: string | null;
  target_run: { id: string | null; name: string; match_mode: string };
  source_filename: string;
  dry_run: boolean;
  status: string;
  summary: {
    total_cases: number;
    matched_by_automation_id: number;
    matched_by_name: number;
    created_test_cases: number;
    updated: number;
    unmatched: number;
    ambiguous: number;
    warnings: number;
    /** Each file of the import with its own counts (servers before multi-file imports: absent). */
    files?: ImportFileCounts[];
  };
  statuses: {
    passed: number;
    failure: number;
    error: number;
    skipped: number;
    xfailed: number;
    xpassed: number;
    flaky: number;
  };
}

/**
 * One file of an import (`summary.files`): `passed` its final passes, `failed` failure, error and
 * xpassed, `skipped` skipped and xfailed (the server's definitions).
 */
export interface ImportFileCounts {
  name: string;
  testcases: number;
  passed: number;
  failed: number;
  skipped: number;
}

/** Failing tests of an import: `failure` + `error`. */
export function failingCount(r: ImportResult): number {
  return (r.statuses?.failure ?? 0) + (r.statuses?.error ?? 0);
}

/**
 * The import table: a row per file (all files of a request form one import, so `summary.files`
 * gives them; a one-file import, or a server without `summary.files`, is one row named after its
 * file), and a `total` row when there are several. The columns count as the server's file summary
 * does, so that the rows add up: `passed`, `failed` = failure + error + xpassed, `skipped` = skipped
 * + xfailed. Matching counts (`matched`, `created`, `unmatched`, `ambiguous`) exist per import only:
 * on the rows of a multi-file import they are `-`, and the total has them. The total sums the
 * imports, not the file rows (a test in two files is counted in both files, once in its import).
 * `--fail-on-failures` gates on failure + error (`failingCount`).
 */
export function renderImports(results: readonly ImportResult[]): string {
  const headers = [
    'file',
    'status',
    'tests',
    'passed',
    'failed',
    'skipped',
    'matched',
    'created',
    'unmatched',
    'ambiguous',
  ];
  const counts = (r: ImportResult): number[] => [
    r.summary.total_cases,
    r.statuses.passed,
    failingCount(r) + r.statuses.xpassed,
    r.statuses.skipped + r.statuses.xfailed,
    r.summary.matched_by_automation_id + r.summary.matched_by_name,
    r.summary.created_test_cases,
    r.summary.unmatched,
    r.summary.ambiguous,
  ];
  const rows: Cell[][] = [];
  for (const r of results) {
    const files = r.summary.files ?? [];
    if (files.length <= 1) {
      rows.push([files[0]?.name ?? r.source_filename, r.status, ...counts(r)]);
      continue;
    }
    for (const f of files) {
      rows.push([
        f.name,
        r.status,
        f.testcases,
        f.passed,
        f.failed,
        f.skipped,
        null,
        null,
        null,
        null,
      ]);
    }
  }
  if (rows.length > 1) {
    const sums = results.map(counts).reduce((a, b) => a.map((v, i) => v + b[i]));
    rows.push(['total', '', ...sums]);
  }
  const runs = [
    ...new Map(results.map((r) => [r.target_run.id ?? r.target_run.name, r.target_run])).values(),
  ];
  const runLines = runs.map((run) =>
    run.id === null
      ? `Run: ${run.name} (dry run: ${run.match_mode === 'created' ? 'would be created' : 'not written'})\n`
      : `Run: ${run.name} (${run.id}, ${run.match_mode})\n`,
  );
  return runLines.join('') + renderTable(headers, rows);
}

export interface CompareItem {
  title: string;
  change: string;
  base_status: string | null;
  status: string | null;
}

export interface CompareResult {
  run: { id: string; name: string; build: string | null };
  base: { id: string; name: string; build: string | null };
  counts: Record<string, number>;
  build_changed: boolean;
  environment: {
    same_environment: boolean;
    from_revision: number | null;
    to_revision: number | null;
    changed: boolean;
  };
  datasets: { name: string; from_revision: number | null; to_revision: number | null }[];
  items: CompareItem[];
}

const COUNT_ORDER = [
  'newly_failing',
  'fixed',
  'still_failing',
  'added',
  'removed',
  'changed',
  'unchanged',
];

export function renderCompare(c: CompareResult): string {
  const out: string[] = [];
  const label = (r: { id: string; name: string; build: string | null }) =>
    `${r.name}${r.build ? ` [${r.build}]` : ''} (${r.id})`;
  out.push(`Run:  ${label(c.run)}\nBase: ${label(c.base)}\n`);
  out.push(COUNT_ORDER.map((k) => `${k} ${c.counts[k] ?? 0}`).join(', ') + '\n');
  const env = c.environment;
  out.push(
    env.changed
      ? `Environment changed: ${env.same_environment ? 'same environment' : 'another environment'}, revision ${env.from_revision ?? '-'} → ${env.to_revision ?? '-'}\n`
      : 'Environment unchanged\n',
  );
  if (c.build_changed) out.push(`Build changed: ${c.base.build ?? '-'} → ${c.run.build ?? '-'}\n`);
  if (c.datasets.length > 0) {
    out.push('\nDatasets changed:\n');
    out.push(
      renderTable(
        ['dataset', 'base revision', 'revision'],
        c.datasets.map((d) => [d.name, d.from_revision, d.to_revision]),
      ),
    );
  }
  for (const change of ['newly_failing', 'fixed']) {
    const items = c.items.filter((i) => i.change === change);
    if (items.length === 0) continue;
    out.push(`\n${change === 'fixed' ? 'Fixed' : 'Newly failing'} (${items.length}):\n`);
    out.push(
      renderTable(
        ['test', 'base', 'now'],
        items.map((i) => [i.title, i.base_status, i.status]),
      ),
    );
  }
  return out.join('');
}

export interface ReadinessResult {
  verdict: string;
  product_id: string;
  criteria: { environment_id: string | null; build: string | null; min_risk_level: string };
  counts: Record<string, number>;
  blockers: {
    component_name: string;
    risk_level: string;
    risk_score: number;
    reason: string;
    test_case_ids: string[];
  }[];
}

export function renderReadiness(r: ReadinessResult): string {
  const out: string[] = [];
  out.push(`Verdict: ${r.verdict === 'ready' ? 'READY' : 'NOT READY'}\n`);
  const criteria = [
    `min risk level ${r.criteria.min_risk_level}`,
    r.criteria.environment_id ? `environment ${r.criteria.environment_id}` : null,
    r.criteria.build ? `build ${r.criteria.build}` : null,
  ].filter((s) => s !== null);
  out.push(`Criteria: ${criteria.join(', ')}\n`);
  out.push(
    ['components', 'passing', 'failing', 'not_run', 'uncovered']
      .map((k) => `${k} ${r.counts[k] ?? 0}`)
      .join(', ') + '\n',
  );
  if (r.blockers.length > 0) {
    out.push('\nBlockers:\n');
    out.push(
      renderTable(
        ['component', 'risk', 'score', 'reason', 'cases'],
        r.blockers.map((b) => [
          b.component_name,
          b.risk_level,
          b.risk_score,
          b.reason,
          b.test_case_ids.length,
        ]),
      ),
    );
  }
  return out.join('');
}

/** A problem answer (RFC 9457) on stderr: title, code, detail, then the field errors. */
export function renderProblem(status: number, body: unknown): string {
  const p = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const title = typeof p.title === 'string' ? p.title : `HTTP ${status}`;
  const code = typeof p.code === 'string' ? p.code : null;
  const lines = [`tms: ${title} (${status}${code ? ` ${code}` : ''})`];
  if (typeof p.detail === 'string' && p.detail !== '') lines.push(`  ${p.detail}`);
  if (p.errors !== null && typeof p.errors === 'object') {
    for (const [field, messages] of Object.entries(p.errors as Record<string, unknown>)) {
      const list = Array.isArray(messages) ? messages.map(String) : [JSON.stringify(messages)];
      lines.push(`  ${field}: ${list.join('; ')}`);
    }
  }
  return lines.join('\n') + '\n';
}
