import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  ValidateIf,
  Max,
  Min,
} from 'class-validator';
import { CursorPageQueryDto } from '../../../common/pagination/cursor-query';
import {
  RowPageQueryDto,
  SORT_ORDERS,
  SortOrder,
  QUERY_VALUES_MAX,
} from '../../../common/pagination/page';
import {
  AliasOf,
  MaxItems,
  MaxLen,
  NoNul,
  Nullable,
  OptionalNotNull,
  QueryArray,
  QueryInt,
  RequiredNonEmptyWhen,
} from '../../../common/validation/decorators';
import { RUN_STATUSES, RunStatus } from '../../test-runs/run-status';
import { RUN_ITEM_STATUSES, RunItemStatus } from '../../test-runs/run-summary';
import { IsDateTime } from '../../../common/validation/datetime';

/** PostgreSQL text cannot hold NUL characters: a query value with one is a 422, never a 500. */

/** Most test cases one bulk add may name. */
export const MAX_BULK_CASES = 5000;
const TEXT_MAX = 1_000_000;

export class RunCaseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ format: 'uuid' }) test_run_id: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Null once the test case was deleted (the item keeps its snapshots)',
  })
  test_case_id: string | null;
  @ApiProperty() test_run_name: string;
  @ApiProperty({ enum: RUN_STATUSES }) test_run_status: RunStatus;
  @ApiProperty({ nullable: true, type: String }) test_run_environment_name: string | null;
  @ApiProperty({ nullable: true, type: Number }) test_run_environment_revision_number:
    | number
    | null;
  @ApiProperty({ nullable: true, type: String }) test_run_build: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) assignee_id: string | null;
  @ApiProperty({ nullable: true, type: String, description: "The assignee's username" })
  assignee_name: string | null;
  @ApiProperty({ enum: RUN_ITEM_STATUSES, description: 'Rolled up from the rows' })
  status: RunItemStatus;
  @ApiProperty() rows_total: number;
  @ApiProperty() rows_passed: number;
  @ApiProperty({ description: 'Rows failure + error + blocked' }) rows_failed: number;
  @ApiProperty({ nullable: true, type: String }) comment: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'TC-12',
    description: 'Live value while the case exists, else the snapshot taken when it was added',
  })
  test_case_key: string | null;
  @ApiProperty({ nullable: true, type: String }) test_case_title: string | null;
  @ApiProperty({ nullable: true, type: String, enum: ['low', 'medium', 'high', 'critical'] })
  test_case_priority: string | null;
  @ApiProperty({ type: [String] }) test_case_tags: string[];
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Suite of the case when it was added, else its current suite',
  })
  suite_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Suite name captured when the case was added, else the current suite name',
  })
  suite_name: string | null;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [],
    description: 'Links to external issue trackers (reference shape); always empty here',
  })
  external_issues: Array<Record<string, unknown>>;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Latest result time of its rows',
  })
  last_executed_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class RunCaseHistoryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) run_case_id: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Row whose result caused it',
  })
  run_case_row_id: string | null;
  @ApiProperty({ nullable: true, enum: RUN_ITEM_STATUSES }) from_status: RunItemStatus | null;
  @ApiProperty({ enum: RUN_ITEM_STATUSES }) to_status: RunItemStatus;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Reported execution time text (reference shape); null, see duration_ms',
  })
  time: string | null;
  @ApiProperty({ nullable: true, type: String }) comment: string | null;
  @ApiProperty({ type: [String] }) defect_ids: string[];
  @ApiProperty({ nullable: true, type: String }) actual_result: string | null;
  @ApiProperty({ nullable: true, type: String }) system_out: string | null;
  @ApiProperty({ nullable: true, type: String }) system_err: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) executed_by_id: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) started_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) finished_at: string | null;
  @ApiProperty({ nullable: true, type: Number }) duration_ms: number | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) changed_by_id: string | null;
  @ApiProperty({ format: 'date-time' }) changed_at: string;
}

export class RunCaseHistoryPageDto {
  @ApiProperty({ type: [RunCaseHistoryDto], description: 'Newest first' })
  items: RunCaseHistoryDto[];
  @ApiProperty() page: number;
  @ApiProperty() page_size: number;
  @ApiProperty() has_next: boolean;
  @ApiProperty() total: number;
}

export class RunCaseDetailDto extends RunCaseDto {
  @ApiProperty({ type: RunCaseHistoryPageDto }) history: RunCaseHistoryPageDto;
}

export class RunCaseRowDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) run_case_id: string;
  @ApiProperty({ nullable: true, type: String, format: 'uuid', description: 'Row this one reruns' })
  parent_row_id: string | null;
  @ApiProperty({ example: 1 }) row_order: number;
  @ApiProperty({ example: 'Default scenario' }) scenario_label: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { datasets: [] } })
  row_snapshot: Record<string, unknown>;
  @ApiProperty({ enum: RUN_ITEM_STATUSES }) status: RunItemStatus;
  @ApiProperty({ nullable: true, type: String }) comment: string | null;
  @ApiProperty({ type: [String] }) defect_ids: string[];
  @ApiProperty({ nullable: true, type: String }) actual_result: string | null;
  @ApiProperty({ nullable: true, type: String }) system_out: string | null;
  @ApiProperty({ nullable: true, type: String }) system_err: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) executed_by_id: string | null;
  @ApiProperty({ description: 'Times a final status was entered' }) execution_count: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) last_executed_at:
    | string
    | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) started_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) finished_at: string | null;
  @ApiProperty({ nullable: true, type: Number }) duration_ms: number | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class BulkRunCasesResultDto {
  @ApiProperty({
    type: [RunCaseDto],
    description: 'The run items of every requested case (already present ones included)',
  })
  items: RunCaseDto[];
  @ApiProperty({ description: 'Items created by this call' }) created_count: number;
  @ApiProperty({ description: 'Cases that were already in the run (left unchanged)' })
  existing_count: number;
}

export class CreateRunCaseDto {
  @ApiProperty({ format: 'uuid' })
  @IsString()
  @MaxLen(100)
  test_run_id: string;

  @ApiProperty({ format: 'uuid', description: 'An active test case of the run’s project' })
  @IsString()
  @MaxLen(100)
  test_case_id: string;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'uuid',
    description:
      'Defaults to the run’s assignee when absent, null or blank; must have access to the project',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  assignee_id?: string | null;
}

export class BulkCreateRunCasesDto {
  @ApiProperty({ format: 'uuid' })
  @IsString()
  @MaxLen(100)
  test_run_id: string;

  @ApiPropertyOptional({
    type: [String],
    description:
      'Test case ids (exactly one of a non-empty test_case_ids and suite_id; an empty list counts ' +
      `as absent; null is a 422). At most ${MAX_BULK_CASES} ids.`,
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_BULK_CASES)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  test_case_ids?: string[];

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    description:
      'Adds the active cases of this suite and all its descendant suites. Must be a uuid (an ' +
      'empty string counts as absent); a suite that is not one of the project adds nothing.',
  })
  @OptionalNotNull()
  @ValidateIf((_o, v) => v !== '')
  @IsUUID()
  suite_id?: string;
}

export class UpdateRunCaseDto {
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' })
  @Nullable()
  @IsString()
  @MaxLen(100)
  assignee_id?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLen(TEXT_MAX)
  comment?: string | null;
}

export const RUN_CASE_SORT_KEYS = [
  'last_executed_at',
  'test_case_title',
  'test_case_key',
  'suite_name',
  'status',
  'assignee_name',
  'created_at',
] as const;
export type RunCaseSortKey = (typeof RUN_CASE_SORT_KEYS)[number];

export class ListRunCasesQueryDto extends CursorPageQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Items of this run. Without it, `project_id` and `test_case_id` are required',
  })
  @IsOptional()
  @IsString()
  @MaxLen(100)
  test_run_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'With test_case_id: the case across runs' })
  @IsOptional()
  @IsUUID()
  project_id?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsString()
  @MaxLen(100)
  test_case_id?: string;

  @ApiPropertyOptional({ enum: RUN_ITEM_STATUSES, isArray: true, description: 'Repeatable' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(RUN_ITEM_STATUSES, { each: true })
  status?: RunItemStatus[];

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsString()
  @MaxLen(100)
  assignee_id?: string;

  @ApiPropertyOptional({
    description:
      'By run: substring of the case title or key. Across runs: of the run name, build or environment',
  })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  @NoNul()
  search?: string;

  @ApiPropertyOptional({ enum: RUN_CASE_SORT_KEYS, default: 'last_executed_at' })
  @OptionalNotNull()
  @IsIn(RUN_CASE_SORT_KEYS)
  sort_by?: RunCaseSortKey;

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}

export class RunCaseDetailQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, default: 1 })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  history_page: number = 1;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(200)
  history_page_size: number = 50;
}

export class ListRowsQueryDto extends RowPageQueryDto {
  @ApiPropertyOptional({ enum: RUN_ITEM_STATUSES, isArray: true, description: 'Repeatable' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(RUN_ITEM_STATUSES, { each: true })
  status?: RunItemStatus[];
}

export class UpdateRowDto {
  @ApiPropertyOptional({ enum: RUN_ITEM_STATUSES })
  @OptionalNotNull()
  @IsIn(RUN_ITEM_STATUSES)
  status?: RunItemStatus;

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLen(TEXT_MAX)
  comment?: string | null;

  @ApiPropertyOptional({ type: [String], description: 'Replaces the list; [] clears it' })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(200, { each: true })
  defect_ids?: string[];

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLen(TEXT_MAX)
  actual_result?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLen(TEXT_MAX)
  system_out?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLen(TEXT_MAX)
  system_err?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Who executed it (defaults to the caller when a final status is entered)',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  @AliasOf('executed_by_id')
  executed_by?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Alias of executed_by',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  @AliasOf('executed_by')
  executed_by_id?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' })
  @Nullable()
  @IsDateTime()
  started_at?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description:
      'Defaults to now when a final status is set without it; not before started_at on a finished row or when given',
  })
  @Nullable()
  @IsDateTime()
  finished_at?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
  })
  @Nullable()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  duration_ms?: number | null;
}

export const RERUN_MODES = ['failed', 'subset'] as const;
export type RerunMode = (typeof RERUN_MODES)[number];

export class RerunDto {
  @ApiPropertyOptional({
    enum: RERUN_MODES,
    default: 'failed',
    description: 'failed: rows whose status is failure or error; subset: the listed rows',
  })
  @OptionalNotNull()
  @IsIn(RERUN_MODES)
  mode?: RerunMode;

  @ApiPropertyOptional({
    type: [String],
    description: 'Rows of this item (required and non-empty with mode subset)',
  })
  @RequiredNonEmptyWhen('mode', 'subset', 'at least one row id is required with mode subset')
  @IsArray()
  @MaxItems(10000)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  run_case_row_ids?: string[];

  @ApiPropertyOptional({
    default: false,
    description:
      'Rebuild the rows from the case’s current dataset bindings instead of copying the selected ' +
      'rows; only rows combining the same dataset rows (dataset and row key) as a selected row ' +
      'are kept (a selected row without dataset rows in its snapshot: the same scenario label)',
  })
  @OptionalNotNull()
  @IsBoolean()
  use_latest_revisions?: boolean;
}

export class RowPageDto {
  @ApiProperty({ type: [RunCaseRowDto] }) items: RunCaseRowDto[];
  @ApiProperty() page: number;
  @ApiProperty() page_size: number;
  @ApiProperty() has_next: boolean;
  @ApiProperty() total: number;
}
