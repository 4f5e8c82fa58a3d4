import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors } from '../../common/errors/app-exception';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { uuidv7 } from '../../common/persistence/ids';
import { WebhookEvents } from '../webhooks/webhook-events.service';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { RESULTS_BATCH, RunResultsWriter } from '../run-items/run-results.writer';
import { SuitesRepository, SuiteTreeInsert } from '../suites/suites.repository';
import { formatCaseKey, TEST_CASE_KEY_COUNTER } from '../test-cases/case-keys';
import { ImportedCase, TestCasesRepository } from '../test-cases/test-cases.repository';
import { CreateTestRunFields, UpdateTestRunDto } from '../test-runs/dto/test-run.dto';
import { LockedRun, TestRunsService } from '../test-runs/test-runs.service';
import {
  ImportCreatedCaseDto,
  ImportStatusCountsDto,
  ImportSummaryDto,
  JunitImportDto,
  JunitImportQueryDto,
  JunitImportRecordDto,
  ListImportsQueryDto,
} from './dto/import.dto';
import { Flags, ImportPlan, ImportPlanner, ReportFacts, ResultMatch } from './import-plan';
import { ImportRecordRow, ImportRepository, RunRef } from './import.repository';
import type { ParsedReport } from './junit/junit-parser';
import { ResultsJsonError } from './results-json/results-json';
import { pickTargetRun, targetRunName } from './target-run';
import { FILE_PART, FORM_FIELDS, readJunitUpload, UploadedReport } from './upload';
import {
  isEmptyRunMetadata,
  isRunMetadataFormField,
  parseRunMetadataForm,
} from './run-metadata-form';

/** `errors.file` of 422 `unsupported_report_format`. */
export const UNSUPPORTED_FORMAT_REASON =
  'unsupported report format: the first character (after whitespace and a byte order mark) must be "<" (JUnit XML) or "{" / "[" (Karvio results JSON)';

/**
 * Testcases whose cases are created, or whose results are applied (by the run-items writer), per
 * batch of statements.
 */
export const APPLY_BATCH = RESULTS_BATCH;

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
  ) {}

  /** `POST /test-runs/{id}/imports/junit`. */
  async importIntoRun(
    access: ProjectAccess,
    user: AuthenticatedUser,
    runId: string,
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<JunitImportDto> {
    const { file, flags } = await this.readRequest(query, req);
    const run = await this.lockRun(runId);
    this.checkReport(file);
    // Run metadata form fields update the run the caller named (issue #24).
    if (!flags.dryRun && !isEmptyRunMetadata(flags.runMetadata)) {
      await this.runs.mergeMetadata(run.lock, flags.runMetadata ?? {});
    }
    const { facts, plan } = await this.planner.planReport(access.projectId, file, flags, run);
    return this.finish(access, user, file, facts, flags, plan, {
      run,
      name: run.name,
      matchMode: 'existing',
    });
  }

  /** `POST /projects/{id}/imports/junit`: the target run is found by name, or created. */
  async importIntoProject(
    access: ProjectAccess,
    user: AuthenticatedUser,
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<JunitImportDto> {
    const { file, flags } = await this.readRequest(query, req);
    const header = this.checkReport(file);
    // The recorded file name has a default; the run name falls back on `JUnit Import` instead.
    const name = targetRunName(header.name, file.fileNameGiven ? file.fileName : null);
    if (!flags.dryRun) await this.repo.lockRunName(access.projectId, name);
    const chosen = pickTargetRun(
      await this.repo.findOpenRunsByName(access.projectId, name),
      header.timestamp,
    );
    let target: Target;
    if (chosen !== null) {
      target = {
        run: flags.dryRun ? chosen : await this.lockRun(chosen.id),
        name: chosen.name,
        matchMode: 'existing',
      };
    } else if (flags.dryRun) {
      target = { run: null, name, matchMode: 'created' };
    } else {
      const created = await this.runs.create(
        access,
        user,
        // Run metadata form fields describe the run the import creates (issue #24).
        Object.assign(new CreateTestRunFields(), { name, ...flags.runMetadata }),
      );
      target = { run: await this.lockRun(created.id), name, matchMode: 'created' };
    }
    const { facts, plan } = await this.planner.planReport(access.projectId, file, flags, null);
    return this.finish(access, user, file, facts, flags, plan, target);
  }

  /** `GET /test-runs/{id}/imports`: the run's import records, newest first. */
  async list(runId: string, q: ListImportsQueryDto): Promise<Page<JunitImportRecordDto>> {
    const { rows, total } = await this.repo.listRecords(
      runId,
      q.page_size,
      offsetOf(q.page, q.page_size),
    );
    return pageOf(rows.map(toRecordDto), q.page, q.page_size, total);
  }

  // ---------------------------------------------------------------------------------------------
  // Request

  private async readRequest(
    query: JunitImportQueryDto,
    req: Request,
  ): Promise<{ file: UploadedReport; flags: Flags }> {
    const form = await readJunitUpload(req, this.config.maxUploadBytes);
    const errors: FieldErrors = {};
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
    if (form.file === null && errors[FILE_PART] === undefined) {
      errors[FILE_PART] = ['A "file" part with the report (JUnit XML or results JSON) is required'];
    }
    if (Object.keys(errors).length > 0 || form.file === null) throw AppException.validation(errors);
    return {
      file: form.file,
      flags: {
        dryRun: values.dry_run ?? query.dry_run ?? false,
        createMissing: values.create_missing_cases ?? query.create_missing_cases ?? false,
        runMetadata: runMetadata.metadata,
      },
    };
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

  /**
   * Empty upload, a format that is neither JUnit XML nor results JSON, an invalid report → 422
   * (nothing changes). A testcase without a name is no reason to refuse a report (issue #22): the
   * parser keeps it under a generated name and the answer lists it in `warnings`. Answers the
   * report's name and timestamp (the parsed report stays on `file` for planning).
   */
  private checkReport(file: UploadedReport): Pick<ParsedReport, 'name' | 'timestamp'> {
    if (file.blank)
      throw new AppException('empty_upload', 'The uploaded file is empty', {
        file: ['empty file'],
      });
    if (file.format === 'unsupported') {
      throw new AppException(
        'unsupported_report_format',
        'The file is neither a JUnit XML report nor a Karvio results JSON report',
        { file: [UNSUPPORTED_FORMAT_REASON] },
      );
    }
    if (file.format === 'tms_results_json' && (file.parseError !== null || file.report === null)) {
      const reasons =
        file.parseError instanceof ResultsJsonError
          ? file.parseError.reasons
          : [file.parseError?.message ?? 'unreadable report'];
      throw new AppException(
        'invalid_tms_results_json',
        `The file is not an acceptable Karvio results JSON report: ${reasons[0] ?? ''}`,
        { file: reasons },
      );
    }
    if (file.parseError !== null || file.report === null) {
      const message = file.parseError?.message ?? 'unreadable report';
      throw new AppException(
        'invalid_junit_xml',
        `The file is not an acceptable JUnit XML report: ${message}`,
        {
          file: [message],
        },
      );
    }
    return { name: file.report.name, timestamp: file.report.timestamp };
  }
  // ---------------------------------------------------------------------------------------------
  // Applying

  private async finish(
    access: ProjectAccess,
    user: AuthenticatedUser,
    file: UploadedReport,
    facts: ReportFacts,
    flags: Flags,
    plan: ImportPlan,
    target: Target,
  ): Promise<JunitImportDto> {
    const now = new Date();
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
      const applied = await this.apply(access, user, target.run, plan, now);
      createdCases = applied.createdCases;
      updated = applied.updated;
      recordId = uuidv7();
    }
    const summary: ImportSummaryDto = {
      total_cases: facts.results,
      matched_by_automation_id: plan.matches.filter((m) => m.by === 'automation_id').length,
      matched_by_name: plan.matches.filter((m) => m.by === 'name').length,
      created_test_cases: plan.cases.length,
      updated,
      unmatched: plan.unmatched.length,
      ambiguous: plan.ambiguous.length,
      errors: 0,
      ignored: facts.ignoredTestcases,
      warnings: facts.warnings.length,
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
    if (recordId !== null && target.run !== null) {
      await this.repo.insertRecord({
        id: recordId,
        projectId: access.projectId,
        runId: target.run.id,
        fileName: file.fileName,
        sizeBytes: file.sizeBytes,
        sha256: file.sha256,
        summary: result,
        userId: user.id,
        createdAt: now,
      });
    }
    if (recordId !== null && target.run !== null) {
      // Webhooks (issue #20): the import as answered, without its per-case lists.
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
      await this.webhooks.emit(access.projectId, 'import.completed', summary);
    }
    return result;
  }

  /**
   * Writes the plan: suites and cases (through their repositories), then the results through the
   * run-items writer (items, rows, roll-ups, history and the run's counters, once), then the run
   * start. The run is the one locked before planning; nothing locks it again.
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
  ): Promise<{ createdCases: ImportCreatedCaseDto[]; updated: number }> {
    const projectId = access.projectId;

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
    const caseIds = plan.cases.map(() => uuidv7());
    const createdCases: ImportCreatedCaseDto[] = [];
    if (plan.cases.length > 0) {
      const first = await this.cases.allocateCounter(
        projectId,
        TEST_CASE_KEY_COUNTER,
        plan.cases.length,
      );
      for (let start = 0; start < plan.cases.length; start += APPLY_BATCH) {
        const rows: ImportedCase[] = plan.cases.slice(start, start + APPLY_BATCH).map((c, j) => {
          const i = start + j;
          const suite =
            c.suite === null
              ? null
              : 'existing' in c.suite
                ? c.suite.existing
                : (suiteIds[c.suite.planned] ?? null);
          return {
            id: caseIds[i] ?? '',
            key: formatCaseKey(first + i),
            key_number: first + i,
            title: c.title,
            automation_id: c.automation_id,
            suite_id: suite,
            preconditions: c.preconditions,
            steps: JSON.stringify(
              c.steps === null ? [] : [{ action: c.steps, expected: c.assertions }],
            ),
          };
        });
        await this.cases.insertImported(projectId, user.id, rows);
        for (const [j, r] of rows.entries()) {
          createdCases.push({
            id: r.id,
            key: r.key,
            title: r.title,
            automation_id: r.automation_id,
            suite_path: plan.cases[start + j]?.suite_path ?? [],
          });
        }
      }
    }

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
      await this.results.applyResults(run.lock, {
        results: { byCase, executedById: user.id, finishedAt: now },
        changedById: user.id,
      });
    }

    // 4. The run: started when it had not been.
    await this.startRun(access, user, run);
    return { createdCases, updated: plan.matches.length };
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
