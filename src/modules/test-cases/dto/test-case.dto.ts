import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CursorPageQueryDto } from '../../../common/pagination/cursor-query';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
} from 'class-validator';
import { SORT_ORDERS, SortOrder, QUERY_VALUES_MAX } from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NestedList,
  Nullable,
  OptionalNotNull,
  QueryArray,
} from '../../../common/validation/decorators';
import { RISK_LEVELS, RiskLevel } from '../../components/risk-score';
import { DatasetBindingDto } from '../../datasets/dto/binding.dto';
import {
  COVERAGE_STRENGTHS,
  COVERAGE_TYPES,
  CoverageStrength,
  CoverageType,
  TEST_CASE_PRIORITIES,
  TEST_CASE_TYPES,
  TestCasePriority,
  TestCaseType,
} from '../../products/coverage';

export const TEST_CASE_STATUSES = ['draft', 'active', 'archived'] as const;
export type TestCaseStatus = (typeof TEST_CASE_STATUSES)[number];
export const TEST_CASE_SORT_FIELDS = [
  'created_at',
  'updated_at',
  'key',
  'title',
  'status',
  'priority',
  'owner_name',
  'suite_name',
] as const;
export type TestCaseSortField = (typeof TEST_CASE_SORT_FIELDS)[number];

/** Longest `action` or `expected` of a step, in characters (also what an import cuts them to). */
export const STEP_TEXT_MAX = 10_000;

export class TestCaseStepDto {
  @ApiProperty({ maxLength: STEP_TEXT_MAX, example: 'Open the login page' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(STEP_TEXT_MAX)
  action: string;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: STEP_TEXT_MAX,
    example: 'The form is shown',
  })
  @Nullable()
  @IsString()
  @MaxLen(STEP_TEXT_MAX)
  expected?: string | null;
}

export class StepReadDto {
  @ApiProperty() action: string;
  @ApiProperty({ nullable: true, type: String }) expected: string | null;
}

export class CoverageInputDto {
  @ApiProperty({ format: 'uuid', description: 'A component of the same project' })
  @IsUUID()
  component_id: string;

  @ApiPropertyOptional({ enum: COVERAGE_TYPES, default: 'direct' })
  @OptionalNotNull()
  @IsIn(COVERAGE_TYPES)
  coverage_type?: CoverageType;

  @ApiPropertyOptional({ enum: COVERAGE_STRENGTHS, default: 'regression' })
  @OptionalNotNull()
  @IsIn(COVERAGE_STRENGTHS)
  coverage_strength?: CoverageStrength;

  @ApiPropertyOptional({ default: false })
  @OptionalNotNull()
  @IsBoolean()
  is_mandatory_for_release?: boolean;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  notes?: string | null;
}

export class CoverageDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) test_case_id: string;
  @ApiProperty({ format: 'uuid' }) component_id: string;
  @ApiProperty({ enum: COVERAGE_TYPES }) coverage_type: CoverageType;
  @ApiProperty({ enum: COVERAGE_STRENGTHS }) coverage_strength: CoverageStrength;
  @ApiProperty() is_mandatory_for_release: boolean;
  @ApiProperty({ nullable: true, type: String }) notes: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class TestCaseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'TC-12', description: 'Sequential per project, never reused' })
  key: string;
  @ApiProperty({ example: 'Login with valid credentials' }) title: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String }) preconditions: string | null;
  @ApiProperty({ type: [StepReadDto] }) steps: StepReadDto[];
  @ApiProperty({ enum: TEST_CASE_PRIORITIES, nullable: true }) priority: TestCasePriority | null;
  @ApiProperty({ enum: TEST_CASE_STATUSES }) status: TestCaseStatus;
  @ApiProperty({ enum: TEST_CASE_TYPES }) test_case_type: TestCaseType;
  @ApiProperty({ nullable: true, type: String }) automation_id: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) suite_id: string | null;
  @ApiProperty({ nullable: true, type: String }) suite_name: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) owner_id: string | null;
  @ApiProperty({ nullable: true, type: String, description: "Owner's username" }) owner_name:
    | string
    | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) primary_product_id: string | null;
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiProperty({ type: [CoverageDto] }) component_coverages: CoverageDto[];
  @ApiProperty({ type: [DatasetBindingDto] }) dataset_bindings: DatasetBindingDto[];
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CreateTestCaseDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: 500, example: 'Login with valid credentials' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(500)
  title: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100000 })
  @Nullable()
  @IsString()
  @MaxLen(100000)
  description?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100000 })
  @Nullable()
  @IsString()
  @MaxLen(100000)
  preconditions?: string | null;

  @ApiPropertyOptional({ type: [TestCaseStepDto], default: [], maxItems: 500 })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(500)
  @NestedList(() => TestCaseStepDto)
  steps?: TestCaseStepDto[];

  @ApiPropertyOptional({ enum: TEST_CASE_PRIORITIES, nullable: true })
  @Nullable()
  @IsIn(TEST_CASE_PRIORITIES)
  priority?: TestCasePriority | null;

  @ApiPropertyOptional({ enum: TEST_CASE_STATUSES, default: 'active' })
  @OptionalNotNull()
  @IsIn(TEST_CASE_STATUSES)
  status?: TestCaseStatus;

  @ApiPropertyOptional({ enum: TEST_CASE_TYPES, default: 'manual' })
  @OptionalNotNull()
  @IsIn(TEST_CASE_TYPES)
  test_case_type?: TestCaseType;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: 255,
    description: 'Unique per project (409 automation_id_already_exists); blank means none',
    example: 'tests.auth.test_login.test_valid',
  })
  @Nullable()
  @IsString()
  @MaxLen(255)
  automation_id?: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @Nullable()
  @IsUUID()
  suite_id?: string | null;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description:
      'Omitted: the creator; null: nobody. Must have access to the project (422 invalid_owner)',
  })
  @Nullable()
  @IsUUID()
  owner_id?: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @Nullable()
  @IsUUID()
  primary_product_id?: string | null;

  @ApiPropertyOptional({
    type: [String],
    default: [],
    description: 'Trimmed, de-duplicated case-insensitively',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ type: [CoverageInputDto], default: [], maxItems: 500 })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(500)
  @NestedList(() => CoverageInputDto)
  component_coverages?: CoverageInputDto[];
}

export class UpdateTestCaseDto {
  @ApiPropertyOptional({ maxLength: 500 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(500)
  title?: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100000 })
  @Nullable()
  @IsString()
  @MaxLen(100000)
  description?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100000 })
  @Nullable()
  @IsString()
  @MaxLen(100000)
  preconditions?: string | null;

  @ApiPropertyOptional({
    type: [TestCaseStepDto],
    maxItems: 500,
    description: 'Replaces all steps',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(500)
  @NestedList(() => TestCaseStepDto)
  steps?: TestCaseStepDto[];

  @ApiPropertyOptional({ enum: TEST_CASE_PRIORITIES, nullable: true })
  @Nullable()
  @IsIn(TEST_CASE_PRIORITIES)
  priority?: TestCasePriority | null;

  @ApiPropertyOptional({ enum: TEST_CASE_STATUSES })
  @OptionalNotNull()
  @IsIn(TEST_CASE_STATUSES)
  status?: TestCaseStatus;

  @ApiPropertyOptional({ enum: TEST_CASE_TYPES })
  @OptionalNotNull()
  @IsIn(TEST_CASE_TYPES)
  test_case_type?: TestCaseType;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 255 })
  @Nullable()
  @IsString()
  @MaxLen(255)
  automation_id?: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @Nullable()
  @IsUUID()
  suite_id?: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @Nullable()
  @IsUUID()
  owner_id?: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @Nullable()
  @IsUUID()
  primary_product_id?: string | null;

  @ApiPropertyOptional({ type: [String] })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tags?: string[];

  @ApiPropertyOptional({
    type: [CoverageInputDto],
    maxItems: 500,
    description: 'Replaces all coverages',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(500)
  @NestedList(() => CoverageInputDto)
  component_coverages?: CoverageInputDto[];
}

export class ListTestCasesQueryDto extends CursorPageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({
    description: 'Case-insensitive substring of key, title, automation_id or a tag',
  })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  search?: string;

  @ApiPropertyOptional({
    enum: TEST_CASE_STATUSES,
    isArray: true,
    description: 'Without this filter archived cases are hidden',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(TEST_CASE_STATUSES, { each: true })
  status?: TestCaseStatus[];

  @ApiPropertyOptional({ enum: TEST_CASE_PRIORITIES, isArray: true })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(TEST_CASE_PRIORITIES, { each: true })
  priority?: TestCasePriority[];

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description: 'Cases directly in any of these suites',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsUUID('all', { each: true })
  suite_id?: string[];

  @ApiPropertyOptional({
    type: [String],
    description: 'Cases with any of these tags (case-insensitive)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  tag?: string[];

  @ApiPropertyOptional({ enum: TEST_CASE_TYPES, isArray: true })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(TEST_CASE_TYPES, { each: true })
  test_case_type?: TestCaseType[];

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description: 'primary_product_id is any of these',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsUUID('all', { each: true })
  product_id?: string[];

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description: 'Cases covering any of these components',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsUUID('all', { each: true })
  component_id?: string[];

  @ApiPropertyOptional({ type: [String], format: 'uuid' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsUUID('all', { each: true })
  owner_id?: string[];

  @ApiPropertyOptional({
    enum: RISK_LEVELS,
    description: 'Cases covering at least one component of this risk level or higher',
  })
  @IsOptional()
  @IsIn(RISK_LEVELS)
  minimum_component_risk_level?: RiskLevel;

  @ApiPropertyOptional({ type: [String], format: 'uuid', description: 'Leave these cases out' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsUUID('all', { each: true })
  exclude_test_case_id?: string[];

  @ApiPropertyOptional({ enum: TEST_CASE_SORT_FIELDS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(TEST_CASE_SORT_FIELDS)
  sort_by: TestCaseSortField = 'created_at';

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order: SortOrder = 'desc';
}

export class TagsQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;
}

export class TagListDto {
  @ApiProperty({ type: [String] }) items: string[];
}
