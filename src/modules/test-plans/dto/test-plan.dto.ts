import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
} from 'class-validator';
import {
  PageQueryDto,
  SORT_ORDERS,
  SortOrder,
  QUERY_VALUES_MAX,
} from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NestedObject,
  Nullable,
  NullOrBlank,
  OptionalNotNull,
  QueryArray,
} from '../../../common/validation/decorators';
import { PlanGenerationConfigDto } from '../../products/dto/plan-preview.dto';
import { CreateTestRunFields } from '../../test-runs/dto/test-run.dto';

export const GENERATION_SOURCES = ['manual', 'product_generated'] as const;
export type GenerationSource = (typeof GENERATION_SOURCES)[number];
export const TEST_PLAN_SORT_FIELDS = ['created_at', 'updated_at', 'name'] as const;
export type TestPlanSortField = (typeof TEST_PLAN_SORT_FIELDS)[number];

/** Most suites and explicit cases one plan may list. */
export const MAX_PLAN_SUITES = 1000;
export const MAX_PLAN_CASES = 10000;

export class TestPlanDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Release 2.4 regression' }) name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiProperty({ enum: GENERATION_SOURCES }) generation_source: GenerationSource;
  @ApiProperty({
    type: PlanGenerationConfigDto,
    description: 'Always a complete config object (every default filled in, also for manual plans)',
  })
  generation_config: PlanGenerationConfigDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      '{} for manual plans; for product-generated plans the generation preview plus reason_map',
  })
  generation_summary: Record<string, unknown>;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) milestone_id: string | null;
  @ApiProperty({ nullable: true, type: String }) milestone_name: string | null;
  @ApiProperty({ type: [String], description: 'In plan order' }) suite_ids: string[];
  @ApiProperty({ type: [String], description: 'Names parallel to suite_ids' })
  suite_names: string[];
  @ApiProperty({ type: [String], description: 'Explicit cases in plan order' }) case_ids: string[];
  @ApiProperty({ type: [String], description: 'Keys parallel to case_ids' }) case_keys: string[];
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) created_by: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CreateTestPlanDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: 255, example: 'Release 2.4 regression' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ type: [String], default: [] })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ enum: GENERATION_SOURCES, default: 'manual' })
  @OptionalNotNull()
  @IsIn(GENERATION_SOURCES)
  generation_source?: GenerationSource;

  @ApiPropertyOptional({
    type: PlanGenerationConfigDto,
    nullable: true,
    description:
      'Required for product_generated plans: their explicit cases are then the generated ones ' +
      '(case_ids is checked but not applied). Not applied to a manual plan, which answers the ' +
      'defaults',
  })
  @Nullable()
  @NestedObject(() => PlanGenerationConfigDto)
  generation_config?: PlanGenerationConfigDto | null;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'null or blank: no milestone',
  })
  @NullOrBlank()
  @IsUUID()
  milestone_id?: string | null;

  @ApiPropertyOptional({
    type: [String],
    items: { type: 'string', format: 'uuid' },
    default: [],
    description: 'Suites of the project (their subtrees are included)',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_PLAN_SUITES)
  @IsUUID('all', { each: true })
  suite_ids?: string[];

  @ApiPropertyOptional({
    type: [String],
    items: { type: 'string', format: 'uuid' },
    default: [],
    description:
      'Test cases of the project. On a product_generated plan the list is checked (duplicates, ' +
      'existence, project) but not applied: its cases come from generation_config',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_PLAN_CASES)
  @IsUUID('all', { each: true })
  case_ids?: string[];
}

export class UpdateTestPlanDto {
  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name?: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ type: [String] })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ enum: GENERATION_SOURCES })
  @OptionalNotNull()
  @IsIn(GENERATION_SOURCES)
  generation_source?: GenerationSource;

  @ApiPropertyOptional({
    type: PlanGenerationConfigDto,
    nullable: true,
    description:
      'Regenerates the cases of a product_generated plan; not applied to a manual plan, which ' +
      'answers the defaults',
  })
  @Nullable()
  @NestedObject(() => PlanGenerationConfigDto)
  generation_config?: PlanGenerationConfigDto | null;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'null or blank clears the link',
  })
  @NullOrBlank()
  @IsUUID()
  milestone_id?: string | null;

  @ApiPropertyOptional({
    type: [String],
    items: { type: 'string', format: 'uuid' },
    description: 'Replaces all suites ([] clears)',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_PLAN_SUITES)
  @IsUUID('all', { each: true })
  suite_ids?: string[];

  @ApiPropertyOptional({
    type: [String],
    items: { type: 'string', format: 'uuid' },
    description:
      'Replaces all explicit cases ([] clears). On a product_generated plan the list is checked ' +
      '(duplicates, existence, project) but not applied: its cases come from generation_config',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_PLAN_CASES)
  @IsUUID('all', { each: true })
  case_ids?: string[];
}

export class ListTestPlansQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({ description: 'Case-insensitive substring of name or description' })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  search?: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'Plans having any of these tags (case-insensitive)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tag?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Same as tag (reference spelling)' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ type: [String], format: 'uuid' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsUUID('all', { each: true })
  milestone_id?: string[];

  @ApiPropertyOptional({ enum: GENERATION_SOURCES, isArray: true })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(GENERATION_SOURCES, { each: true })
  generation_source?: GenerationSource[];

  @ApiPropertyOptional({ enum: TEST_PLAN_SORT_FIELDS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(TEST_PLAN_SORT_FIELDS)
  sort_by: TestPlanSortField = 'created_at';

  @ApiPropertyOptional({ enum: SORT_ORDERS, description: 'Default desc for dates, asc for name' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}

export class CreateRunFromPlanDto extends CreateTestRunFields {
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description:
      "Omitted: the run inherits the plan's milestone; null: no milestone; else a milestone of the project (not archived)",
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  override milestone_id?: string | null = undefined;

  @ApiPropertyOptional({
    default: false,
    description: 'Start the run at once (status in_progress, started_at now)',
  })
  @OptionalNotNull()
  @IsBoolean()
  start_immediately?: boolean;
}

export class PlanTagsQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;
}
