import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { RunMetadata, runMetadata } from './ci-env';
import { Api, ApiError, ApiResponse, Io, problemCode } from './client';
import { CliError, UsageError } from './errors';
import { EXIT, ExitCode } from './exit-codes';
import { expandFileArgs } from './files';
import { idempotencyKey, sha256Hex } from './idempotency';
import {
  CompareResult,
  failingCount,
  ImportResult,
  ReadinessResult,
  renderCompare,
  renderImports,
  renderProblem,
  renderReadiness,
} from './render';

/**
 * Files sent per import request unless `--files-per-request` says otherwise: the server takes
 * several `file` parts as one import (issue #18 §2), up to its MAX_UPLOAD_FILES (default 1000), so
 * every file goes in one request; only a larger set is split into several imports of this many
 * files. A server with a lower MAX_UPLOAD_FILES answers 413 `too_many_files` (its problem names no
 * limit a client can read): `tms` then halves the request and tries again (`importCommand`).
 */
export const FILES_PER_REQUEST = 1000;
/** Most files `--files-per-request` accepts (the largest MAX_UPLOAD_FILES a server takes). */
export const MAX_FILES_PER_REQUEST = 100_000;
/** Page size of the lists `tms` walks (the API's maximum). */
export const PAGE_SIZE = 200;
/** Longest `search` the run list takes, in characters (code points). */
export const RUN_SEARCH_MAX_CHARS = 200;
/** Pause between two looks at a background import (`--async --wait`). */
export const POLL_INTERVAL_MS = 1000;

export interface ImportOptions {
  project: string;
  run?: string;
  runName?: string;
  build?: string;
  branch?: string;
  commitSha?: string;
  /** `--attribute key=value`, repeatable. */
  attribute?: string[];
  environment?: string;
  milestone?: string;
  createMissingCases?: boolean;
  dryRun?: boolean;
  async?: boolean;
  wait?: boolean;
  failOnFailures?: boolean;
  /** `--files-per-request <n>`: files per import request (default FILES_PER_REQUEST). */
  filesPerRequest?: number;
}

interface Output {
  json: boolean;
}

interface LoadedFile {
  path: string;
  name: string;
  bytes: Buffer;
  sha256: string;
}

interface RunPage {
  items: { id: string; name: string }[];
  has_next: boolean;
}

/**
 * The `search` that finds runs named `name`: the name, or its first RUN_SEARCH_MAX_CHARS characters
 * (code points, so a surrogate pair is never split) when it is longer (a run name may have 255);
 * the caller keeps only the exact name.
 */
export function runSearchText(name: string): string {
  const chars = [...name.trim()];
  return chars.length <= RUN_SEARCH_MAX_CHARS
    ? name.trim()
    : chars.slice(0, RUN_SEARCH_MAX_CHARS).join('');
}

/** The newest open (not_started / in_progress) run of the project named `name` (case-insensitive). */
async function findOpenRun(api: Api, project: string, name: string): Promise<string | null> {
  const wanted = name.trim().toLowerCase();
  for (let page = 1; ; page += 1) {
    const res = await api.request('GET', '/test-runs', {
      query: {
        project_id: project,
        search: runSearchText(name),
        status: ['not_started', 'in_progress'],
        sort_by: 'created_at',
        sort_order: 'desc',
        page: String(page),
        page_size: String(PAGE_SIZE),
      },
    });
    const body = res.body as RunPage;
    const hit = body.items.find((r) => r.name.trim().toLowerCase() === wanted);
    if (hit) return hit.id;
    if (!body.has_next) return null;
  }
}

/** Statuses of a run that takes results (the others: `completed`, `archived`). */
const OPEN_RUN_STATUSES: readonly string[] = ['not_started', 'in_progress'];
/**
 * Most runs `createRun` walks past: each one a run that an earlier `tms` created under the same
 * key chain and that was closed or deleted within the server's IDEMPOTENCY_TTL_HOURS.
 */
export const MAX_CLOSED_RUNS = 1000;

/**
 * Why the run `id` cannot take this import (`completed`, `archived`, `deleted`, `renamed`), or
 * null when it is open and still named `name`.
 */
async function closedRun(api: Api, id: string, name: string): Promise<string | null> {
  let run: { name?: unknown; status?: unknown };
  try {
    const res = await api.request('GET', `/test-runs/${encodeURIComponent(id)}`, {
      query: { fields: 'id,name,status' },
    });
    run = res.body as typeof run;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return 'deleted';
    throw error;
  }
  if (!OPEN_RUN_STATUSES.includes(String(run.status))) return String(run.status);
  if (String(run.name).trim().toLowerCase() !== name.trim().toLowerCase()) return 'renamed';
  return null;
}

/**
 * Creates the run `--run-name` names (none is open) under `key`, which is derived from the run's
 * fields so that a retried step (or a request retried after a lost answer) gets the same run back
 * instead of a second one. Within the server's IDEMPOTENCY_TTL_HOURS that replay can be a run that
 * was closed or deleted since: then the run is created again under a key derived from that key and
 * the closed run's id. Still deterministic, so a retry of this step walks the same keys and lands
 * on the same new run.
 */
async function createRun(
  api: Api,
  run: { name: string; build?: string },
  key: string,
  io: Io,
): Promise<string> {
  for (let closed = 0; ; closed += 1) {
    const created = await api.request('POST', '/test-runs', {
      json: run,
      headers: { 'Idempotency-Key': key },
    });
    const id = (created.body as { id: string }).id;
    if (created.headers.get('idempotent-replayed') !== 'true') {
      io.stderr(
        `tms: created run "${run.name}" (${id})${run.build ? ` build ${run.build}` : ''}\n`,
      );
      return id;
    }
    const why = await closedRun(api, id, run.name);
    if (why === null) {
      // Created by an earlier try of this step (or a parallel one with the same metadata).
      io.stderr(`tms: using run "${run.name}" (${id}), created by an earlier tms with this key\n`);
      return id;
    }
    if (closed >= MAX_CLOSED_RUNS) {
      throw new CliError(
        `tms: more than ${MAX_CLOSED_RUNS} runs "${run.name}" created by tms with the same ` +
          `metadata were closed or deleted lately; give --build or another --run-name\n`,
        EXIT.REFUSED,
      );
    }
    io.stderr(`tms: run "${run.name}" (${id}) created earlier is ${why}: creating a new one\n`);
    key = idempotencyKey({ op: 'create-run-after-closed', previous_key: key, closed_run: id }, []);
  }
}

export async function importCommand(
  api: Api,
  args: readonly string[],
  opts: ImportOptions,
  out: Output,
  io: Io,
): Promise<ExitCode> {
  if (opts.run !== undefined && opts.runName !== undefined) {
    throw new UsageError('give either --run or --run-name, not both');
  }
  // --build, --branch, --commit-sha and --attribute describe a run that tms or the server creates
  // (sent as form fields when the server picks the run); --environment and --milestone only a run
  // tms creates (--run-name).
  const metadataFlags: Array<[string, unknown]> = [
    ['--build', opts.build],
    ['--branch', opts.branch],
    ['--commit-sha', opts.commitSha],
    ['--attribute', opts.attribute?.length ? opts.attribute : undefined],
  ];
  const runFields = [
    ...(opts.run !== undefined ? metadataFlags : []),
    ['--environment', opts.environment],
    ['--milestone', opts.milestone],
  ].filter(([, v]) => v !== undefined);
  if (runFields.length > 0 && opts.runName === undefined) {
    throw new UsageError(
      `${runFields.map(([f]) => f).join(', ')} describe the run tms creates: give --run-name too` +
        (opts.run !== undefined ? ' (not --run: that run exists already)' : ''),
    );
  }
  let metadata: RunMetadata;
  try {
    metadata = runMetadata(
      {
        build: opts.build,
        branch: opts.branch,
        commitSha: opts.commitSha,
        attributes: opts.attribute,
      },
      io.env,
    );
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (opts.wait && !opts.async) throw new UsageError('--wait goes with --async');

  const files: LoadedFile[] = expandFileArgs(args, io.cwd).map((path) => {
    const bytes = readFileSync(resolve(io.cwd, path));
    return { path, name: basename(path), bytes, sha256: sha256Hex(bytes) };
  });
  const dryRun = opts.dryRun === true;
  const createMissing = opts.createMissingCases === true;
  if (dryRun && opts.async) {
    io.stderr(
      'tms: a dry run is never queued: the preview is answered at once (--async ignored)\n',
    );
  }

  // The target: a run given by id, a run found or created by name, or (neither) the project, where
  // the server picks the run from each report's name.
  let runId: string | null = opts.run ?? null;
  // The run this step created (the server then answers it as `existing`: it was, by the upload).
  let createdRunId: string | null = null;
  if (opts.runName !== undefined) {
    runId = await findOpenRun(api, opts.project, opts.runName);
    if (runId === null && !dryRun) {
      const run = {
        project_id: opts.project,
        name: opts.runName.trim(),
        build: metadata.build ?? undefined,
        environment_id: opts.environment,
        milestone_id: opts.milestone,
        // From the CI provider's variables unless given (--branch, --commit-sha, --attribute).
        ci: metadata.ci ?? undefined,
        attributes: metadata.attributes,
      };
      runId = await createRun(
        api,
        run,
        idempotencyKey(
          {
            op: 'create-run',
            project: run.project_id,
            name: run.name,
            build: run.build ?? null,
            environment: run.environment_id ?? null,
            milestone: run.milestone_id ?? null,
            // Only when set: the key of a run without metadata stays what it was.
            ...(run.ci ? { ci: JSON.stringify(run.ci) } : {}),
            ...(Object.keys(run.attributes).length > 0
              ? { attributes: JSON.stringify(Object.entries(run.attributes).sort()) }
              : {}),
          },
          [],
        ),
        io,
      );
      createdRunId = runId;
    } else if (runId === null) {
      io.stderr(
        `tms: no open run "${opts.runName}" yet: the dry run previews the report against the project\n`,
      );
    }
  }

  const results: unknown[] = [];
  let perRequest = opts.filesPerRequest ?? FILES_PER_REQUEST;
  for (let done = 0; done < files.length; ) {
    const batch = files.slice(done, done + perRequest);
    const path =
      runId !== null
        ? `/test-runs/${runId}/imports/junit`
        : `/projects/${opts.project}/imports/junit`;
    // The server picks (or creates) the run: the run metadata goes along as form fields.
    const formMetadata = runId === null ? metadataFormFields(metadata) : [];
    const key = idempotencyKey(
      {
        op: 'import-junit',
        project: opts.project,
        run: runId,
        dry_run: dryRun,
        create_missing_cases: createMissing,
        ...(formMetadata.length > 0 ? { run_metadata: JSON.stringify(formMetadata) } : {}),
      },
      // A file's name goes along with its digest: the server's fingerprint of the upload counts
      // the names too, so the same bytes under another name are another request.
      batch.map((f) => `${f.sha256} ${f.name}`),
    );
    const headers: Record<string, string> = { 'Idempotency-Key': key };
    // A dry run is never queued: with the header and dry_run as a form field the server answers
    // 422, so the preview is asked for at once.
    if (opts.async && !dryRun) headers.Prefer = 'respond-async';
    let res: ApiResponse;
    try {
      res = await api.request('POST', path, {
        headers,
        form: () => {
          const form = new FormData();
          form.append('dry_run', String(dryRun));
          form.append('create_missing_cases', String(createMissing));
          for (const [name, value] of formMetadata) form.append(name, value);
          for (const f of batch) form.append('file', new Blob([f.bytes]), f.name);
          return form;
        },
      });
    } catch (error) {
      // The server's MAX_UPLOAD_FILES is lower: nothing of this request was applied, so it is
      // split in two and sent again (each half under the key of its own files; the halving
      // depends only on the server's answers, so a retried step sends the same requests).
      if (!isTooManyFiles(error) || batch.length === 1) throw error;
      perRequest = Math.ceil(batch.length / 2);
      io.stderr(
        `tms: the server takes fewer than ${batch.length} files per import (413 too_many_files): ` +
          `sending ${perRequest} per request (--files-per-request)\n`,
      );
      continue;
    }
    done += batch.length;
    if (res.status === 202) {
      const location = res.headers.get('location');
      // Without --async a 202 is the replay of a background import of the same files (the
      // Idempotency-Key does not count --async): its outcome is followed as --wait does, so the
      // exit code says how it ended (it said 0 for a failed one).
      const follow = opts.wait === true || !opts.async;
      if (!follow || location === null) {
        io.stderr(
          `tms: ${batch.map((f) => f.path).join(', ')}: queued${location ? ` at ${location}` : ''}\n`,
        );
        results.push(res.body);
        continue;
      }
      results.push(await waitForImport(api, location, io));
    } else {
      results.push(res.body);
    }
  }

  if (out.json)
    io.stdout(JSON.stringify(results.length === 1 ? results[0] : results, null, 2) + '\n');
  const finished = results.filter((r): r is ImportResult => isImportResult(r));
  // The table tells what this step did to the run: one it created is `created`; a dry run with
  // --run-name and no open run of that name previews against the project, whose answer names the
  // run after the report, so the table names the run the real import would create.
  const shown = finished.map((r) =>
    createdRunId !== null && r.target_run.id === createdRunId
      ? { ...r, target_run: { ...r.target_run, match_mode: 'created' } }
      : dryRun && opts.runName !== undefined && runId === null
        ? { ...r, target_run: { ...r.target_run, name: opts.runName.trim() } }
        : r,
  );
  if (!out.json && shown.length > 0) io.stdout(renderImports(shown));
  if (opts.failOnFailures) {
    const failing = finished.reduce((s, r) => s + failingCount(r), 0);
    if (failing > 0) {
      io.stderr(`tms: ${failing} failing test${failing === 1 ? '' : 's'} (--fail-on-failures)\n`);
      return EXIT.GATE;
    }
  }
  return EXIT.OK;
}

/**
 * The run metadata as the import endpoints' form fields: `build`, `ci_provider`, `branch`,
 * `commit_sha`, `job_url`, `pipeline_id`, and one `attribute=key:value` per attribute.
 */
export function metadataFormFields(m: RunMetadata): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (m.build !== null) out.push(['build', m.build]);
  const ci = m.ci ?? {};
  if (ci.provider !== undefined) out.push(['ci_provider', ci.provider]);
  if (ci.branch !== undefined) out.push(['branch', ci.branch]);
  if (ci.commit_sha !== undefined) out.push(['commit_sha', ci.commit_sha]);
  if (ci.job_url !== undefined) out.push(['job_url', ci.job_url]);
  if (ci.pipeline_id !== undefined) out.push(['pipeline_id', ci.pipeline_id]);
  for (const [k, v] of Object.entries(m.attributes)) out.push(['attribute', `${k}:${v}`]);
  return out;
}

/** 413 `too_many_files`: the request has more files than the server's MAX_UPLOAD_FILES. */
function isTooManyFiles(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.status === 413 &&
    problemCode(error.body) === 'too_many_files'
  );
}

function isImportResult(r: unknown): r is ImportResult {
  return (
    r !== null && typeof r === 'object' && 'statuses' in r && 'summary' in r && 'target_run' in r
  );
}

/**
 * Polls a background import (`GET /imports/{id}`, issue #18 §3) until it ends: `succeeded` answers
 * its import summary, `failed` its problem (exit 2).
 */
async function waitForImport(api: Api, location: string, io: Io): Promise<unknown> {
  for (;;) {
    const res = await api.request('GET', location);
    const record = res.body as Record<string, unknown>;
    if (record.status === 'succeeded') {
      if (isImportResult(record)) return record;
      const inner = record.result ?? record.summary;
      return isImportResult(inner) ? inner : record;
    }
    if (record.status === 'failed') {
      // Exit 2 whatever the problem's status (a 500 when its attempts ran out): the import is
      // over, and running tms again would upload it again.
      const problem = (record.problem ?? record) as { status?: unknown };
      const status = typeof problem.status === 'number' ? problem.status : 422;
      throw new CliError(renderProblem(status, problem), EXIT.REFUSED);
    }
    await io.sleep(POLL_INTERVAL_MS);
  }
}

export interface CompareOptions {
  base?: string;
  previous?: boolean;
  failOnNewFailures?: boolean;
}

export async function compareCommand(
  api: Api,
  run: string,
  opts: CompareOptions,
  out: Output,
  io: Io,
): Promise<ExitCode> {
  if ((opts.base !== undefined) === (opts.previous === true)) {
    throw new UsageError('give exactly one of --base <run> and --previous');
  }
  let merged: (CompareResult & { has_next: boolean; page: number }) | null = null;
  for (let page = 1; ; page += 1) {
    const res = await api.request('GET', `/test-runs/${encodeURIComponent(run)}/compare`, {
      query: {
        base_run_id: opts.base,
        base: opts.previous ? 'previous' : undefined,
        change: ['newly_failing', 'fixed'],
        page: String(page),
        page_size: String(PAGE_SIZE),
      },
    });
    const body = res.body as CompareResult & { has_next: boolean; page: number };
    merged = merged === null ? body : { ...body, items: [...merged.items, ...body.items] };
    if (!body.has_next) break;
  }
  const result = { ...merged, page: 1, page_size: merged.items.length, has_next: false };
  io.stdout(out.json ? JSON.stringify(result, null, 2) + '\n' : renderCompare(result));
  const newlyFailing = result.counts.newly_failing ?? 0;
  if (opts.failOnNewFailures && newlyFailing > 0) {
    io.stderr(
      `tms: ${newlyFailing} newly failing test${newlyFailing === 1 ? '' : 's'} (--fail-on-new-failures)\n`,
    );
    return EXIT.GATE;
  }
  return EXIT.OK;
}

export interface ReadinessOptions {
  environment?: string;
  build?: string;
  minRiskLevel?: string;
}

export async function readinessCommand(
  api: Api,
  product: string,
  opts: ReadinessOptions,
  out: Output,
  io: Io,
): Promise<ExitCode> {
  const res = await api.request('GET', `/products/${encodeURIComponent(product)}/readiness`, {
    query: {
      environment_id: opts.environment,
      build: opts.build,
      min_risk_level: opts.minRiskLevel,
    },
  });
  const body = res.body as ReadinessResult;
  io.stdout(out.json ? JSON.stringify(body, null, 2) + '\n' : renderReadiness(body));
  if (body.verdict !== 'ready') {
    io.stderr(
      `tms: not ready: ${body.blockers.length} blocker${body.blockers.length === 1 ? '' : 's'}\n`,
    );
    return EXIT.GATE;
  }
  return EXIT.OK;
}
