import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FieldsParam } from '../../../common/pagination/fields';
import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsObject,
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
  MaxKeys,
  MaxLen,
  NestedList,
  Nullable,
  OptionalNotNull,
  QueryArray,
  QueryBool,
} from '../../../common/validation/decorators';

export const DATASET_STATUSES = ['active', 'archived'] as const;
export type DatasetStatus = (typeof DATASET_STATUSES)[number];
export const DATASET_SOURCE_TYPES = ['manual', 'pytest_parametrize', 'imported'] as const;
export type DatasetSourceType = (typeof DATASET_SOURCE_TYPES)[number];
export const DATASET_SORT_FIELDS = ['updated_at', 'created_at', 'name'] as const;
export type DatasetSortField = (typeof DATASET_SORT_FIELDS)[number];

/** Most rows one revision may hold. */
export const MAX_DATASET_ROWS = 10000;
/** Most columns one revision may hold. */
export const MAX_DATASET_COLUMNS = 200;
/** Most ids one `POST /datasets/bulk` may name (duplicates included). */
export const MAX_BULK_DATASETS = 1000;
/** Longest dataset id accepted in a bulk body (ids are opaque: anything else is simply unknown). */
export const DATASET_ID_MAX_LENGTH = 100;
export const DATASET_BULK_ACTIONS = ['delete'] as const;
export type DatasetBulkAction = (typeof DATASET_BULK_ACTIONS)[number];

export class DatasetColumnInputDto {
  @ApiProperty({ maxLength: 128, example: 'username' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(128)
  column_key: string;

  @ApiPropertyOptional({
    maxLength: 255,
    description: 'Defaults to column_key',
    example: 'User name',
  })
  @OptionalNotNull()
  @IsString()
  @MaxLen(255)
  display_name?: string;

  @ApiPropertyOptional({
    maxLength: 32,
    default: 'string',
    description: 'Free-form label; not enforced',
  })
  @OptionalNotNull()
  @IsString()
  @MaxLen(32)
  data_type?: string;

  @ApiPropertyOptional({ default: false, description: 'Informational; not enforced' })
  @OptionalNotNull()
  @IsBoolean()
  required?: boolean;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  default_value?: string | null;

  @ApiPropertyOptional({ default: false, description: 'At most one column of a table' })
  @OptionalNotNull()
  @IsBoolean()
  is_scenario_label?: boolean;
}

export class DatasetRowInputDto {
  @ApiProperty({ maxLength: 128, example: 'admin' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(128)
  row_key: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 255, example: 'Administrator' })
  @Nullable()
  @IsString()
  @MaxLen(255)
  scenario_label?: string | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Cell values by column_key; only defined columns are allowed',
    example: { username: 'admin', password: 's3cret' },
  })
  @OptionalNotNull()
  @IsObject()
  @MaxKeys(MAX_DATASET_COLUMNS)
  values?: Record<string, unknown>;

  @ApiPropertyOptional({
    default: true,
    description: 'Inactive rows are kept but never used by runs',
  })
  @OptionalNotNull()
  @IsBoolean()
  is_active?: boolean;
}

export class CreateDatasetDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({
    maxLength: 255,
    example: 'Login users',
    description: 'Unique per project (exact match: names differing in case are distinct)',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ enum: DATASET_STATUSES, default: 'active' })
  @OptionalNotNull()
  @IsIn(DATASET_STATUSES)
  status?: DatasetStatus;

  @ApiPropertyOptional({ enum: DATASET_SOURCE_TYPES, default: 'manual' })
  @OptionalNotNull()
  @IsIn(DATASET_SOURCE_TYPES)
  source_type?: DatasetSourceType;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 512 })
  @Nullable()
  @IsString()
  @MaxLen(512)
  source_ref?: string | null;

  @ApiPropertyOptional({
    type: [DatasetColumnInputDto],
    default: [],
    maxItems: MAX_DATASET_COLUMNS,
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_DATASET_COLUMNS)
  @NestedList(() => DatasetColumnInputDto)
  columns?: DatasetColumnInputDto[];

  @ApiPropertyOptional({ type: [DatasetRowInputDto], default: [], maxItems: MAX_DATASET_ROWS })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_DATASET_ROWS)
  @NestedList(() => DatasetRowInputDto)
  rows?: DatasetRowInputDto[];

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: 2000,
    description: 'Stored on revision 1',
  })
  @Nullable()
  @IsString()
  @MaxLen(2000)
  change_summary?: string | null;
}

export class UpdateDatasetDto {
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

  @ApiPropertyOptional({
    enum: DATASET_STATUSES,
    description: 'archived sets archived_at; active clears it',
  })
  @OptionalNotNull()
  @IsIn(DATASET_STATUSES)
  status?: DatasetStatus;

  @ApiPropertyOptional({ enum: DATASET_SOURCE_TYPES })
  @OptionalNotNull()
  @IsIn(DATASET_SOURCE_TYPES)
  source_type?: DatasetSourceType;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 512 })
  @Nullable()
  @IsString()
  @MaxLen(512)
  source_ref?: string | null;

  @ApiPropertyOptional({
    type: [DatasetColumnInputDto],
    maxItems: MAX_DATASET_COLUMNS,
    description: 'Replaces all columns (absent: the current columns are kept)',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_DATASET_COLUMNS)
  @NestedList(() => DatasetColumnInputDto)
  columns?: DatasetColumnInputDto[];

  @ApiPropertyOptional({
    type: [DatasetRowInputDto],
    maxItems: MAX_DATASET_ROWS,
    description: 'Replaces all rows (absent: the current rows are kept)',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_DATASET_ROWS)
  @NestedList(() => DatasetRowInputDto)
  rows?: DatasetRowInputDto[];

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: 2000,
    description: 'Stored on the new revision, if the table changes',
  })
  @Nullable()
  @IsString()
  @MaxLen(2000)
  change_summary?: string | null;
}

export class DatasetBulkDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: MAX_BULK_DATASETS,
    description:
      'Datasets of the project. Ids are compared case-insensitively; duplicates count once. ' +
      'An id that is not a dataset (including one that is not a uuid) is unknown.',
  })
  @IsArray()
  @ArrayNotEmpty()
  @MaxItems(MAX_BULK_DATASETS)
  @IsString({ each: true })
  @MaxLen(DATASET_ID_MAX_LENGTH, { each: true })
  dataset_ids: string[];

  @ApiProperty({ enum: DATASET_BULK_ACTIONS, description: 'Only `delete` for now' })
  @IsIn(DATASET_BULK_ACTIONS)
  action: DatasetBulkAction;
}

export class DatasetBulkResultDto {
  @ApiProperty({ description: 'Distinct datasets the action applied to', example: 2 })
  affected_count: number;
}

export class DatasetColumnDto {
  @ApiProperty({ example: 'username' }) column_key: string;
  @ApiProperty({ example: 'User name' }) display_name: string;
  @ApiProperty({ example: 'string' }) data_type: string;
  @ApiProperty() required: boolean;
  @ApiProperty({ nullable: true, type: String }) default_value: string | null;
  @ApiProperty({ description: '0-based position' }) order_index: number;
  @ApiProperty() is_scenario_label: boolean;
}

export class DatasetRowDto {
  @ApiProperty({ example: 'admin' }) row_key: string;
  @ApiProperty({ nullable: true, type: String }) scenario_label: string | null;
  @ApiProperty({ description: '0-based position' }) order_index: number;
  @ApiProperty({ type: 'object', additionalProperties: true }) values: Record<string, unknown>;
  @ApiProperty() is_active: boolean;
}

export class DatasetRevisionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) dataset_id: string;
  @ApiProperty({ example: 1 }) revision_number: number;
  @ApiProperty({ description: 'Rows in this revision, inactive ones included' }) rows_count: number;
  @ApiProperty({ nullable: true, type: String }) change_summary: string | null;
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ description: "True for the dataset's current revision" }) is_current: boolean;
  @ApiProperty({ type: [DatasetColumnDto] }) columns: DatasetColumnDto[];
  @ApiPropertyOptional({
    type: [DatasetRowDto],
    description: 'Ordered by order_index; absent only when a list is asked with include_rows=false',
  })
  rows?: DatasetRowDto[];
}

export class DatasetDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Login users' }) name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: DATASET_STATUSES }) status: DatasetStatus;
  @ApiProperty({ enum: DATASET_SOURCE_TYPES }) source_type: DatasetSourceType;
  @ApiProperty({ nullable: true, type: String }) source_ref: string | null;
  @ApiProperty({ example: 1 }) current_revision_number: number;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) current_revision_id: string | null;
  @ApiProperty({
    type: DatasetRevisionDto,
    nullable: true,
    description:
      'The current revision with its columns and rows (lists leave the rows out with include_rows=false)',
  })
  current_revision: DatasetRevisionDto | null;
  @ApiProperty({ type: [String], description: 'Test cases bound to this dataset' })
  test_case_ids: string[];
  @ApiProperty() test_cases_count: number;
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) archived_at: string | null;
}

/** The top-level fields of the dataset object, in the schema's order: what `fields` may name. */
export const DATASET_FIELDS = [
  'id',
  'project_id',
  'name',
  'description',
  'status',
  'source_type',
  'source_ref',
  'current_revision_number',
  'current_revision_id',
  'current_revision',
  'test_case_ids',
  'test_cases_count',
  'created_by',
  'created_at',
  'updated_at',
  'archived_at',
] as const;

export class ListDatasetsQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @FieldsParam(
    DATASET_FIELDS,
    'each dataset (without `current_revision` no revision, columns or rows are read)',
  )
  fields?: string[];

  @ApiPropertyOptional({ description: 'Case-insensitive substring of name or description' })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  search?: string;

  @ApiPropertyOptional({ enum: DATASET_SOURCE_TYPES, isArray: true })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(DATASET_SOURCE_TYPES, { each: true })
  source_type?: DatasetSourceType[];

  @ApiPropertyOptional({ enum: DATASET_STATUSES, isArray: true })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(DATASET_STATUSES, { each: true })
  status?: DatasetStatus[];

  @ApiPropertyOptional({ format: 'uuid', description: 'Only datasets bound to this test case' })
  @IsOptional()
  @IsUUID()
  test_case_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only datasets not bound to this test case' })
  @IsOptional()
  @IsUUID()
  exclude_test_case_id?: string;

  @ApiPropertyOptional({
    default: true,
    description:
      "Include the rows of each item's current revision; `false` leaves them out (for large tables)",
  })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  include_rows: boolean = true;

  @ApiPropertyOptional({ enum: DATASET_SORT_FIELDS, default: 'updated_at' })
  @OptionalNotNull()
  @IsIn(DATASET_SORT_FIELDS)
  sort_by: DatasetSortField = 'updated_at';

  @ApiPropertyOptional({ enum: SORT_ORDERS, description: 'Default desc (asc for name)' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}

export class ListRevisionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    default: true,
    description: "Include every revision's rows; `false` leaves them out (for large tables)",
  })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  include_rows: boolean = true;
}
