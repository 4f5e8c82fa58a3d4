import { Injectable } from '@nestjs/common';
import type { ImportIssueDto } from './dto/import.dto';
import type { ResultInput } from '../run-items/run-results.writer';
import { cutText } from '../../common/normalize';
import { TEST_CASE_KEY_COUNTER } from '../test-cases/case-keys';
import { STEP_TEXT_MAX } from '../test-cases/dto/test-case.dto';
import { TestCasesRepository } from '../test-cases/test-cases.repository';
import { ImportRepository, RunRef } from './import.repository';
import type { JunitResult } from './junit/dialects';
import type { ParsedReport } from './junit/junit-parser';
import {
  CreationKeyMap,
  MatchIndex,
  MatchKeys,
  MatchKind,
  REASONS,
  SuitePlanner,
  candidateFilterOf,
  readsByKeys,
  matchKeysOf,
  runLevelReason,
  storageAutomationId,
  storageTitle,
  storedSuitePathOf,
  wantedKeysOf,
} from './matching';
import type { RunMetadataForm } from './run-metadata-form';

/** The import's options (query parameters or form fields). */
export interface Flags {
  dryRun: boolean;
  createMissing: boolean;
  /** Run metadata form fields (issue #24): set on the run the import creates or imports into. */
  runMetadata?: RunMetadataForm;
}

export type CaseRef = { existing: string } | { planned: number };

/** A case the import creates (suite resolved against the existing and the planned suites). */
export interface PlannedCase {
  title: string;
  automation_id: string | null;
  suite_path: string[];
  suite: ReturnType<SuitePlanner['resolve']>;
  steps: string | null;
  preconditions: string | null;
  assertions: string | null;
}

/** A matched result as the apply step needs it (the parsed testcase itself is not kept). */
export interface ResultMatch extends ResultInput {
  ref: CaseRef;
  by: MatchKind;
}

/** What the answer needs from the parsed report once the import is planned. */
export interface ReportFacts {
  results: number;
  totals: ParsedReport['totals'];
  ignoredTestcases: number;
  flaky: ImportIssueDto[];
  /** Testcases kept under a generated name, then results whose text was cut (report order). */
  warnings: ImportIssueDto[];
}

/** What each result maps to: matches (existing or planned cases), cases and suites to create, issues. */
export interface ImportPlan {
  matches: ResultMatch[];
  cases: PlannedCase[];
  planner: SuitePlanner;
  /** Issues with the report position of their result (lists are answered in report order). */
  unmatched: Array<{ order: number; issue: ImportIssueDto }>;
  ambiguous: Array<{ order: number; issue: ImportIssueDto }>;
}

export function issue(
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
 * The plan step of an import (upload → plan → apply): what each result of a checked report maps to
 * (an existing case, a case to create, or an issue), with the suites to create. Reads only, apart
 * from taking the case-key counter lock of an import that will create cases.
 */
@Injectable()
export class ImportPlanner {
  constructor(
    private readonly repo: ImportRepository,
    private readonly cases: TestCasesRepository,
  ) {}

  /**
   * Plans the import of the checked report and releases the parsed report: from here on only the
   * plan (compact matches) and the few facts the answer needs are kept, which halves what a large
   * import holds in memory while it writes.
   */
  async planReport(
    projectId: string,
    file: { report: ParsedReport | null },
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
    const creates = flags.createMissing && !flags.dryRun;
    // The number of cases the project ever had (its key counter): an upper bound of its rows.
    // Creating, take the counter's lock first: concurrent case creators wait, so the lookups below
    // see every case that exists when this import creates its own.
    const casesEver = creates
      ? (await this.cases.allocateCounter(projectId, TEST_CASE_KEY_COUNTER, 0)) - 1
      : await this.cases.readCounter(projectId, TEST_CASE_KEY_COUNTER);
    const keys = report.results.map(matchKeysOf);
    const wanted = wantedKeysOf(keys);
    const filter = candidateFilterOf(wanted);
    const [candidates, suites] = await Promise.all([
      // The cases under the report's keys (by title probe, a superset of its titles' cases) when
      // that is the smaller read, else all of them.
      this.repo.loadCandidates(projectId, readsByKeys(filter, casesEver) ? filter : null),
      // An import that creates cases keeps the suites it may put them in (no foreign key does).
      this.repo.loadSuites(projectId, creates),
    ]);
    const index = new MatchIndex(candidates, suites, wanted);
    const planner = new SuitePlanner(suites);
    const plan: ImportPlan = { matches: [], cases: [], planner, unmatched: [], ambiguous: [] };
    // Planned cases by creation key (creationKeyOf).
    const plannedByKey = new CreationKeyMap<number>();
    // Every planned case under its suite path and title too (the creation key it would have without
    // automation id, the map's `…Named` methods; -1 once two share it): a result without automation
    // id takes the case an earlier result of this import created there with an id, as its re-import
    // will find that case by suite path and title (reference §4.7). Results with automation ids keep
    // a case each, even under one suite and title (pytest's one `pytest` suite holds every module's
    // `test_create`).
    const plannedByName = new CreationKeyMap<number>();
    let matched: Array<{ result: JunitResult; ref: CaseRef; by: MatchKind }> = [];

    const results = report.results;
    for (let i = 0; i < results.length; i++) {
      const result = results[i] as JunitResult;
      const resultKeys = keys[i] as MatchKeys;
      const outcome = index.matchKeys(resultKeys);
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
      let planned = plannedByKey.get(resultKeys);
      if (planned === undefined && resultKeys.automationId === null) {
        const named = plannedByName.getNamed(resultKeys);
        if (named !== undefined && named >= 0) planned = named;
      } else if (planned === undefined) {
        // The reverse order: a result with automation id takes the case an earlier result without
        // one created under its suite path and title, and gives it its id, so both orders create
        // one case. Only a case still without id: a second automation id there gets its own case.
        const automationId = resultKeys.automationId as string;
        const named = plannedByName.getNamed(resultKeys);
        const idless = named !== undefined && named >= 0 ? plan.cases[named] : undefined;
        if (idless?.automation_id === null && !index.isAutomationIdTaken(automationId)) {
          idless.automation_id = automationId;
          planned = named;
          plannedByKey.set(resultKeys, planned as number);
        }
      }
      if (planned === undefined) {
        const automationId = resultKeys.automationId;
        if (automationId !== null && index.isAutomationIdTaken(automationId)) {
          plan.unmatched.push({
            order: result.index,
            issue: issue(result, REASONS.automationIdTaken),
          });
          continue;
        }
        const suitePath = storedSuitePathOf(result.suite_path);
        planned = plan.cases.length;
        plan.cases.push({
          title: storageTitle(result.title) || storageTitle(result.name),
          automation_id: automationId,
          suite_path: suitePath,
          suite: planner.resolve(suitePath),
          // The created case's one step holds them: cut to what a step may hold, so the case can
          // be sent back as GET answers it (a report may carry up to 65,536 characters).
          steps: result.steps === null ? null : cutText(result.steps, STEP_TEXT_MAX),
          preconditions: result.preconditions,
          assertions: result.assertions === null ? null : cutText(result.assertions, STEP_TEXT_MAX),
        });
        plannedByKey.set(resultKeys, planned);
        plannedByName.setNamed(resultKeys, plannedByName.hasNamed(resultKeys) ? -1 : planned);
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
    if (!flags.dryRun) {
      // The matched cases are held until the import commits; one deleted or archived since the
      // candidates were read is unmatched (reference §4.9), not a refusal of the whole import.
      const existing = [
        ...new Set(matched.flatMap((m) => ('existing' in m.ref ? [m.ref.existing] : []))),
      ];
      if (existing.length > 0) {
        const alive = await this.cases.lockActiveForShare(existing);
        if (alive.size < existing.length) {
          const kept: typeof matched = [];
          for (const match of matched) {
            if (!('existing' in match.ref) || alive.has(match.ref.existing)) kept.push(match);
            else
              plan.unmatched.push({
                order: match.result.index,
                issue: issue(match.result, REASONS.caseGone),
              });
          }
          matched = kept;
        }
      }
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
}
