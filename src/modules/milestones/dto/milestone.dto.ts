import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
} from 'class-validator';
import { PageQueryDto, QUERY_VALUES_MAX } from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NoNul,
  Nullable,
  OptionalNotNull,
  QueryArray,
} from '../../../common/validation/decorators';
import type { MilestoneStatus } from '../entities/milestone.entity';
import { IsDateTime } from '../../../common/validation/datetime';

export const MILESTONE_STATUSES = ['planned', 'active', 'completed', 'archived'] as const;

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_MESSAGE = '$property must be a date (YYYY-MM-DD)';

export class MilestoneDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Release 2.4' }) name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: MILESTONE_STATUSES, example: 'planned' }) status: MilestoneStatus;
  @ApiProperty({ nullable: true, type: String, format: 'date', example: '2026-05-01' })
  start_date: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date', example: '2026-06-30' })
  target_date: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completed_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) owner_id: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'v2.4.0' }) release_label: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) created_by: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CreateMilestoneDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: 255, example: 'Release 2.4' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ enum: MILESTONE_STATUSES, default: 'planned' })
  @OptionalNotNull()
  @IsIn(MILESTONE_STATUSES)
  status?: MilestoneStatus;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date', example: '2026-05-01' })
  @Nullable()
  @Matches(DATE_RE, { message: DATE_MESSAGE })
  @IsISO8601({ strict: true }, { message: DATE_MESSAGE })
  start_date?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date', example: '2026-06-30' })
  @Nullable()
  @Matches(DATE_RE, { message: DATE_MESSAGE })
  @IsISO8601({ strict: true }, { message: DATE_MESSAGE })
  target_date?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' })
  @Nullable()
  @IsDateTime()
  completed_at?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' })
  @Nullable()
  @IsUUID()
  owner_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 128, example: 'v2.4.0' })
  @Nullable()
  @IsString()
  @MaxLen(128)
  release_label?: string | null;
}

export class UpdateMilestoneDto {
  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ enum: MILESTONE_STATUSES })
  @OptionalNotNull()
  @IsIn(MILESTONE_STATUSES)
  status?: MilestoneStatus;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date' })
  @Nullable()
  @Matches(DATE_RE, { message: DATE_MESSAGE })
  @IsISO8601({ strict: true }, { message: DATE_MESSAGE })
  start_date?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date' })
  @Nullable()
  @Matches(DATE_RE, { message: DATE_MESSAGE })
  @IsISO8601({ strict: true }, { message: DATE_MESSAGE })
  target_date?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' })
  @Nullable()
  @IsDateTime()
  completed_at?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' })
  @Nullable()
  @IsUUID()
  owner_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 128 })
  @Nullable()
  @IsString()
  @MaxLen(128)
  release_label?: string | null;
}

export class ListMilestonesQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({
    enum: MILESTONE_STATUSES,
    isArray: true,
    description: 'Repeat to match any of several statuses',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(MILESTONE_STATUSES, { each: true })
  status?: MilestoneStatus[];

  @ApiPropertyOptional({
    description: 'Case-insensitive substring of name, description or release label',
  })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  @NoNul()
  search?: string;
}

export class MilestoneSummaryDto {
  @ApiProperty({ format: 'uuid' }) milestone_id: string;
  @ApiProperty({ description: 'Test plans linked to the milestone' }) plans_total: number;
  @ApiProperty({ description: 'Explicit test case links across those plans' })
  planned_cases_total: number;
  @ApiProperty({ description: 'Runs linked to the milestone, any status' }) runs_total: number;
  @ApiProperty({ description: 'Runs not_started' }) planned_runs: number;
  @ApiProperty({ description: 'Runs in_progress' }) active_runs: number;
  @ApiProperty() completed_runs: number;
  @ApiProperty() archived_runs: number;
  @ApiProperty({ description: 'Run items of the linked runs, every status' }) total_tests: number;
  @ApiProperty() untested: number;
  @ApiProperty() in_progress: number;
  @ApiProperty() passed: number;
  @ApiProperty() error: number;
  @ApiProperty() failure: number;
  @ApiProperty() blocked: number;
  @ApiProperty() skipped: number;
  @ApiProperty() xfailed: number;
  @ApiProperty() xpassed: number;
  @ApiProperty({
    example: 66.67,
    description: 'round(passed / total_tests × 100, 2); 0 without items',
  })
  pass_rate: number;
  @ApiProperty({
    description:
      'target_date is before today (UTC) and the milestone is neither completed nor archived',
  })
  overdue: boolean;
}
