import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors } from '../../common/errors/app-exception';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { APP_CONFIG, AppConfig } from '../../config/config';
import type { RowCause } from '../run-items/run-items.repository';
import { NewItemRows, PlannedRow, RunItemsService } from '../run-items/run-items.service';
import { allocateCounter, formatCaseKey, TEST_CASE_KEY_COUNTER } from '../test-cases/case-keys';
import { CreateTestRunFields, UpdateTestRunDto } from '../test-runs/dto/test-run.dto';
import { TestRunsService } from '../test-runs/test-runs.service';
import {
  ImportCreatedCaseDto,
  ImportIssueDto,
  ImportStatusCountsDto,
  ImportSummaryDto,
  JunitImportDto,
  JunitImportQueryDto,
  JunitImportRecordDto,
  ListImportsQueryDto,
} from './dto/import.dto';
import {
  DEFAULT_ROW_SNAPSHOT,
  ImportRecordRow,
  ImportRepository,
  NewCase,
  NewSuite,
  RowInsert,
  RowUpdate,
  RowWrite,
  RunRef,
} from './import.repository';
import type { JunitResult, JunitStatus } from './junit/dialects';
import type { ParsedReport } from './junit/junit-parser';
import {
  MatchIndex,
  MatchKind,
  REASONS,
  SuitePlanner,
  creationKey,
  runLevelReason,
  storageAutomationId,
  storageSuitePath,
  storageTitle,
} from './matching';
import { planRowWrites } from './row-plan';
import { ResultsJsonError } from './results-json/results-json';
import { pickTargetRun, targetRunName } from './target-run';
import { FILE_PART, FORM_FIELDS, readJunitUpload, UploadedReport } from './upload';

/** `errors.file` of 422 `unsupported_report_format`. */
export const UNSUPPORTED_FORMAT_REASON =
  'unsupported report format: the first character (after whitespace and a byte order mark) must be "<" (JUnit XML) or "{" / "[" (Karvio results JSON)';

/** Testcases whose cases are created, or whose results are applied, per batch of statements. */
export const APPLY_BATCH = 1000;

interface Flags {
  dryRun: boolean;
  createMissing: boolean;
}

type CaseRef = { existing: string } | { planned: number };

interface PlannedCase {
  title: string;
  automation_id: string | null;
  suite_path: string[];
  suite: ReturnType<SuitePlanner['resolve']>;
  steps: string | null;
  preconditions: string | null;
  assertions: string | null;
}

/** A matched result as the apply step needs it (the parsed testcase itself is not kept). */
interface ResultMatch {
  ref: CaseRef;
  by: MatchKind;
  /** Row label ({@link rowLabel}). */
  label: string;
  status: JunitStatus;
  comment: string | null;
  system_out: string | null;
  system_err: string | null;
  duration_ms: number | null;
}

/** What the answer needs from the parsed report once the import is planned. */
interface ReportFacts {
  results: number;
  totals: ParsedReport['totals'];
  ignoredTestcases: number;
  flaky: ImportIssueDto[];
  /** Testcases kept under a generated name, then results whose text was cut (report order). */
  warnings: ImportIssueDto[];
}

interface ImportPlan {
  matches: ResultMatch[];
  cases: PlannedCase[];
  planner: SuitePlanner;
  /** Issues with the report position of their result (lists are answered in report order). */
  unmatched: Array<{ order: number; issue: ImportIssueDto }>;
  ambiguous: Array<{ order: number; issue: ImportIssueDto }>;
}

/** Where a plan is applied: an existing run, or a run that the (dry) import would create. */
interface Target {
  run: RunRef | null;
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

function issue(
  result: Pick<JunitResult, 'name' | 'classname' | 'automation_id'>,
  reason: string,
): ImportIssueDto {
  return {
    testcase_name: result.name,
    testcase_classname: result.classname,
    automation_id: result.automation_id === null ? null : storageAutomationId(result.automation_id),
    reason,
  };
}

/** Why a result is listed as flaky: `flaky: passed after 2 failed attempts (3 attempts)`. */
function flakyReason(result: JunitResult): string {
  const failed = result.attempts.filter(
    (a) => a.status === 'failure' || a.status === 'error',
  ).length;
  return `flaky: passed after ${failed} failed attempt${failed === 1 ? '' : 's'} (${result.attempts.length} attempts)`;
}

/** Row label of a result (reference §4.10): dataset name, else dataset key, else the raw name. */
function rowLabel(result: JunitResult): string {
  return result.dataset?.name ?? result.dataset?.key ?? result.name;
}

/**
 * JUnit import into a run or a project (CONTRACT §6, reference runs-imports-plans.md §4).
 *
 * A real import runs in the request's transaction: suites, cases, run items, rows, item roll-ups,
 * run counters, the run start and the import record are written together or not at all. A dry run
 * reads only. Every step is set-based: a constant number of statements whatever the report size.
 */
@Injectable()
export class ImportsService {
  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repo: ImportRepository,
    private readonly runs: TestRunsService,
    private readonly runItems: RunItemsService,
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
    const { facts, plan } = await this.planReport(access.projectId, file, flags, run);
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
        Object.assign(new CreateTestRunFields(), { name }),
      );
      target = { run: await this.lockRun(created.id), name, matchMode: 'created' };
    }
    const { facts, plan } = await this.planReport(access.projectId, file, flags, null);
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
      } else if (!(FORM_FIELDS as readonly string[]).includes(key)) {
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
    if (form.file === null && errors[FILE_PART] === undefined) {
      errors[FILE_PART] = ['A "file" part with the report (JUnit XML or results JSON) is required'];
    }
    if (Object.keys(errors).length > 0 || form.file === null) throw AppException.validation(errors);
    return {
      file: form.file,
      flags: {
        dryRun: values.dry_run ?? query.dry_run ?? false,
        createMissing: values.create_missing_cases ?? query.create_missing_cases ?? false,
      },
    };
  }

  /** Locks the run for the import; a completed or archived run takes no results (409). */
  private async lockRun(runId: string): Promise<RunRef> {
    try {
      await this.runs.lockForItemChange(runId);
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
    return run;
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

  /**
   * Plans the import of the checked report and releases the parsed report: from here on only the
   * plan (compact matches) and the few facts the answer needs are kept, which halves what a large
   * import holds in memory while it writes.
   */
  private async planReport(
    projectId: string,
    file: UploadedReport,
    flags: Flags,
    runFilter: RunRef | null,
  ): Promise<{ facts: ReportFacts; plan: ImportPlan }> {
    const report = file.report;
    if (report === null) throw new Error('planReport: the report was not checked');
    file.report = null;
    const facts: ReportFacts = {
      results: report.results.length,
      totals: report.totals,
      ignoredTestcases: report.ignored_testcases,
      flaky: report.results.filter((r) => r.flaky).map((r) => issue(r, flakyReason(r))),
      warnings: [
        ...report.nameless_testcases.map((t) => ({
          testcase_name: t.name,
          testcase_classname: t.classname,
          automation_id: null,
          reason: `${REASONS.nameless} (line ${t.line})`,
        })),
        ...report.results.filter((r) => r.truncated).map((r) => issue(r, REASONS.truncated)),
      ],
    };
    return { facts, plan: await this.plan(projectId, report, flags, runFilter) };
  }

  // ---------------------------------------------------------------------------------------------
  // Matching

  /**
   * Matches every result (reference §4.6), plans the cases and suites to create (§4.7) and, for a
   * run-level import without case creation, keeps only matches that have a run item (§4.8).
   */
  private async plan(
    projectId: string,
    report: ParsedReport,
    flags: Flags,
    runFilter: RunRef | null,
  ): Promise<ImportPlan> {
    if (flags.createMissing && !flags.dryRun) {
      // Take the case-key counter lock first: concurrent case creators wait, so the lookups below
      // see every case that exists when this import creates its own.
      await allocateCounter(this.db, projectId, TEST_CASE_KEY_COUNTER, 0);
    }
    const automationIds = [
      ...new Set(
        report.results.flatMap((r) =>
          r.automation_id === null ? [] : [storageAutomationId(r.automation_id)],
        ),
      ),
    ];
    const [candidates, suites] = await Promise.all([
      this.repo.loadCandidates(projectId, automationIds),
      this.repo.loadSuites(projectId),
    ]);
    const index = new MatchIndex(candidates, suites);
    const planner = new SuitePlanner(suites);
    const plan: ImportPlan = { matches: [], cases: [], planner, unmatched: [], ambiguous: [] };
    const plannedByKey = new Map<string, number>();
    let matched: Array<{ result: JunitResult; ref: CaseRef; by: MatchKind }> = [];

    for (const result of report.results) {
      const outcome = index.match(result);
      if (outcome.type === 'matched') {
        matched.push({ result, ref: { existing: outcome.caseId }, by: outcome.by });
        continue;
      }
      if (outcome.type === 'ambiguous') {
        const reason =
          runFilter !== null && !flags.createMissing ? runLevelReason(outcome) : outcome.reason;
        plan.ambiguous.push({ order: result.index, issue: issue(result, reason) });
        continue;
      }
      if (!flags.createMissing) {
        plan.unmatched.push({
          order: result.index,
          issue: issue(result, runFilter !== null ? runLevelReason(outcome) : outcome.reason),
        });
        continue;
      }
      const key = creationKey(result);
      let planned = plannedByKey.get(key);
      if (planned === undefined) {
        const automationId =
          result.automation_id === null ? null : storageAutomationId(result.automation_id);
        if (automationId !== null && index.isAutomationIdTaken(automationId)) {
          plan.unmatched.push({
            order: result.index,
            issue: issue(result, REASONS.automationIdTaken),
          });
          continue;
        }
        const suitePath = storageSuitePath(result.suite_path);
        planned = plan.cases.length;
        plan.cases.push({
          title: storageTitle(result.title) || storageTitle(result.name),
          automation_id: automationId,
          suite_path: suitePath,
          suite: planner.resolve(suitePath),
          steps: result.steps,
          preconditions: result.preconditions,
          assertions: result.assertions,
        });
        plannedByKey.set(key, planned);
      }
      const by: MatchKind = plan.cases[planned]?.automation_id != null ? 'automation_id' : 'name';
      matched.push({ result, ref: { planned }, by });
    }

    if (runFilter !== null && !flags.createMissing && matched.length > 0) {
      const caseIds = [...new Set(matched.map((m) => ('existing' in m.ref ? m.ref.existing : '')))];
      const items = await this.repo.loadRunItems(
        runFilter.id,
        caseIds.filter((id) => id !== ''),
      );
      const kept: typeof matched = [];
      for (const match of matched) {
        if ('existing' in match.ref && items.has(match.ref.existing)) kept.push(match);
        else
          plan.unmatched.push({
            order: match.result.index,
            issue: issue(match.result, REASONS.notInRun),
          });
      }
      matched = kept;
    }
    plan.matches = matched.map(({ result: r, ref, by }) => ({
      ref,
      by,
      label: rowLabel(r),
      status: r.status,
      comment: r.comment,
      system_out: r.system_out,
      system_err: r.system_err,
      duration_ms: r.duration_ms,
    }));
    plan.unmatched.sort((a, b) => a.order - b.order);
    return plan;
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
    if (flags.dryRun || target.run === null) {
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
    return result;
  }

  /**
   * Writes the plan: suites, cases, run items, rows, roll-ups, history, run start and counters.
   *
   * Cases are inserted, and results applied, in batches of about {@link APPLY_BATCH} testcases
   * (all results of one case stay in one batch), so that the statements' parameters and the
   * rows read back stay small whatever the report size; everything stays in the one transaction.
   */
  private async apply(
    access: ProjectAccess,
    user: AuthenticatedUser,
    run: RunRef,
    plan: ImportPlan,
    now: Date,
  ): Promise<{ createdCases: ImportCreatedCaseDto[]; updated: number }> {
    const projectId = access.projectId;

    // 1. Suites, parents before children (one statement).
    const suiteIds = plan.planner.planned.map(() => uuidv7());
    const newSuites: NewSuite[] = plan.planner.planned.map((s, i) => ({
      id: suiteIds[i] ?? '',
      parent_id:
        s.parent === null
          ? null
          : 'existing' in s.parent
            ? s.parent.existing
            : (suiteIds[s.parent.planned] ?? null),
      name: s.name,
    }));
    await this.repo.insertSuites(projectId, newSuites);

    // 2. Cases, keys allocated in one statement from the project counter (locked since planning).
    const caseIds = plan.cases.map(() => uuidv7());
    const createdCases: ImportCreatedCaseDto[] = [];
    if (plan.cases.length > 0) {
      const first = await allocateCounter(
        this.db,
        projectId,
        TEST_CASE_KEY_COUNTER,
        plan.cases.length,
      );
      for (let start = 0; start < plan.cases.length; start += APPLY_BATCH) {
        const rows: NewCase[] = plan.cases.slice(start, start + APPLY_BATCH).map((c, j) => {
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
        await this.repo.insertCases(projectId, user.id, rows);
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
    if (plan.matches.length === 0) {
      await this.startRun(access, user, run);
      return { createdCases, updated: 0 };
    }

    // 3. Results grouped by case (in order of first appearance), applied batch by batch.
    const byCase = new Map<string, ResultMatch[]>();
    for (const match of plan.matches) {
      const caseId =
        'existing' in match.ref ? match.ref.existing : (caseIds[match.ref.planned] ?? '');
      const list = byCase.get(caseId);
      if (list === undefined) byCase.set(caseId, [match]);
      else list.push(match);
    }
    let batch: Array<[string, ResultMatch[]]> = [];
    let batchResults = 0;
    for (const entry of byCase) {
      batch.push(entry);
      batchResults += entry[1].length;
      if (batchResults >= APPLY_BATCH) {
        await this.applyBatch(projectId, user, run, batch, now);
        batch = [];
        batchResults = 0;
      }
    }
    if (batch.length > 0) await this.applyBatch(projectId, user, run, batch, now);
    await this.runs.refreshCounters(run.id);

    // 4. The run: started when it had not been.
    await this.startRun(access, user, run);
    return { createdCases, updated: plan.matches.length };
  }

  /**
   * Applies the results of some cases. Cases not yet in the run get their items and rows inserted
   * with the results already in them (`addCases` with `results`: one INSERT each, no update);
   * items already in the run get their rows planned against the stored ones and written in three
   * bulk statements, then the shared roll-up (status, counters, history, and each item's comment
   * from its last row). The run counters are refreshed by the caller.
   */
  private async applyBatch(
    projectId: string,
    user: AuthenticatedUser,
    run: RunRef,
    batch: Array<[string, ResultMatch[]]>,
    now: Date,
  ): Promise<void> {
    const caseIds = batch.map(([caseId]) => caseId);
    const items = await this.repo.loadRunItems(run.id, caseIds);
    const missing = caseIds.filter((id) => !items.has(id));
    if (missing.length > 0) {
      const matchesOf = new Map(batch);
      const added = await this.runItems.addCases(run.id, missing, {
        deferCounters: true,
        changedById: user.id,
        results: (caseId, planned) =>
          storedRows(planned, labelled(matchesOf.get(caseId) ?? [], now), user.id, now),
      });
      const created = new Set(added.createdIds);
      for (const [caseId, itemId] of added.itemIdByCase) {
        if (!created.has(itemId)) items.set(caseId, itemId);
      }
    }
    if (items.size === 0) return;

    const itemIds = [...new Set(items.values())];
    const existingRows = await this.repo.loadRows(itemIds);
    const rowsByItem = new Map<string, typeof existingRows>();
    for (const row of existingRows) {
      const list = rowsByItem.get(row.run_item_id);
      if (list === undefined) rowsByItem.set(row.run_item_id, [row]);
      else list.push(row);
    }
    const updates: RowUpdate[] = [];
    const inserts: RowInsert[] = [];
    const deletes: string[] = [];
    const lastRow = new Map<string, { rowId: string; write: RowWrite }>();
    for (const [caseId, matches] of batch) {
      const itemId = items.get(caseId);
      if (itemId === undefined) continue;
      const rowPlan = planRowWrites(rowsByItem.get(itemId) ?? [], labelled(matches, now));
      deletes.push(...rowPlan.deletes);
      for (const u of rowPlan.updates) {
        updates.push({ id: u.rowId, label: u.label, relabel: u.relabel, ...u.payload });
        lastRow.set(itemId, { rowId: u.rowId, write: u.payload });
      }
      for (const ins of rowPlan.inserts) {
        const id = uuidv7();
        inserts.push({
          id,
          run_item_id: itemId,
          row_order: ins.row_order,
          label: ins.label,
          ...ins.payload,
        });
        lastRow.set(itemId, { rowId: id, write: ins.payload });
      }
    }
    await this.repo.deleteRows(deletes);
    await this.repo.updateRows(updates, user.id, now);
    await this.repo.insertRows(projectId, inserts, user.id, now);

    const causes = new Map<string, RowCause>();
    for (const [itemId, last] of lastRow) {
      causes.set(itemId, rowCause(last.rowId, last.write, user.id, now));
    }
    await this.runItems.rollUpItems(run.id, itemIds, user.id, causes, {
      deferCounters: true,
      comments: new Map([...lastRow].map(([id, last]) => [id, last.write.comment])),
    });
  }

  /** A real import into a not-started run starts it (status in_progress, started_at now). */
  private async startRun(
    access: ProjectAccess,
    user: AuthenticatedUser,
    run: RunRef,
  ): Promise<void> {
    if (run.status !== 'not_started') return;
    await this.runs.update(
      access,
      user,
      run.id,
      Object.assign(new UpdateTestRunDto(), { status: 'in_progress' }),
    );
  }
}

/** A case's matched results as row writes labelled for {@link planRowWrites} (report order). */
function labelled(matches: ResultMatch[], now: Date): Array<{ label: string; payload: RowWrite }> {
  return matches.map((r) => ({
    label: r.label,
    payload: {
      status: r.status,
      comment: r.comment,
      system_out: r.system_out,
      system_err: r.system_err,
      duration_ms: r.duration_ms,
      started_at: r.duration_ms === null ? now : new Date(now.getTime() - r.duration_ms),
    },
  }));
}

/** The result a row write leaves in its item's history when it changes the item's status. */
function rowCause(rowId: string, write: RowWrite, userId: string, now: Date): RowCause {
  return {
    rowId,
    comment: write.comment,
    defectIds: [],
    actualResult: null,
    systemOut: write.system_out,
    systemErr: write.system_err,
    executedById: userId,
    startedAt: write.started_at,
    finishedAt: now,
    durationMs: write.duration_ms,
  };
}

/**
 * The rows of an item the import adds to the run, as they are to be stored: the same plan as for
 * stored rows ({@link planRowWrites} on the expanded rows, all pristine) applied before the first
 * write. Written rows carry their result (what `updateRows`/`insertRows` store for an item already
 * in the run); a taken-over row gets its new label and a plain snapshot; surplus rows are dropped.
 */
function storedRows(
  planned: PlannedRow[],
  results: Array<{ label: string; payload: RowWrite }>,
  userId: string,
  now: Date,
): NewItemRows {
  const plan = planRowWrites(
    planned.map((r) => ({ ...r, status: 'untested', execution_count: 0 })),
    results,
  );
  const result = (write: RowWrite) => ({
    status: write.status,
    comment: write.comment,
    system_out: write.system_out,
    system_err: write.system_err,
    executed_by_id: userId,
    started_at: write.started_at,
    finished_at: now,
    duration_ms: write.duration_ms,
  });
  const updates = new Map(plan.updates.map((u) => [u.rowId, u]));
  const deleted = new Set(plan.deletes);
  const rows: NewItemRows['rows'] = [];
  let last: { rowId: string; write: RowWrite } | undefined;
  for (const row of planned) {
    if (deleted.has(row.id)) continue;
    const u = updates.get(row.id);
    if (u === undefined) {
      rows.push({ ...row, result: null });
      continue;
    }
    rows.push({
      ...row,
      scenario_label: u.label,
      row_snapshot: u.relabel ? DEFAULT_ROW_SNAPSHOT : row.row_snapshot,
      result: result(u.payload),
    });
  }
  // The item's last written row: its last insert, else its last update (as for stored rows).
  const lastUpdate = plan.updates.at(-1);
  if (lastUpdate) last = { rowId: lastUpdate.rowId, write: lastUpdate.payload };
  for (const ins of plan.inserts) {
    const id = uuidv7();
    rows.push({
      id,
      row_order: ins.row_order,
      scenario_label: ins.label,
      row_snapshot: DEFAULT_ROW_SNAPSHOT,
      result: result(ins.payload),
    });
    last = { rowId: id, write: ins.payload };
  }
  return {
    rows,
    comment: last?.write.comment ?? null,
    cause: last ? rowCause(last.rowId, last.write, userId, now) : undefined,
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
