import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  Min,
} from 'class-validator';
import { PageQueryDto, SORT_ORDERS, SortOrder } from '../../../common/pagination/page';
import { MAX_PG_INTEGER } from '../../../common/validation/path-integer';
import {
  MaxLen,
  Nullable,
  OptionalNotNull,
  QueryBool,
} from '../../../common/validation/decorators';

export const SUITE_SORT_FIELDS = ['created_at', 'updated_at', 'name', 'position'] as const;
export type SuiteSortField = (typeof SUITE_SORT_FIELDS)[number];

export class SuiteDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Authentication' }) name: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) parent_id: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ example: 100 }) position: number;
  @ApiProperty({ description: 'Non-archived test cases directly in this suite' })
  test_cases_count: number;
  @ApiProperty({ description: 'Active test cases directly in this suite' })
  active_test_cases_count: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CreateSuiteDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: 255, example: 'Authentication' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name: string;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'Parent suite; null or absent: a root suite',
  })
  @Nullable()
  @IsUUID()
  parent_id?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    default: 100,
    minimum: 0,
    maximum: MAX_PG_INTEGER,
    description: 'Ordering among siblings',
  })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(MAX_PG_INTEGER)
  position?: number;
}

export class UpdateSuiteDto {
  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'Moves the suite (with its subtree); null makes it a root',
  })
  @Nullable()
  @IsUUID()
  parent_id?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_PG_INTEGER })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(MAX_PG_INTEGER)
  position?: number;
}

export class ListSuitesQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only the direct children of this suite' })
  @IsOptional()
  @IsUUID()
  parent_id?: string;

  @ApiPropertyOptional({ description: 'Only root suites (no parent)' })
  @QueryBool()
  @IsOptional()
  @IsBoolean()
  root_only?: boolean;

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name' })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  search?: string;

  @ApiPropertyOptional({ enum: SUITE_SORT_FIELDS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(SUITE_SORT_FIELDS)
  sort_by: SuiteSortField = 'created_at';

  @ApiPropertyOptional({
    enum: SORT_ORDERS,
    description: 'Default desc for dates, asc for name and position',
  })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}
