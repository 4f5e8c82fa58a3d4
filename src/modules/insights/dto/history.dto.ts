import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, IsUUID, Max, Min } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page';
import { MaxLen, OptionalNotNull, QueryInt } from '../../../common/validation/decorators';
import { RUN_ITEM_STATUSES } from '../../test-runs/run-summary';
import { FLAKY_MIN_RUNS_DEFAULT, STATS_WINDOW_DEFAULT, STATS_WINDOW_MAX } from '../case-stats';

/** Longest `build` filter, as long as a run's build. */
export const BUILD_MAX = 255;

const WINDOW_DESCRIPTION =
  `The stats look at the last \`window\` runs that contain the case (${STATS_WINDOW_DEFAULT} by ` +
  `default, at most ${STATS_WINDOW_MAX}), newest first by creation (run ids are time-ordered).`;

export class CaseHistoryQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only runs of this environment' })
  @IsOptional()
  @IsUUID()
  environment_id?: string;

  @ApiPropertyOptional({
    description: 'Only runs of this build (exact match)',
    example: '1.4.2+871',
  })
  @IsOptional()
  @IsString()
  @MaxLen(BUILD_MAX)
  build?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: STATS_WINDOW_MAX,
    default: STATS_WINDOW_DEFAULT,
    description: WINDOW_DESCRIPTION,
  })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(STATS_WINDOW_MAX)
  window: number = STATS_WINDOW_DEFAULT;
}

export class FlakyQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Only runs of this environment (an unknown one lists nothing)',
  })
  @IsOptional()
  @IsUUID()
  environment_id?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: STATS_WINDOW_MAX,
    default: STATS_WINDOW_DEFAULT,
    description: WINDOW_DESCRIPTION,
  })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(STATS_WINDOW_MAX)
  window: number = STATS_WINDOW_DEFAULT;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: STATS_WINDOW_MAX,
    default: FLAKY_MIN_RUNS_DEFAULT,
    description: 'Least number of pass-or-fail results in the window for a case to be listed',
  })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(STATS_WINDOW_MAX)
  min_runs: number = FLAKY_MIN_RUNS_DEFAULT;
}

const STATUS_ENUM = [...RUN_ITEM_STATUSES];

export class CaseStatsDto {
  @ApiProperty({ example: 30, description: 'Runs in the window (any status)' }) runs: number;
  @ApiProperty({ example: 25, description: 'Results passed or xfailed' }) passed: number;
  @ApiProperty({ example: 4, description: 'Results failure or error' }) failing: number;
  @ApiProperty({
    example: 6,
    description:
      'Changes between passing and failing from one run to the next (other statuses skipped over)',
  })
  flips: number;
  @ApiProperty({
    example: 0.2143,
    description: '`flips / (passed + failing - 1)`; 0 below two pass-or-fail results',
  })
  flip_rate: number;
  @ApiProperty({
    example: 1,
    description:
      'Results of the window (one per run) that an import marked flaky: the run case has a row ' +
      'whose status is passed and whose comment starts with the import’s `Flaky: passed after …` ' +
      'header (a JUnit testcase with Surefire `flakyFailure`/`flakyError`, or a retried testcase ' +
      'whose last attempt passed). Imports record nothing else about flakiness.',
  })
  flaky_attempts: number;
  @ApiProperty({
    nullable: true,
    type: String,
    enum: STATUS_ENUM,
    description: 'Status in the newest run of the window; null without runs',
  })
  last_status: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Newest run of the window where the case failed (failure or error)',
  })
  last_failure_run_id: string | null;
}

export class CaseHistoryItemDto {
  @ApiProperty({ format: 'uuid' }) run_id: string;
  @ApiProperty({ example: 'Nightly 2026-11-24' }) run_name: string;
  @ApiProperty({ nullable: true, type: String, example: '1.4.2+871' }) build: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) environment_id: string | null;
  @ApiProperty({ nullable: true, type: Number, example: 4 })
  environment_revision_number: number | null;
  @ApiProperty({
    enum: STATUS_ENUM,
    description:
      'The case’s status in the run: the run case’s status, rolled up from its rows when the ' +
      'case ran with several dataset rows (failure > error > blocked > xpassed > in_progress > ' +
      'untested > passed > xfailed > skipped)',
  })
  status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description:
      'When the result was finished: the latest `finished_at` of the run case’s rows, else the ' +
      'run case’s `last_executed_at`; null when nothing was recorded',
  })
  finished_at: string | null;
  @ApiProperty({ format: 'date-time' }) run_created_at: string;
}

export class CaseHistoryDto {
  @ApiProperty({
    type: [CaseHistoryItemDto],
    description:
      'Every run containing the case (any status), newest run first (run id: creation order)',
  })
  items: CaseHistoryItemDto[];
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 50 }) page_size: number;
  @ApiProperty() has_next: boolean;
  @ApiProperty({ example: 120 }) total: number;
  @ApiProperty({ type: CaseStatsDto, description: 'Over the last `window` runs (filters applied)' })
  stats: CaseStatsDto;
}

/** One run of a flaky case's window: what the dashboard's history strip draws. */
export class FlakyRecentResultDto {
  @ApiProperty({ format: 'uuid' }) run_id: string;
  @ApiProperty({
    enum: STATUS_ENUM,
    description: 'The case’s status in the run (as in its history)',
  })
  status: string;
}

export class FlakyCaseDto extends CaseStatsDto {
  @ApiProperty({ format: 'uuid' }) test_case_id: string;
  @ApiProperty({ example: 'Checkout with a saved card' }) title: string;
  @ApiProperty({
    type: [FlakyRecentResultDto],
    maxItems: STATS_WINDOW_MAX,
    description:
      'The window the stats cover, newest run first: the run id and status of the case in each of ' +
      'its last `window` runs (at most `window` entries, ' +
      `${STATS_WINDOW_MAX} at most), the same entries, in the same order, as the newest ` +
      '`window` items of `GET /test-cases/{id}/history` with the same `environment_id`',
  })
  recent: FlakyRecentResultDto[];
}

export class FlakyPageDto {
  @ApiProperty({ type: [FlakyCaseDto] }) items: FlakyCaseDto[];
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 50 }) page_size: number;
  @ApiProperty() has_next: boolean;
  @ApiProperty({ example: 7 }) total: number;
}
