import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto, SORT_ORDERS, SortOrder } from '../../../common/pagination/page';
import { Nullable, OptionalNotNull, QueryArray } from '../../../common/validation/decorators';
import { RUN_ITEM_STATUSES, RunItemStatus } from '../../run-items/roll-up';
import { RUN_STATUSES, RunStatus } from '../run-status';

/** A date (`YYYY-MM-DD`) or an ISO 8601 datetime (offset optional; none means UTC). */
export const DATE_OR_DATETIME_RE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

export class RunSummaryDto {
  @ApiProperty({ description: 'All run items, untested included', example: 4 }) total: number;
  @ApiProperty({ example: 1 }) untested: number;
  @ApiProperty({ example: 0 }) in_progress: number;
  @ApiProperty({ example: 2 }) passed: number;
  @ApiProperty({ example: 0 }) error: number;
  @ApiProperty({ example: 1 }) failure: number;
  @ApiProperty({ example: 0 }) blocked: number;
  @ApiProperty({ example: 0 }) skipped: number;
  @ApiProperty({ example: 0 }) xfailed: number;
  @ApiProperty({ example: 0 }) xpassed: number;
  @ApiProperty({ description: 'round(passed / total × 100, 2); 0 without items', example: 50 })
  pass_rate: number;
}

export class StatusBreakdownItemDto {
  @ApiProperty({ enum: RUN_ITEM_STATUSES }) status: RunItemStatus;
  @ApiProperty({ example: 2 }) count: number;
}

export class StatusBreakdownDto {
  @ApiProperty({
    type: [StatusBreakdownItemDto],
    description:
      'Statuses with count > 0 in the fixed order untested, in_progress, passed, error, failure, ' +
      'blocked, skipped, xfailed, xpassed; empty on a new run',
  })
  items: StatusBreakdownItemDto[];
}

export class EnvironmentRevisionRefDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 3 }) revision_number: number;
  @ApiProperty({ example: 'sha256:9f86d081884c7d65…' }) snapshot_hash: string;
}

export class TestRunDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Nightly regression' }) name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) environment_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Name of the environment when its revision was captured',
  })
  environment_name: string | null;
  @ApiProperty({
    nullable: true,
    type: EnvironmentRevisionRefDto,
    description: 'The captured environment revision, or null without an environment',
  })
  environment_revision: EnvironmentRevisionRefDto | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' })
  environment_revision_id: string | null;
  @ApiProperty({ nullable: true, type: Number }) environment_revision_number: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Full snapshot of the captured revision; `{}` without an environment',
  })
  environment_snapshot: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) milestone_id: string | null;
  @ApiProperty({ nullable: true, type: String }) milestone_name: string | null;
  @ApiProperty({ nullable: true, type: String, example: '2.4.0-rc1' }) build: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid', description: 'User id' })
  assignee: string | null;
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ description: "The creator's display name, else username" })
  created_by_name: string;
  @ApiProperty({ enum: RUN_STATUSES }) status: RunStatus;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) started_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completed_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) archived_at: string | null;
  @ApiProperty({ minimum: 0, example: 0 }) planned_item_count: number;
  @ApiProperty({ type: RunSummaryDto }) summary: RunSummaryDto;
  @ApiProperty({ type: StatusBreakdownDto }) status_breakdown: StatusBreakdownDto;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

/** Fields of a new run (also used by test plans' create-run). */
export class CreateTestRunFields {
  @ApiProperty({ maxLength: 255, example: 'Nightly regression' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLength(10000)
  description?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description:
      'Environment of the same project (not archived); its current revision is captured. ' +
      'Null or blank: no environment.',
  })
  @Nullable()
  @IsString()
  @MaxLength(100)
  environment_id?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'Milestone of the same project (not archived)',
  })
  @Nullable()
  @IsString()
  @MaxLength(100)
  milestone_id?: string | null;

  @ApiPropertyOptional({ nullable: true, maxLength: 255, example: '2.4.0-rc1' })
  @Nullable()
  @IsString()
  @MaxLength(255)
  build?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'User id; the user must have access to the project',
  })
  @Nullable()
  @IsString()
  @MaxLength(100)
  assignee?: string | null;
}

export class CreateTestRunDto extends CreateTestRunFields {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;
}

export class UpdateTestRunDto {
  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLength(10000)
  description?: string | null;

  @ApiPropertyOptional({
    type: String,
    description:
      'Re-captures the current revision of this environment (even when it is the same one). ' +
      'Cannot be null (422 `invalid_environment`).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  environment_id?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'Sets or clears the link' })
  @Nullable()
  @IsString()
  @MaxLength(100)
  milestone_id?: string | null;

  @ApiPropertyOptional({ nullable: true, maxLength: 255 })
  @Nullable()
  @IsString()
  @MaxLength(255)
  build?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLength(100)
  assignee?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    enum: RUN_STATUSES,
    description:
      'Only not_started→in_progress, in_progress→completed and completed→archived (lead) are ' +
      'accepted; null leaves the status unchanged',
  })
  @Nullable()
  @IsIn(RUN_STATUSES)
  status?: RunStatus | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Only with status=in_progress; default now',
  })
  @Nullable()
  @IsISO8601({ strict: true })
  started_at?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Only with status=completed; default now; not before started_at',
  })
  @Nullable()
  @IsISO8601({ strict: true })
  completed_at?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Only with status=archived; default now; not before completed_at',
  })
  @Nullable()
  @IsISO8601({ strict: true })
  archived_at?: string | null;

  @ApiPropertyOptional({ minimum: 0, description: 'Cannot be null' })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  planned_item_count?: number;
}

export const RUN_SORT_KEYS = ['created_at', 'name', 'status', 'build', 'environment'] as const;
export type RunSortKey = (typeof RUN_SORT_KEYS)[number];

export class ListTestRunsQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({
    enum: RUN_STATUSES,
    isArray: true,
    description: 'Repeatable. Without it archived runs are hidden.',
  })
  @QueryArray()
  @IsOptional()
  @IsIn(RUN_STATUSES, { each: true })
  status?: RunStatus[];

  @ApiPropertyOptional({ type: [String], description: 'Repeatable' })
  @QueryArray()
  @IsOptional()
  @IsString({ each: true })
  environment_id?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Repeatable' })
  @QueryArray()
  @IsOptional()
  @IsString({ each: true })
  milestone_id?: string[];

  @ApiPropertyOptional({
    description: 'Case-insensitive substring of the name, build or environment name',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ description: 'User id of the creator' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  created_by?: string;

  @ApiPropertyOptional({
    description: 'Created at or after: a date (YYYY-MM-DD, from 00:00 UTC) or an ISO 8601 datetime',
    example: '2026-05-01',
  })
  @IsOptional()
  @Matches(DATE_OR_DATETIME_RE, { message: '$property must be a date or an ISO 8601 datetime' })
  @IsISO8601({ strict: true }, { message: '$property must be a date or an ISO 8601 datetime' })
  created_from?: string;

  @ApiPropertyOptional({
    description:
      'Created at or before: a date (YYYY-MM-DD, the whole day inclusive, UTC) or an ISO 8601 datetime',
    example: '2026-05-31',
  })
  @IsOptional()
  @Matches(DATE_OR_DATETIME_RE, { message: '$property must be a date or an ISO 8601 datetime' })
  @IsISO8601({ strict: true }, { message: '$property must be a date or an ISO 8601 datetime' })
  created_to?: string;

  @ApiPropertyOptional({ enum: RUN_SORT_KEYS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(RUN_SORT_KEYS)
  sort_by?: RunSortKey;

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}
