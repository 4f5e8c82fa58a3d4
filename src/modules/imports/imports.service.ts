import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ProjectAccess } from '../../common/access/project-access';
import type { ProjectRole } from '../../common/access/roles';
import { JsonBody, JsonPart } from '../../common/http/json-body';
import { JobQueue } from '../../common/jobs/job-queue.service';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors, FormRefusal } from '../../common/errors/app-exception';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { CursorCodec, cursorScope } from '../../common/pagination/cursor';
import { CursorPage, KeysetPaging } from '../../common/pagination/keyset';
import { uuidv7 } from '../../common/persistence/ids';
import { WebhookEvents } from '../webhooks/webhook-events.service';
import { APP_CONFIG, AppConfig } from '../../config/config';
import {
  type CreatedCases,
  RESULTS_BATCH,
  RunResultsWriter,
} from '../run-items/run-results.writer';
import { SuitesRepository, SuiteTreeInsert } from '../suites/suites.repository';
import { formatCaseKey, TEST_CASE_KEY_COUNTER } from '../test-cases/case-keys';
import {
  ImportedCase,
  IMPORTED_TAGS,
  TestCasesRepository,
} from '../test-cases/test-cases.repository';
import { CreateTestRunFields, UpdateTestRunDto } from '../test-runs/dto/test-run.dto';
import { LockedRun, TestRunsService } from '../test-runs/test-runs.service';
import {
  ImportCreatedCaseDto,
  ImportFileSummaryDto,
  ImportJobDto,
  ImportStatusCountsDto,
  ImportSummaryDto,
  JunitImportDto,
  JunitImportQueryDto,
  JunitImportRecordDto,
  ListImportsQueryDto,
} from './dto/import.dto';
import {
  Flags,
  ImportPlan,
  ImportPlanner,
  PlannedCase,
  ReportFacts,
  ResultMatch,
} from './import-plan';
import type { MatchKind } from './matching';
import {
  IMPORT_KEYSET_ORDER,
  ImportJobRow,
  ImportRecordRow,
  ImportRepository,
  RunRef,
} from './import.repository';
import type { ParsedReport } from './junit/junit-parser';
import { ResultsJsonError } from './results-json/results-json';
import { pickTargetRun, targetRunName } from './target-run';
import {
  baseName,
  FILE_PART,
  FORM_FIELDS,
  readJunitUpload,
  ReportReader,
  UploadedReport,
  UploadForm,
  UploadLimits,
} from './upload';
import { READ_CHUNKS_PER_QUERY, StoredChunk, storingSink, UploadChunkQueue } from './upload-store';
import {
  isEmptyRunMetadata,
  isRunMetadataFormField,
  parseRunMetadataForm,
  RunMetadataForm,
} from './run-metadata-form';

/** `errors.file` of 422 `unsupported_report_format`. */
export const UNSUPPORTED_FORMAT_REASON =
  'unsupported report format: the first character (after whitespace and a byte order mark) must be "<" (JUnit XML) or "{" / "[" (Karvio results JSON)';

/**
 * Testcases whose cases are created, or whose results are applied (by the run-items writer), per
 * batch of statements.
 */
export const APPLY_BATCH = RESULTS_BATCH;

/** The tags of every case an import creates, as the run's items copy them (one shared array). */
const CREATED_CASE_TAGS = [...IMPORTED_TAGS];

/** The job queue of background imports. */
export const IMPORT_JOB = 'junit-import';

/** What a background import's job carries. */
export interface ImportJobData {
  importId: string;
}

/** Path of an import record (`Location` of a background import). */
export const importPath = (id: string): string => `/api/v1/imports/${id}`;

/** The `Prefer` token that asks for a background import (RFC 7240). */
export const RESPOND_ASYNC = 'respond-async';

/** Where an import goes: a run by id, or a project (the target run found by name, or created). */
export type ImportTarget = { runId: string } | { projectLevel: true };

/** What a background import stored next to its files: enough to run it on any instance. */
export interface StoredImportRequest {
  run_id: string | null;
  create_missing_cases: boolean;
  /** Run metadata form fields (issue #24), applied as in a synchronous import. */
  run_metadata?: RunMetadataForm;
  request_id: string;
  access: { role: ProjectRole; is_admin: boolean };
  user: {
    id: string;
    username: string;
    display_name: string | null;
    is_admin: boolean;
    via: 'token' | 'api_key';
  };
  files: Array<{
    name: string;
    content_type: string | null;
    size_bytes: number;
    sha256: string;
    gzip: boolean;
  }>;
}

/** A background import being applied: its record, and where its progress goes. */
export interface ImportJobContext {
  id: string;
  progress(processed: number, total: number): Promise<void>;
}

/** The checked files of an import, merged into one report (released by planning). */
interface CheckedUpload {
  report: ParsedReport | null;
  fileName: string;
  /** The first file's given name without a `.gz` suffix (the run name's fallback), or null. */
  nameForRun: string | null;
  contentType: string | null;
  sizeBytes: number;
  sha256: string;
  files: ImportFileSummaryDto[];
}

/** True when the request asks for `respond-async` among its preferences (RFC 7240). */
export function prefersAsync(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.some((value) =>
    value.split(',').some((pref) => pref.split(';')[0]?.trim().toLowerCase() === RESPOND_ASYNC),
  );
}

/**
 * The SHA-256 recorded for several files: of their SHA-256 hex digests, each followed by a line
 * feed, in request order; a single file keeps its own.
 */
export function combinedSha256(digests: string[]): string {
  if (digests.length === 1) return digests[0] ?? '';
  const hash = createHash('sha256');
  for (const d of digests) hash.update(`${d}\n`);
  return hash.digest('hex');
}

/** Per-file counts of `summary.files`. */
export function fileSummary(name: string, report: ParsedReport): ImportFileSummaryDto {
  const t = report.totals;
  return {
    name,
    testcases: report.results.length,
    passed: t.passed,
    failed: t.failure + t.error + t.xpassed,
    skipped: t.skipped + t.xfailed,
  };
}

/** Several parsed reports as one: results in file order (positions shifted), counters summed. */
export function mergeReports(reports: ParsedReport[]): ParsedReport {
  const first = reports[0];
  if (first === undefined) throw new Error('mergeReports: no report');
  if (reports.length === 1) return first;
  const merged: ParsedReport = {
    ...first,
    suites: 0,
    testcase_elements: 0,
    ignored_testcases: 0,
    nameless_testcases: [],
    results: [],
    totals: { ...first.totals },
    suite_logs: [],
    truncated: false,
  };
  for (const key of Object.keys(merged.totals) as Array<keyof ParsedReport['totals']>) {
    merged.totals[key] = 0;
  }
  let offset = 0;
  for (const report of reports) {
    merged.suites += report.suites;
    merged.testcase_elements += report.testcase_elements;
    merged.ignored_testcases += report.ignored_testcases;
    merged.nameless_testcases.push(...report.nameless_testcases);
    merged.suite_logs.push(...report.suite_logs);
    merged.truncated ||= report.truncated;
    for (const key of Object.keys(report.totals) as Array<keyof ParsedReport['totals']>) {
      merged.totals[key] += report.totals[key];
    }
    let last = 0;
    for (const result of report.results) {
      merged.results.push({ ...result, index: result.index + offset });
      last = Math.max(last, result.index + 1);
    }
    offset += last;
  }
  return merged;
}

/** A run the import writes into: as the import sees it, and its lock (taken once). */
type LockedImportRun = RunRef & { lock: LockedRun };

/** Where a plan is applied: an existing run, or a run that the (dry) import would create. */
interface Target {
  /** Locked unless the import is a dry run. */
  run: RunRef | LockedImportRun | null;
  name: string;
  matchMode: 'existing' | 'created';
}

function parseFormBool(value: unknown): boolean | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return undefined;
}

/**
 * JUnit import into a run or a project (CONTRACT §6, reference runs-imports-plans.md §4), in three
 * steps: upload (the multipart request, `upload.ts`), plan (what each result maps to,
 * `import-plan.ts`), apply (suites and cases through their repositories, results through the
 * run-items module's {@link RunResultsWriter}). This service orchestrates them.
 *
 * A real import runs in the request's transaction: suites, cases, run items, rows, item roll-ups,
 * run counters, the run start and the import record are written together or not at all; the run
 * is locked once. A dry run reads only. Every step is set-based: a constant number of statements
 * whatever the report size.
 */
@Injectable()
export class ImportsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repo: ImportRepository,
    private readonly planner: ImportPlanner,
    private readonly suites: SuitesRepository,
    private readonly cases: TestCasesRepository,
    private readonly runs: TestRunsService,
    private readonly results: RunResultsWriter,
    private readonly webhooks: WebhookEvents,
    private readonly jobs: JobQueue,
    private readonly cursors: CursorCodec,
  ) {}

  private get limits(): UploadLimits {
    return { maxBytes: this.config.maxUploadBytes, maxFiles: this.config.maxUploadFiles };
  }

  /** `POST /test-runs/{id}/imports/junit` (a background import with `Prefer: respond-async`). */
  async importIntoRun(
    access: ProjectAccess,
    user: AuthenticatedUser,
    runId: string,
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<JsonBody | ImportJobDto> {
    const target: ImportTarget = { runId };
    if (this.inBackground(query, req)) return this.enqueue(access, user, target, query, req);
    const { files, flags } = await this.readRequest(query, req);
    return this.runImport(access, user, target, files, flags, null);
  }

  /** `POST /projects/{id}/imports/junit`: the target run is found by name, or created. */
  async importIntoProject(
    access: ProjectAccess,
    user: AuthenticatedUser,
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<JsonBody | ImportJobDto> {
    const target: ImportTarget = { projectLevel: true };
    if (this.inBackground(query, req)) return this.enqueue(access, user, target, query, req);
    const { files, flags } = await this.readRequest(query, req);
    return this.runImport(access, user, target, files, flags, null);
  }

  /**
   * Imports checked-or-not files (upload → check → plan → apply) in the current transaction: the
   * request's, or a background import's (`job`: its record is completed instead of inserted).
   */
  async runImport(
    access: ProjectAccess,
    user: AuthenticatedUser,
    target: ImportTarget,
    files: UploadedReport[],
    flags: Flags,
    job: ImportJobContext | null,
  ): Promise<JsonBody> {
    if ('runId' in target) {
      const run = await this.lockRun(target.runId);
      const upload = this.checkReports(files);
      // Run metadata form fields update the run the caller named (issue #24).
      if (!flags.dryRun && !isEmptyRunMetadata(flags.runMetadata)) {
        await this.runs.mergeMetadata(run.lock, flags.runMetadata ?? {});
      }
      const { facts, plan } = await this.planner.planReport(access.projectId, upload, flags, run);
      return this.finish(
        access,
        user,
        upload,
        facts,
        flags,
        plan,
        {
          run,
          name: run.name,
          matchMode: 'existing',
        },
        job,
      );
    }
    const upload = this.checkReports(files);
    const header = upload.report ?? { name: null, timestamp: null };
    // The recorded file name has a default; the run name falls back on `JUnit Import` instead.
    const name = targetRunName(header.name, upload.nameForRun);
    if (!flags.dryRun) await this.repo.lockRunName(access.projectId, name);
    const chosen = pickTargetRun(
      await this.repo.findOpenRunsByName(access.projectId, name, !flags.dryRun),
      header.timestamp,
    );
    let runTarget: Target;
    if (chosen !== null) {
      runTarget = {
        run: flags.dryRun ? chosen : await this.lockRun(chosen.id),
        name: chosen.name,
        matchMode: 'existing',
      };
    } else if (flags.dryRun) {
      runTarget = { run: null, name, matchMode: 'created' };
    } else {
      const createdId = await this.runs.create(
        access,
        user,
        // Run metadata form fields describe the run the import creates (issue #24).
        Object.assign(new CreateTestRunFields(), { name, ...flags.runMetadata }),
      );
      runTarget = { run: await this.lockRun(createdId), name, matchMode: 'created' };
    }
    const { facts, plan } = await this.planner.planReport(access.projectId, upload, flags, null);
    return this.finish(access, user, upload, facts, flags, plan, runTarget, job);
  }

  /**
   * `GET /imports/{id}`: any import record with its state, as JSON parts: a succeeded import's
   * `result` is its stored answer's text, sent as it is (not parsed and serialised again).
   */
  async getImportJson(id: string): Promise<JsonPart[]> {
    const row = await this.repo.findImport(id);
    if (row === null) throw AppException.notFound('import_not_found', 'Import');
    const { result: _none, problem, ...head } = toJobDto(row);
    const text = JSON.stringify(head);
    // `head` always has fields, so its text ends with `}` after one: `result` and `problem` follow
    // as the last two (ImportJobDto's order).
    return [
      text.slice(0, -1),
      ',"result":',
      row.answer ?? 'null',
      ',"problem":',
      JSON.stringify(problem),
      '}',
    ];
  }

  /** `GET /test-runs/{id}/imports`: the run's import records, newest first. */
  async list(
    runId: string,
    q: ListImportsQueryDto,
  ): Promise<Page<JunitImportRecordDto> | CursorPage<JunitImportRecordDto>> {
    const keyset =
      q.cursor === undefined
        ? undefined
        : new KeysetPaging(
            this.cursors,
            cursorScope('run-imports', { test_run_id: runId }),
            IMPORT_KEYSET_ORDER,
            q.cursor,
            q.page_size,
          );
    const { rows, total } = await this.repo.listRecords(
      runId,
      q.page_size,
      offsetOf(q.page, q.page_size),
      keyset?.request,
    );
    if (keyset) return keyset.page(rows, toRecordDto);
    return pageOf(rows.map(toRecordDto), q.page, q.page_size, total ?? 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Request

  private async readRequest(
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<{ files: UploadedReport[]; flags: Flags }> {
    const form = await readJunitUpload(req, this.limits);
    return { files: form.files, flags: this.formFlags(form, query) };
  }

  /** The form's fields checked (422 on unknown or conflicting ones, or without a file). */
  private formFlags(form: UploadForm, query: JunitImportQueryDto): Flags {
    // Keys are the client's field names: `__proto__` must be an entry, not the object's prototype.
    const errors: FieldErrors = Object.create(null) as FieldErrors;
    const values: Partial<Record<(typeof FORM_FIELDS)[number], boolean>> = {};
    for (const key of Object.keys(form.fields)) {
      if (key === FILE_PART) {
        errors[key] = ['must be a file part (with a filename), not a text field'];
      } else if (
        !(FORM_FIELDS as readonly string[]).includes(key) &&
        !isRunMetadataFormField(key)
      ) {
        errors[key] = ['Unknown field'];
      }
    }
    for (const name of FORM_FIELDS) {
      const raw = form.fields[name];
      if (raw === undefined) continue;
      const parsed = parseFormBool(raw);
      if (parsed === undefined) {
        errors[name] = [`${name} must be a boolean: true, false, 1 or 0`];
      } else if (query[name] !== undefined && query[name] !== parsed) {
        errors[name] = [
          `${name} is given as a query parameter and as a form field with different values`,
        ];
      } else {
        values[name] = parsed;
      }
    }
    // Run metadata (issue #24): build, ci_provider, branch, commit_sha, job_url, pipeline_id, attribute.
    const runMetadata = parseRunMetadataForm(form.fields);
    Object.assign(errors, runMetadata.errors);
    if (form.files.length === 0 && errors[FILE_PART] === undefined) {
      errors[FILE_PART] = ['A "file" part with the report (JUnit XML or results JSON) is required'];
    }
    if (Object.keys(errors).length > 0) throw FormRefusal.of(errors);
    return {
      dryRun: values.dry_run ?? query.dry_run ?? false,
      createMissing: values.create_missing_cases ?? query.create_missing_cases ?? false,
      runMetadata: runMetadata.metadata,
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Background imports (issue #18 §3)

  /** `Prefer: respond-async`, unless the query asks for a dry run (answered at once anyway). */
  private inBackground(query: JunitImportQueryDto, req: Request): boolean {
    return prefersAsync(req.headers.prefer) && query.dry_run !== true;
  }

  /**
   * A background import's request, in its transaction: the files are stored as they arrive
   * (decompressed), the form and the run's state (409) checked, the record inserted `queued` and
   * the job enqueued — all committed together with the 202, or not at all.
   */
  private async enqueue(
    access: ProjectAccess,
    user: AuthenticatedUser,
    target: ImportTarget,
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<ImportJobDto> {
    const id = uuidv7();
    const queue = new UploadChunkQueue();
    const reading = readJunitUpload(req, this.limits, (i) => storingSink(queue, i))
      .catch((error: unknown) => {
        queue.fail(); // the chunks not yet written are dropped
        throw error;
      })
      .finally(() => queue.close());
    const storing = this.storeChunks(id, access.projectId, queue);
    // Both settle before either's error goes up: a write still running when the form was refused
    // would otherwise land after the caller rolled the transaction back to its savepoint (the
    // Idempotency-Key's), and fail the commit on its foreign key (a 409 for a 422).
    const [read, stored] = await Promise.allSettled([reading, storing]);
    if (read.status === 'rejected') throw read.reason;
    if (stored.status === 'rejected') throw stored.reason;
    const form = read.value;
    const flags = this.formFlags(form, query);
    if (flags.dryRun) {
      throw FormRefusal.of({
        dry_run: [
          'a background import (Prefer: respond-async) cannot be a dry run; give dry_run as a query parameter for an immediate preview',
        ],
      });
    }
    if ('runId' in target) await this.checkRunOpen(target.runId);
    this.checkGzip(form.files);
    const now = new Date();
    const request: StoredImportRequest = {
      run_id: 'runId' in target ? target.runId : null,
      create_missing_cases: flags.createMissing,
      run_metadata: flags.runMetadata,
      request_id: req.requestId ?? '',
      access: { role: access.role, is_admin: access.isAdmin },
      user: {
        id: user.id,
        username: user.username,
        display_name: user.displayName,
        is_admin: user.isAdmin,
        via: user.via,
      },
      files: form.files.map((f) => ({
        name: f.givenName,
        content_type: f.contentType,
        size_bytes: f.sizeBytes,
        sha256: f.sha256,
        gzip: f.gzip,
      })),
    };
    const first = form.files[0];
    await this.repo.insertQueued({
      id,
      projectId: access.projectId,
      runId: request.run_id,
      fileName: baseName(first?.givenName, null),
      sizeBytes: form.files.reduce((sum, f) => sum + f.sizeBytes, 0),
      sha256: combinedSha256(form.files.map((f) => f.sha256)),
      request,
      userId: user.id,
      createdAt: now,
    });
    await this.jobs.send<ImportJobData>(IMPORT_JOB, { importId: id });
    const res = req.res;
    if (res !== undefined) {
      res.status(202);
      res.setHeader('Location', importPath(id));
      res.setHeader('Preference-Applied', RESPOND_ASYNC);
    }
    const row = await this.repo.findImport(id);
    if (row === null) throw new Error('enqueue: the import record vanished');
    return toJobDto(row);
  }

  /**
   * The run of a background import takes results (409 `run_import_not_allowed` when completed or
   * archived), checked in the synchronous import's order (after the form) and without locking it:
   * the job locks it when it applies the import (and checks again).
   */
  private async checkRunOpen(runId: string): Promise<void> {
    // Key-share locked: deleted meanwhile it is a 404 here, not a 409 from the record's foreign key.
    const run = await this.repo.findRun(runId, true);
    if (run === null) throw AppException.notFound('test_run_not_found', 'Test run');
    if (run.status === 'completed' || run.status === 'archived') {
      throw new AppException(
        'run_import_not_allowed',
        `The run is ${run.status}; its items and results can no longer change; results cannot be imported into it`,
      );
    }
  }

  /** Writes the chunks of the upload as they come (in the request's transaction). */
  private async storeChunks(
    importId: string,
    projectId: string,
    queue: UploadChunkQueue,
  ): Promise<void> {
    try {
      for await (const chunk of queue) await this.repo.insertChunk(importId, projectId, chunk);
    } catch (error) {
      queue.fail();
      throw error;
    }
  }

  /**
   * The stored files of a background import, read back in order and parsed like an upload
   * (`request.files` gives their names and facts).
   */
  async readStoredFiles(importId: string, request: StoredImportRequest): Promise<UploadedReport[]> {
    const files: UploadedReport[] = [];
    for (const [index, meta] of request.files.entries()) {
      const reader = new ReportReader();
      let seq = 0;
      for (;;) {
        const chunks: Array<Pick<StoredChunk, 'seq' | 'data'>> = await this.repo.readChunks(
          importId,
          index,
          seq,
          READ_CHUNKS_PER_QUERY,
        );
        for (const chunk of chunks) await reader.write(chunk.data);
        if (chunks.length < READ_CHUNKS_PER_QUERY) break;
        seq = (chunks[chunks.length - 1]?.seq ?? seq) + 1;
      }
      const read = await reader.end();
      files.push({
        fileName: baseName(meta.name, read.format),
        fileNameGiven: meta.name !== '',
        givenName: meta.name,
        contentType: meta.content_type,
        sizeBytes: meta.size_bytes,
        sha256: meta.sha256,
        gzip: meta.gzip,
        gzipError: null,
        blank: read.format === null,
        format: read.format,
        report: read.report,
        parseError: read.parseError,
      });
    }
    return files;
  }

  /**
   * Marks a background import `failed` with its problem (in the current transaction) and emits the
   * `import.failed` webhook event with the record as `GET /imports/{id}` answers it. Nothing happens
   * to an import that has already ended.
   */
  async failImport(id: string, projectId: string, problem: Record<string, unknown>): Promise<void> {
    if (!(await this.repo.failRecord(id, problem))) return;
    const row = await this.repo.findImport(id);
    if (row !== null) await this.webhooks.emit(projectId, 'import.failed', () => toJobDto(row));
  }

  /** The problem body recorded for a background import that failed (as the request would answer). */
  problemBody(importId: string, requestId: string, error: AppException): Record<string, unknown> {
    const body: Record<string, unknown> = {
      type: `${this.config.errorBaseUrl}/${error.code}`,
      title: error.title,
      status: error.status,
      detail: error.detail,
      instance: importPath(importId),
      code: error.code,
      request_id: requestId,
    };
    if (
      error.errors !== undefined &&
      Object.keys(error.errors).length > 0 &&
      error.status === 422
    ) {
      body.errors = error.errors;
    }
    return body;
  }

  /** Locks the run for the import; a completed or archived run takes no results (409). */
  private async lockRun(runId: string): Promise<LockedImportRun> {
    let lock: LockedRun;
    try {
      lock = await this.results.lockRun(runId);
    } catch (error) {
      if (error instanceof AppException && error.code === 'run_closed') {
        throw new AppException(
          'run_import_not_allowed',
          `${error.detail}; results cannot be imported into it`,
        );
      }
      throw error;
    }
    const run = await this.repo.findRun(runId);
    if (run === null) throw AppException.notFound('test_run_not_found', 'Test run');
    return { ...run, lock };
  }

  /** A part that starts like gzip but does not decompress → 422 `invalid_gzip` (naming the file). */
  private checkGzip(files: UploadedReport[]): void {
    for (const [i, file] of files.entries()) {
      if (file.gzipError === null) continue;
      const where = fileLabel(file, i, files.length);
      throw new AppException(
        'invalid_gzip',
        `${where.detail || 'The file '}is not a valid gzip file: ${file.gzipError}`,
        { file: [`${where.prefix}${file.gzipError}`] },
      );
    }
  }

  /**
   * Checks every file in request order and merges them into one report. The first refused file
   * refuses the whole import (nothing of the others is applied): a part that does not decompress
   * (422 `invalid_gzip`), an empty one (422 `empty_upload`), a format that is neither JUnit XML nor
   * results JSON (422), an invalid report (422). With several files the problem names the file (its
   * `detail`, and each message of `errors.file` starts with `<name>: `). A testcase without a name
   * is no reason to refuse a report (issue #22): the parser keeps it under a generated name and the
   * answer lists it in `warnings`.
   */
  private checkReports(files: UploadedReport[]): CheckedUpload {
    this.checkGzip(files);
    const reports: ParsedReport[] = [];
    for (const [i, file] of files.entries()) {
      reports.push(this.checkReport(file, fileLabel(file, i, files.length)));
    }
    const first = files[0];
    if (first === undefined) throw new Error('checkReports: no file');
    return {
      report: mergeReports(reports),
      fileName: first.fileName,
      nameForRun: first.fileNameGiven ? first.fileName.replace(/\.gz$/i, '') : null,
      contentType: first.contentType,
      sizeBytes: files.reduce((sum, f) => sum + f.sizeBytes, 0),
      sha256: combinedSha256(files.map((f) => f.sha256)),
      files: files.map((f, i) => fileSummary(f.fileName, reports[i] as ParsedReport)),
    };
  }

  private checkReport(
    file: UploadedReport,
    where: { detail: string; prefix: string },
  ): ParsedReport {
    if (file.blank)
      throw new AppException(
        'empty_upload',
        where.detail ? `${where.detail}is empty` : 'The uploaded file is empty',
        { file: [`${where.prefix}empty file`] },
      );
    if (file.format === 'unsupported') {
      throw new AppException(
        'unsupported_report_format',
        `${where.detail || 'The file '}is neither a JUnit XML report nor a Karvio results JSON report`,
        { file: [`${where.prefix}${UNSUPPORTED_FORMAT_REASON}`] },
      );
    }
    if (file.format === 'tms_results_json' && (file.parseError !== null || file.report === null)) {
      const reasons =
        file.parseError instanceof ResultsJsonError
          ? file.parseError.reasons
          : [file.parseError?.message ?? 'unreadable report'];
      throw new AppException(
        'invalid_tms_results_json',
        `${where.detail || 'The file '}is not an acceptable Karvio results JSON report: ${reasons[0] ?? ''}`,
        { file: reasons.map((r) => `${where.prefix}${r}`) },
      );
    }
    if (file.parseError !== null || file.report === null) {
      const message = file.parseError?.message ?? 'unreadable report';
      throw new AppException(
        'invalid_junit_xml',
        `${where.detail || 'The file '}is not an acceptable JUnit XML report: ${message}`,
        { file: [`${where.prefix}${message}`] },
      );
    }
    const report = file.report;
    file.report = null;
    return report;
  }
  // ---------------------------------------------------------------------------------------------
  // Applying

  private async finish(
    access: ProjectAccess,
    user: AuthenticatedUser,
    file: CheckedUpload,
    facts: ReportFacts,
    flags: Flags,
    plan: ImportPlan,
    target: Target,
    job: ImportJobContext | null,
  ): Promise<JsonBody> {
    const now = new Date();
    // Counted before applying: the writer consumes the matches (their results are collected).
    const matchedBy = (by: MatchKind) =>
      plan.matches.filter((m) => m.by === by && 'existing' in m.ref).length;
    const matchedByAutomationId = matchedBy('automation_id');
    const matchedByName = matchedBy('name');
    let createdCases: ImportCreatedCaseDto[];
    let updated = 0;
    let recordId: string | null = null;
    if (flags.dryRun || target.run === null || !('lock' in target.run)) {
      createdCases = plan.cases.map((c) => ({
        id: null,
        key: null,
        title: c.title,
        automation_id: c.automation_id,
        suite_path: c.suite_path,
      }));
    } else {
      // Results that apply nothing count as processed from the start.
      const notApplied = facts.results - plan.matches.length;
      const progress =
        job === null
          ? undefined
          : async (applied: number) => {
              await job.progress(notApplied + applied, facts.results);
            };
      await progress?.(0);
      const applied = await this.apply(access, user, target.run, plan, now, progress);
      createdCases = applied.createdCases;
      updated = applied.updated;
      recordId = job?.id ?? uuidv7();
    }
    const summary: ImportSummaryDto = {
      total_cases: facts.results,
      // Each case once, under the way it was found or made (issue #24 §8): results that landed on a
      // case this import creates count in created_test_cases only, not also as matched.
      matched_by_automation_id: matchedByAutomationId,
      matched_by_name: matchedByName,
      created_test_cases: plan.cases.length,
      updated,
      unmatched: plan.unmatched.length,
      ambiguous: plan.ambiguous.length,
      errors: 0,
      ignored: facts.ignoredTestcases,
      warnings: facts.warnings.length,
      files: file.files,
    };
    const statuses: ImportStatusCountsDto = {
      passed: facts.totals.passed,
      failure: facts.totals.failure,
      error: facts.totals.error,
      skipped: facts.totals.skipped,
      xfailed: facts.totals.xfailed,
      xpassed: facts.totals.xpassed,
      flaky: facts.totals.flaky,
    };
    const result: JunitImportDto = {
      id: recordId,
      test_run_id: target.run?.id ?? null,
      target_run: { id: target.run?.id ?? null, name: target.name, match_mode: target.matchMode },
      source_filename: file.fileName,
      source_content_type: file.contentType,
      size_bytes: file.sizeBytes,
      sha256: file.sha256,
      dry_run: flags.dryRun,
      status: flags.dryRun ? 'preview' : 'completed',
      summary,
      statuses,
      created_cases: createdCases,
      unmatched_cases: plan.unmatched.map((u) => u.issue),
      ambiguous_cases: plan.ambiguous.map((a) => a.issue),
      error_cases: [],
      ignored_cases: [],
      flaky_cases: facts.flaky,
      warnings: facts.warnings,
      created_at: now.toISOString(),
    };
    // Serialised once: the record stores this text and the request answers it (23 MB for 100,000
    // created cases: a second serialisation cost its time and as much memory again).
    const json = JSON.stringify(result);
    if (recordId !== null && target.run !== null) {
      // The import as answered without its per-case lists: the record's summary (what the list of
      // imports reads) and the webhook's body (issue #20).
      const {
        created_cases: _created,
        unmatched_cases: _unmatched,
        ambiguous_cases: _ambiguous,
        error_cases: _errors,
        ignored_cases: _ignored,
        flaky_cases: _flaky,
        warnings: _warnings,
        ...summary
      } = result;
      const stored = { summaryJson: JSON.stringify(summary), answerJson: json };
      if (job !== null) {
        await this.repo.completeRecord({
          id: recordId,
          runId: target.run.id,
          fileName: file.fileName,
          ...stored,
          testcases: facts.results,
        });
      } else {
        await this.repo.insertRecord({
          id: recordId,
          projectId: access.projectId,
          runId: target.run.id,
          fileName: file.fileName,
          sizeBytes: file.sizeBytes,
          sha256: file.sha256,
          ...stored,
          userId: user.id,
          createdAt: now,
          testcases: facts.results,
        });
      }
      await this.webhooks.emit(access.projectId, 'import.completed', summary);
    }
    return new JsonBody([json]);
  }

  /**
   * Writes the plan: suites (through their repository), then the results through the run-items
   * writer (items, rows, roll-ups, history and the run's counters, once), which has the new cases
   * copied (`TestCasesRepository.insertImported`) batch by batch right before their items, then
   * the run start. The run is the one locked before planning; nothing locks it again.
   *
   * Cases are inserted, and results applied, in batches of about {@link APPLY_BATCH} testcases
   * (all results of one case stay in one batch), so that the statements' parameters and the
   * rows read back stay small whatever the report size; everything stays in the one transaction.
   */
  private async apply(
    access: ProjectAccess,
    user: AuthenticatedUser,
    run: LockedImportRun,
    plan: ImportPlan,
    now: Date,
    onProgress?: (applied: number) => Promise<void>,
  ): Promise<{ createdCases: ImportCreatedCaseDto[]; updated: number }> {
    const projectId = access.projectId;
    const updated = plan.matches.length;

    // 1. Suites, parents before children (one statement).
    const suiteIds = plan.planner.planned.map(() => uuidv7());
    const newSuites: SuiteTreeInsert[] = plan.planner.planned.map((s, i) => ({
      id: suiteIds[i] ?? '',
      parent_id:
        s.parent === null
          ? null
          : 'existing' in s.parent
            ? s.parent.existing
            : (suiteIds[s.parent.planned] ?? null),
      name: s.name,
    }));
    await this.suites.insertTree(projectId, newSuites);

    // 2. Cases, keys allocated in one statement from the project counter (locked since planning).
    // They are written batch by batch by the run-items writer's `writeCreated`, right before the
    // items of their batch, so that the writer builds those items while the database writes the
    // cases (bench/README.md, fix 28); the answer and the writer get them all now.
    const caseIds = plan.cases.map(() => uuidv7());
    const createdCases: ImportCreatedCaseDto[] = [];
    /** Position in `plan.cases` of each new case. */
    const positions = new Map<string, number>();
    /** Position in `plan.cases` of each case not written yet. */
    const unwritten = new Map<string, number>();
    let first = 0;
    if (plan.cases.length > 0) {
      first = await this.cases.allocateCounter(projectId, TEST_CASE_KEY_COUNTER, plan.cases.length);
      for (let i = 0; i < plan.cases.length; i++) {
        const c = plan.cases[i] as PlannedCase;
        const id = caseIds[i] ?? '';
        positions.set(id, i);
        unwritten.set(id, i);
        createdCases.push({
          id,
          key: formatCaseKey(first + i),
          title: c.title,
          automation_id: c.automation_id,
          suite_path: c.suite_path,
        });
      }
    }
    // The new cases as stored, for the writer: it adds them to the run without reading them again.
    // Each record is made when the writer asks for it (a 100,000-case import holds none of them).
    const created: CreatedCases = {
      has: (id) => positions.has(id),
      get: (id) => {
        const i = positions.get(id);
        if (i === undefined) return undefined;
        const c = plan.cases[i] as PlannedCase;
        return {
          id,
          project_id: projectId,
          status: 'active',
          key: formatCaseKey(first + i),
          title: c.title,
          priority: null,
          tags: CREATED_CASE_TAGS,
          suite_id: suiteIdOf(c),
          suite_name: plan.planner.nameOf(c.suite),
        };
      },
    };
    function suiteIdOf(c: PlannedCase): string | null {
      if (c.suite === null) return null;
      return 'existing' in c.suite ? c.suite.existing : (suiteIds[c.suite.planned] ?? null);
    }
    // Each COPY's rows are made as it reads them.
    const rowsOf = function* (ids: Iterable<string>): Generator<ImportedCase> {
      for (const id of ids) {
        const i = unwritten.get(id);
        if (i === undefined) continue;
        unwritten.delete(id);
        const c = plan.cases[i] as PlannedCase;
        yield {
          id,
          key: formatCaseKey(first + i),
          key_number: first + i,
          title: c.title,
          automation_id: c.automation_id,
          suite_id: suiteIdOf(c),
          preconditions: c.preconditions,
          steps: JSON.stringify(
            c.steps === null ? [] : [{ action: c.steps, expected: c.assertions }],
          ),
        };
      }
    };
    const writeCreated = async (ids: string[]): Promise<void> => {
      await this.cases.insertImported(projectId, user.id, rowsOf(ids));
    };

    // 3. Results grouped by case (in order of first appearance), applied by the run-items writer.
    if (plan.matches.length > 0) {
      const byCase = new Map<string, ResultMatch[]>();
      for (const match of plan.matches) {
        const caseId =
          'existing' in match.ref ? match.ref.existing : (caseIds[match.ref.planned] ?? '');
        const list = byCase.get(caseId);
        if (list === undefined) byCase.set(caseId, [match]);
        else list.push(match);
      }
      // The writer consumes `byCase` batch by batch: nothing else may keep the results alive.
      plan.matches = [];
      await this.results.applyResults(run.lock, {
        results: {
          byCase,
          executedById: user.id,
          finishedAt: now,
          onProgress,
          created,
          writeCreated,
        },
        changedById: user.id,
      });
    }
    // Every planned case has a result, so the writer has asked for all of them; none is lost if not.
    while (unwritten.size > 0) await writeCreated([...unwritten.keys()].slice(0, APPLY_BATCH));

    // 4. The run: started when it had not been.
    await this.startRun(access, user, run);
    return { createdCases, updated };
  }

  /** A real import into a not-started run starts it (status in_progress, started_at now). */
  private async startRun(
    access: ProjectAccess,
    user: AuthenticatedUser,
    run: LockedImportRun,
  ): Promise<void> {
    if (run.status !== 'not_started') return;
    await this.runs.update(
      access,
      user,
      run.lock,
      Object.assign(new UpdateTestRunDto(), { status: 'in_progress' }),
    );
  }
}

/** How a problem names a file: nothing with one file, its name and position with several. */
function fileLabel(
  file: UploadedReport,
  index: number,
  count: number,
): { detail: string; prefix: string } {
  if (count === 1) return { detail: '', prefix: '' };
  return {
    detail: `File "${file.fileName}" (${index + 1} of ${count}) `,
    prefix: `${file.fileName}: `,
  };
}

/**
 * An import record as {@link ImportJobDto}, with `result` null: a succeeded import's answer is the
 * stored text ({@link ImportsService.getImportJson} sends it); the queued and failed ones the other
 * callers answer have none.
 */
function toJobDto(row: ImportJobRow): ImportJobDto {
  const result =
    row.status === 'succeeded'
      ? (row.summary as unknown as Pick<JunitImportDto, 'summary'> | null)
      : null;
  const total = row.progress_total ?? (result ? result.summary.total_cases : null);
  return {
    id: row.id,
    project_id: row.project_id,
    test_run_id: row.test_run_id,
    status: row.status,
    progress: {
      processed: result !== null && total !== null ? total : row.progress_processed,
      total,
    },
    source_filename: row.file_name,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    started_at: (row.started_at ?? (result ? row.created_at : null))?.toISOString() ?? null,
    finished_at: (row.finished_at ?? (result ? row.created_at : null))?.toISOString() ?? null,
    summary: result?.summary ?? null,
    result: null,
    problem: row.status === 'failed' ? row.problem : null,
  };
}

function toRecordDto(row: ImportRecordRow): JunitImportRecordDto {
  const s = row.summary as {
    status?: string;
    summary?: ImportSummaryDto;
    statuses?: ImportStatusCountsDto;
    source_content_type?: string | null;
    match_mode?: string;
  };
  return {
    id: row.id,
    project_id: row.project_id,
    test_run_id: row.test_run_id,
    file_name: row.file_name,
    content_type: s.source_content_type ?? null,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    status: s.status ?? 'completed',
    match_mode: s.match_mode ?? 'existing',
    summary: s.summary as ImportSummaryDto,
    statuses: s.statuses as ImportStatusCountsDto,
    created_by: row.created_by,
    created_by_name: row.created_by_name,
    created_at: row.created_at.toISOString(),
  };
}
