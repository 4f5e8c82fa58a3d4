import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromQuery, fromResource, ProjectAccess } from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { Query } from '../../common/validation/request-parts';
import { TEST_CASES } from '../test-cases/test-cases.resource';
import { TEST_RUNS } from '../test-runs/test-runs.resource';
import { CompareRunsQueryDto, RunComparisonDto } from './dto/compare.dto';
import {
  CaseHistoryDto,
  CaseHistoryQueryDto,
  FlakyPageDto,
  FlakyQueryDto,
} from './dto/history.dto';
import { InsightsService } from './insights.service';

const COMPARE_DESCRIPTION =
  'Compares this run with a base run: `base_run_id` (a run of the same project) or ' +
  '`base=previous` (the latest run of the same project and environment created before this one; ' +
  'runs without environment compare with the latest run without environment). Exactly one of ' +
  'them (422 `validation_error` on `query.base`). Cases are matched by test case id (run cases ' +
  'whose test case was deleted are left out); a case’s status in a run is its run case’s status, ' +
  'rolled up from its dataset rows. *Failing* is failure or error, *passing* passed or xfailed. ' +
  'Each case of either run is in exactly one class: `added` (only in this run), `removed` (only ' +
  'in the base), `newly_failing` (failing now, not failing in the base), `fixed` (failing in the ' +
  'base, passing now), `still_failing`, `unchanged` (same status, not failing), `changed` (any ' +
  'other status change, e.g. passed → skipped or failure → skipped). `counts` cover every case; ' +
  '`change` (repeatable) filters the items, which are paginated and ordered by class ' +
  '(newly_failing, fixed, still_failing, added, removed, changed, unchanged), then title ' +
  '(case-insensitive), then test case id. `environment` tells whether the captured environment ' +
  'revision changed and embeds the revision diff (as `GET /environments/{id}/revisions/{n}/diff` ' +
  'answers it, from the base run’s revision to this run’s); `datasets` lists the datasets whose ' +
  'highest revision used by the run cases differs (null on the side that did not use it). ' +
  'Answered with at most four statements, whatever the size of the runs; titles are looked up and sorted ' +
  'only for the classes the page overlaps. Each instance keeps the counts and page per (runs, ' +
  'classes, page) and version of the project’s results (see `GET /test-cases/flaky`; at most ' +
  '1,024 pages and 16 MiB), and a revision diff per pair of revisions (they never change; at ' +
  'most 512 diffs and 16 MiB), so the snapshots are read once.';

const HISTORY_DESCRIPTION =
  'Every run containing the case (any status, untested included), newest run first by ' +
  'creation (run ids are time-ordered uuidv7; a run whose create waited on a lock may show a ' +
  '`run_created_at` a little earlier than the run after it), paginated; filters `environment_id` ' +
  'and `build` (exact). `stats` cover the last `window` of those runs (same filters; default 30, ' +
  'at most 200), in the same order. A *flip* is a change between passing (passed, ' +
  'xfailed) and failing (failure, error) from one run to the next, other statuses skipped over; ' +
  '`flip_rate = flips / (passed + failing - 1)`, 0 below two such results. `flaky_attempts` ' +
  'counts the window’s results that an import marked flaky (a passed row whose comment starts ' +
  'with `Flaky: passed after`). `last_failure_run_id` is the newest failing run of the window.';

const FLAKY_DESCRIPTION =
  'The project’s cases with the stats of `GET /test-cases/{id}/history` over their last ' +
  '`window` runs (default 30, at most 200; optional `environment_id`), listed when they have at ' +
  'least `min_runs` (default 5) pass-or-fail results and a flip or a flaky result; ranked by ' +
  '`flip_rate` (descending), then `flaky_attempts`, then `flips` (descending), then title ' +
  '(case-insensitive) and test case id. Paginated. Cases whose test case was deleted are left ' +
  'out; an unknown `environment_id` lists nothing. One statement reads each case’s window ' +
  '(the index `ix_run_items_project_case_run`, newest run first). Each item carries that window ' +
  'as `recent` (run id and status per run, newest first, at most `window` entries): what a ' +
  'history strip draws, with no call per case to the history. Each instance keeps the ranking ' +
  'per (project, window, environment, min_runs) and version of the project’s results, which every ' +
  'write of a result, run case, run or test case that changes what the list reads changes in its ' +
  'own transaction: a read after such a write (on any instance) is never stale, and the other ' +
  'reads cost one lookup of the version. At most 256 rankings and 32 MiB per instance ' +
  '(least recently used go first).';

/** `GET /test-runs/{id}/compare` (issue #17 §1). */
@ApiTags('insights')
@Controller('test-runs')
export class RunComparisonController {
  constructor(private readonly insights: InsightsService) {}

  @Get(':id/compare')
  @Endpoint({
    summary: 'Compare a run with a base run',
    description: COMPARE_DESCRIPTION,
    minRole: 'viewer',
    project: fromResource(TEST_RUNS),
    response: RunComparisonDto,
    problems: ['no_previous_run', 'run_project_mismatch'],
  })
  compare(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Query() q: CompareRunsQueryDto,
  ): Promise<RunComparisonDto> {
    return this.insights.compare(access, id, q);
  }
}

/**
 * `GET /test-cases/flaky` and `GET /test-cases/{id}/history` (issue #17 §3, §4). The insights
 * module is registered before the test cases module, so `flaky` is not taken for an `{id}`.
 */
@ApiTags('insights')
@Controller('test-cases')
export class CaseInsightsController {
  constructor(private readonly insights: InsightsService) {}

  @Get('flaky')
  @Endpoint({
    summary: 'Flaky test cases of a project',
    description: FLAKY_DESCRIPTION,
    minRole: 'viewer',
    project: fromQuery(),
    response: FlakyPageDto,
  })
  flaky(@CurrentAccess() access: ProjectAccess, @Query() q: FlakyQueryDto): Promise<FlakyPageDto> {
    return this.insights.flaky(access, q);
  }

  @Get(':id/history')
  @Endpoint({
    summary: 'Results of a test case across runs',
    description: HISTORY_DESCRIPTION,
    minRole: 'viewer',
    project: fromResource(TEST_CASES),
    response: CaseHistoryDto,
  })
  history(@Param('id') id: string, @Query() q: CaseHistoryQueryDto): Promise<CaseHistoryDto> {
    return this.insights.history(id, q);
  }
}
